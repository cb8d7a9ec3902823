#!/usr/bin/env bash
# `$relatedTo`'s first page of 20 (newest first) and count, before and after the owner check of
# docs/decisions/043 (the owner read as a subquery of its class with its ACL filter, a test of
# constants beside `r.owning_id = <id>`), as `ParseSQLCompiler` writes them for a user. Tables shaped as SchemaService makes a custom class
# and a Relation's join table: 20k posts, 100k fans, one post with 5,000 likes, the others 10.
# Median server execution time (EXPLAIN ANALYZE) of N runs, in ms, the two alternating.
#
#   scripts/pg.sh start /tmp/b; export PGHOST=/tmp/b PGPORT=5432 PGUSER=galleryd PGDATABASE=galleryd
#   bench/relatedto-owner.sh [runs]
set -euo pipefail
runs=${1:-21}
psql -q <<'SQL'
drop table if exists rb_likes, rb_posts, rb_fans;
create table rb_posts (object_id text primary key, created_at timestamptz not null default now(),
  readers text[] not null default '{*}');
create table rb_fans (object_id text primary key, created_at timestamptz not null, name text,
  readers text[] not null default '{*}');
create index rb_fans_created on rb_fans (created_at, object_id);
create table rb_likes (owning_id text not null references rb_posts (object_id) on delete cascade,
  related_id text not null, primary key (owning_id, related_id));
create index rb_likes_related on rb_likes (related_id, owning_id);
insert into rb_posts (object_id, readers)
  select 'p' || i, case when i % 2 = 0 then '{*}' else array['alice'] end from generate_series(1, 20000) i;
insert into rb_fans (object_id, created_at, name)
  select 'f' || i, now() - make_interval(secs => i), 'fan ' || i from generate_series(1, 100000) i;
insert into rb_likes select 'p2', 'f' || (i * 7 % 100000 + 1) from generate_series(1, 5000) i on conflict do nothing;
insert into rb_likes select 'p' || (i / 10 + 3), 'f' || (i * 13 % 100000 + 1) from generate_series(1, 190000) i
  on conflict do nothing;
analyze rb_posts; analyze rb_fans; analyze rb_likes;
SQL
p="'{*,bob}'::text[]"
before="t.object_id in (select r.related_id from rb_likes r where r.owning_id = 'p2')"
after="t.object_id in (select r.related_id from rb_likes r where r.owning_id = 'p2' and 'p2'::text in
  (select s1.object_id from rb_posts s1 where s1.object_id = 'p2' and s1.readers && $p))"
page() { echo "select t.object_id, t.created_at, t.name from rb_fans t where $1 and t.readers && $p
  order by t.created_at desc, t.object_id desc limit 20"; }
count() { echo "select count(*) from rb_fans t where $1 and t.readers && $p"; }
time_of() {
  psql -Atq -c "explain (analyze, format json) $1" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["Execution Time"])'
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for kind in page count; do
  : >/tmp/rb_before; : >/tmp/rb_after
  for _ in $(seq "$runs"); do
    time_of "$($kind "$before")" >>/tmp/rb_before
    time_of "$($kind "$after")" >>/tmp/rb_after
  done
  printf '%-6s before %8s ms   after %8s ms\n' "$kind" "$(median </tmp/rb_before)" "$(median </tmp/rb_after)"
done
rm -f /tmp/rb_before /tmp/rb_after
psql -q -c "drop table rb_likes, rb_posts, rb_fans"
