#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Builds an e2e guest image for one kernel: a Debian root made with mmdebstrap from the
# host's own apt sources, turned into an ext4 image, plus the image's own kernel and initrd
# for a direct kernel boot. Usage: mkimage.sh KERNEL OUTDIR, KERNEL one of
#   6.1    Debian 12 (bookworm), its kernel (linux-image-amd64, 6.1), systemd 252
#   rt     Debian 12 with its PREEMPT_RT kernel (linux-image-rt-amd64, 6.1-rt)
#   6.12   Debian 13 (trixie), its kernel (6.12) and systemd 257; the host's apt sources
#          with the suite names changed (the same mirrors serve trixie)
#   rt-6.12  Debian 13 with its PREEMPT_RT kernel (6.12-rt); not in the suite's default
#          list, for gate-cycle.sh
# OUTDIR must not exist; it appears only when complete. run-e2e.sh keys the cache by a
# hash of this file, the two units it bakes in, the apt sources and KERNEL, so any change
# here builds a new image. Needs root, mmdebstrap and e2fsprogs (mkfs.ext4 -d).
set -euo pipefail

kernel=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
sources=${LOWLATD_E2E_APT_SOURCES:-}
if [ -z "$sources" ]; then
        for f in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; do
                if [ -s "$f" ]; then sources=$f; break; fi
        done
fi
[ -n "$sources" ] || { echo "mkimage: no apt sources file found" >&2; exit 1; }

# ansible: the packages guest.d/90-ansible.sh needs, in the one image whose guest runs it.
# grub: GRUB's configuration tools without a boot sector, for lowlatctl boot --apply on a
# real update-grub (guest-boot.sh, run by the 6.12-partition boot of the same image).
ansible=() grub=()
case $kernel in
6.1) suite=bookworm kernel_package=linux-image-amd64 ;;
rt) suite=bookworm kernel_package=linux-image-rt-amd64 ;;
6.12) suite=trixie kernel_package=linux-image-amd64 ansible=(ansible-core python3-apt) grub=(grub2-common) ;;
rt-6.12) suite=trixie kernel_package=linux-image-rt-amd64 ;;
*) echo "mkimage: unknown kernel '$kernel' (6.1, rt, 6.12 or rt-6.12)" >&2; exit 1 ;;
esac

# What the guest needs: systemd as PID 1 with udevd, journald and the system bus; the
# tools the tests drive (jq reads journalctl -o json, ping makes NIC interrupts); the
# package's dependencies, so that apt-get installs the lowlatd .deb under test (over 9p)
# with no archive to reach; irqbalance for the conflicting-writer test; a kernel and an
# initramfs that can find a virtio-blk root; rt-tests (cyclictest, hwlatdetect), rtla
# (timerlat/osnoise, a userspace tool built from the kernel's source) and tmux for the
# checks of `lowlatctl measure` and `lowlatctl top`; in the 6.12 image only, ansible-core,
# which runs the role in contrib/ansible against the guest itself (guest.d/90-ansible.sh,
# which runs in that guest alone: docs/e2e.md says why), with python3-apt for its apt
# module (which would otherwise fetch it); in the 6.12 image only, grub2-common (update-grub,
# grub-mkconfig; with grub-common: grub-probe, /etc/grub.d) but neither grub-pc nor
# grub-pc-bin, whose postinst would install a boot sector and whose modules grub-mkconfig
# does not read: the guest still boots with -kernel, and /etc/default/grub and /boot/grub
# are made below as grub-pc's postinst would. No getty, no apt timers: nothing in the
# guest but the test. The package names are the same in Debian 12 and 13.
packages=(
        systemd systemd-sysv udev dbus libpam-systemd
        ethtool iproute2 iputils-ping kmod procps util-linux passwd jq
        irqbalance rt-tests rtla tmux "${ansible[@]}" "${grub[@]}"
        libsystemd0 libudev1 libnl-3-200 libnl-route-3-200 libnl-genl-3-200
        "$kernel_package" initramfs-tools
)

