# Shared by bench/http.sh and bench/bucket.sh (sourced): the median of a column of numbers, and the
# two I/O backends compared when both ran (files $tmp/median-<backend> and $tmp/rounds-<backend>).

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

backend_summary() {
  [ -f "$tmp/median-dispatch" ] && [ -f "$tmp/median-epoll" ] || return 0
  # Back-to-back runs share the machine's load of the moment: the median of per-round ratios is steadier.
  local paired
  paired="$(paste "$tmp/rounds-dispatch" "$tmp/rounds-epoll" | awk '{ printf "%.3f\n", $1 / $2 }' | median)"
  awk -v d="$(cat "$tmp/median-dispatch")" -v e="$(cat "$tmp/median-epoll")" -v p="$paired" \
    'BEGIN { printf "dispatch/epoll:   %.3f of medians, paired %.3f (Dispatch is the Linux default only at 0.95 or above; docs/decisions/004-epoll-default-on-linux.md)\n", d / e, p }'
}

# CPU a server spent serving: utime + stime in clock ticks of a process and its direct children
# (nginx's master and its worker), read from /proc/PID/stat (Linux; elsewhere 0).
cpu_ticks() {
  local total=0 pid ticks
  for pid in "$1" $(pgrep -P "$1" 2>/dev/null || true); do
    [ -r "/proc/$pid/stat" ] || continue
    # Fields after "pid (comm) ": utime and stime are the 12th and 13th (14 and 15 of proc(5)).
    ticks="$(sed 's/.*) //' "/proc/$pid/stat" | awk '{ print $12 + $13 }')"
    total=$((total + ticks))
  done
  echo "$total"
}
clock_ticks="$(getconf CLK_TCK 2>/dev/null || echo 100)"

# core_ticks CPU: "busy total" clock ticks of one core from /proc/stat (busy: all but idle and
# iowait, so softirq time too, which /proc/PID/stat leaves out: loopback TCP's receive work runs
# there). Empty when CPU is not one core or /proc/stat is missing.
core_ticks() {
  case "$1" in '' | *[!0-9]*) return 0 ;; esac
  awk -v cpu="cpu$1" '$1 == cpu { total = 0; for (i = 2; i <= NF; i++) total += $i
    print total - $5 - $6, total }' /proc/stat 2>/dev/null || true
}

# The load generator (CLIENT): wrk (the default: one thread), loadgen (bench/loadgen.c, built here
# with cc: one thread, one epoll set, answers framed by Content-Length only, a fraction of wrk's
# user-space instructions per answer whatever the head's length; decision 041, round 10) or h2load
# (nghttp2-client's, `--h1`, one thread; no p99 in its report). Each prints the lines of wrk's report
# that `measure` reads ("N requests in", "Requests/sec:", " 99%", "Non-2xx or 3xx responses:").
client="${CLIENT:-wrk}"
case "$client" in
  wrk | h2load)
    command -v "$client" >/dev/null || { echo "bench: $client missing (scripts/deps.sh --bench)" >&2; exit 1; } ;;
  loadgen) ;;
  *) echo "bench: CLIENT is wrk, loadgen or h2load, not '$client'" >&2; exit 1 ;;
esac
# client_setup: builds loadgen into $tmp when it is the client (once $tmp exists; `load` calls it
# when the caller has not).
client_setup() {
  [ "$client" = loadgen ] || return 0
  cc -O2 -o "$tmp/loadgen" bench/loadgen.c || { echo "bench: cannot build bench/loadgen.c (cc)" >&2; exit 1; }
}
# load URL CONNECTIONS SECONDS: one pinned run of the client; its report (wrk's lines) on stdout.
load() {
  local url="$1" connections="$2" seconds="$3"
  case "$client" in
    wrk) on_client_cpus wrk -t1 -c"$connections" -d"${seconds}s" --latency "$url" ;;
    loadgen)
      [ -x "$tmp/loadgen" ] || client_setup
      on_client_cpus "$tmp/loadgen" -c "$connections" -d "$seconds" "$url" || true ;;
    h2load)
      on_client_cpus h2load --h1 -t1 -c"$connections" -D"$seconds" "$url" >"$tmp/h2load.txt" || true
      awk '/^finished in/ { seconds = $3 + 0; rate = $4 + 0 } /^requests:/ { done = $6 }
        /^status codes:/ { non2xx = $5 + $7 + $9 }
        END { print "    99%    -"; printf "  %d requests in %.2fs\n", done, seconds
          if (non2xx) printf "  Non-2xx or 3xx responses: %d\n", non2xx; printf "Requests/sec: %.2f\n", rate }' \
        "$tmp/h2load.txt" ;;
  esac
}

