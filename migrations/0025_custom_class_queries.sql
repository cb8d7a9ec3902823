-- 0025: custom classes answer repeated finds from kept answers, as Photo does (issue 27;
-- docs/decisions/037-custom-class-queries.md).
--
-- Each custom class gets a change sequence (0020's scopes): `Custom:<class name>` moves at the
-- commit of any transaction that inserted, updated or deleted its rows (or the pairs of one of its
-- Relations), or made, changed or dropped its `custom_classes` row (fields, class-level
-- permissions, indexes). Named by the class, not its table, so a class dropped and made again
-- keeps moving the same sequence. A custom find's ETag is made
-- from it (with the caller, as a Photo find's), so a kept answer is served only while nothing of
-- the class, its permissions or the caller's roles has changed. The scopes are bumped by 0020's
-- commit-time trigger, which runs once a class is pending: custom classes mark the class `Custom`
-- (ranked last, so its bump takes the class rows' locks in the same order as every other).
insert into class_change_sequences (class_name, lock_rank) values ('Custom', 4);

-- Marks `scope` (and the class `Custom`, once) as changed by this transaction; undone with a
-- savepoint, like 0010's marks. A scope marked twice is bumped once (bump_pending_change_scopes).
create function mark_custom_scope(scope text) returns void
language plpgsql as $$
begin
    insert into change_scope_pending (scope) values (scope);
    if current_setting('galleryd.changed_Custom', true) is distinct from '1' then
        perform set_config('galleryd.changed_Custom', '1', true);
        insert into class_change_pending (class_name) values ('Custom');
    end if;
end
$$;

-- Per statement on a custom table (tg_argv[0]: its class's scope), when it changed a row.
create function mark_custom_rows_changed() returns trigger
language plpgsql as $$
begin
    if exists (select 1 from changed_rows) then
        perform mark_custom_scope(tg_argv[0]);
    end if;
    return null;
end
$$;

-- A class's schema, permissions or existence changed: its finds' answers may have too.
create function mark_custom_class_changed() returns trigger
language plpgsql as $$
begin
    perform mark_custom_scope('Custom:' || coalesce(new.class_name, old.class_name));
    return null;
end
$$;

create trigger custom_classes_changed after insert or update or delete on custom_classes
    for each row execute function mark_custom_class_changed();

-- The row triggers of one custom table (SchemaService.createClass adds them to every new one),
-- marking `scope`: the class's own, also for the join table of one of its Relation fields
-- (`custom_<n>_r<k>`, SchemaService.addField: owning_id → related_id, Parse's `_Join` tables).
create function add_custom_change_triggers(tbl text, scope text) returns void
language plpgsql as $$
begin
    execute format('create trigger %I after insert on %I referencing new table as changed_rows'
        || ' for each statement execute function mark_custom_rows_changed(%L)', tbl || '_changes_insert', tbl, scope);
    execute format('create trigger %I after update on %I referencing new table as changed_rows'
        || ' for each statement execute function mark_custom_rows_changed(%L)', tbl || '_changes_update', tbl, scope);
    execute format('create trigger %I after delete on %I referencing old table as changed_rows'
        || ' for each statement execute function mark_custom_rows_changed(%L)', tbl || '_changes_delete', tbl, scope);
end
$$;

select add_custom_change_triggers('custom_' || table_id, 'Custom:' || class_name) from custom_classes;

-- LiveQuery (0011) on custom classes: each row change of `tbl` announced as an object of the class
-- `class` (a name Parse allows: letters, digits and `_`). SchemaService.createClass adds it to every
-- new class; a bulk load may disable it as bench/manifest-seed.sql disables Photo's.
create function add_custom_live_query_trigger(tbl text, class text) returns void
language plpgsql as $$
begin
    execute format('create trigger %I after insert or update or delete on %I for each row'
        || ' execute function live_query_notify(%L)', tbl || '_live_query', tbl, class);
end
$$;

select add_custom_live_query_trigger('custom_' || table_id, class_name) from custom_classes;
