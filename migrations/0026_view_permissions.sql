-- 0026: views over photos (issue #27 item 5, docs/decisions/038). A view is defined in the config
-- file (`[[views]]`); only its class-level permissions are data, changed through
-- `PUT /parse/schemas/<View>` (master key). No row: the view's default (anyone may get, find and
-- count; each caller still sees only the photos it may read). A row outlives its view's removal
-- from the config file and applies again if a view of that name comes back.
create table view_permissions (
    class_name text primary key,
    clp        jsonb not null,
    updated_at timestamptz not null default now()
);