work=$(mktemp -d "${out%/}.tmp.XXXXXX")
mm_pid=
# A build that is stopped (run-e2e.sh's timeout signals the whole process group) must not
# remove the tree while mmdebstrap still has /proc, /sys and /dev mounted in it: wait for
# mmdebstrap to finish its own teardown, unmount whatever is still mounted below the tree,
# deepest first, and never cross into another file system while removing it.
cleanup() {
        if [ -n "$mm_pid" ]; then
                kill -TERM "$mm_pid" 2>/dev/null || true
                wait "$mm_pid" 2>/dev/null || true
        fi
        findmnt -rn -o TARGET | awk -v w="$work/" 'index($0, w) == 1' | sort -r |
                while read -r m; do umount -l "$m" || true; done
        rm -rf --one-file-system "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
root=$work/root
if [ "$suite" != bookworm ]; then
        # The same mirrors, the other suite: bookworm, bookworm-updates and
        # bookworm-security become $suite, $suite-updates and $suite-security. The file
        # keeps its extension, which tells mmdebstrap its format (one-line or deb822).
        suite_sources=$work/suite.${sources##*.}
        sed "s/\bbookworm\b/$suite/g" "$sources" > "$suite_sources"
        sources=$suite_sources
fi

# What grub-pc's postinst would leave: /etc/default/grub from the package's template, and
# /boot/grub for grub.cfg (the guest makes the first one: grub-probe needs its real disk).
grub_hook=true
[ ${#grub[@]} -eq 0 ] || grub_hook='cp "$1/usr/share/grub/default/grub" "$1/etc/default/grub" && mkdir -p "$1/boot/grub"'

mmdebstrap --variant=minbase --mode=root --format=directory \
        --include="$(IFS=,; echo "${packages[*]}")" \
        --customize-hook='echo lowlatd-e2e > "$1/etc/hostname"' \
        --customize-hook='printf "127.0.0.1 localhost\n127.0.1.1 lowlatd-e2e\n" > "$1/etc/hosts"' \
        --customize-hook='echo "/dev/vda / ext4 rw,errors=remount-ro 0 1" > "$1/etc/fstab"' \
        --customize-hook='printf "%s\n" virtio_pci virtio_blk ext4 9p 9pnet_virtio >> "$1/etc/initramfs-tools/modules"' \
        --customize-hook='chroot "$1" update-initramfs -u -k all' \
        --customize-hook="cp '$here/lowlatd-e2e.service' '$here/lowlatd-e2e.target' \"\$1/etc/systemd/system/\"" \
        --customize-hook='systemctl --root="$1" disable irqbalance.service' \
        --customize-hook='systemctl --root="$1" mask getty@.service serial-getty@.service apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer' \
        --customize-hook='rm -rf "$1/var/cache/apt/archives/"*.deb "$1/var/lib/apt/lists/"*_Packages' \
        --customize-hook='chroot "$1" passwd -d root' \
        --customize-hook="$grub_hook" \
        "$suite" "$root" "$sources" &
# In the background, so that a signal reaches cleanup() at once and it can wait for
# mmdebstrap (a foreground child would hold the trap back until it ended).
mm_pid=$!
wait "$mm_pid"
mm_pid=

mkdir -p "$work/img"
cp "$root"/boot/vmlinuz-* "$work/img/vmlinuz"
cp "$root"/boot/initrd.img-* "$work/img/initrd.img"
# The root file system with room to spare for what the tests install and log; the
# guest writes to a throwaway overlay (snapshot=on), so this file never changes.
size_mb=$(( $(du -sm "$root" | cut -f1) + 1024 ))
mkfs.ext4 -q -L lowlatd-e2e -d "$root" "$work/img/root.ext4" "${size_mb}M"
mv "$work/img" "$out"
