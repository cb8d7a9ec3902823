#!/usr/bin/env bash
# Primary-key SELECT throughput: galleryd's Postgres layer (galleryd-bench db) against pgbench on the
# same private cluster and table (`pgbench -i`), with the same number of clients and seconds.
# Target: ours >= 0.8x pgbench. Environment: CLIENTS (8), SECONDS_TO_RUN (10), SCALE (10),
# PGPORT_PRIVATE (55512).
set -euo pipefail
cd "$(dirname "$0")/.."

clients=${CLIENTS:-8}
seconds=${SECONDS_TO_RUN:-10}
scale=${SCALE:-10}
port=${PGPORT_PRIVATE:-55512}

bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)
[ -x "$bindir/pgbench" ] || { echo "db.sh: pgbench not found (apt-get install postgresql-contrib)" >&2; exit 1; }

swift build -c release --product galleryd-bench >&2
bench=.build/release/galleryd-bench

tmp=$(mktemp -d /tmp/galleryd-bench-db.XXXXXX)
cleanup() {
  scripts/pg.sh stop "$tmp" || true
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

url=$(PGPORT_PRIVATE=$port PG_FSYNC=off scripts/pg.sh start "$tmp")
pgbench=("$bindir/pgbench" -h "$tmp" -p "$port" -U galleryd)
echo "db: filling pgbench_accounts (scale $scale) in $tmp" >&2
"${pgbench[@]}" -i -s "$scale" -q galleryd >/dev/null 2>&1

echo "db: galleryd-bench, $clients clients, $seconds s" >&2
ours=$("$bench" db --url "$url" --clients "$clients" --seconds "$seconds" | tee /dev/stderr | awk '/^qps:/ {print $2}')

echo "db: pgbench -S -M prepared, $clients clients, $seconds s" >&2
theirs=$("${pgbench[@]}" -n -S -M prepared -c "$clients" -j 2 -T "$seconds" galleryd | awk '/^tps =/ {printf "%.0f", $3; exit}')

ratio=$(awk -v a="$ours" -v b="$theirs" 'BEGIN { printf "%.2f", a / b }')
echo "galleryd: $ours queries/s"
echo "pgbench:  $theirs queries/s"
echo "ratio:    $ratio (target >= 0.8)"
