-- An uploaded file waiting to be attached to a photo.
--
-- `POST /files/<name>` stores the bytes and records them in `files`; the client then creates the
-- photo naming the file. Between the two, a purge of an older photo made of the same bytes used to
-- release the `files` row and the original (nothing referred to them any more), so the upload's
-- 201 named bytes that were gone. `pending_since` marks a file uploaded and not yet attached: the
-- upload sets it (holding the row's lock while it checks or writes the blob), creating a photo
-- from the file clears it (holding the same lock), and a purge releases a file only when no photo
-- refers to it and it is not pending. Files pending longer than `orphan_grace_hours` with no photo
-- are collected by the worker's orphan collector.
alter table files add column pending_since timestamptz;

-- The orphan collector's scan: files not attached for a while.
create index files_pending_since on files (pending_since) where pending_since is not null;
