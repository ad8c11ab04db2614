#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Smoke test for fakeirqfs: mounts it on a temporary ROOT/proc/irq and checks the errno
# of every kernel case with plain tools and python3 fd-level calls, then unmounts.
# Usage: smoke-test.sh PATH/TO/fakeirqfs   (or FAKEIRQFS=... smoke-test.sh)
# Prints "ok N - ..." / "not ok N - ..."; exit 0 all passed, 1 a failure, 77 skipped.

set -u

fakeirqfs=${1:-${FAKEIRQFS:-}}
if [ -z "$fakeirqfs" ] || [ ! -x "$fakeirqfs" ]; then
        echo "usage: $0 PATH/TO/fakeirqfs" >&2
        exit 1
fi
skip() {
        echo "1..0 # SKIP $*"
        exit 77
}
[ -c /dev/fuse ] || skip "no /dev/fuse"
[ -r /dev/fuse ] && [ -w /dev/fuse ] || skip "/dev/fuse not accessible to uid $(id -u)"
command -v python3 >/dev/null || skip "no python3"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fakeirqfs-smoke.XXXXXX") || exit 1
fs_pid=
mnt=

unmount() {
        if command -v fusermount3 >/dev/null; then
                fusermount3 -u "$1" 2>/dev/null || umount "$1" 2>/dev/null
        else
                umount "$1" 2>/dev/null
        fi
}
cleanup() {
        if [ -n "$mnt" ] && mountpoint -q "$mnt" 2>/dev/null; then
                unmount "$mnt" || umount -l "$mnt" 2>/dev/null
        fi
        if [ -n "$fs_pid" ] && kill -0 "$fs_pid" 2>/dev/null; then
                kill "$fs_pid" 2>/dev/null
                wait "$fs_pid" 2>/dev/null
        fi
        rm -rf "$tmp"
}
trap cleanup EXIT

n=0
failed=0
check() { # DESCRIPTION EXPECTED ACTUAL
        n=$((n + 1))
        if [ "$2" = "$3" ]; then
                echo "ok $n - $1"
        else
                echo "not ok $n - $1"
                echo "#   expected: '$2'"
                echo "#   got:      '$3'"
                failed=1
        fi
}

# fd-level operations; each prints "ok", the errno name, or what it read.
cat > "$tmp/fsop.py" <<'EOF'
import errno, os, sys

def name(e):
    return errno.errorcode.get(e.errno, str(e.errno))

def attempt(fn):
    try:
        r = fn()
        return 'ok' if r is None or isinstance(r, int) else r.decode()
    except OSError as e:
        return name(e)

def write_once(path, data, flags=os.O_WRONLY | os.O_TRUNC):
    """What the daemon does: open O_WRONLY|O_TRUNC, one write(2)."""
    try:
        fd = os.open(path, flags)
    except OSError as e:
        return 'open:' + name(e)
    try:
        return attempt(lambda: None if os.write(fd, data.encode()) == len(data) else b'short')
    finally:
        os.close(fd)

def control(mnt, command):
    with open(os.path.join(mnt, '.control'), 'w') as f:
        f.write(command + '\n')

cmd, args = sys.argv[1], sys.argv[2:]
if cmd == 'write':                      # PATH DATA
    print(write_once(args[0], args[1]))
elif cmd == 'create':                   # PATH: a new name in a proc directory
    print(write_once(args[0], 'x', os.O_WRONLY | os.O_CREAT))
elif cmd == 'mkdir':
    print(attempt(lambda: os.mkdir(args[0])))
elif cmd == 'rename':
    print(attempt(lambda: os.rename(args[0], args[1])))
elif cmd == 'pread-external':           # MNT IRQ: persistent fd sees an external change
    mnt, irq = args
    fd = os.open(os.path.join(mnt, irq, 'smp_affinity_list'), os.O_RDONLY)
    before = os.pread(fd, 4096, 0)
    control(mnt, 'set %s 2-3' % irq)
    after = os.pread(fd, 4096, 0)
    tail = os.pread(fd, 4096, 2)
    again = os.pread(fd, 4096, 0)
    os.close(fd)
    print(repr((before, after, tail, again)))