# logged_requests FILE PATH: access-log lines of GETs of PATH in FILE (galleryd's text log and nginx's
# combined format both write `"GET <path>`).
logged_requests() {
  local count
  count="$(grep -cF " \"GET $2" "$1" 2>/dev/null)" || true
  echo "${count:-0}"
}
# log_dropped URL: lines the server at URL's port has dropped from its access log so far, when the
# caller defines `access_log_dropped PORT` (galleryd counts them at /metrics rather than stall a
# request when its log writer is behind); else 0.
log_dropped() {
  local port="${1#http://*:}"
  port="${port%%/*}"
  if declare -F access_log_dropped >/dev/null; then access_log_dropped "$port"; else echo 0; fi
}

# measure PID URL CONNECTIONS SECONDS TAG [ACCESS_LOG]: one pinned run of the client against the
# server PID, which appends req/s, p99 latency, the server's CPU microseconds per request and the
# client's own (user+system, from its rusage) to $tmp/{rps,p99,cpu,client}-TAG and shows the client's
# report on stderr. The client's share tells whether a run measured the server or the load
# generator: a server short of its core while the client uses all of its own is waiting for the
# client (the `busy` figures of `report`). With ACCESS_LOG (the server's) and the loadgen client,
# whose count is exact (it waits for the answers in flight), the run's logged requests plus the lines
# the server says it dropped (`log_dropped`) must equal its answers: each run's "answers logged
# dropped" goes to $tmp/logcheck-TAG, and a mismatch is said on stderr.
measure() {
  local pid="$1" url="$2" connections="$3" seconds="$4" tag="$5" access_log="${6:-}" before after TIMEFORMAT="%3U %3S"
  local cores_before logged_before=0 dropped_before=0 answers logged dropped path="/${url#http://*/}"
  if [ -n "$access_log" ] && [ "$client" = loadgen ]; then
    logged_before="$(logged_requests "$access_log" "$path")"
    dropped_before="$(log_dropped "$url")"
  fi
  before="$(cpu_ticks "$pid")"
  cores_before="$(core_ticks "${server_cpus:-}") $(core_ticks "${client_cpus:-}")"
  { time load "$url" "$connections" "$seconds" >"$tmp/wrk.txt"; } 2>"$tmp/wrk-time.txt"
  after="$(cpu_ticks "$pid")"
  # Each pinned core's busy share over the run (softirq included): 100% on the server's core is a
  # run that measured the server; on the client's, one that measured the client.
  echo "$cores_before $(core_ticks "${server_cpus:-}") $(core_ticks "${client_cpus:-}")" \
    | awk 'NF == 8 { printf "%.0f%% %.0f%%\n", 100 * ($5 - $1) / ($6 - $2 + 1e-9), 100 * ($7 - $3) / ($8 - $4 + 1e-9) }' \
      >>"$tmp/cores-$tag"
  cat "$tmp/wrk.txt" >&2
  awk '/Requests\/sec/ { print $2 }' "$tmp/wrk.txt" >>"$tmp/rps-$tag"
  awk '/ 99%/ { print $2 }' "$tmp/wrk.txt" >>"$tmp/p99-$tag"
  awk -v t=$((after - before)) -v hz="$clock_ticks" '/requests in/ { printf "%.2f\n", ($1 > 0 ? t / hz * 1e6 / $1 : 0) }' \
    "$tmp/wrk.txt" >>"$tmp/cpu-$tag"
  awk -v t="$(tail -n1 "$tmp/wrk-time.txt")" '/requests in/ { split(t, s, " ")
    printf "%.2f\n", ($1 > 0 ? (s[1] + s[2]) * 1e6 / $1 : 0) }' "$tmp/wrk.txt" >>"$tmp/client-$tag"
  if [ -n "$access_log" ] && [ "$client" = loadgen ]; then
    answers="$(awk '/requests in/ { print $1 }' "$tmp/wrk.txt")"
    # nginx flushes its buffered log every second: wait for the lines (at most 3 s).
    for _ in $(seq 30); do
      dropped=$(($(log_dropped "$url") - dropped_before))
      logged=$(($(logged_requests "$access_log" "$path") - logged_before))
      [ $((logged + dropped)) -ge "$answers" ] && break
      sleep 0.1
    done
    echo "$answers $logged $dropped" >>"$tmp/logcheck-$tag"
    [ $((logged + dropped)) = "$answers" ] \
      || echo "bench: $url: $answers answers counted by loadgen, $logged logged, $dropped dropped by the log" >&2
  fi
}

