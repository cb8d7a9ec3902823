-- Answers to creates sent with X-Parse-Request-Id, recorded in the transaction that made the object.
--
-- A create whose COMMIT went through while the session dropped is answered 503 ("may or may not
-- have completed, try again"); the SDK retries with the same request id. The in-memory record of
-- answers cannot help there (it only keeps answers that were given, and only in one process), so
-- the answer is also written here with the object: the retry finds it and gets the first answer
-- back instead of making a second object. Rows expire after Parse Server's idempotency TTL.
create table request_ids (
    key text primary key,
    status int not null,
    reason text not null,
    body text not null,
    location text,
    expires_at timestamptz not null
);

create index request_ids_expires_at on request_ids (expires_at);
