#!/usr/bin/env bash
# A user's unfiltered Gallery count: the counters of migrations/0015 against the count(*) it
# replaced, and what the counter triggers cost a gallery insert. Plain SQL on a private cluster
# (scripts/pg.sh), no galleryd: the statements are those ParseSQLCompiler emits for
# `GET /parse/classes/Gallery?count=1&limit=0` with a session.
#
#   bench/gallery-counts.sh [USERS] [GALLERIES] [RUNS]      (defaults 10000 200000 11)
#
# Seeds USERS users and GALLERIES galleries (each owned by one user and shared with two others,
# one in twenty public), then prints the median EXPLAIN ANALYZE execution time of both count
# statements for one user, and the median time of 1,000 single-row gallery inserts with the 0015
# triggers on and off, alternating RUNS times. PGPORT_PRIVATE picks the cluster's socket name.
set -euo pipefail
cd "$(dirname "$0")/.."
users=${1:-10000}
galleries=${2:-200000}
runs=${3:-11}

dir=$(mktemp -d /tmp/galleryd-gallery-counts.XXXXXX)
trap 'scripts/pg.sh stop "$dir" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
url=$(PG_FSYNC=off scripts/pg.sh start "$dir")
psql -q "$url" -c "create database counts" >/dev/null
db="${url/\/galleryd\?//counts?}"
q() { psql -qAtX -v ON_ERROR_STOP=1 "$db" "$@"; }

for f in migrations/*.sql; do q -f "$f" >/dev/null; done
echo "seeding $users users, $galleries galleries" >&2
q <<SQL
insert into users (object_id, username, password_hash)
select 'u' || lpad(i::text, 9, '0'), 'user' || i, 'x' from generate_series(1, $users) i;
insert into galleries (object_id, name, owner_id, acl)
select 'g' || lpad(i::text, 9, '0'), 'G' || i, 'u' || lpad((i % $users + 1)::text, 9, '0'),
       case when i % 20 = 0 then '{"*":{"read":true}}'::jsonb
            else jsonb_build_object('u' || lpad(((i * 7) % $users + 1)::text, 9, '0'), '{"read":true}'::jsonb,
                                    'u' || lpad(((i * 13) % $users + 1)::text, 9, '0'), '{"read":true}'::jsonb) end
  from generate_series(1, $galleries) i;
vacuum analyze;
SQL

user=u000000042
counter="select coalesce((select n from row_counts where name = 'galleries_public_live'), 0) + coalesce((select n from owner_row_counts where owner_id = '$user' and name = 'galleries_readable'), 0)"
rows="select count(*) from galleries t where (t.owner_id = '$user' or t.acl @> jsonb_build_object('$user'::text, '{\"read\":true}'::jsonb) or t.acl @> '{\"*\":{\"read\":true}}') and t.deleted_at is null"
echo "counter: $(q -c "$counter")  count(*): $(q -c "$rows")"

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
explain_ms() { q -c "explain (analyze, format json) $1" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["Execution Time"])'; }
inserts_ms() {
  q -c "alter table galleries $1 trigger galleries_readers_count_insert" >/dev/null
  local start end
  start=$(date +%s%N)
  for i in $(seq 1 1000); do echo "insert into galleries (object_id, name, owner_id, acl) values ('b$2$i', 'B', 'u000000001', '{\"u000000002\":{\"read\":true}}');"; done | q >/dev/null
  end=$(date +%s%N)
  q -c "delete from galleries where object_id like 'b$2%'" >/dev/null
  q -c "alter table galleries enable trigger galleries_readers_count_insert" >/dev/null
  echo $(( (end - start) / 1000000 ))
}
for _ in $(seq 1 "$runs"); do explain_ms "$counter"; done | median | sed 's/^/counter statement, median ms: /'
for _ in $(seq 1 "$runs"); do explain_ms "$rows"; done | median | sed 's/^/count(*) statement, median ms: /'
on=(); off=()
for r in $(seq 1 "$runs"); do
  on+=("$(inserts_ms enable "on$r")")
  off+=("$(inserts_ms disable "off$r")")
done
printf '%s\n' "${on[@]}" | median | sed 's/^/1000 inserts, 0015 trigger on, median ms: /'
printf '%s\n' "${off[@]}" | median | sed 's/^/1000 inserts, 0015 trigger off, median ms: /'
