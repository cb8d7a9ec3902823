#!/usr/bin/env bash
# Manifest benchmark: a release galleryd over a private PostgreSQL seeded with ROWS photos
# (default 1,000,000), measured with wrk for the manifest queries a client makes, plus the
# server-side time of each query's SQL (EXPLAIN ANALYZE of the prepared statement, as the app's
# statement cache runs it): both the hand-written equivalent below and the statement the query
# compiler really emits for that URL (`galleryd compile-query`, the route's own parse and compile),
# and the generic plans of the index-range queries.
#
# Usage: bench/manifest.sh [seconds]   (needs wrk and psql: scripts/deps.sh --bench)
# Env: ROWS (1000000), CONNECTIONS (64), PORT (18090), PGPORT_PRIVATE (55512),
#      OWNERS (0): spread the rows over that many users and query as the first of them, with a
#        session (issue #15: OWNERS=10 ROWS=10000000 is "a user with 1M photos among 10M"); 0 is
#        the single-tenant shape (ownerless rows, no session),
#      CONFIGURATION (release; debug to measure a debug build on a machine that must not build release),
#      BIN: a galleryd binary to run instead of building one,
#      QUERIES: the numbers (0-based, space-separated) of the queries to run, e.g. "0 6" for the
#        first page as the user and as the master key (default: all),
#      KEEP=1 keeps the temporary directory (database and logs) for a look afterwards,
#      DATA_DIR: a directory for the database that outlives the run (seeded on the first run, reused
#        by later runs with the same ROWS and OWNERS: a 10M-row seed takes a while), BATCH (500000):
#        rows per INSERT (and transaction) of the seed.
set -euo pipefail
cd "$(dirname "$0")/.."

duration="${1:-10}"
rows="${ROWS:-1000000}"
connections="${CONNECTIONS:-64}"
owners="${OWNERS:-0}"
configuration="${CONFIGURATION:-release}"
port="${PORT:-18090}"
export PGPORT_PRIVATE="${PGPORT_PRIVATE:-55512}"

command -v wrk >/dev/null || { echo "manifest.sh: wrk missing (scripts/deps.sh --bench)" >&2; exit 1; }
command -v psql >/dev/null || { echo "manifest.sh: psql missing (scripts/deps.sh)" >&2; exit 1; }
command -v jq >/dev/null || { echo "manifest.sh: jq missing (scripts/deps.sh --bench)" >&2; exit 1; }

if [ -n "${BIN:-}" ]; then
  bin="$BIN"
else
  swift build -c "$configuration" --product galleryd >&2
  bin="$(swift build -c "$configuration" --show-bin-path)/galleryd"
fi

tmp="$(mktemp -d /tmp/galleryd-manifest-bench.XXXXXX)"
pg_dir="${DATA_DIR:-$tmp/pg}"
. bench/galleryd.sh
trap 'cleanup_run "$pg_dir"' EXIT INT TERM

start_database "$bin" "$pg_dir"

# A DATA_DIR seeded by an earlier run is reused as it is, if it holds this shape.
shape_mark="rows=$rows owners=$owners"
if [ -f "$pg_dir/bench-seeded" ]; then
  [ "$(cat "$pg_dir/bench-seeded")" = "$shape_mark" ] \
    || { echo "manifest.sh: $pg_dir holds $(cat "$pg_dir/bench-seeded"), not $shape_mark" >&2; exit 1; }
  echo "reusing the database in $pg_dir ($shape_mark)" >&2
