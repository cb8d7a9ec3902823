-- request_ids.key held the scope of a create in clear: its path, the caller and the caller's
-- session token, so every backup of the table held live tokens. From now on the key is the
-- SHA-256 (hex) of that scope and the request id (ParseRequestIdempotency.recordKey), and the
-- table refuses anything else.
--
-- Live records are hashed in place (the key they are looked up by from now on is the hash of the
-- same text), so a retry already under way still gets its first answer; expired ones go.
delete from request_ids where expires_at < now();

update request_ids set key = encode(sha256(convert_to(key, 'UTF8')), 'hex');

alter table request_ids add constraint request_ids_key_is_a_digest check (key ~ '^[0-9a-f]{64}$');
