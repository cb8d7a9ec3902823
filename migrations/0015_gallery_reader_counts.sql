-- A user's Gallery count in O(1), as Photo's is (0014; issue #15). A user reads the galleries they
-- own, those whose ACL grants them read, and the public ones (ACL "*" read): the count a find
-- without a condition would page through is
--
--     galleries_public_live (row_counts)  +  galleries_readable (owner_row_counts, per user)
--
-- where the first counts the live public galleries once for everyone, and the second a user's live
-- galleries that are not public and that they own or are granted read on. Public galleries are
-- kept out of the per-user counter so that the sum counts each gallery once: a public gallery a
-- user also owns is still one gallery. GalleryItem has no counter of its own, global or per owner
-- (its counts are per gallery, a condition); it keeps its count(*).
--
-- Kept like 0004 and 0014: inserts and deletes per statement from a transition table (one upsert
-- per reader a statement touches, readers in order); trash, restore and ACL changes per row. The
-- triggers are named after the global counter triggers (galleries_count_*) and before the change
-- sequences' (galleries_seq_*), so every writer locks row_counts, then owner_row_counts, then the
-- sequences. A user named in an ACL but deleted since has no counter to keep (owner_row_counts
-- rows go with their user); grants to them are skipped.

insert into row_counts (name, n)
select 'galleries_public_live', count(*) from galleries where deleted_at is null and acl @> '{"*":{"read":true}}';

-- The users, besides the public, who read a gallery in this state: none while it is trashed or
-- public, else its owner and the users its ACL grants read, each once, only users that exist.
create function gallery_private_readers(owner text, acl jsonb, deleted_at timestamptz) returns setof text
language sql stable as $$
    select r.reader from (
        select owner as reader where owner is not null
        union
        select e.key from jsonb_each(coalesce(acl, '{}'::jsonb)) e where e.key <> '*' and e.value @> '{"read":true}'
    ) r
    where deleted_at is null and not coalesce(acl @> '{"*":{"read":true}}', false)
      and exists (select 1 from users u where u.object_id = r.reader)
$$;

create function add_to_gallery_reader_counts(reader text, delta bigint) returns void
language sql as $$
    insert into owner_row_counts (owner_id, name, n) values (reader, 'galleries_readable', delta)
    on conflict (owner_id, name) do update set n = owner_row_counts.n + excluded.n;
$$;

-- Per statement (inserts and deletes).
create function count_gallery_readers() returns trigger
language plpgsql as $$
declare
    sign bigint := case tg_op when 'INSERT' then 1 else -1 end;
    public_rows bigint;
    r record;
begin
    select count(*) into public_rows from changed_rows
     where deleted_at is null and coalesce(acl @> '{"*":{"read":true}}', false);
    if public_rows <> 0 then
        update row_counts set n = n + sign * public_rows where name = 'galleries_public_live';
    end if;
    for r in select reader, count(*) as n
               from changed_rows c cross join lateral gallery_private_readers(c.owner_id, c.acl, c.deleted_at) reader
              group by reader order by reader loop
        perform add_to_gallery_reader_counts(r.reader, sign * r.n);
    end loop;
    return null;
end
$$;

-- Per row, for trash, restore and a changed ACL: the readers before leave, the readers after come.
create function count_gallery_readers_change() returns trigger
language plpgsql as $$
declare
    public_delta bigint :=
        (new.deleted_at is null and coalesce(new.acl @> '{"*":{"read":true}}', false))::int
        - (old.deleted_at is null and coalesce(old.acl @> '{"*":{"read":true}}', false))::int;
    r record;
begin
    if public_delta <> 0 then
        update row_counts set n = n + public_delta where name = 'galleries_public_live';
    end if;
    for r in select d.reader, sum(d.delta)::bigint as delta from (
                 select reader, -1 as delta from gallery_private_readers(old.owner_id, old.acl, old.deleted_at) reader
                 union all
                 select reader, 1 from gallery_private_readers(new.owner_id, new.acl, new.deleted_at) reader) d
              group by d.reader having sum(d.delta) <> 0 order by d.reader loop
        perform add_to_gallery_reader_counts(r.reader, r.delta);
    end loop;
    return null;
end
$$;

create trigger galleries_readers_count_change after update of deleted_at, acl on galleries
    for each row when (old.deleted_at is distinct from new.deleted_at or old.acl is distinct from new.acl)
    execute function count_gallery_readers_change();
create trigger galleries_readers_count_insert after insert on galleries
    referencing new table as changed_rows
    for each statement execute function count_gallery_readers();
create trigger galleries_readers_count_delete after delete on galleries
    referencing old table as changed_rows
    for each statement execute function count_gallery_readers();

-- Every existing user's count, once.
insert into owner_row_counts (owner_id, name, n)
select reader, 'galleries_readable', count(*)
  from galleries g cross join lateral gallery_private_readers(g.owner_id, g.acl, g.deleted_at) reader
 group by reader order by reader;

-- The upgrade's bulk owner assignment (0014) recounts the admin's readable galleries once, as it
-- recounts their photos (an owner is set nowhere else, and no trigger above watches owner_id: a
-- per-row counter update over every gallery would be 0004's O(n²)).
create or replace function assign_ownerless_rows(out admin_id text, out photos bigint, out galleries bigint, out gallery_items bigint)
language plpgsql as $$
begin
    select object_id into admin_id from users where is_admin order by created_at, object_id limit 1;
    photos := 0; galleries := 0; gallery_items := 0;
    if admin_id is null then return; end if;
    update photos set owner_id = admin_id where owner_id is null;
    get diagnostics photos = row_count;
    update galleries set owner_id = admin_id where owner_id is null;
    get diagnostics galleries = row_count;
    update gallery_items set owner_id = admin_id where owner_id is null;
    get diagnostics gallery_items = row_count;
    if photos > 0 then
        -- One recount instead of a per-row counter trigger (0004: per-row counter updates in one
        -- statement cost O(n²)).
        insert into owner_row_counts (owner_id, name, n)
        select admin_id, c.name, c.n from (
            select 'photos_live' as name, count(*) filter (where deleted_at is null) as n from photos where owner_id = admin_id
            union all
            select 'photos_trashed', count(*) filter (where deleted_at is not null) from photos where owner_id = admin_id) c
        order by c.name
        on conflict (owner_id, name) do update set n = excluded.n;
    end if;
    if galleries > 0 then
        insert into owner_row_counts (owner_id, name, n)
        select admin_id, 'galleries_readable', count(*)
          from galleries g
         where exists (select 1 from gallery_private_readers(g.owner_id, g.acl, g.deleted_at) r where r = admin_id)
        on conflict (owner_id, name) do update set n = excluded.n;
    end if;
end
$$;

-- A user's first page of galleries and an account list, newest first.
create index users_created_idx on users (created_at desc, object_id desc);