elif cmd == 'vanish':                   # MNT IRQ: fds opened before the IRQ goes away
    mnt, irq = args
    path = os.path.join(mnt, irq, 'smp_affinity_list')
    rfd = os.open(path, os.O_RDONLY)
    wfd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    os.pread(rfd, 4096, 0)
    control(mnt, 'vanish ' + irq)
    out = [attempt(lambda: os.pread(rfd, 4096, 0)),
           attempt(lambda: os.write(wfd, b'1')),
           attempt(lambda: os.open(path, os.O_RDONLY)),
           attempt(lambda: os.stat(os.path.join(mnt, irq))),
           str(irq in os.listdir(mnt))]
    control(mnt, 'appear %s 0-1' % irq)
    out.append(attempt(lambda: os.pread(rfd, 4096, 0)))          # still the old entry
    fd = os.open(path, os.O_RDONLY)
    out.append(os.pread(fd, 4096, 0).decode().strip())
    for fd in (fd, rfd, wfd):
        os.close(fd)
    print(' '.join(out))
elif cmd == 'read-then-exists':         # PATH DIR: one pread, then does DIR exist?
    fd = os.open(args[0], os.O_RDONLY)
    data = os.pread(fd, 4096, 0).decode().strip()
    os.close(fd)
    print(data, os.path.exists(args[1]))
else:
    sys.exit('unknown op ' + cmd)
EOF

fsop() {
        timeout 20 python3 "$tmp/fsop.py" "$@" 2>&1
}
rd() { # contents of a file, newline stripped (cat does open/read/read-to-EOF/close)
        timeout 20 cat "$1" 2>&1
}
mode_of() {
        stat -c %a "$1" 2>&1
}

# start_fs NAME ARGS...: mounts on $tmp/NAME/proc/irq, sets mnt and fs_pid
start_fs() {
        local name=$1
        shift
        mnt=$tmp/$name/proc/irq
        mkdir -p "$mnt"
        "$fakeirqfs" "$mnt" "$@" --ready-fd 3 3>"$tmp/$name.ready" 2>"$tmp/$name.log" &
        fs_pid=$!
        for _ in $(seq 200); do
                grep -q ready "$tmp/$name.ready" 2>/dev/null && return 0
                kill -0 "$fs_pid" 2>/dev/null || break
                sleep 0.05
        done
        if ! kill -0 "$fs_pid" 2>/dev/null; then
                wait "$fs_pid" 2>/dev/null
                fs_pid=
                if grep -qiE 'permission denied|operation not permitted|fusermount' "$tmp/$name.log"; then
                        skip "cannot mount FUSE here: $(head -n 3 "$tmp/$name.log" | tr '\n' ' ')"
                fi
        fi
        echo "# fakeirqfs log:"
        sed 's/^/#   /' "$tmp/$name.log"
        check "fakeirqfs $name mounted" "ready" "not ready"
        exit 1
}

# stop_fs HOW: "unmount" (fusermount3 -u) or "term" (SIGTERM); sets stop_status to
# fakeirqfs's exit status (run in this shell, not $(...): only the parent can wait)
stop_fs() {
        if [ "$1" = unmount ]; then
                unmount "$mnt"
        else
                kill -TERM "$fs_pid"
        fi
        # The session ends when the kernel drops the connection: at once, unless some
        # other reference (say a mount namespace copied meanwhile) keeps it a while.
        for _ in $(seq 600); do
                kill -0 "$fs_pid" 2>/dev/null || break
                sleep 0.05
        done
        if kill -0 "$fs_pid" 2>/dev/null; then
                stop_status="still running"
                return
        fi
        wait "$fs_pid"
        stop_status=$?
        fs_pid=
        if mountpoint -q "$mnt"; then
                stop_status="$stop_status, still mounted"
        fi
}

# ---------------------------------------------------------------- legacy ABI --
start_fs legacy --cpus 4 --irqs 24-40 --managed 30 --vanish-after-read 40
m=$mnt
check "mounted, ready reported" "ready" "$(cat "$tmp/legacy.ready")"
check "17 IRQ directories listed" "17" "$(ls "$m" | grep -c '^[0-9]*$')"
check "default_smp_affinity listed, control files hidden" "default_smp_affinity" \
        "$(ls -A "$m" | grep -v '^[0-9]*$')"
check "IRQ directory lists the kernel's files in procfs order" \
        "node spurious smp_affinity affinity_hint smp_affinity_list effective_affinity effective_affinity_list" \
        "$(ls -U "$m/24" | tr '\n' ' ' | sed 's/ $//')"
