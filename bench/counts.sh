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
  # The kernel's share alone, by symbol (where the system calls, TCP and the wake-ups go).
  perf report -i "$tmp/perf-$tag.data" --no-children --dsos '[kernel.kallsyms]' --sort symbol --stdio -g none \
    --percent-limit 0.2 2>/dev/null >"$out-kernel.txt" || true
  perf report -i "$tmp/perf-$tag.data" --no-children --sort dso --stdio -g none 2>/dev/null \
    | awk -v tag="$tag" '/%/ && $0 !~ /^#/ { printf "%s profile share %s %s\n", tag, $1, $2 }' | head -n 5
  echo "$tag profile: $out.txt (self), $out-children.txt (inclusive), $out-kernel.txt (kernel symbols)"
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
  # The dump itself, for `callgrind_annotate --tree=caller` or a diff of two builds by function.
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

# kernel_per_request PID PORT URL CONNECTIONS SECONDS TAG: where a server's kernel side goes, over one
# wrk run with no tracer slowing it (decision 041, round 10):
#   - `perf stat` on the server: instructions and cycles, user and kernel (PMU counters: "n/a" on a
#     virtual machine without them), context switches, migrations, every system call
#     (raw_syscalls:sys_enter) and epoll_wait's, and the events each epoll_wait returned
#     (a `perf record` of its exit tracepoint: the returned count summed, so no strace);
#   - the server's user and system CPU from /proc/<pid>/stat (ticks; a direction on a loaded machine);
#   - segments per request on the server's sockets, from `ss -ti` at two moments of the run
#     (segs_in/segs_out/data_segs_in/data_segs_out of the same connections; a request is one data
#     segment in), so pure ACKs each way are counted for this server alone; and `nstat`'s machine-wide
#     delayed-ACK deltas beside them (other traffic on the machine adds to those).
kernel_per_request() {
  local pid="$1" port="$2" url="$3" connections="$4" seconds="$5" tag="$6" pids events before after
  pids="$(server_pids "$pid")"
  events="instructions:u,instructions:k,cycles:u,cycles:k,context-switches,cpu-migrations,task-clock"
  events="$events,raw_syscalls:sys_enter,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_epoll_pwait"
  perf stat -x, -e "$events" -p "$pids" -o "$tmp/kstat-$tag.txt" -- sleep "$((seconds + 1))" 2>/dev/null &
  local stat_pid=$!
  perf record -q -e syscalls:sys_exit_epoll_wait,syscalls:sys_exit_epoll_pwait -p "$pids" \
    -o "$tmp/kwait-$tag.data" -- sleep "$((seconds + 1))" >/dev/null 2>&1 &
  local record_pid=$!
  # System calls by name and thread, from the same tracepoints (`perf trace -s`: no ptrace stops).
  perf trace -s -p "$pids" -o "$tmp/ktrace-$tag.txt" -- sleep "$((seconds + 1))" >/dev/null 2>&1 &
  local trace_pid=$!
  sleep 0.5
  before="$(cpu_split "$pid")"
  nstat -n >/dev/null 2>&1 || true
  on_client_cpus wrk -t1 -c"$connections" -d"${seconds}s" "$url" >"$tmp/wrk-kernel-$tag.txt" &
  local wrk_pid=$!
  sleep 1
  socket_counters "$port" >"$tmp/ss1-$tag.txt"
  sleep "$((seconds - 2))"
  socket_counters "$port" >"$tmp/ss2-$tag.txt"
  cp "$tmp/ss-raw" "$tmp/ss2-raw-$tag.txt"
  wait "$wrk_pid" || true
  after="$(cpu_split "$pid")"
  nstat -z 2>/dev/null | awk '$1 ~ /^(TcpInSegs|TcpOutSegs|TcpExtDelayedACKs|TcpExtTCPHPAcks|TcpExtDelayedACKLocked)$/ { print $1, $2 }' \
    >"$tmp/nstat-$tag.txt" || true
  wait "$stat_pid" "$record_pid" "$trace_pid" 2>/dev/null || true
  local requests
  requests="$(wrk_requests "$tmp/wrk-kernel-$tag.txt")"
  [ -n "$requests" ] && [ "$requests" -gt 0 ] || { echo "$tag kernel: no requests" >&2; return 0; }
  awk -F, -v n="$requests" -v tag="$tag" '
    $3 != "" && $1 !~ /^#/ {
      name = $3; sub(/^(raw_)?syscalls:/, "", name)
      if ($1 ~ /not (supported|counted)/) { printf "%s kernel %-26s n/a (%s)\n", tag, name, $1; next }
      if (name == "task-clock") printf "%s kernel %-26s %9.3f µs\n", tag, "cpu (task-clock)", $1 * 1000 / n
      else printf "%s kernel %-26s %9.3f\n", tag, name, $1 / n
    }' "$tmp/kstat-$tag.txt"
  # Events per call from the recorded exits (the recording starts a little later than the count,
  # so its calls are not counted again here); events per request = that × the stat's calls.
  perf script -i "$tmp/kwait-$tag.data" -F trace 2>/dev/null | awk -v n="$requests" -v tag="$tag" \
    -v waits="$(awk -F, '$3 ~ /sys_enter_epoll_p?wait$/ && $1 ~ /^[0-9]/ { w += $1 } END { print w + 0 }' "$tmp/kstat-$tag.txt")" '
    function hex(s,   i, v) { v = 0; s = tolower(substr(s, 3))
      for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
      return v }
    NF == 0 { next }
    { ret = $NF; ret = (ret ~ /^0x/) ? hex(ret) : ret + 0; if (ret > 1e9) ret = -1
      calls++; if (ret > 0) events += ret; else empty++ }
    END { if (calls) printf "%s kernel %-26s %9.2f events per call, %.1f%% empty; %.3f events per request\n", tag,
      "epoll_wait returns", events / calls, 100 * empty / calls, waits * events / calls / n }'
  echo "$before $after" | awk -v n="$requests" -v hz="$clock_ticks" -v tag="$tag" 'NF == 4 {
    printf "%s kernel %-26s %9.3f µs user, %.3f µs system (/proc, ticks of 1/%d s)\n", tag, "cpu split", \
      ($3 - $1) / hz * 1e6 / n, ($4 - $2) / hz * 1e6 / n, hz }'
  awk -v tag="$tag" '
    FNR == NR { for (k in f) delete f[k]; split($0, f, " "); first[$1] = $0; next }
    ($1 in first) {
      split(first[$1], a, " "); for (i = 2; i <= 5; i++) d[i] += $i - a[i]; same++
    }
    END {
      if (d[4] <= 0) { printf "%s kernel segments: no data segments counted\n", tag; exit }
      printf "%s kernel %-26s %9.3f in (%.3f pure ACKs), %.3f out (%.3f pure ACKs); %d connections\n", tag,
        "segments per request", d[2] / d[4], (d[2] - d[4]) / d[4], d[3] / d[4], (d[3] - d[5]) / d[4], same
    }' "$tmp/ss1-$tag.txt" "$tmp/ss2-$tag.txt"
  awk -v n="$requests" -v tag="$tag" '{ printf "%s kernel %-26s %9.3f (machine-wide)\n", tag, "nstat " $1, $2 / n }' \
    "$tmp/nstat-$tag.txt"
  # "syscall calls errors total min avg max stddev" rows of every thread's table, summed by name.
  # `perf trace` starts later than `perf stat` (it loads its tables first), so its counts are
  # scaled to the stat's total of system calls over the whole run.
  awk -v n="$requests" -v tag="$tag" -v all="$(awk -F, '$3 ~ /sys_enter$/ && $1 ~ /^[0-9]/ { print $1 }' \
    "$tmp/kstat-$tag.txt" | head -n1)" '
    $1 ~ /^[a-z_0-9]+$/ && $2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ && NF >= 8 { calls[$1] += $2; errors[$1] += $3; total += $2 }
    END { scale = (all > 0 && total > 0) ? all / total : 1
      for (c in calls) if (calls[c] * scale / n >= 0.001)
        printf "%s kernel syscall %-19s %9.3f  (errors %.3f)\n", tag, c, calls[c] * scale / n, errors[c] * scale / n }' \
    "$tmp/ktrace-$tag.txt" | sort -k5 -gr
  echo "$tag kernel: $requests requests; one socket: $(awk '/segs_out/ { for (i = 1; i <= NF; i++)
    if ($i !~ /^(bytes_|segs_|data_segs_|delivered|lastsnd|lastrcv|lastack|busy|rcv_space|rcv_ssthresh|minrtt|snd_wnd|rcv_wnd|app_limited|pacing_rate|delivery_rate|send|[0-9])/) printf "%s ", $i
    exit }' "$tmp/ss2-raw-$tag.txt")"
}

