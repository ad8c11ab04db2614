# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# watchdog: quiet 420 s
# The Ansible role of contrib/ansible (the share's ansible/), run by the guest's own
# ansible-core against itself (-c local), in the 6.12 guest only (Debian 13's ansible-core;
# the role does nothing a kernel tells apart, docs/e2e.md):
#  - lowlatd removed first, so that the role installs the package under test itself; with
#    profile cpu-partitioning, CPUs 2-3, a sysctl, a [sysfs] key and a [nic] section the
#    play passes, the posture is in force and the condition is applied, or reboot-required
#    where the guest's command line lacks a parameter and nothing else is amiss (the play
#    says it accepts that, lowlatd_accept_reboot_required, and the fact tells);
#  - a second run changes nothing (changed=0);
#  - an invalid CPU list fails the play at the validate step: the old file stays, and so
#    does the running posture (no reload);
#  - restore.yml puts the host back and stops lowlatd.
# Then lowlatd runs and enforces write_config's configuration again, for what follows.
# Each check's line says how long its play took (ansible-playbook under TCG is slow).
if [ "$E2E_KERNEL" != 6.12 ]; then
        skipped "the Ansible role run against the guest" "the 6.12 guest runs it (only its image has ansible-core)"
        return 0
fi
an_dir=/run/e2e-ansible
rm -rf "$an_dir"
cp -r "$SHARE/ansible" "$an_dir"
an_deb=$(ls "$SHARE"/deb/lowlatd_*.deb 2>/dev/null | head -n1)
an_vars() {
        # $1: the isolated CPUs
        cat <<EOV
lowlatd_deb: $an_deb
lowlatd_profile: cpu-partitioning
lowlatd_isolated_cpus: "$1"
lowlatd_accept_reboot_required: true
lowlatd_wait_retries: 90
lowlatd_daemon:
  scan_interval: 60s
lowlatd_sysctls:
  vm.stat_interval: 7
lowlatd_sysfs:
  /sys/kernel/mm/transparent_hugepage/enabled: never
lowlatd_nics:
  "$E1K":
    rx_usecs: 70
EOV
}
an_play() {
        # $1: playbook, $2: isolated CPUs; output in an_out, exit status in an_rc
        an_vars "$2" > "$an_dir/vars.yml"
        # guest-test.sh runs under LC_ALL=C; ansible-core (2.14 and later) refuses any locale
        # that is not UTF-8.
        local t0=$SECONDS
        an_out=$(cd "$an_dir" && LC_ALL=C.UTF-8 ANSIBLE_ROLES_PATH=$an_dir/roles ANSIBLE_NOCOLOR=1 \
                timeout 400 ansible-playbook -c local -i localhost, -e @vars.yml "$1" 2>&1)
        an_rc=$?
        an_s=$((SECONDS - t0))
}
an_recap() { sed -n "s/^localhost *:.* $1=\([0-9]*\).*/\1/p" <<< "$an_out"; }
# an_task NAME: how the role's task NAME ended in the last play: ok, changed, fatal, skipping
an_task() {
        awk -v name="$1" '/^TASK \[/ { t = index($0, ": " name "]") > 0 }
                t && /^(ok|changed|fatal|skipping):/ { sub(":.*", ""); print; exit }' <<< "$an_out"
}
cat > "$an_dir/apply.yml" <<'EOP'
---
- name: lowlatd on this guest
  hosts: all
  gather_facts: false
  roles:
    - role: lowlatd
  post_tasks:
    - name: Say the facts
      ansible.builtin.debug:
        msg: "e2e-facts condition={{ lowlatd_condition }} reboot_required={{ lowlatd_reboot_required }}"
EOP
sed 's/^  hosts: lowlatency$/  hosts: all/; s/^  become: true$/  gather_facts: false/' "$an_dir/restore.yml" > "$an_dir/restore-guest.yml"
note "ansible-core $(dpkg-query -W -f='${Version}' ansible-core 2>&1)"

# apt-get remove keeps /etc/lowlatd (the conffile, the test's drop-in); the prerm restores.
out=$(DEBIAN_FRONTEND=noninteractive timeout 300 apt-get remove -y lowlatd 2>&1)
status=$(dpkg-query -W -f='${Status}' lowlatd 2>&1)
[[ $status != "install ok installed" ]] && [ ! -e /usr/sbin/lowlatd ]
verdict $? "apt-get remove lowlatd, for the role to install it: $status" "$out"