check "modes: dir 555, smp_affinity{,_list} 644, effective 444, default 644" "555 644 644 444 444 644" \
        "$(mode_of "$m/24") $(mode_of "$m/24/smp_affinity") $(mode_of "$m/24/smp_affinity_list") \
$(mode_of "$m/24/effective_affinity") $(mode_of "$m/24/effective_affinity_list") $(mode_of "$m/default_smp_affinity")"
check "initial smp_affinity / list / effective / effective_list / node" "f 0-3 1 0 0" \
        "$(rd "$m/24/smp_affinity") $(rd "$m/24/smp_affinity_list") $(rd "$m/24/effective_affinity") \
$(rd "$m/24/effective_affinity_list") $(rd "$m/24/node")"
check "lookup of a non-canonical name (024) is ENOENT" "No such file" \
        "$(ls "$m/024" 2>&1 | grep -o 'No such file')"

check "garbage list -> EINVAL" "EINVAL" "$(fsop write "$m/24/smp_affinity_list" garbage)"
check "list with CPU >= nr_cpu_ids -> ERANGE" "ERANGE" "$(fsop write "$m/24/smp_affinity_list" 0-9)"
check "empty list (newline only) -> EINVAL" "EINVAL" "$(fsop write "$m/24/smp_affinity_list" $'\n')"
check "garbage hex mask -> EINVAL" "EINVAL" "$(fsop write "$m/24/smp_affinity" xyz)"
check "hex mask with bits >= nr_cpu_ids -> EOVERFLOW" "EOVERFLOW" "$(fsop write "$m/24/smp_affinity" ff)"
check "failed writes left the affinity alone" "0-3" "$(rd "$m/24/smp_affinity_list")"

check "managed IRQ (--managed) -> EIO" "EIO" "$(fsop write "$m/30/smp_affinity_list" 0-1)"
check "managed IRQ hex file -> EIO" "EIO" "$(fsop write "$m/30/smp_affinity" 3)"
echo "managed 31" > "$m/.control"
check "managed via .control -> EIO" "EIO" "$(fsop write "$m/31/smp_affinity_list" 0-1)"
check "legacy ABI keeps managed files 0644" "644" "$(mode_of "$m/31/smp_affinity_list")"
echo "unmanaged 31" > "$m/.control"
check "unmanaged again -> write succeeds" "ok" "$(fsop write "$m/31/smp_affinity_list" 0-1)"

check "write 1-2 (O_WRONLY|O_TRUNC) succeeds" "ok" "$(fsop write "$m/24/smp_affinity_list" 1-2)"
check "success updates smp_affinity, list and effective affinity" "6 1-2 2 1" \
        "$(rd "$m/24/smp_affinity") $(rd "$m/24/smp_affinity_list") $(rd "$m/24/effective_affinity") \
$(rd "$m/24/effective_affinity_list")"
check "hex write c succeeds" "ok" "$(fsop write "$m/25/smp_affinity" c)"
check "hex write shows as list 2-3, effective 2" "2-3 2" \
        "$(rd "$m/25/smp_affinity_list") $(rd "$m/25/effective_affinity_list")"
echo 0-1 > "$m/26/smp_affinity_list" 2>/dev/null
check "shell redirection (O_CREAT|O_TRUNC on an existing file) writes" "0-1" "$(rd "$m/26/smp_affinity_list")"
check "write to a read-only file as root -> EIO" "EIO" "$(fsop write "$m/26/effective_affinity_list" 1)"

echo "set 27 3" > "$m/.control"
echo "offline 3" > "$m/.control"
check "offline-only list -> EINVAL" "EINVAL" "$(fsop write "$m/28/smp_affinity_list" 3)"
check "offline-only hex mask -> EINVAL" "EINVAL" "$(fsop write "$m/28/smp_affinity" 8)"
check "mixed list keeps the offline CPU, effective is the online one" "ok 2-3 2" \
        "$(fsop write "$m/28/smp_affinity_list" 2-3) $(rd "$m/28/smp_affinity_list") $(rd "$m/28/effective_affinity_list")"
check "offlining the only CPU of an IRQ breaks its affinity to the online CPUs" "0-2 0" \
        "$(rd "$m/27/smp_affinity_list") $(rd "$m/27/effective_affinity_list")"
echo "online 3" > "$m/.control"
check "online again -> the write succeeds" "ok" "$(fsop write "$m/28/smp_affinity_list" 3)"

check "default_smp_affinity: write 3" "ok 3" "$(fsop write "$m/default_smp_affinity" 3) $(rd "$m/default_smp_affinity")"
check "default_smp_affinity: no online CPU -> EINVAL" "EINVAL" "$(fsop write "$m/default_smp_affinity" 0)"
fsop write "$m/default_smp_affinity" f >/dev/null

check "persistent fd: pread at 0 sees an external change, offsets honoured" \
        "(b'0-3\n', b'2-3\n', b'3\n', b'2-3\n')" "$(fsop pread-external "$m" 32)"