# socket_counters PORT: "peer segs_in segs_out data_segs_in data_segs_out" of each established
# connection to PORT (ss prints a socket's counters on the line after its addresses).
socket_counters() {
  ss -tinH state established "( sport = :$1 )" 2>/dev/null | tee "$tmp/ss-raw" | awk '
    NF >= 4 && $1 ~ /^[0-9]/ { peer = $4; next }
    NF >= 2 && $1 ~ /^[0-9]/ && $0 !~ /segs_out/ { peer = $NF; next }
    /segs_out/ {
      si = so = di = do_ = 0
      for (i = 1; i <= NF; i++) {
        split($i, kv, ":")
        if (kv[1] == "segs_in") si = kv[2]; else if (kv[1] == "segs_out") so = kv[2]
        else if (kv[1] == "data_segs_in") di = kv[2]; else if (kv[1] == "data_segs_out") do_ = kv[2]
      }
      print peer, si, so, di, do_
    }'
}

# cpu_split PID: "user system" clock ticks of a process and its direct children (/proc/PID/stat).
cpu_split() {
  local user=0 system=0 pid fields
  for pid in "$1" $(pgrep -P "$1" 2>/dev/null || true); do
    [ -r "/proc/$pid/stat" ] || continue
    fields="$(sed 's/.*) //' "/proc/$pid/stat" | awk '{ print $12, $13 }')"
    user=$((user + ${fields% *})); system=$((system + ${fields#* }))
  done
  echo "$user $system"
}

# socket_options PID URL TAG: the options a server sets on its sockets and the epoll registrations it
# makes, from `strace` over a short 4-connection run (descriptor numbers and addresses left out).
socket_options() {
  local pid="$1" url="$2" tag="$3"
  strace -f -q -e trace=setsockopt,epoll_ctl,accept4,accept,listen $(server_pids "$pid" | sed 's/^/-p /; s/,/ -p /g') \
    -o "$tmp/sockopt-$tag.txt" &
  local strace_pid=$!
  sleep 0.5
  on_client_cpus wrk -t1 -c4 -d1s "$url" >/dev/null
  kill -INT "$strace_pid" 2>/dev/null
  wait "$strace_pid" 2>/dev/null || true
  sed -E 's/^[0-9]+ +//; s/\(([0-9]+), /(fd, /; s/\{sa_family=[^}]*\}/{…}/; s/EPOLL_CTL_([A-Z]+), [0-9]+,/EPOLL_CTL_\1, fd,/;
    s/u64=[0-9]+/u64=…/; s/u32=[0-9]+, u64=…/…/; s/ = [0-9]+$//' "$tmp/sockopt-$tag.txt" \
    | grep -v -e '^+++' -e '^---' -e 'resumed' | sort | uniq -c | sort -rn | head -n 12 \
    | awk -v tag="$tag" '{ $1 = $1; print tag, "socket", $0 }'
}