else
  [ "$(q "select count(*) from photos")" = 0 ] \
    || { echo "manifest.sh: $pg_dir holds photos but no finished seed (remove it)" >&2; exit 1; }
  echo "seeding $rows photos…" >&2
  seed_start=$(date +%s.%N)
  psql "$database_url" -Xq -v ON_ERROR_STOP=1 -v rows="$rows" -v owners="$owners" -v batch="${BATCH:-500000}" \
    -f bench/manifest-seed.sql >/dev/null
  seed_end=$(date +%s.%N)
  echo "seeded in $(awk "BEGIN {printf \"%.0f\", $seed_end - $seed_start}") s" >&2
  # Every counter the triggers kept against the table: the global live and trashed counts, and
  # each owner's (no owner missing, none extra).
  mismatches=$(q "with actual as (
      select 'photos_live' as name, count(*) filter (where deleted_at is null) as n from photos
      union all select 'photos_trashed', count(*) filter (where deleted_at is not null) from photos)
    select count(*) from actual a full join (select * from row_counts where name like 'photos_%') r using (name)
     where a.n is distinct from coalesce(r.n, 0)")
  [ "$mismatches" = 0 ] || { echo "manifest.sh: row_counts disagrees with the table" >&2; exit 1; }
  mismatches=$(q "with actual as (
      select owner_id, d.name, d.n
        from (select owner_id, count(*) filter (where deleted_at is null) as live,
                     count(*) filter (where deleted_at is not null) as trashed
                from photos where owner_id is not null group by owner_id) c
        cross join lateral (values ('photos_live', c.live), ('photos_trashed', c.trashed)) d(name, n)
       where d.n > 0)
    select count(*) from actual a full join (select * from owner_row_counts where name like 'photos_%') o using (owner_id, name)
     where a.n is distinct from o.n")
  [ "$mismatches" = 0 ] || { echo "manifest.sh: owner_row_counts disagrees with the table" >&2; exit 1; }
  [ "$(q "select count(*) from pg_trigger where tgrelid = 'photos'::regclass and tgenabled = 'D'")" = 0 ] \
    || { echo "manifest.sh: a photos trigger is still disabled after the seed" >&2; exit 1; }
  echo "counters checked: row_counts and owner_row_counts equal count(*) of the table" >&2
  echo "$shape_mark" >"$pg_dir/bench-seeded"
fi
# With owners: the first user's session (the token stored as its SHA-256, as galleryd stores them),
# and every query below made as that user.
owner_filter=""
# Without owners: the master key (the app id alone reads nothing; the statement is the unfiltered
# one the single-tenant mode ran before issue #25).
auth=(-H "X-Parse-Master-Key: $GALLERYD_MASTER_KEY")
as_user=()
if [ "$owners" -gt 0 ]; then
  token="r:$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  q "delete from sessions where object_id = 'benchsession'"
  q "insert into sessions (object_id, token_hash, user_id, created_with, expires_at)
     values ('benchsession', encode(sha256(convert_to('$token', 'UTF8')), 'hex'), 'benchuser0', 'cli', now() + interval '1 day')"
  owner_filter="t.owner_id = 'benchuser0' and "
  auth=(-H "X-Parse-Session-Token: $token")
  as_user=(--user benchuser0)
  echo "querying as benchuser0: $(q "select n from owner_row_counts where owner_id = 'benchuser0' and name = 'photos_live'") live photos of its own" >&2
fi
echo "live photos: $(q "select n from row_counts where name = 'photos_live'")" >&2

start_galleryd "$bin" "$port"

# The deep page: the keyset cursor 90 % of the way down the (user's) live photos. benchuser0's
# rows are every OWNERS-th, and the trashed ones every 100th: with OWNERS=10 all of them are its
# (900,000 live of 1,000,000).
live_count=$(q "select n from row_counts where name = 'photos_live'")
[ "$owners" -gt 0 ] && live_count=$(q "select n from owner_row_counts where owner_id = 'benchuser0' and name = 'photos_live'")
deep_offset=$(( live_count * 9 / 10 ))
IFS='|' read -r cursor_date cursor_id < <(q "select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), object_id
  from photos t where ${owner_filter} deleted_at is null order by created_at desc, object_id desc offset $deep_offset limit 1")
cursor="{\"\$or\":[{\"createdAt\":{\"\$lt\":{\"__type\":\"Date\",\"iso\":\"$cursor_date\"}}},{\"createdAt\":{\"__type\":\"Date\",\"iso\":\"$cursor_date\"},\"objectId\":{\"\$lt\":\"$cursor_id\"}}]}"
text='{"title":{"$text":{"$search":{"$term":"beach"}}}}'
ranked='{"title":{"$text":{"$search":{"$term":"kyoto harbor"}}}}'
prefix='{"filename":{"$regex":"^DSC0791"}}'
enc() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }

