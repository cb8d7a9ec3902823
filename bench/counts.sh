# Sourced by bench/thumbnail-path.sh (COUNTS=1): what a server spends per request in counts that do
# not depend on the machine's load, each over its own wrk run against the running server:
#   - system calls by name (`strace -c -f` attached to every thread), with their errors (EAGAIN);
#   - allocations (uprobes on libc's malloc, calloc, realloc, posix_memalign, aligned_alloc; Swift's
#     runtime allocates through them), context switches and CPU time (`perf stat`).
# Needs strace and perf (linux-perf; scripts/deps.sh --bench) and root for the uprobes. Prints one
# line per figure: "<tag> <what> <per request>".

allocators="malloc calloc realloc posix_memalign aligned_alloc"

# Defines the allocator uprobes once (they stay defined: `perf probe -d 'probe_libc:*'` removes them).
counts_setup() {
  local libc defined
  libc="$(ldd /bin/sh | awk '/libc\.so/ { print $3 }')"
  defined="$(perf probe -l 2>/dev/null || true)"
  for f in $allocators; do
    case "$defined" in *"probe_libc:$f "*) ;; *) perf probe -q -x "$libc" "$f" >/dev/null 2>&1 || true ;; esac
  done
}

# wrk_requests FILE: the request count of a wrk report.
wrk_requests() { awk '/requests in/ { print $1 }' "$1"; }

# server_pids PID: the server and its direct children (nginx's master and worker), comma-separated.
server_pids() { echo "$1" $(pgrep -P "$1" 2>/dev/null || true) | tr ' ' ,; }

# count_per_request PID URL CONNECTIONS SECONDS TAG
count_per_request() {
  local pid="$1" url="$2" connections="$3" seconds="$4" tag="$5" requests events pids probes
  pids="$(server_pids "$pid")"
  # System calls: strace slows the server down, so its own run; every thread of every process.
  strace -c -f -q $(echo "$pids" | sed 's/^/-p /; s/,/ -p /g') -o "$tmp/strace-$tag.txt" &
  local strace_pid=$!
  sleep 0.5
  on_client_cpus wrk -t1 -c"$connections" -d"${seconds}s" "$url" >"$tmp/wrk-strace-$tag.txt"
  kill -INT "$strace_pid" 2>/dev/null
  wait "$strace_pid" 2>/dev/null || true
  requests="$(wrk_requests "$tmp/wrk-strace-$tag.txt")"
  awk -v n="$requests" -v tag="$tag" '
    $NF ~ /^[a-z_0-9]+$/ && $(NF - 1) ~ /^[0-9]+$/ && $NF != "total" {
      # "% time  seconds  usecs/call  calls  [errors]  syscall"
      calls = $4; errors = (NF == 6) ? $5 : 0
      printf "%s syscall %-14s %7.3f  (errors %.3f)\n", tag, $NF, calls / n, errors / n
    }' "$tmp/strace-$tag.txt" | sort -k4 -gr
  events="context-switches,cpu-migrations,task-clock"
  probes="$(perf probe -l 2>/dev/null || true)"
  for f in $allocators; do
    case "$probes" in *"probe_libc:$f "*) events="$events,probe_libc:$f" ;; esac
  done
  perf stat -x, -e "$events" -p "$pids" -o "$tmp/perf-$tag.txt" -- sleep "$((seconds + 1))" &
  local perf_pid=$!
  sleep 0.5
  on_client_cpus wrk -t1 -c"$connections" -d"${seconds}s" "$url" >"$tmp/wrk-perf-$tag.txt"
  wait "$perf_pid" 2>/dev/null || true
  requests="$(wrk_requests "$tmp/wrk-perf-$tag.txt")"
  awk -F, -v n="$requests" -v tag="$tag" '
    $1 ~ /^[0-9.]+$/ {
      name = $3; sub(/^probe_libc:/, "alloc ", name)
      if (name ~ /^alloc /) allocs += $1
      if (name == "task-clock") printf "%s %-23s %7.3f µs\n", tag, "cpu (task-clock)", $1 * 1000 / n
      else printf "%s %-23s %7.3f\n", tag, name, $1 / n
    }
    END { printf "%s %-23s %7.3f\n", tag, "allocations (all)", allocs / n }' "$tmp/perf-$tag.txt"
  echo "$tag requests counted: strace run $(wrk_requests "$tmp/wrk-strace-$tag.txt"), perf run $requests"
}

