#!/usr/bin/env bash
# A custom class's first page (20, newest first) and unconditioned count with per-object ACLs
# (migration 0024, docs/decisions/036): without the ACL filter (as before) and with it, for a
# caller with no private rows and for one with 1,000 of the 10,000 private rows among 1M public
# ones. Median server execution time (EXPLAIN ANALYZE) of N runs, in ms.
#
#   scripts/pg.sh start /tmp/b; export PGHOST=/tmp/b PGPORT=5432 PGUSER=galleryd PGDATABASE=galleryd
#   for f in migrations/0*.sql; do psql -q1f $f; done; bench/custom-acl.sh seed; bench/custom-acl.sh
set -euo pipefail
runs=${2:-21}
t=custom_900
if [ "${1:-}" = seed ]; then
  psql -q <<SQL
create table $t (object_id text primary key, created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(), acl jsonb, c1 text);
create index ${t}_created on $t (created_at, object_id);
alter table $t
    add column readers text[] generated always as
        (case when acl is null then '{*}'::text[] else acl_readers(acl) end) stored,
    add column writers text[] generated always as
        (case when acl is null then '{*}'::text[] else acl_writers(acl) end) stored;
create index ${t}_private on $t (object_id) include (readers) where not (readers @> '{*}'::text[]);
insert into $t (object_id, created_at, c1, acl)
select 'r' || lpad(i::text, 9, '0'), now() - (i || ' seconds')::interval, 'file-' || i,
       case when i % 100 = 0 then jsonb_build_object(case when i % 1000 = 0 then 'aliceAAAAA' else 'bobBBBBBBB' end,
                                                    '{"read":true,"write":true}'::jsonb) end
from generate_series(1, 1000000) i;
insert into row_counts (name, n) values ('$t', 1000000) on conflict (name) do update set n = excluded.n;
vacuum analyze $t;
SQL
  exit 0
fi
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
measure() {  # $1 label, $2 statement
  for _ in $(seq "$runs"); do
    psql -Atq -c "explain (analyze, format json) $2" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["Execution Time"])'
  done | median | xargs printf '%-40s %8s ms\n' "$1"
}
order="order by t.created_at desc, t.object_id desc limit 20"
measure "page, no ACL filter (before)" "select t.object_id, t.created_at, t.c1 from $t t $order"
measure "count, counter only (before)" "select n from row_counts where name = '$t'"
for user in carolCCCCC aliceAAAAA; do
  p="'{*,$user}'::text[]"
  measure "page, $user" "select t.object_id, t.created_at, t.c1 from $t t where t.readers && $p $order"
  measure "count, $user" "select coalesce((select n from row_counts where name = '$t'), 0)
    - (select count(*) from $t t where not (t.readers @> '{*}'::text[]) and not (t.readers && $p))"
done
