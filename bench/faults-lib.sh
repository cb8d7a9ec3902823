# What the fault harnesses share (sourced by bench/faults.sh, faults-jobs.sh and faults-import.sh): a private
# folder ($tmp), the processes they start ($pids) and the tmpfs they mount ($mounted), all removed on exit.
# faults_setup NAME: makes /tmp/galleryd-NAME.XXXXXX and sets the traps.
faults_setup() {
  tmp="$(mktemp -d "/tmp/galleryd-$1.XXXXXX")"
  pids=()
  mounted=""
  trap faults_cleanup EXIT
  trap 'exit 130' INT TERM # then EXIT cleans up; a trap on TERM alone would let the script go on
}

# faults_tmpfs DIR SIZE: mounts a tmpfs of SIZE on DIR, unmounted on exit; fails (status 1) unless root.
faults_tmpfs() {
  [ "$(id -u)" -eq 0 ] && mkdir -p "$1" && mount -t tmpfs -o "size=$2" tmpfs "$1" && mounted="$1"
}

faults_cleanup() {
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "$mounted" ] && umount "$mounted" 2>/dev/null || true
  scripts/pg.sh stop "$tmp/pg" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