# profile_server PID URL CONNECTIONS SECONDS TAG: `perf record -g` of the server over one wrk run; the
# flat profile (self time by symbol, kernel included) goes to $PERF_OUT/<tag>.txt (default /tmp).
profile_server() {
  local pid="$1" url="$2" connections="$3" seconds="$4" tag="$5" out="${PERF_OUT:-/tmp}/${5//[:\/]/-}"
  perf record -q -g -F 2000 -o "$tmp/perf-$tag.data" -p "$(server_pids "$pid")" -- sleep "$((seconds + 1))" \
    2>/dev/null &
  local perf_pid=$!
  sleep 0.5
  on_client_cpus wrk -t1 -c"$connections" -d"${seconds}s" "$url" >/dev/null
  wait "$perf_pid" 2>/dev/null || true
  perf report -i "$tmp/perf-$tag.data" --no-children --sort symbol --stdio -g none --percent-limit 0.2 \
    2>/dev/null | swift demangle --simplified >"$out.txt" || true
  perf report -i "$tmp/perf-$tag.data" --children --sort symbol --stdio -g none --percent-limit 0.5 \
    2>/dev/null | swift demangle --simplified >"$out-children.txt" || true
  echo "$tag profile: $out.txt (self), $out-children.txt (inclusive)"
}

# callgrind_requests PID DUMP REPORT URL N: user-space instructions of a server started under
# `valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=DUMP` over exactly N keep-alive
# requests (one curl connection, after N warm-up requests): the total per request, and the
# inclusive share of each function in REPORT (callgrind_annotate). Load-independent, unlike time;
# kernel instructions are not counted.
callgrind_requests() {
  local pid="$1" dump="$2" report="$3" url="$4" n="$5" urls=() total file
  for _ in $(seq "$n"); do urls+=("$url"); done
  curl -fsS "${urls[@]}" >/dev/null
  callgrind_control -i on "$pid" >/dev/null
  curl -fsS "${urls[@]:0:50}" >/dev/null
  callgrind_control -z "$pid" >/dev/null
  curl -fsS "${urls[@]}" >/dev/null
  callgrind_control --dump=requests "$pid" >/dev/null
  callgrind_control -i off "$pid" >/dev/null
  sleep 1
  file="$(ls -t "$dump".* 2>/dev/null | head -n1)"
  [ -n "$file" ] || { echo "callgrind: no dump for $dump" >&2; return 0; }
  callgrind_annotate --inclusive=yes --threshold=99.5 "$file" 2>/dev/null | swift demangle --simplified >"$report"
  # The dump itself beside the report, for `callgrind_annotate --tree=caller` on any function later.
  cp "$file" "${report%.txt}.callgrind"
  # Who calls the allocators (libc's, and Swift's runtime over them), with call counts ("(Nx)",
  # over N requests): where each allocation is made.
  callgrind_annotate --tree=caller --inclusive=yes --threshold=100 "$file" 2>/dev/null | swift demangle --simplified \
    | awk '/^ *[0-9,]+ +(\([ 0-9.]+%\) +)?< / { callers = callers $0 "\n"; next }
      /^ *[0-9,]+ +(\([ 0-9.]+%\) +)?\* / {
        if ($0 ~ /[:*] *(swift_allocObject|swift_slowAlloc|malloc|calloc|realloc|posix_memalign|aligned_alloc) /)
          printf "%s%s\n\n", callers, $0
        callers = ""; next }
      { callers = "" }' >"${report%.txt}-allocations.txt"
  total="$(awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }' "$report")"
  echo "$(basename "$report" .txt): $((total / n)) instructions per request (user space), profile in $report," \
    "allocation sites in ${report%.txt}-allocations.txt"
}
