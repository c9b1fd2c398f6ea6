#!/usr/bin/env bash
# Checks that the README's two commands work on a bare Debian 12, as for a new user.
#
# Builds a throwaway Debian 12 root with mmdebstrap (variant minbase: apt, dpkg and the
# essential tools; no compiler, no libraries), puts a clean clone of this repository's HEAD
# in it, and runs `bash scripts/test.sh` and then `bash scripts/demo.sh` inside it with
# chroot (/proc, /sys and /dev bind-mounted). Each command's output goes to a log beside the
# root, and the summary gives each one's exit status and time.
#
# Not part of the test suite: it needs root and Debian's package archive, and takes about
# 40 minutes on 2 cores (set-up, a clean build, the suite, and the 10-minute demo).
#
#   bash scripts/fresh-machine-check.sh [--keep] [--demo-updates N] [WORKDIR]
#
# WORKDIR defaults to /var/tmp/attnlab-fresh-machine (emptied first). --keep leaves the root
# there for inspection; otherwise it is removed at the end. Only committed work is checked.
set -euo pipefail

keep=0
demo_updates=7000  # the demo's default (apps/demo/pipeline.hpp kDemoDefaultUpdates)
workdir=/var/tmp/attnlab-fresh-machine
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) keep=1 ;;
    --demo-updates) demo_updates="$2"; shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    -*) echo "fresh-machine-check: unknown option $1" >&2; exit 2 ;;
    *) workdir="$1" ;;
  esac
  shift
done

repo=$(cd "$(dirname "$0")/.." && pwd)
root="$workdir/root"
[ "$(id -u)" -eq 0 ] || { echo "fresh-machine-check: needs root (mmdebstrap, chroot, mount)" >&2; exit 1; }
command -v mmdebstrap > /dev/null || { apt-get update -qq && apt-get install -y -qq mmdebstrap > /dev/null; }

mounted=()
cleanup() {
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}" 2> /dev/null || true; done
  if [ "$keep" -eq 0 ]; then rm -rf "$root"; fi
}
trap cleanup EXIT

rm -rf "$workdir"
mkdir -p "$workdir"
elapsed() { echo $(( $(date +%s) - $1 )); }

echo "fresh-machine-check: bootstrapping Debian 12 (minbase) into $root"
start=$(date +%s)
mmdebstrap --quiet --variant=minbase bookworm "$root" > "$workdir/bootstrap.log" 2>&1 ||
  { echo "fresh-machine-check: mmdebstrap failed, see $workdir/bootstrap.log" >&2; exit 1; }
echo "  bootstrap: $(elapsed "$start") s, $(du -sh "$root" | cut -f1)"

git clone --quiet --no-hardlinks "$repo" "$root/root/attnlab"
echo "  checking commit $(git -C "$repo" rev-parse --short HEAD)"
cp /etc/resolv.conf "$root/etc/resolv.conf"
for fs in proc sys dev dev/pts; do
  mount --bind "/$fs" "$root/$fs"
  mounted+=("$root/$fs")
done

# run_in_root NAME COMMAND: runs COMMAND in the clone inside the root with a clean
# environment, logs to WORKDIR/NAME.log, prints the exit status and time.
status=0
run_in_root() {
  local name="$1" command="$2" begin rc
  begin=$(date +%s)
  set +e
  chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 TERM=dumb /bin/bash -c "cd /root/attnlab && $command" > "$workdir/$name.log" 2>&1 < /dev/null
  rc=$?
  set -e
  echo "  $name: exit $rc after $(elapsed "$begin") s (log: $workdir/$name.log)"
  tail -n 5 "$workdir/$name.log" | sed 's/^/    | /'
  [ "$rc" -eq 0 ] || status=1
}

run_in_root test "bash scripts/test.sh"
run_in_root demo "bash scripts/demo.sh --max-update $demo_updates"

echo "fresh-machine-check: $([ $status -eq 0 ] && echo PASSED || echo FAILED) in $(elapsed "$start") s"
exit $status
