-- 0030: LiveQuery on `_User` (issue #27: "a Photo/Gallery/_User subscription's create/update/
-- enter/leave objects carry the app fields the subscriber may read";
-- docs/decisions/045-app-fields-on-user.md).
--
-- The accounts' changes are announced on `galleryd_live` as the other classes' are (0011), with
-- every column an app added (`app_<n>`, 0028) but never the password's hash or the administrator
-- flag, which leave the database in no payload. A change of the hash alone (a rehash at login)
-- is no change an app can see: no event. `email` is in the payload, as the row is, for the
-- server's own matching; no event sends it (it is shown to its owner alone, `selfOnly`).
create function live_query_notify_user() returns trigger
    language plpgsql as $$
declare
    old_row jsonb;
    new_row jsonb;
    payload text;
begin
    if tg_op in ('UPDATE', 'DELETE') then
        old_row := to_jsonb(old) - 'password_hash' - 'is_admin';
    end if;
    if tg_op in ('INSERT', 'UPDATE') then
        new_row := to_jsonb(new) - 'password_hash' - 'is_admin';
    end if;
    if tg_op = 'UPDATE' and old_row = new_row then
        return null;
    end if;
    payload := json_build_object('className', '_User', 'op', lower(tg_op), 'old', old_row, 'new', new_row)::text;
    if octet_length(payload) > 7900 then
        payload := json_build_object(
            'className', '_User', 'op', lower(tg_op), 'truncated', true,
            'objectId', coalesce(new_row, old_row) ->> 'object_id')::text;
    end if;
    perform pg_notify('galleryd_live', payload);
    return null;
end
$$;

create trigger users_live_query after insert or update or delete on users
    for each row execute function live_query_notify_user();
