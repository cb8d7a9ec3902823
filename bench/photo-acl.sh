#!/usr/bin/env bash
# A user's first Photo page (20, newest first) and unconditioned count, with the access filter
# before per-object ACLs (owner only) and after (migration 0022: the owner's branch and the
# shared branch, ParseSQLCompiler+SharedRows; `or` is the single `owner or readers` filter that
# was measured and rejected). Median server execution time (EXPLAIN ANALYZE) of N runs, in ms.
#
#   scripts/pg.sh start /tmp/b; export PGHOST=/tmp/b PGPORT=5432 PGUSER=galleryd PGDATABASE=galleryd
#   for f in migrations/00{0,1}*.sql migrations/0020*.sql; do psql -q1f $f; done
#   psql -qf bench/photo-acl-seed.sql; bench/photo-acl.sh before
#   psql -q1f migrations/0022_roles_and_object_acls.sql; psql -qf bench/photo-acl-share.sql
#   bench/photo-acl.sh after; bench/photo-acl.sh or
set -euo pipefail
mode=${1:?before|after|or}
runs=${2:-21}
cols="t.object_id, t.created_at, t.updated_at, t.filename, t.title, t.tags, t.original_key, t.thumbnail_key, t.owner_id"
order="order by t.created_at desc, t.object_id desc"
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
measure() {  # $1 label, $2 statement
  for _ in $(seq "$runs"); do
    psql -Atq -c "explain (analyze, format json) $2" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["Execution Time"])'
  done | median | xargs printf '%-6s %-34s %8s ms\n' "$mode" "$1"
}
for user in aliceAAAAA carolCCCCC daveDDDDDD eveEEEEEEE; do
  # alice and carol are members of Friends; dave and eve are not.
  case $user in alice*|carol*) p="'{*,$user,role:Friends}'::text[]" ;; *) p="'{*,$user}'::text[]" ;; esac
  shared="t.readers <> '{}' and t.readers && $p and t.owner_id is distinct from '$user'"
  case $mode in
  before)
    measure "$user page" "select $cols from photos t where t.owner_id = '$user' and t.deleted_at is null $order limit 20"
    measure "$user count" "select n from owner_row_counts where owner_id = '$user' and name = 'photos_live'" ;;
  after)
    measure "$user page" "select $cols from ((select t.* from photos t where t.deleted_at is null and t.owner_id = '$user' $order limit 20)
      union all (select t.* from photos t where t.deleted_at is null and $shared $order limit 20)) t $order limit 20 offset 0"
    measure "$user count" "select coalesce((select n from owner_row_counts where owner_id = '$user' and name = 'photos_live'), 0)
      + (select count(*) from photos t where t.deleted_at is null and $shared)" ;;
  or)
    measure "$user page" "select $cols from photos t where (t.owner_id = '$user' or (t.readers <> '{}' and t.readers && $p))
      and t.deleted_at is null $order limit 20" ;;
  esac
done
