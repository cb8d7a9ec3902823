-- 0020: who uploaded which bytes (issue #25, item 7: attach by name).
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

