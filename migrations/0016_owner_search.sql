-- 0016_owner_search: a user's $text search narrowed to their own rows inside one index.
--
-- A user's ranked $text (`order=$score`) has no LIMIT shortcut: every match is ranked. With only
-- the GIN index on `search` and the owner-first B-trees (0014), PostgreSQL BitmapAnds the text's
-- matches with the owner's whole index range: for a user with 1M photos among 10M that walked
-- 900,000 index entries per query (247 ms against 3.2 ms for the same search over a single
-- tenant's 1M; docs/architecture.md, "Per-owner counters…"). A GIN index on (owner_id, search)
-- meets the owner and the words inside one index: 69 ms. btree_gin (contrib, a trusted extension
-- since PostgreSQL 13: a user who may create in the database may add it) gives GIN the text
-- equality on owner_id.
--
-- The build reads the whole table (71 s for 10M rows on 2 busy cores), longer than the
-- serving `statement_timeout_ms` that `migrate` runs under, so this migration lifts the timeout
-- for its own transaction. Writes to photos wait for the build (docs/operations.md, "Upgrading").
set local statement_timeout = 0;
create extension if not exists btree_gin;
create index photos_owner_search_idx on photos using gin (owner_id, search);
