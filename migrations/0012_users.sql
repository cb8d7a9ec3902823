-- Accounts and sessions, Parse's `_User` and `_Session` (issue #15).
--
-- A session token (`r:` + 32 random bytes) is shown to its client once; the table keeps only the
-- SHA-256 of it, as hex, so a leaked dump of this table logs nobody in. Passwords are stored as a
-- self-describing scrypt string (`scrypt$N$r$p$salt$hash`, base64), so parameters can be raised later
-- without a migration: a login with an older hash rehashes it.
create table users (
    object_id text primary key,
    username text not null,
    email text,
    password_hash text not null,
    is_admin boolean not null default false,
    created_at timestamptz not null default clock_timestamp(),
    updated_at timestamptz not null default clock_timestamp()
);

-- Parse Server treats usernames as case-sensitive and emails as case-insensitive for uniqueness.
create unique index users_username_key on users (username);
create unique index users_email_key on users (lower(email)) where email is not null;

create table sessions (
    object_id text primary key,
    token_hash text not null unique,
    user_id text not null references users (object_id) on delete cascade,
    -- 'signup', 'login' or 'cli' (Parse's createdWith.action).
    created_with text not null,
    installation_id text,
    created_at timestamptz not null default clock_timestamp(),
    expires_at timestamptz not null,
    last_used_at timestamptz not null default clock_timestamp()
);

create index sessions_user_id on sessions (user_id);
create index sessions_expires_at on sessions (expires_at);
