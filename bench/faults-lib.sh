# What the fault harnesses share (sourced by bench/faults.sh, faults-jobs.sh, faults-import.sh, faults-s3.sh and
# json-upload-memory.sh): the binary ($galleryd), a private folder ($tmp), the processes they start ($pids), the
# server they start ($serve_pid) and the tmpfs they mount ($mounted), all removed on exit.

# faults_galleryd [CONFIG]: $galleryd = $GALLERYD_BIN when set, else the galleryd product built in CONFIG (release).
faults_galleryd() {
  if [ -n "${GALLERYD_BIN:-}" ]; then
    galleryd="$GALLERYD_BIN"
    return
  fi
  swift build -c "${1:-release}" --product galleryd >&2
  galleryd="$(swift build -c "${1:-release}" --show-bin-path)/galleryd"
}

# faults_setup NAME: makes /tmp/galleryd-NAME.XXXXXX and sets the traps.
faults_setup() {
  tmp="$(mktemp -d "/tmp/galleryd-$1.XXXXXX")"
  pids=()
  serve_pid=""
  mounted=""
  trap faults_cleanup EXIT
  trap 'exit 130' INT TERM # then EXIT cleans up; a trap on TERM alone would let the script go on
}

# faults_tmpfs DIR SIZE: mounts a tmpfs of SIZE on DIR, unmounted on exit; fails (status 1) unless root.
faults_tmpfs() {
  [ "$(id -u)" -eq 0 ] && mkdir -p "$1" && mount -t tmpfs -o "size=$2" tmpfs "$1" && mounted="$1"
}

# faults_start_serve WORKERS: `galleryd serve` on $port with WORKERS workers (log: $tmp/serve.log) as $serve_pid,
# returning once /ready answers; the script exits if the server dies or does not answer within 30 s.
faults_start_serve() {
  "$galleryd" serve --host 127.0.0.1 --port "$port" --workers "$1" >>"$tmp/serve.log" 2>&1 &
  serve_pid=$!
  pids+=("$serve_pid")
  for _ in $(seq 600); do
    curl -fs -o /dev/null "http://127.0.0.1:$port/ready" && return 0
    kill -0 "$serve_pid" 2>/dev/null || break
    sleep 0.05
  done
  tail -n 30 "$tmp/serve.log" >&2
  echo "$(basename "$0"): serve did not start" >&2
  exit 1
}

# faults_stop_serve: stops the server $serve_pid, if one runs, as an operator would (SIGTERM), and waits for it.
faults_stop_serve() {
  if [ -n "${serve_pid:-}" ]; then
    kill "$serve_pid" 2>/dev/null || true
    wait "$serve_pid" 2>/dev/null || true
    serve_pid=""
  fi
}

faults_cleanup() {
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "$mounted" ] && umount "$mounted" 2>/dev/null || true
  scripts/pg.sh stop "$tmp/pg" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
