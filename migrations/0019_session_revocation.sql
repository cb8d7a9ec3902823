-- Sessions that end reach LiveQuery in every instance (issue #25): a deleted session (logout, a
-- password change revoking the user's other sessions, a revocation by objectId, the account's
-- deletion, the sweep of expired ones) is announced on `galleryd_sessions` with its token hash,
-- so each instance ends the subscriptions that session's token made and forgets the token from
-- its session cache at once. Expiry itself has no statement: each instance times it.
create function sessions_revoked_notify() returns trigger language plpgsql as $$
begin
    perform pg_notify('galleryd_sessions', old.token_hash);
    return null;
end
$$;

create trigger sessions_revoked after delete on sessions
    for each row execute function sessions_revoked_notify();