names=("first page (20, -createdAt)" "deep keyset page (${deep_offset} in)" "count=1&limit=0" "\$text 'beach', newest first" "\$text 'kyoto harbor', by \$score" "\$regex anchored prefix")
paths=(
  "/parse/classes/Photo?order=-createdAt&limit=20"
  "/parse/classes/Photo?order=-createdAt&limit=20&where=$(enc "$cursor")"
  "/parse/classes/Photo?count=1&limit=0"
  "/parse/classes/Photo?limit=20&where=$(enc "$text")"
  "/parse/classes/Photo?limit=20&order=%24score&where=$(enc "$ranked")"
  "/parse/classes/Photo?limit=20&where=$(enc "$prefix")"
)
# The SQL the compiler emits for each, as a prepared statement with its parameters (columns
# abbreviated to t.*; the plan is what matters): "types|sql|arguments".
live="${owner_filter}t.deleted_at is null"
count_sql="|select n from row_counts where name = 'photos_live'|"
[ "$owners" -gt 0 ] && count_sql="text|select n from owner_row_counts where owner_id = \$1::text and name = 'photos_live'|'benchuser0'"
order="order by t.created_at desc, t.object_id desc limit \$L offset 0"
sqls=(
  "bigint|select t.* from photos t where $live ${order//\$L/\$1}|20"
  "timestamptz,text,bigint|select t.* from photos t where (t.created_at, t.object_id) < (\$1, \$2) and $live ${order//\$L/\$3}|'$cursor_date','$cursor_id',20"
  "$count_sql"
  "text,bigint|select t.* from photos t where t.search @@ websearch_to_tsquery('simple', \$1) and $live ${order//\$L/\$2}|'beach',20"
  "text,text,bigint|select t.*, ts_rank(t.search, websearch_to_tsquery('simple', \$1)) as score from photos t where t.search @@ websearch_to_tsquery('simple', \$2) and $live order by score desc, t.object_id desc limit \$3 offset 0|'kyoto harbor','kyoto harbor',20"
  "text,text,bigint|select t.* from photos t where (t.filename ~>=~ \$1 and t.filename ~<~ \$2) and $live ${order//\$L/\$3}|'DSC0791','DSC0792',20"
)
# Which queries run with the master key rather than the user's session: with OWNERS, the first
# page once more with the master key, the unfiltered statement over the same table (what single
# tenancy runs), measured by the same server in the same run.
master=(0 0 0 0 0 0)
if [ "$owners" -gt 0 ]; then
  names+=("first page, master key (all rows)")
  paths+=("${paths[0]}")
  sqls+=("bigint|select t.* from photos t where t.deleted_at is null ${order//\$L/\$1}|20")
  master+=(1)
fi

# Server-side execution time (median of 5, ms) of the prepared statement after 5 warm-up runs,
# as the app's statement cache runs it (default plan_cache_mode: PostgreSQL keeps custom plans
# unless the generic one looks as cheap).
server_ms() {
  local types sql args out
  IFS='|' read -r types sql args <<<"$1"
  out=$(psql "$database_url" -XAtq -v ON_ERROR_STOP=1 <<SQL
prepare s${types:+($types)} as $sql;
$(for _ in 1 2 3 4 5; do echo "execute s${args:+($args)};"; done)
$(for _ in 1 2 3 4 5; do echo "explain (analyze, timing off, summary on) execute s${args:+($args)};"; done)
SQL
)
  echo "$out" | sed -n 's/^Execution Time: \([0-9.]*\) ms$/\1/p' | sort -n | sed -n 3p
}

