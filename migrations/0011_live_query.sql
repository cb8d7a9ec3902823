-- 0011_live_query: every change to photos, galleries and gallery items is announced on the
-- `galleryd_live` channel, so LiveQuery subscribers on every instance see changes made by any
-- instance (or by hand in psql). The payload carries the row before and after (minus the search
-- vector), which lets the server tell create/update/enter/leave/delete apart without a query.
-- NOTIFY payloads are limited to 8000 bytes: a larger row (thousands of tags) is announced by id
-- only, marked "truncated", and the server skips it (documented in docs/live-query.md).
create or replace function live_query_notify() returns trigger
    language plpgsql as $$
declare
    payload text;
begin
    payload := json_build_object(
        'className', tg_argv[0],
        'op', lower(tg_op),
        'old', case when tg_op in ('UPDATE', 'DELETE') then to_jsonb(old) - 'search' end,
        'new', case when tg_op in ('INSERT', 'UPDATE') then to_jsonb(new) - 'search' end)::text;
    if octet_length(payload) > 7900 then
        payload := json_build_object(
            'className', tg_argv[0], 'op', lower(tg_op), 'truncated', true,
            'objectId', case when tg_op = 'DELETE' then old.object_id else new.object_id end)::text;
    end if;
    perform pg_notify('galleryd_live', payload);
    return null;
end
$$;

create trigger photos_live_query after insert or update or delete on photos
    for each row execute function live_query_notify('Photo');
create trigger galleries_live_query after insert or update or delete on galleries
    for each row execute function live_query_notify('Gallery');
create trigger gallery_items_live_query after insert or update or delete on gallery_items
    for each row execute function live_query_notify('GalleryItem');
