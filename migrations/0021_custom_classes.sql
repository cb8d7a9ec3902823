-- 0021_custom_classes: the classes an app defines through /parse/schemas or by saving to them
-- (docs/decisions/031-custom-classes.md).
--
-- Each class is one table `custom_<table_id>` with typed columns (`c<N>`, numbered by the server),
-- as Parse Server's PostgreSQL adapter keeps a table per class: the names in SQL are the server's,
-- never the client's. This table holds what maps Parse names to them, with the class-level
-- permissions and the indexes; it is changed in the same transaction as the DDL it describes.

create sequence custom_class_ids;

create table custom_classes (
    class_name  text primary key,
    table_id    bigint not null unique,
    -- [{"name":"title","type":"String","column":"c1"}, {"name":"owner","type":"Pointer","targetClass":"_User","column":"c2"}, …]
    fields      jsonb not null default '[]',
    -- The number of the next column (columns of deleted fields are never reused).
    next_column int not null default 1,
    -- {"find":{"*":true}, "get":{…}, …}: ClassLevelPermissions.
    clp         jsonb not null,
    -- [{"name":"byTitle","keys":[{"field":"title","direction":1}],"sqlName":"custom_3_i1"}, …]
    indexes     jsonb not null default '[]',
    created_at  timestamptz not null default now()
);

-- The O(1) count of a custom table, in row_counts under tg_argv[0] (`custom_<table_id>`), kept by
-- statement triggers with transition tables as 0004 keeps Photo's.
create function count_custom_rows() returns trigger
language plpgsql as $$
begin
    if tg_op = 'INSERT' then
        insert into row_counts (name, n) select tg_argv[0], count(*) from new_rows
            on conflict (name) do update set n = row_counts.n + excluded.n;
    else
        update row_counts set n = n - (select count(*) from old_rows) where name = tg_argv[0];
    end if;
    return null;
end
$$;