# report NAME TAG [NGINX_TAG]: one server's medians (req/s, CPU µs per request) with every round
# and p99, and against nginx both the ratio of medians and the median of per-round (paired) ratios.
report() {
  local name="$1" tag="$2" theirs="${3:-}"
  printf "%-18s %9s req/s  %6s µs CPU/req  (rounds: %s; µs: %s; p99: %s)\n" "$name" \
    "$(median <"$tmp/rps-$tag")" "$(median <"$tmp/cpu-$tag")" \
    "$(paste -sd' ' "$tmp/rps-$tag")" "$(paste -sd' ' "$tmp/cpu-$tag")" "$(paste -sd' ' "$tmp/p99-$tag")"
  # Per round: the process's and wrk's CPU (per request × req/s) as shares of a core, and each
  # pinned core's busy share (softirq included).
  [ -s "$tmp/client-$tag" ] && printf "%-18s busy: server %s; %s %s (µs/req %s); cores server/client %s\n" "" \
    "$(paste "$tmp/rps-$tag" "$tmp/cpu-$tag" | awk '{ printf "%s%.0f%%", (NR > 1 ? " " : ""), $1 * $2 / 1e4 }')" "$client" \
    "$(paste "$tmp/rps-$tag" "$tmp/client-$tag" | awk '{ printf "%s%.0f%%", (NR > 1 ? " " : ""), $1 * $2 / 1e4 }')" \
    "$(paste -sd' ' "$tmp/client-$tag")" "$( [ -s "$tmp/cores-$tag" ] && tr ' ' / <"$tmp/cores-$tag" | paste -sd' ' || echo -)"
  [ -s "$tmp/logcheck-$tag" ] && printf "%-18s counts: %s\n" "" \
    "$(awk '$1 == $2 + $3 { same++ } { dropped += $3 }
      END { printf "logged + dropped = answered in %d of %d runs (%d lines dropped by its log)", same, NR, dropped }' \
      "$tmp/logcheck-$tag")"
  [ -n "$theirs" ] || return 0
  awk -v a="$(median <"$tmp/rps-$tag")" -v b="$(median <"$tmp/rps-$theirs")" \
    -v p="$(paste "$tmp/rps-$tag" "$tmp/rps-$theirs" | awk '{ printf "%.3f\n", $1 / $2 }' | median)" \
    -v c="$(paste "$tmp/cpu-$tag" "$tmp/cpu-$theirs" | awk '{ printf "%.3f\n", ($2 > 0 ? $1 / $2 : 0) }' | median)" \
    -v n="$name" 'BEGIN { printf "%-18s %.2f of nginx (medians), paired %.2f (target >= 0.90); CPU/req %.2f of nginx'"'"'s (paired)\n", n, a / b, p, c }'
}

# The connections of the second, crowded pass (HIGH_CONNECTIONS, 0 for none), if the descriptor limit allows it.
high_connections() {
  local high="${HIGH_CONNECTIONS:-1000}"
  [ "$high" -gt 0 ] || return 0
  if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt $((high + 64)) ]; then
    echo "bench: ulimit -n is $(ulimit -n), too low for $high connections; skipping that pass" >&2
    return 0
  fi
  echo "$high"
}

# compare_report THIS_TAG OTHER_TAG: the COMPARE build against this tree's, paired per round.
compare_report() {
  printf "COMPARE/this:      req/s paired %s, CPU/req paired %s (per round: %s)\n" \
    "$(paste "$tmp/rps-$2" "$tmp/rps-$1" | awk '{ printf "%.3f\n", $1 / $2 }' | median)" \
    "$(paste "$tmp/cpu-$2" "$tmp/cpu-$1" | awk '{ printf "%.3f\n", ($2 > 0 ? $1 / $2 : 0) }' | median)" \
    "$(paste "$tmp/cpu-$2" "$tmp/cpu-$1" | awk '{ printf "%.3f ", ($2 > 0 ? $1 / $2 : 0) }')"
}

# report_passes: the summary of every pass (CONNECTIONS with its rounds, then the high pass):
# each galleryd (names and ports of the run, in order) against nginx, the medians and rounds kept
# in $tmp/median-NAME and $tmp/rounds-NAME for the script's own summary, and COMPARE's pairing.
# Reads the callers' connections, high, names, ports and nginx_port.
report_passes() {
  local pass port
  for pass in "$connections" $high; do
    echo "-- $pass connections$( [ "$pass" = "$connections" ] && echo ", $rounds rounds" || echo ", 1 round")"
    set -- $names
    for port in $ports; do
      report "galleryd $1" "$port-$pass" "$nginx_port-$pass"
      if [ "$pass" = "$connections" ]; then
        median <"$tmp/rps-$port-$pass" >"$tmp/median-$1"
        cp "$tmp/rps-$port-$pass" "$tmp/rounds-$1"
      fi
      shift
    done
    report "nginx" "$nginx_port-$pass"
    if [ -n "${COMPARE:-}" ]; then
      set -- $ports
      compare_report "$1-$pass" "${!#}-$pass"
    fi
  done
}
