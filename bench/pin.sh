# Sourced by the server benchmarks: CPU placement for a server-against-server comparison.
# With PIN=1 (the default) on a machine with 2+ cores, the servers run on the last core and the
# load generator on the others, so neither server wins or loses by where the scheduler puts its
# threads next to wrk's (unpinned runs on 2 cores swing by ±20%). PIN=0 leaves placement alone.
server_cpus=""
client_cpus=""
pin_cores="$(nproc)"
if [ "${PIN:-1}" = 1 ] && [ "$pin_cores" -ge 2 ] && command -v taskset >/dev/null; then
  server_cpus="$((pin_cores - 1))"
  client_cpus="0-$((pin_cores - 2))"
  [ "$pin_cores" -eq 2 ] && client_cpus=0
fi
# Servers start in the background: exec, so that $! is the server itself and cleanup stops it.
on_server_cpus() { if [ -n "$server_cpus" ]; then exec taskset -c "$server_cpus" "$@"; else exec "$@"; fi; }
on_client_cpus() { if [ -n "$client_cpus" ]; then taskset -c "$client_cpus" "$@"; else "$@"; fi; }
pinning_summary() {
  if [ -n "$server_cpus" ]; then echo "pinning:  servers on CPU $server_cpus, the load generator on CPU $client_cpus"; else echo "pinning:  none"; fi
}
