-- 0022: Parse roles (`_Role`) and per-object ACLs on photos (issue #27, items 2 and 4).
--
-- A role has a unique, immutable name, an ACL (who may read and change the role itself) and two
-- relations: `users` (role_users) and `roles` (role_roles: the child roles whose users inherit
-- this role, Parse's "roles contained in a role"). A user's roles are every role reachable from
-- the roles they are a direct member of through role_roles (ParseRoleResolver, one recursive
-- query per request; `union` makes cycles harmless).
create table roles (
    object_id  text primary key,
    name       text not null,
    acl        jsonb not null default '{}'::jsonb,
    created_at timestamptz not null default clock_timestamp(),
    updated_at timestamptz not null default clock_timestamp(),
    constraint roles_name_key unique (name)
);

-- `users` relation: the role's direct members.
create table role_users (
    role_id text not null references roles (object_id) on delete cascade,
    user_id text not null references users (object_id) on delete cascade,
    primary key (role_id, user_id)
);
create index role_users_user_idx on role_users (user_id);

-- `roles` relation: `child_id` is in the `roles` relation of `parent_id`, so the users of the
-- child have the parent.
create table role_roles (
    parent_id text not null references roles (object_id) on delete cascade,
    child_id  text not null references roles (object_id) on delete cascade,
    primary key (parent_id, child_id)
);
create index role_roles_child_idx on role_roles (child_id);

-- Who an ACL grants read: the keys whose entry has "read": true (`*`, user ids, `role:Name`).
-- Immutable, so a stored generated column may use it.
create function acl_readers(acl jsonb) returns text[]
language sql immutable parallel safe as $$
    select coalesce(array_agg(key order by key), '{}')
      from jsonb_each(coalesce(acl, '{}'::jsonb)) where value->>'read' = 'true'
$$;

-- Photos get an ACL: `{}` is the default, the owner alone. The owner always reads,
-- changes and owns their photo; the ACL grants others (`*`, users, `role:Name`) read or write.
-- `readers` is what the access filter tests (`readers && <caller's principals>`, a GIN index);
-- it is empty for the default ACL, so the index holds only shared photos.
alter table photos add column acl jsonb not null default '{}'::jsonb;
-- The default ACL skips the function: an insert of many photos pays nothing for it.
alter table photos add column readers text[]
    generated always as (case when acl = '{}'::jsonb then '{}'::text[] else acl_readers(acl) end) stored;
create index photos_readers_idx on photos using gin (readers) where readers <> '{}';

-- Change sequences (0020): a photo's grantees see it change, like its owner (`Photo:<grantee>`,
-- `Photo:*` for everyone, `Photo:role:Name` for a role's members), before and after an update.
create or replace function mark_photo_scopes() returns trigger
language plpgsql as $$
begin
    if tg_op = 'UPDATE' then
        insert into change_scope_pending (scope)
        select 'Photo:' || coalesce(owner_id, '') from old_rows
        union
        select 'Photo:' || coalesce(owner_id, '') from new_rows
        union
        select 'Photo:' || r from old_rows, unnest(readers) r
        union
        select 'Photo:' || r from new_rows, unnest(readers) r
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
        select 'Photo:' || r from changed_rows, unnest(readers) r
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

-- Parse Config (issue #27, item 6): `GET/PUT /parse/config`. One row per parameter; a
-- `master_key_only` parameter is left out of the answer to anyone but the master key.
create table parse_config (
    name            text primary key,
    value           jsonb not null,
    master_key_only boolean not null default false,
    updated_at      timestamptz not null default clock_timestamp()
);
