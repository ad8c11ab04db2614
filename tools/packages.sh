# SPDX-License-Identifier: LGPL-2.1-or-later
# Debian 12 packages, sourced by tools/quickstart and .ci/run so both install the same.
BUILD_PACKAGES=(
        gcc meson ninja-build pkg-config
        # tools/version.sh: the version of a build from a checkout is git describe's
        git
        # lowlatctl explain's table is written from the man pages at build time (meson needs
        # it too; named for what the build runs itself)
        python3
        libsystemd-dev libudev-dev libnl-3-dev libnl-route-3-dev libnl-genl-3-dev
)
TEST_PACKAGES=(
        python3 util-linux mount iproute2 ethtool procps
        dbus-daemon dbus-bin dbus-system-bus-common systemd
        fuse3 libfuse3-dev
        groff-base man-db
        clang libclang-rt-14-dev
        qemu-system-x86 mmdebstrap e2fsprogs
        build-essential debhelper dpkg-dev lintian
        # promtool, for the metrics and the alert rules (its package is the whole server:
        # tools/run-tests keeps that from starting, see there)
        prometheus
        # lowlatctl top is tested in a real terminal emulator (tests/integration/test_noisectl.py)
        tmux
        # lowlatctl measure runs cyclictest (oslat) on the host, with --laptop
        rt-tests
        # the completion is also tried under bash-completion's own script (test_completion.py)
        bash-completion
        # the Ansible role in contrib/ansible: linted, and rendered into a test directory
        # (tests/packaging/test_ansible.py)
        ansible-core ansible-lint
)
