-- Seeds :rows photo rows for bench/manifest.sh (psql variables `rows`, `owners`, `batch`).
-- Titles, tags and filenames come from small word lists so full-text search finds realistic
-- match counts; created_at walks back from 2024 with bursts of equal timestamps (phones shoot
-- bursts), so keyset paging must rely on the objectId tie-breaker.
-- With `owners` > 0 (0 = ownerless, the single-tenant shape) the rows are spread evenly over that
-- many users `benchuser0`…, so one user holds rows/owners of them (issue #15: the first page of a
-- user with 1M photos among 10M is owners=10, rows=10000000).
--
-- 10M rows load in reasonable time because (issue #15: the one 10M-row INSERT never finished):
-- - the rows go in batches of :batch (default 500,000), one INSERT and one transaction each, so
--   no transaction holds 10M rows of trigger state, WAL and transition tables;
-- - the LiveQuery NOTIFY trigger (0011, per row: a JSON payload of each row) is disabled for the
--   load and enabled again at the end. Nobody listens to a bench database being seeded, and 10M
--   payloads overflow PostgreSQL's 8 GB notification queue (the INSERT fails) or take hours;
-- - the photos' secondary indexes are dropped for the load and built again from their own
--   definitions (pg_get_indexdef) once the rows are in: one sort per index instead of 10M
--   random inserts into each B-tree and GIN. The primary key and the unique constraint stay.
-- The row counters are still kept by their triggers, unchanged: row_counts (0004) and
-- owner_row_counts (0014) are statement-level triggers, once per batch; bench/manifest.sh checks
-- both against count(*) afterwards.
\set ON_ERROR_STOP on
\if :{?batch}
\else
\set batch 500000
\endif
set synchronous_commit = off;
set maintenance_work_mem = '512MB';

insert into users (object_id, username, password_hash)
select 'benchuser' || n, 'bench' || n, 'bench-no-password' from generate_series(0, :owners::int - 1) n;

-- One batch: rows lo..hi, owners spread by i % owners.
create function pg_temp.seed_photos(lo bigint, hi bigint, owners int) returns void
language sql as $seed$
with words as (
    select array['Sunset','Morning','Golden','Quiet','Snowy','Rainy','Misty','Autumn','Summer','Winter',
                 'Spring','Evening','Blue','Old','Little','Hidden','Busy','Empty','Bright','Stormy'] as adjectives,
           array['beach','mountain','lake','forest','city','street','harbor','garden','bridge','river',
                 'market','desert','village','island','station','cathedral','meadow','canyon','pier','castle'] as nouns,
           array['Lisbon','Kyoto','Oslo','Lima','Cairo','Paris','Quebec','Hanoi','Porto','Bergen',
                 'Seville','Denver','Nairobi','Cusco','Vienna','Dublin','Tromso','Sapporo','Split','Galway'] as places,
           array['family','travel','food','dog','cat','kids','friends','sunset','beach','snow','hike','party',
                 'birthday','wedding','museum','architecture','street','night','portrait','landscape','car',
                 'bike','garden','flowers','concert','sport','work','home','holiday','christmas','rain',
                 'selfie','city','nature','sea','mountain','lake','autumn','summer','winter'] as tags
)
insert into photos (object_id, created_at, updated_at, filename, title, tags, content_type, byte_size, checksum,
                    width, height, aspect_ratio, orientation, taken_at, status, dominant_color, deleted_at,
                    original_key, thumbnail_key, preview_key, thumbnail_width, thumbnail_height, preview_width, preview_height,
                    owner_id)
select substr(md5(i::text), 1, 3) || lpad(i::text, 7, '0') as object_id,
       c.created_at, c.created_at,
       (array['IMG_','DSC','PXL_','DJI_','Screenshot_'])[1 + i % 5] || lpad((i * 7919 % 100000)::text, 5, '0') || '.jpg',
       case when i % 7 = 0 then ''
            -- Subjects come in threes (a few shots of the same thing), places in runs of 500 (a trip).
            else w.adjectives[1 + (i * 7) % 19] || ' ' || w.nouns[1 + (i / 3) % 20] || ' in ' || w.places[1 + (i / 500) % 20]
       end,
       case i % 4
            when 0 then '{}'::text[]
            when 1 then array[w.tags[1 + (i * 7) % 40]]
            when 2 then array[w.tags[1 + (i * 7) % 40], w.tags[1 + (i * 7 + 13) % 40]]
            else array[w.tags[1 + (i * 7) % 40], w.tags[1 + (i * 7 + 13) % 40], w.tags[1 + (i * 7 + 29) % 40]]
       end,
       'image/jpeg', 500000 + (i * 104729) % 9000000,
       encode(sha256(convert_to(i::text, 'UTF8')), 'hex'),
       d.w, d.h, d.w::float8 / d.h, 1, c.created_at - interval '1 hour' * (i % 500),
       case when i % 1000 = 0 then 'failed' when i % 997 = 0 then 'pending' else 'ready' end,
       '#' || substr(md5('c' || i), 1, 6),
       case when i % 100 = 0 then c.created_at + interval '1 day' end,
       'originals/' || encode(sha256(convert_to(i::text, 'UTF8')), 'hex') || '.jpg',
       'thumbnails/' || substr(md5(i::text), 1, 3) || lpad(i::text, 7, '0') || '.jpg',
       'previews/' || substr(md5(i::text), 1, 3) || lpad(i::text, 7, '0') || '.jpg',
       400, (400 * d.h / d.w), 2048, (2048 * d.h / d.w),
       case when owners > 0 then 'benchuser' || (i % owners) end
from generate_series(lo, hi) i
cross join words w
cross join lateral (
    -- About 2.5 minutes apart (with up to a minute of jitter); every 8th photo shares its
    -- neighbour's timestamp exactly.
    select i - (i % 8 / 7) as j
) b
cross join lateral (
    select date_trunc('milliseconds', timestamptz '2024-06-01 00:00:00+00' - interval '150 seconds' * b.j
           - interval '1 millisecond' * ((b.j * 7723) % 60000)) as created_at
) c
cross join lateral (
    select case i % 3 when 0 then 4032 when 1 then 3024 else 4000 end as w,
           case i % 3 when 0 then 3024 when 1 then 4032 else 3000 end as h
) d
$seed$;

-- The secondary indexes' definitions, kept in a table until they are built again (a failed seed
-- leaves them there, and the database is a throwaway one).
create table bench_seed_indexes as
select i.indexrelid::regclass::text as name, pg_get_indexdef(i.indexrelid) as definition
  from pg_index i
 where i.indrelid = 'photos'::regclass
   and not i.indisprimary
   and not exists (select 1 from pg_constraint c where c.conindid = i.indexrelid);
select format('drop index %s', name) from bench_seed_indexes \gexec
alter table photos disable trigger photos_live_query;

-- Each batch is its own statement, so its own transaction (psql autocommits each \gexec statement).
select format('select pg_temp.seed_photos(%s, %s, %s)', lo, least(lo + :batch::bigint - 1, :rows::bigint), :owners::int)
  from generate_series(1, :rows::bigint, :batch::bigint) lo \gexec

alter table photos enable trigger photos_live_query;
select definition from bench_seed_indexes \gexec
drop table bench_seed_indexes;
vacuum analyze photos;
vacuum analyze users;
