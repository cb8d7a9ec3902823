-- 0024: per-object ACLs applied on custom classes, and the built-in classes' class-level
-- permissions (issue #27; docs/decisions/036-custom-object-acls-and-shared-photo-pages.md).
--
-- A custom object's ACL is Parse Server's `_rperm`/`_wperm`: no ACL (`acl is null`) is public
-- read and write, `{}` is the master key's alone, otherwise the keys granted read (write). Each
-- custom table gets them as stored generated columns, so a read filters with one array overlap
-- (`readers && <caller's principals>`) and a write with another, never a jsonb walk per row.
-- New tables get the same columns from SchemaService.createClass (CustomObjectACL.columnsDDL).

-- Who an ACL grants write: the keys whose entry has "write": true (as acl_readers, 0022).
create function acl_writers(acl jsonb) returns text[]
language sql immutable parallel safe as $$
    select coalesce(array_agg(key order by key), '{}')
      from jsonb_each(coalesce(acl, '{}'::jsonb)) where value->>'write' = 'true'
$$;

do $$
declare
    id bigint;
begin
    for id in select table_id from custom_classes loop
        execute format(
            'alter table custom_%1$s'
            ' add column readers text[] generated always as'
            ' (case when acl is null then ''{*}''::text[] else acl_readers(acl) end) stored,'
            ' add column writers text[] generated always as'
            ' (case when acl is null then ''{*}''::text[] else acl_writers(acl) end) stored', id);
        -- The rows not everyone may read: what a caller's O(1) count subtracts (few in a public class).
        execute format(
            'create index custom_%1$s_private on custom_%1$s (object_id) include (readers)'
            ' where not (readers @> ''{*}''::text[])', id);
    end loop;
end
$$;

-- Class-level permissions of the built-in classes (Photo, Gallery, GalleryItem), set through
-- `PUT /parse/schemas/<Class>`. No row: every operation open (`*`), the access filter in SQL
-- deciding the rows as before; a row's permissions are checked before that filter, as a custom
-- class's are (BuiltInClassPermissions).
create table builtin_class_permissions (
    class_name text primary key,
    clp        jsonb not null
);
