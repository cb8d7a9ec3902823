#!/usr/bin/env bash
# Custom classes against Photo (issue 27, docs/decisions/031): one galleryd over a private
# PostgreSQL with ROWS photos (bench/manifest-seed.sql) and a custom class `Resource` of ROWS
# rows made through /parse/schemas (three strings and an indexed Number `rank`), queried with the
# master key, same server, alternating rounds:
#   - the first page of 20 ordered by an indexed field: `-createdAt` on both, and `-rank` on
#     Resource against `-takenAt`… (Photo's own indexed order is createdAt), goal >= 0.8x Photo;
#   - the unconditioned count (goal O(1): the same latency at SMALL and ROWS rows);
#   - the alternative design (one jsonb table for every class) at the SQL level: the same first
#     page through an expression index, EXPLAIN ANALYZE, and the table sizes.
# Usage: bench/custom-classes.sh   Env: ROWS (1000000), SMALL (10000), ROUNDS (5), REQUESTS (200),
#   PORT (18094), PGPORT_PRIVATE (55444), CONFIGURATION (debug), BIN (a galleryd to run), KEEP=1
#   (keeps the temporary directory).
set -euo pipefail
cd "$(dirname "$0")/.."

rows="${ROWS:-1000000}"; small="${SMALL:-10000}"; rounds="${ROUNDS:-5}"; requests="${REQUESTS:-200}"
port="${PORT:-18094}"
export PGPORT_PRIVATE="${PGPORT_PRIVATE:-55444}"
configuration="${CONFIGURATION:-debug}"
if [ -n "${BIN:-}" ]; then bin="$BIN"; else
  swift build -c "$configuration" --product galleryd >&2
  bin="$(swift build -c "$configuration" --show-bin-path)/galleryd"
fi

tmp="$(mktemp -d /tmp/galleryd-classes-bench.XXXXXX)"
. bench/galleryd.sh
trap cleanup_run EXIT INT TERM

start_database "$bin"
seed_photos "$rows"

start_galleryd "$bin" "$port"
base="http://127.0.0.1:$port/parse"
h=(-H "X-Parse-Application-Id: gallery" -H "X-Parse-Master-Key: $GALLERYD_MASTER_KEY" -H "Content-Type: application/json")
for class in Resource Small; do
  curl -fsS "${h[@]}" -X POST "$base/schemas/$class" -d '{"fields":{"filename":{"type":"String"},
    "thumbnailURLString":{"type":"String"},"fileURLString":{"type":"String"},"rank":{"type":"Number"}},
    "indexes":{"byRank":{"rank":-1}}}' >/dev/null
done
seed() {  # class rows: rows straight into the class's table, through its triggers (the counter),
  # without LiveQuery's per-row NOTIFY (as bench/manifest-seed.sql loads photos)
  local table; table="custom_$(q "select table_id from custom_classes where class_name = '$1'")"
  q "alter table $table disable trigger ${table}_live_query"
  q "insert into $table (object_id, created_at, updated_at, c1, c2, c3, c4)
     select 'r' || lpad(n::text, 9, '0'), timestamptz '2024-01-01' - n * interval '1 second', now(),
            'image' || n || '.jpg', 'https://cdn.example/t/' || n || '.jpg', 'https://cdn.example/p/' || n || '.jpg', (n::bigint * 7919) % 1000003
       from generate_series(1, $2) n"
  q "alter table $table enable trigger ${table}_live_query"
  q "analyze $table"
}
echo "seeding $rows Resource rows and $small Small rows…" >&2
seed Resource "$rows"; seed Small "$small"; q "analyze photos"

