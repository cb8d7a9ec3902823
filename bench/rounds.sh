# Shared by bench/http.sh and bench/bucket.sh (sourced): the median of a column of numbers, and the
# two I/O backends compared when both ran (files $tmp/median-<backend> and $tmp/rounds-<backend>).

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

backend_summary() {
  [ -f "$tmp/median-dispatch" ] && [ -f "$tmp/median-epoll" ] || return 0
  # Back-to-back runs share the machine's load of the moment: the median of per-round ratios is steadier.
  local paired
  paired="$(paste "$tmp/rounds-dispatch" "$tmp/rounds-epoll" | awk '{ printf "%.3f\n", $1 / $2 }' | median)"
  awk -v d="$(cat "$tmp/median-dispatch")" -v e="$(cat "$tmp/median-epoll")" -v p="$paired" \
    'BEGIN { printf "dispatch/epoll:   %.3f of medians, paired %.3f (Dispatch is the Linux default only at 0.95 or above; docs/architecture.md)\n", d / e, p }'
}
