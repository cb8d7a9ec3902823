-- Ownership and sharing (issue #15): every photo, gallery and gallery item belongs to a user, and a
-- gallery carries a Parse ACL that shares it (docs/architecture.md, "Users and access").
--
-- `owner_id` is null only for rows made before the first account existed (a single-tenant
-- install): `assign_ownerless_rows()` gives them to the first admin (`galleryd users create
-- --admin`, and every `migrate`/`serve` once an admin exists; docs/operations.md, "Upgrading to
-- accounts"). While no account exists at all, the app's keys still own everything, as before.
--
-- On delete of a user: RESTRICT. A user's photos own blobs (originals shared by checksum,
-- thumbnails, previews) that only TrashService releases; a cascade in SQL would leave them behind.
-- Deleting an account purges its photos and galleries through the trash path first.
alter table photos add column owner_id text references users (object_id) on delete restrict;
alter table galleries add column owner_id text references users (object_id) on delete restrict;
alter table gallery_items add column owner_id text references users (object_id) on delete restrict;

-- The ACL in Parse's format, normalized on write to the grants alone:
-- {"<userId>":{"read":true,"write":true},"*":{"read":true}}. Null: no ACL (the owner alone).
-- jsonb rather than a table of grants: a gallery is read with its ACL in one row, and the
-- "readable by U" test is one containment (`acl @> {"U":{"read":true}}`) served by the GIN index.
alter table galleries add column acl jsonb;

-- The same bytes are one photo per owner (each user's upload of them is their own photo).
-- Nulls not distinct: ownerless rows keep the old one-photo-per-checksum rule.
alter table photos drop constraint photos_checksum_key;
alter table photos add constraint photos_owner_checksum_key unique nulls not distinct (owner_id, checksum);
create index photos_checksum_idx on photos (checksum);

-- A user's first page, Recently Deleted and change feed: the single-tenant indexes with the owner first.
create index photos_owner_live_created_idx on photos (owner_id, created_at desc, object_id desc) where deleted_at is null;
create index photos_owner_updated_idx on photos (owner_id, updated_at, object_id);
create index photos_owner_deleted_idx on photos (owner_id, deleted_at) where deleted_at is not null;
create index galleries_owner_live_created_idx on galleries (owner_id, created_at desc, object_id desc) where deleted_at is null;
create index galleries_owner_idx on galleries (owner_id);
create index galleries_acl_idx on galleries using gin (acl jsonb_path_ops) where acl is not null;
create index gallery_items_owner_idx on gallery_items (owner_id);

-- Per-owner live/trashed photo counters, so a user's unfiltered count is one row read, as the
-- whole table's is (0004). Kept by triggers named after the global ones, so they fire after them
-- (PostgreSQL fires same-event triggers in name order): counters are locked global first, then
-- the owner's, by every writer.
create table owner_row_counts (
    owner_id text not null references users (object_id) on delete cascade,
    name     text not null,
    n        bigint not null,
    primary key (owner_id, name)
);

create function add_to_owner_counts(owner text, prefix text, live_delta bigint, trashed_delta bigint) returns void
language sql as $$
    insert into owner_row_counts (owner_id, name, n)
    select owner, d.name, d.delta
      from (values (prefix || '_live', live_delta), (prefix || '_trashed', trashed_delta)) d(name, delta)
     where d.delta <> 0
     order by d.name
    on conflict (owner_id, name) do update set n = owner_row_counts.n + excluded.n;
$$;

-- Per statement (inserts and deletes): one upsert per owner the statement touched, owners in order.
create function count_owner_rows() returns trigger
language plpgsql as $$
declare
    sign bigint := case tg_op when 'INSERT' then 1 else -1 end;
    r record;
begin
    for r in select owner_id, count(*) filter (where deleted_at is null) as live,
                    count(*) filter (where deleted_at is not null) as trashed
               from changed_rows where owner_id is not null group by owner_id order by owner_id loop
        perform add_to_owner_counts(r.owner_id, tg_argv[0], sign * r.live, sign * r.trashed);
    end loop;
    return null;
end
$$;

-- Per row, for trash and restore.
create function count_owner_trash() returns trigger
language plpgsql as $$
begin
    if new.owner_id is not null then
        perform add_to_owner_counts(new.owner_id, tg_argv[0],
            (new.deleted_at is null)::int - (old.deleted_at is null)::int,
            (new.deleted_at is not null)::int - (old.deleted_at is not null)::int);
    end if;
    return null;
end
$$;

create trigger photos_owner_count_trash after update of deleted_at on photos
    for each row execute function count_owner_trash('photos');
create trigger photos_owner_count_insert after insert on photos
    referencing new table as changed_rows
    for each statement execute function count_owner_rows('photos');
create trigger photos_owner_count_delete after delete on photos
    referencing old table as changed_rows
    for each statement execute function count_owner_rows('photos');

-- An owner never changes through the API; only assign_ownerless_rows() sets it, and it recounts.
create function refuse_owner_change() returns trigger
language plpgsql as $$
begin
    if old.owner_id is not null and new.owner_id is distinct from old.owner_id then
        raise exception 'the owner of % % cannot change', tg_table_name, old.object_id;
    end if;
    return new;
end
$$;

create trigger photos_owner_fixed before update of owner_id on photos
    for each row execute function refuse_owner_change();
create trigger galleries_owner_fixed before update of owner_id on galleries
    for each row execute function refuse_owner_change();
create trigger gallery_items_owner_fixed before update of owner_id on gallery_items
    for each row execute function refuse_owner_change();

-- The first account (and the last one's deletion) changes what a request without a session reads
-- (everything before, nothing or the public galleries after): every class's change sequence moves,
-- so no ETag of an earlier answer is 304 afterwards (0010). Users change rarely; the bump takes the
-- sequence rows in their lock order.
create function bump_all_class_changes() returns trigger
language plpgsql as $$
begin
    perform bump_class_change_sequence(class_name) from class_change_sequences order by lock_rank;
    return null;
end
$$;

create trigger users_change_access after insert or delete on users
    for each statement execute function bump_all_class_changes();

-- The upgrade from a single-tenant install: every row without an owner goes to the first admin
-- (the oldest `is_admin` user). Returns how many rows of each table moved (all 0 when there is
-- no admin or nothing ownerless). Safe to run any number of times, concurrently too (the first
-- admin's counter rows are recounted under their lock).
create function assign_ownerless_rows(out admin_id text, out photos bigint, out galleries bigint, out gallery_items bigint)
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
end
$$;

-- LiveQuery (0011): a gallery item's readers are its gallery's, so its event carries the
-- gallery's owner and ACL; every event says whether any account exists (before the first, the
-- app's keys read everything). A server delivers an event only to subscribers who may read the row.
create or replace function live_query_notify() returns trigger
    language plpgsql as $$
declare
    payload text;
    access jsonb;
begin
    if tg_argv[0] = 'GalleryItem' then
        select jsonb_build_object('owner_id', g.owner_id, 'acl', g.acl) into access
          from galleries g where g.object_id = case when tg_op = 'DELETE' then old.gallery_id else new.gallery_id end;
    end if;
    payload := json_build_object(
        'className', tg_argv[0],
        'op', lower(tg_op),
        'old', case when tg_op in ('UPDATE', 'DELETE') then to_jsonb(old) - 'search' end,
        'new', case when tg_op in ('INSERT', 'UPDATE') then to_jsonb(new) - 'search' end,
        'gallery', access,
        'noAccounts', not exists (select 1 from users))::text;
    if octet_length(payload) > 7900 then
        payload := json_build_object(
            'className', tg_argv[0], 'op', lower(tg_op), 'truncated', true,
            'objectId', case when tg_op = 'DELETE' then old.object_id else new.object_id end)::text;
    end if;
    perform pg_notify('galleryd_live', payload);
    return null;
end
$$;
