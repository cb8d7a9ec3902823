#!/usr/bin/env bash
# A `where` on a Relation field (`{"likes":<fan>}`, docs/decisions/046): the first page of 20 posts
# (newest first) and the count, with the named fan read as the caller may read it (a subquery of
# its class with its ACL filter: as `ParseSQLCompiler.relationSQL` writes it for one object, the
# pairs read by the id and the target tested with constants; and the `in (…)` semi-join it writes
# for several) against the join table read by the id alone (Parse Server's `owningIds`, no check). Tables shaped as
# SchemaService makes a custom class and a Relation's join table: 100k posts, 20k fans, one fan
# liked by 5,000 posts, the others by ~10. Also `$ne` of that fan. Median server execution time
# (EXPLAIN ANALYZE) of N runs, in ms, the two alternating.
#
#   scripts/pg.sh start /tmp/b; export PGHOST=/tmp/b PGPORT=5432 PGUSER=galleryd PGDATABASE=galleryd
#   bench/relation-where.sh [runs]
set -euo pipefail
runs=${1:-21}
psql -q <<'SQL'
drop table if exists rw_likes, rw_posts, rw_fans;
create table rw_posts (object_id text primary key, created_at timestamptz not null, title text,
  readers text[] not null default '{*}');
create index rw_posts_created on rw_posts (created_at, object_id);
create table rw_fans (object_id text primary key, created_at timestamptz not null default now(),
  readers text[] not null default '{*}');
create table rw_likes (owning_id text not null references rw_posts (object_id) on delete cascade,
  related_id text not null, primary key (owning_id, related_id));
create index rw_likes_related on rw_likes (related_id, owning_id);
insert into rw_posts (object_id, created_at, title)
  select 'p' || i, now() - make_interval(secs => i), 'post ' || i from generate_series(1, 100000) i;
insert into rw_fans (object_id, readers)
  select 'f' || i, case when i % 2 = 0 then '{*}' else array['alice'] end from generate_series(1, 20000) i;
insert into rw_likes select 'p' || (i * 7 % 100000 + 1), 'f2' from generate_series(1, 5000) i on conflict do nothing;
insert into rw_likes select 'p' || (i * 13 % 100000 + 1), 'f' || (i / 10 + 3) from generate_series(1, 190000) i
  on conflict do nothing;
analyze rw_posts; analyze rw_fans; analyze rw_likes;
SQL
p="'{*,bob}'::text[]"
plain="t.object_id in (select r.owning_id from rw_likes r where r.related_id = 'f2')"
semi="t.object_id in (select j1.owning_id from rw_likes j1 where j1.related_id in
  (select s2.object_id from rw_fans s2 where s2.object_id = 'f2' and s2.readers && $p))"
checked="t.object_id in (select j1.owning_id from rw_likes j1 where j1.related_id = 'f2' and 'f2'::text in
  (select s2.object_id from rw_fans s2 where s2.object_id = 'f2' and s2.readers && $p))"
page() { echo "select t.object_id, t.created_at, t.title from rw_posts t where $1 and t.readers && $p
  order by t.created_at desc, t.object_id desc limit 20"; }
count() { echo "select count(*) from rw_posts t where $1 and t.readers && $p"; }
time_of() {
  psql -Atq -c "explain (analyze, format json) $1" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["Execution Time"])'
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for kind in page count; do
  for negated in "" "not "; do
    : >/tmp/rw_plain; : >/tmp/rw_semi; : >/tmp/rw_checked
    for _ in $(seq "$runs"); do
      time_of "$($kind "$negated($plain)")" >>/tmp/rw_plain
      time_of "$($kind "$negated($semi)")" >>/tmp/rw_semi
      time_of "$($kind "$negated($checked)")" >>/tmp/rw_checked
    done
    printf '%-6s %-4s id alone %8s ms   checked, in (...) %8s ms   checked, constants %8s ms\n' \
      "$kind" "${negated:-in}" "$(median </tmp/rw_plain)" "$(median </tmp/rw_semi)" "$(median </tmp/rw_checked)"
  done
done
rm -f /tmp/rw_plain /tmp/rw_semi /tmp/rw_checked
psql -q -c "drop table rw_likes, rw_posts, rw_fans"