an_play apply.yml 2-3
cond=$(prop_s Condition) reboot=$(prop RebootRequired) reasons=$(prop ConditionReasons)
facts=$(grep -o 'e2e-facts [^"]*' <<< "$an_out" | tail -n1)
installed=$(an_task "Install the given lowlatd package") status=$(dpkg-query -W -f='${Status} ${Version}' lowlatd 2>&1)
case $cond in
applied) [ "$reboot" = "b false" ] ;;
reboot-required) [ "$reboot" = "b true" ] && [[ $reasons == 'as 1 "the kernel command line lacks '* ]] ;;
*) false ;;
esac && [ "$an_rc" = 0 ] && [ "$installed" = changed ] && [[ $status == "install ok installed "* ]] &&
        [ "$facts" = "e2e-facts condition=$cond reboot_required=$([ "$reboot" = "b true" ] && echo True || echo False)" ]
verdict $? "ansible-playbook with the role ($an_s s): installs ${an_deb##*/} ($installed; $status), passes; Condition $cond, the facts say so ($facts)" "exit $an_rc
$(tail -n 30 <<< "$an_out")
$reasons"
profiles=$(prop Profiles) stat=$(sysctl -n vm.stat_interval) rx=$(coalesce "$E1K" rx-usecs)
thp=$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)
[ "$(prop_s State)" = enforcing ] && [[ $profiles == *cpu-partitioning* ]] && [ "$stat" = 7 ] && [ "$rx" = 70 ] &&
        { [ -z "$thp" ] || [[ $thp == *"[never]"* ]]; } && grep -qx 'isolated = 2-3' "$CONF"
verdict $? "the posture is in force: enforcing, profiles $profiles, vm.stat_interval $stat, $E1K rx-usecs $rx, THP ${thp:-absent}" \
        "$(cat "$CONF")
$(lowlatctl status 2>&1 | head -n 30)"

an_play apply.yml 2-3
[ "$an_rc" = 0 ] && [ "$(an_recap changed)" = 0 ]
verdict $? "a second run ($an_s s) changes nothing (changed=$(an_recap changed))" "$(grep -E '^(changed|TASK)' <<< "$an_out" | grep -B1 '^changed')
$(tail -n 5 <<< "$an_out")"

cp "$CONF" /run/e2e-ansible-conf.before
reload_before=$(prop LastReloadUSec) pid_before=$(main_pid)
an_play apply.yml 2-99
[ "$an_rc" != 0 ] && [ "$(an_task "Write lowlatd.conf")" = fatal ] && grep -q 'failed to validate' <<< "$an_out" &&
        cmp -s "$CONF" /run/e2e-ansible-conf.before &&
        [ "$(prop LastReloadUSec)" = "$reload_before" ] && [ "$(main_pid)" = "$pid_before" ] &&
        [ "$(prop_s State)" = enforcing ] && [ "$(sysctl -n vm.stat_interval)" = 7 ]
verdict $? "an invalid CPU list (2-99, $an_s s): the play fails at validate, the old file and the running posture stay" "exit $an_rc
$(grep -A3 'FAILED\|failed:' <<< "$an_out" | head -n 20)
$(diff /run/e2e-ansible-conf.before "$CONF")"
rm -f /run/e2e-ansible-conf.before

an_play restore-guest.yml 2-3
stat=$(sysctl -n vm.stat_interval)
[ "$an_rc" = 0 ] && [ "$(systemctl is-active lowlatd)" != active ] && [ "$(systemctl is-enabled lowlatd)" = disabled ] &&
        [ "$stat" = "$(pre_sysctl vm.stat_interval)" ] && [ "$(dma_latency)" = "$PRE_DMA" ]
verdict $? "the restore entry point ($an_s s): lowlatctl restore, lowlatd stopped and disabled, vm.stat_interval $stat as before" \
        "exit $an_rc
$(tail -n 30 <<< "$an_out")
$(systemctl is-active lowlatd) $(systemctl is-enabled lowlatd)"

write_config "rx_usecs = 60" ""
out=$(timeout 120 systemctl enable --now lowlatd 2>&1)
wait_until 60 on_bus
verdict $? "lowlatd enabled and enforcing again with the test's configuration" "$out
$(systemctl status --no-pager lowlatd 2>&1)"
# Where the role put the package: no file named *lowlat* may be left after the purge.
rm -rf "$an_dir" /var/cache/lowlatd-ansible