mean_ms() {  # url: mean latency in ms of REQUESTS sequential requests ({i} in the url: the request's number)
  local total=0
  for i in $(seq 1 "$requests"); do
    t=$(curl -fsS -o /dev/null -w '%{time_total}' "${h[@]}" "${1//\{i\}/$RANDOM$i}"); total=$(awk -v a="$total" -v b="$t" 'BEGIN {print a + b}')
  done
  awk -v t="$total" -v n="$requests" 'BEGIN {printf "%.3f", t / n * 1000}'
}
declare -A sum
# Kept answers (ManifestCache) serve a repeated find without PostgreSQL, Photo's and (since
# migration 0025, docs/decisions/037) custom classes'. The `_uncached` pair makes every request
# distinct (a where that excludes nothing).
ne='where=%7B%22objectId%22%3A%7B%22%24ne%22%3A%22x{i}%22%7D%7D'
names=(photo_created resource_created resource_rank photo_uncached resource_uncached photo_count resource_count small_count)
urls=("$base/classes/Photo?limit=20&order=-createdAt" "$base/classes/Resource?limit=20&order=-createdAt"
      "$base/classes/Resource?limit=20&order=-rank" "$base/classes/Photo?limit=20&order=-createdAt&$ne"
      "$base/classes/Resource?limit=20&order=-createdAt&$ne" "$base/classes/Photo?count=1&limit=0"
      "$base/classes/Resource?count=1&limit=0" "$base/classes/Small?count=1&limit=0")
for i in "${!urls[@]}"; do curl -fsS "${h[@]}" "${urls[$i]//\{i\}/0}" >/dev/null; sum[${names[$i]}]=0; done
for round in $(seq 1 "$rounds"); do
  for i in "${!urls[@]}"; do
    ms=$(mean_ms "${urls[$i]}"); sum[${names[$i]}]=$(awk -v a="${sum[${names[$i]}]}" -v b="$ms" 'BEGIN {print a + b}')
    echo "round $round ${names[$i]}: $ms ms" >&2
  done
done
for name in "${names[@]}"; do printf '%-17s %8.3f ms mean\n' "$name" "$(awk -v a="${sum[$name]}" -v n="$rounds" 'BEGIN {print a / n}')"; done
awk -v p="${sum[photo_created]}" -v r="${sum[resource_created]}" -v k="${sum[resource_rank]}" \
  -v pu="${sum[photo_uncached]}" -v ru="${sum[resource_uncached]}" \
  'BEGIN {printf "Resource vs Photo (latency ratio Photo/Resource): -createdAt %.2fx, -rank %.2fx, uncached -createdAt %.2fx\n", p / r, p / k, pu / ru}'

# The other design at the SQL level: every class in one jsonb table, the same rows.
q "create table objects_jsonb (class_name text not null, object_id text not null, created_at timestamptz not null,
     updated_at timestamptz not null, data jsonb not null, primary key (class_name, object_id))"
q "insert into objects_jsonb select 'Resource', object_id, created_at, updated_at,
     jsonb_build_object('filename', c1, 'thumbnailURLString', c2, 'fileURLString', c3, 'rank', c4)
     from custom_$(q "select table_id from custom_classes where class_name = 'Resource'")"
q "create index objects_jsonb_rank on objects_jsonb (class_name, ((data->>'rank')::float8) desc, object_id desc)"
q "create index objects_jsonb_created on objects_jsonb (class_name, created_at desc, object_id desc)"
q "analyze objects_jsonb"
t="custom_$(q "select table_id from custom_classes where class_name = 'Resource'")"
explain() { q "explain (analyze, format json) $1" | jq -r '.[0]["Execution Time"]'; }
for _ in 1 2 3; do explain "select * from $t order by c4 desc, object_id desc limit 20" >/dev/null
  explain "select * from objects_jsonb where class_name = 'Resource' order by (data->>'rank')::float8 desc, object_id desc limit 20" >/dev/null; done
echo "SQL first page by rank: typed table $(explain "select * from $t order by c4 desc, object_id desc limit 20") ms," \
  "jsonb table $(explain "select * from objects_jsonb where class_name = 'Resource' order by (data->>'rank')::float8 desc, object_id desc limit 20") ms"
echo "SQL where filename = …: typed $(explain "select * from $t where c1 = 'image500000.jpg'") ms (no index: seq scan)," \
  "jsonb $(explain "select * from objects_jsonb where class_name = 'Resource' and data->>'filename' = 'image500000.jpg'") ms"
echo "size: typed table $(q "select pg_size_pretty(pg_total_relation_size('$t'))"), jsonb table $(q "select pg_size_pretty(pg_total_relation_size('objects_jsonb'))")"
