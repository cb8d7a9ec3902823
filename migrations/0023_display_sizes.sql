-- 0023: display sizes (issue #29): Flickr's ladder of named sizes rendered on first request, and a
-- ThumbHash placeholder per photo.
--
-- `photo_sizes` lists the renditions in the blob store (`sizes/<objectId>/<size>.jpg`): the cache
-- that `size_cache_bytes` bounds. A row is written after its blob, and the blob deleted after its row,
-- so every row names a blob that exists (a crash in between leaves at most an unlisted blob, which
-- the next render of that size overwrites). `last_used_at` is the LRU order: renders and requests
-- since the last flush move it (SizeCache); the oldest go first when the total is over the bound.
-- Purging a photo removes its rows (cascade) and TrashService its blobs; re-processing removes both.
create table photo_sizes (
    photo_id     text not null references photos (object_id) on delete cascade,
    size         text not null,
    blob_key     text not null unique,
    bytes        bigint not null check (bytes >= 0),
    created_at   timestamptz not null default clock_timestamp(),
    last_used_at timestamptz not null default clock_timestamp(),
    primary key (photo_id, size)
);

-- Eviction reads the least recently used first.
create index photo_sizes_last_used_idx on photo_sizes (last_used_at);

-- The ThumbHash of the photo (evanw/thumbhash, base64, about 25 bytes): the worker writes it with the
-- derivatives; photos processed before this migration get it when re-processed (it stays null until then).
alter table photos add column thumbhash text;