check "vanish: old fds EIO (read, write), open/stat ENOENT, unlisted; appear: old fd stays EIO" \
        "EIO EIO ENOENT ENOENT False EIO 0-1" "$(fsop vanish "$m" 33)"
check "vanish-after-read: data returned, then the directory is gone" "0-3 False" \
        "$(fsop read-then-exists "$m/40/smp_affinity_list" "$m/40")"

echo "reset-stats" > "$m/.control"
fsop write "$m/34/smp_affinity_list" garbage >/dev/null
fsop write "$m/34/smp_affinity_list" 0-1 >/dev/null
fsop write "$m/34/smp_affinity" 3 >/dev/null
check ".stats counts writes and failures per IRQ" "3 1 present" \
        "$(awk '$1 == 34 { print $2, $3, $6 }' "$m/.stats")"
check ".stats: untouched IRQ has no writes" "0 0" "$(awk '$1 == 35 { print $2, $3 }' "$m/.stats")"
check ".stats: a vanished IRQ keeps its line" "vanished" "$(awk '$1 == 40 { print $6 }' "$m/.stats")"

echo "fail 35 EBUSY 1" > "$m/.control"
check "fail injection: next valid write -> EBUSY, then success" "EBUSY ok" \
        "$(fsop write "$m/35/smp_affinity_list" 0) $(fsop write "$m/35/smp_affinity_list" 0)"
check "fail injection does not hide parse errors" "EINVAL" "$(fsop write "$m/35/smp_affinity_list" x)"

check "O_CREAT of a new name -> EACCES" "open:EACCES" "$(fsop create "$m/24/new_file")"
check "mkdir -> EPERM" "EPERM" "$(fsop mkdir "$m/newdir")"
check "rename -> EPERM" "EPERM" "$(fsop rename "$m/24/smp_affinity_list" "$m/24/x")"
chmod 0444 "$m/36/smp_affinity_list"
check "chmod is kept (lowlatd's read-only test); root may still write" "444 ok" \
        "$(mode_of "$m/36/smp_affinity_list") $(fsop write "$m/36/smp_affinity_list" 1)"
check "truncate is a no-op" "0 1" "$(truncate -s 0 "$m/36/smp_affinity_list"; echo $?) $(rd "$m/36/smp_affinity_list")"

check ".control: unknown command -> EINVAL" "EINVAL" "$(fsop write "$m/.control" "frobnicate 1")"
check ".control: absent IRQ -> ENOENT" "ENOENT" "$(fsop write "$m/.control" "managed 999")"
check ".control: appear of a present IRQ -> EEXIST" "EEXIST" "$(fsop write "$m/.control" "appear 24")"
echo "appear 2000" > "$m/.control"
check "appear 2000 with the default affinity" "0-3 0" \
        "$(rd "$m/2000/smp_affinity_list") $(rd "$m/2000/effective_affinity_list")"

stop_fs unmount
check "fusermount3 -u: fakeirqfs exits 0" "0" "$stop_status"

# ---------------------------------------------------------------- modern ABI --
start_fs modern --cpus 40 --online 0-39 --irqs 5-6 --managed 5 --managed-abi modern
m=$mnt
check "modern ABI: managed IRQ -> EPERM" "EPERM" "$(fsop write "$m/5/smp_affinity_list" 1)"
check "modern ABI: managed files are 0444, others 0644" "444 444 644" \
        "$(mode_of "$m/5/smp_affinity_list") $(mode_of "$m/5/smp_affinity") $(mode_of "$m/6/smp_affinity_list")"
check "40 CPUs: hex masks in 32-bit words" "ff,ffffffff 00,00000001 ff,ffffffff" \
        "$(rd "$m/6/smp_affinity") $(rd "$m/6/effective_affinity") $(rd "$m/default_smp_affinity")"
check "40 CPUs: hex write of two words" "ok 32-33 32" \
        "$(fsop write "$m/6/smp_affinity" 3,00000000) $(rd "$m/6/smp_affinity_list") $(rd "$m/6/effective_affinity_list")"
stop_fs term
check "SIGTERM: fakeirqfs exits 0 and unmounts" "0" "$stop_status"

if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error' "$tmp"/*.log; then
        check "no sanitizer reports" "none" "$(grep -hE 'Sanitizer|runtime error' "$tmp"/*.log | head -n 3)"
fi

echo "1..$n"
if [ "$failed" != 0 ]; then
        for log in "$tmp"/*.log; do
                echo "# $(basename "$log"):"
                sed 's/^/#   /' "$log"
        done
fi
exit "$failed"
