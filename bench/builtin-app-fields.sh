#!/usr/bin/env bash
# Fields of an app's own on Photo (issue 27, docs/decisions/042): how to store them, measured on
# Photo's first page (its hot page: the manifest) at the SQL level with pgbench, same cluster,
# alternating rounds, over ROWS photos (bench/manifest-seed.sql) copied into three tables:
#   - fixed:  Photo's columns only (a class without app fields: its statements are unchanged);
#   - typed:  plus three typed columns app_1 text, app_2 float8, app_3 jsonb (the design kept);
#   - jsonb:  plus one jsonb column `app` holding the same three values (the other design).
# Every row carries the three values (the worst case: app metadata on every photo). Printed:
# the mean latency of the first page of 20 by -createdAt per table (selecting the app values),
# of a page filtered on the Number (`rating > 4.5`, no index) and of a page sorted by it, and
# each table's size.
# Usage: bench/builtin-app-fields.sh   Env: ROWS (200000), ROUNDS (3), SECONDS_PER_RUN (5),
#   PGPORT_PRIVATE (55446), BIN (a galleryd to run `migrate` with; default: the debug build),
#   KEEP=1 keeps the temporary directory.
set -euo pipefail
cd "$(dirname "$0")/.."

rows="${ROWS:-200000}"; rounds="${ROUNDS:-3}"; seconds="${SECONDS_PER_RUN:-5}"
export PGPORT_PRIVATE="${PGPORT_PRIVATE:-55446}"
bin="${BIN:-$(swift build --show-bin-path)/galleryd}"

tmp="$(mktemp -d /tmp/galleryd-appfields-bench.XXXXXX)"
. bench/galleryd.sh
trap cleanup_run EXIT INT TERM

start_database "$bin"
seed_photos "$rows"

values="'album ' || (hashtext(object_id) & 63), ((hashtext(object_id) & 1023) / 204.6)::float8,
  jsonb_build_object('lens', '35mm', 'iso', hashtext(object_id) & 3200)"
q "create table p_fixed as select * from photos"
q "create table p_typed as select p.*, v.* from photos p,
     lateral (select $values) v(app_1, app_2, app_3)"
q "create table p_jsonb as select p.*, jsonb_build_object('album', v.a, 'rating', v.r, 'meta', v.m) as app
     from photos p, lateral (select $values) v(a, r, m)"
for t in p_fixed p_typed p_jsonb; do
  q "create index ${t}_page on $t (created_at desc, object_id desc) where deleted_at is null"
  q "vacuum analyze $t"
done

fixed_columns="t.object_id, t.created_at, t.updated_at, t.filename, t.title, t.tags, t.content_type, t.byte_size,
  t.checksum, t.width, t.height, t.aspect_ratio, t.taken_at, t.camera_make, t.camera_model, t.status, t.error,
  t.dominant_color, t.thumbhash, t.deleted_at, t.original_key, t.thumbnail_key, t.preview_key, t.thumbnail_width,
  t.thumbnail_height, t.preview_width, t.preview_height, t.owner_id, t.acl"
page="where t.deleted_at is null order by t.created_at desc, t.object_id desc limit 20"
declare -A sql
sql[page_fixed]="select $fixed_columns from p_fixed t $page"
sql[page_typed]="select $fixed_columns, t.app_1, t.app_2, t.app_3 from p_typed t $page"
sql[page_jsonb]="select $fixed_columns, t.app->>'album', (t.app->>'rating')::float8, t.app->'meta' from p_jsonb t $page"
sql[filter_typed]="select $fixed_columns, t.app_1, t.app_2, t.app_3 from p_typed t where t.app_2 > 4.5 and t.deleted_at is null order by t.created_at desc, t.object_id desc limit 20"
sql[filter_jsonb]="select $fixed_columns, t.app->>'album', (t.app->>'rating')::float8, t.app->'meta' from p_jsonb t where (t.app->>'rating')::float8 > 4.5 and t.deleted_at is null order by t.created_at desc, t.object_id desc limit 20"
sql[sort_typed]="select $fixed_columns, t.app_1, t.app_2, t.app_3 from p_typed t where t.deleted_at is null order by t.app_2 desc, t.object_id desc limit 20"
sql[sort_jsonb]="select $fixed_columns, t.app->>'album', (t.app->>'rating')::float8, t.app->'meta' from p_jsonb t where t.deleted_at is null order by (t.app->>'rating')::float8 desc, t.object_id desc limit 20"
names=(page_fixed page_typed page_jsonb filter_typed filter_jsonb sort_typed sort_jsonb)

declare -A sum
for name in "${names[@]}"; do sum[$name]=0; echo "${sql[$name]};" >"$tmp/$name.sql"; done
pg_args=(-h "$tmp/pg" -p "$PGPORT_PRIVATE" -U galleryd galleryd)
for round in $(seq 1 "$rounds"); do
  for name in "${names[@]}"; do
    ms=$(pgbench -n -c 1 -T "$seconds" -f "$tmp/$name.sql" "${pg_args[@]}" 2>/dev/null | awk '/latency average/ {print $4}')
    sum[$name]=$(awk -v a="${sum[$name]}" -v b="$ms" 'BEGIN {print a + b}')
    echo "round $round $name: $ms ms" >&2
  done
done
for name in "${names[@]}"; do
  printf '%-13s %8.3f ms mean\n' "$name" "$(awk -v a="${sum[$name]}" -v n="$rounds" 'BEGIN {print a / n}')"
done
awk -v f="${sum[page_fixed]}" -v t="${sum[page_typed]}" -v j="${sum[page_jsonb]}" \
  'BEGIN {printf "first page vs fixed (latency ratio fixed/other): typed %.2fx, jsonb %.2fx\n", f / t, f / j}'
for t in p_fixed p_typed p_jsonb; do echo "size $t: $(q "select pg_size_pretty(pg_total_relation_size('$t'))")"; done
