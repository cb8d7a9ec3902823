-- 0020: who uploaded which bytes (issue #25, item 7: attach by name), and change sequences per
-- reader (item 9: ETags that do not show other users' activity), below.
--
-- `files` holds one row per stored original (content-addressed: `originals/<sha256>.jpg`), shared
-- by everyone who uploaded those bytes. Until now it also held the first uploader's file name and
-- a pending mark, and `POST /classes/Photo` attached any stored file by its name: an oracle for
-- "does anyone here have these bytes", and a new photo inherited the first uploader's file name.
--
-- `file_uploads` records each caller's upload of the bytes, with the name they gave it, until
-- a photo of theirs attaches it (the create consumes the row) or the orphan collector removes it
-- after `orphan_grace_hours`. A caller may attach a file only through their own row (or a photo of
-- those bytes they already own: the same photo comes back); the master key may attach any file.
-- An upload row keeps the file from any purge: the bytes are released only when no photo and no
-- upload row refers to them, checked under the `files` row's lock (TrashService.releaseFile).
--
-- `uploader_id` is null for the master key (and `galleryd import`). Uploads pending when this
-- migration runs have no known uploader: they become the master key's (nulls) and a user re-uploads.
create table file_uploads (
    checksum          text not null references files (checksum) on delete cascade,
    uploader_id       text references users (object_id) on delete cascade,
    original_filename text not null,
    uploaded_at       timestamptz not null default clock_timestamp(),
    constraint file_uploads_checksum_uploader_key unique nulls not distinct (checksum, uploader_id)
);

-- The orphan collector's scan: uploads not attached for a while.
create index file_uploads_uploaded_at_idx on file_uploads (uploaded_at);
create index file_uploads_uploader_idx on file_uploads (uploader_id);

insert into file_uploads (checksum, uploader_id, original_filename, uploaded_at)
select checksum, null, coalesce(original_filename, name), pending_since from files where pending_since is not null;

-- The first uploader's name and the shared pending mark now live per upload.
drop index files_pending_since;
alter table files drop column pending_since, drop column original_filename;

-- Change sequences per reader (issue #25, item 9): the class-wide sequences of 0010 move on any
-- user's write, so a user's ETag changed (200 instead of 304) when someone else uploaded, showing
-- others' activity. A user's find now depends only on sequences of what they may read:
--   `Photo:<owner>`   moves when a photo of that owner changes (a user's Photo find reads only theirs);
--   `Reader:<reader>` moves when anything a reader reads through galleries changes: a gallery they
--                     may read (before or after the change: sharing and unsharing move it), its
--                     items, and the photos in it. The reader is the gallery's owner or a grantee of
--                     read in its ACL (`*`: everyone who reads public galleries).
--   `Photo:` and `Reader:` (no id) are those of ownerless rows, and `Accounts` moves when the first
--   account is made or the last deleted: with `Reader:*`, what a caller without a session may read.
-- The master key keeps the class-wide sequences.
--
-- Marked per statement like 0010 (rows in change_scope_pending) and bumped at commit by the
-- same deferred trigger, after its class bump: every bump holds the lowest-ranked class row, so
-- bumps are serialized and the values, drawn from one sequence, are handed out in commit order.
-- A reader of change_scope_sequences (ClassChangeSequences.refresh) therefore sees a prefix and
-- reads only the rows above the highest value it has seen. Each bump is announced on the same
-- channel as 0010's, "<scope> <seq>".
create sequence change_scope_seq;

create table change_scope_sequences (
    scope text primary key,
    seq   bigint not null
);
create index change_scope_sequences_seq_idx on change_scope_sequences (seq);

-- The scopes a transaction has changed and not yet bumped; rows live only until its commit.
create table change_scope_pending (scope text not null);

-- Who reads a gallery: its owner ('' when it has none) and every grantee of read in its ACL.
create function gallery_readers(owner text, acl jsonb) returns setof text
language sql immutable as $$
    select coalesce(owner, '')
    union
    select key from jsonb_each(coalesce(acl, '{}'::jsonb)) where value->>'read' = 'true'
$$;

-- Photos: their owners' (before and after an update: the upgrade to accounts gives ownerless
-- photos an owner), and the readers of every gallery holding them.
create function mark_photo_scopes() returns trigger
language plpgsql as $$
begin
    if tg_op = 'UPDATE' then
        insert into change_scope_pending (scope)
        select 'Photo:' || coalesce(owner_id, '') from old_rows
        union
        select 'Photo:' || coalesce(owner_id, '') from new_rows
        union
        select 'Reader:' || r.reader
          from new_rows c
          join gallery_items gi on gi.photo_id = c.object_id
          join galleries g on g.object_id = gi.gallery_id
         cross join lateral gallery_readers(g.owner_id, g.acl) r(reader);
    else
        insert into change_scope_pending (scope)
        select 'Photo:' || coalesce(owner_id, '') from changed_rows
        union
        select 'Reader:' || r.reader
          from changed_rows c
          join gallery_items gi on gi.photo_id = c.object_id
          join galleries g on g.object_id = gi.gallery_id
         cross join lateral gallery_readers(g.owner_id, g.acl) r(reader);
    end if;
    return null;
end
$$;

-- Galleries: their readers, before and after an update.
create function mark_gallery_scopes() returns trigger
language plpgsql as $$
begin
    if tg_op = 'UPDATE' then
        insert into change_scope_pending (scope)
        select distinct 'Reader:' || r.reader
          from (select owner_id, acl from old_rows union all select owner_id, acl from new_rows) g
         cross join lateral gallery_readers(g.owner_id, g.acl) r(reader);
    else
        insert into change_scope_pending (scope)
        select distinct 'Reader:' || r.reader
          from changed_rows g cross join lateral gallery_readers(g.owner_id, g.acl) r(reader);
    end if;
    return null;
end
$$;

-- Gallery items: the readers of their galleries (both, when an item moves).
create function mark_gallery_item_scopes() returns trigger
language plpgsql as $$
begin
    if tg_op = 'UPDATE' then
        insert into change_scope_pending (scope)
        select distinct 'Reader:' || r.reader
          from galleries g cross join lateral gallery_readers(g.owner_id, g.acl) r(reader)
         where g.object_id in (select gallery_id from old_rows union select gallery_id from new_rows);
    else
        insert into change_scope_pending (scope)
        select distinct 'Reader:' || r.reader
          from galleries g cross join lateral gallery_readers(g.owner_id, g.acl) r(reader)
         where g.object_id in (select gallery_id from changed_rows);
    end if;
    return null;
end
$$;

create trigger photos_scope_insert after insert on photos
    referencing new table as changed_rows for each statement execute function mark_photo_scopes();
create trigger photos_scope_update after update on photos
    referencing old table as old_rows new table as new_rows for each statement execute function mark_photo_scopes();
create trigger photos_scope_delete after delete on photos
    referencing old table as changed_rows for each statement execute function mark_photo_scopes();

create trigger galleries_scope_insert after insert on galleries
    referencing new table as changed_rows for each statement execute function mark_gallery_scopes();
create trigger galleries_scope_update after update on galleries
    referencing old table as old_rows new table as new_rows for each statement execute function mark_gallery_scopes();
create trigger galleries_scope_delete after delete on galleries
    referencing old table as changed_rows for each statement execute function mark_gallery_scopes();

create trigger gallery_items_scope_insert after insert on gallery_items
    referencing new table as changed_rows for each statement execute function mark_gallery_item_scopes();
create trigger gallery_items_scope_update after update on gallery_items
    referencing old table as old_rows new table as new_rows for each statement execute function mark_gallery_item_scopes();
create trigger gallery_items_scope_delete after delete on gallery_items
    referencing old table as changed_rows for each statement execute function mark_gallery_item_scopes();

-- Bumps (and announces) one scope; called only with the class rows' locks held (see above).
create function bump_change_scope(marked text) returns void
language plpgsql as $$
declare
    next bigint := nextval('change_scope_seq');
begin
    insert into change_scope_sequences (scope, seq) values (marked, next)
        on conflict (scope) do update set seq = excluded.seq;
    perform pg_notify('galleryd_class_changes', marked || ' ' || next);
end
$$;

-- Bumps every scope this transaction marked, in scope order.
create function bump_pending_change_scopes() returns void
language plpgsql as $$
declare
    marked_all text[];
    marked text;
begin
    with taken as (delete from change_scope_pending returning scope)
    select array_agg(distinct scope order by scope) into marked_all from taken;
    foreach marked in array coalesce(marked_all, '{}') loop
        perform bump_change_scope(marked);
    end loop;
end
$$;

-- 0014's bump when the first account is made (or the last deleted), now with `Accounts`.
create or replace function bump_all_class_changes() returns trigger
language plpgsql as $$
begin
    perform bump_class_change_sequence(class_name) from class_change_sequences order by lock_rank;
    perform bump_change_scope('Accounts');
    return null;
end
$$;

-- 0010's commit-time bump, now followed by the scopes' (under the class rows' locks).
create or replace function bump_pending_class_change() returns trigger
language plpgsql as $$
begin
    perform bump_class_change_sequence(new.class_name);
    delete from class_change_pending where class_name = new.class_name;
    perform bump_pending_change_scopes();
    return null;
end
$$;