# The same for the statements galleryd itself compiles for a URL's query string (`galleryd
# compile-query`: the route's parse and compile, printed as JSON lines with SQL-literal arguments),
# prepared without parameter types as the driver does (the placeholders' casts type them).
# Prints "select 0.123" and/or "count 0.045".
compiled_ms() {
  local line kind args results=() caller=("${as_user[@]}")
  [ "${2:-0}" = 1 ] && caller=()
  while IFS= read -r line; do
    kind=$(jq -r .statement <<<"$line")
    args=$(jq -r '.arguments | join(",")' <<<"$line")
    {
      echo "prepare s as $(jq -r .sql <<<"$line");"
      for _ in 1 2 3 4 5; do echo "execute s${args:+($args)};"; done
      for _ in 1 2 3 4 5; do echo "explain (analyze, timing off, summary on) execute s${args:+($args)};"; done
    } >"$tmp/compiled.sql"
    results+=("$kind $(psql "$database_url" -XAtq -v ON_ERROR_STOP=1 -f "$tmp/compiled.sql" |
      sed -n 's/^Execution Time: \([0-9.]*\) ms$/\1/p' | sort -n | sed -n 3p)")
  done < <("$bin" compile-query "${caller[@]}" Photo "${1#*\?}")
  [ ${#results[@]} -gt 0 ] || { echo "manifest.sh: compile-query printed no statement for $1" >&2; results=(none); }
  echo "${results[*]}"
}

# The generic plan of a statement.
plan() {
  local types sql args
  IFS='|' read -r types sql args <<<"$1"
  psql "$database_url" -XAtq -v ON_ERROR_STOP=1 <<SQL | sed 's/^/   /'
set plan_cache_mode = force_generic_plan;
prepare s${types:+($types)} as $sql;
explain execute s${args:+($args)};
SQL
}

results=()
for i in ${QUERIES:-${!paths[@]}}; do
  url="http://127.0.0.1:$port${paths[$i]}"
  caller=("${auth[@]}")
  [ "${master[$i]}" = 1 ] && caller=(-H "X-Parse-Master-Key: $GALLERYD_MASTER_KEY")
  status=$(curl -s -o "$tmp/body.json" -w '%{http_code}' -H 'X-Parse-Application-Id: gallery' "${caller[@]}" "$url")
  [ "$status" = 200 ] || { echo "manifest.sh: ${names[$i]}: HTTP $status $(head -c 300 "$tmp/body.json")" >&2; exit 1; }
  wrk -t1 -c"$connections" -d"${duration}s" --latency -H 'X-Parse-Application-Id: gallery' "${caller[@]}" "$url" >"$tmp/wrk.$i" 2>&1
  rps=$(awk '/^Requests\/sec:/ {print $2}' "$tmp/wrk.$i")
  p50=$(awk '$1 == "50%" {print $2}' "$tmp/wrk.$i")
  p99=$(awk '$1 == "99%" {print $2}' "$tmp/wrk.$i")
  errors=$(awk '/Non-2xx|Socket errors/ {print}' "$tmp/wrk.$i" | tr '\n' ' ')
  results+=("$(printf '%-34s %10s %10s %10s %12s %18s  %s' "${names[$i]}" "$rps" "$p50" "$p99" \
    "$(server_ms "${sqls[$i]}")" "$(compiled_ms "${paths[$i]}" "${master[$i]}")" "$errors")")
done

echo
shape="$rows photos"
[ "$owners" -gt 0 ] && shape="$rows photos over $owners users, as one of them ($(q "select n from owner_row_counts where owner_id = 'benchuser0' and name = 'photos_live'") live)"
echo "galleryd manifest ($configuration), $shape, wrk -t1 -c$connections -d${duration}s ($(nproc) cores shared with PostgreSQL)"
printf '%-34s %10s %10s %10s %12s %18s\n' "query" "req/s" "p50" "p99" "SQL ms" "compiled SQL ms"
for line in "${results[@]}"; do echo "$line"; done
echo
echo "SQL ms: median server-side execution time of the hand-written prepared statement (EXPLAIN ANALYZE);"
echo "compiled SQL ms: the same for the statement(s) galleryd compiles for that URL (galleryd compile-query)."
[ "$owners" -gt 0 ] && echo "(With OWNERS, compiled as benchuser0's session: compile-query --user benchuser0.)"
echo "The compiled first page and count:"
for i in 0 2; do
  echo "-- ${names[$i]}"
  "$bin" compile-query "${as_user[@]}" Photo "${paths[$i]#*\?}" | jq -r '"   " + .statement + ": " + .sql + "  -- arguments: " + (.arguments | join(", "))'
done
echo "Generic plans (what a prepared statement may settle on; these must still be index ranges):"
for i in 1 3 5; do
  echo "-- ${names[$i]}"
  plan "${sqls[$i]}"
done
