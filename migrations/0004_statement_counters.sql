-- Row counters per statement for inserts and deletes.
--
-- 0001's per-row trigger updated the one row_counts row once for every row. Within one
-- statement each update walks the row versions the earlier updates of the same transaction left
-- behind, so n rows cost O(n²): a million-row load took hours, a 50,000-row delete ~30 s.
-- Statement-level triggers see the statement's rows in a transition table and update each
-- counter once.
--
-- Trash and restore (changes of deleted_at) keep 0001's per-row trigger: PostgreSQL allows a
-- transition table neither on a trigger with a column list nor on one with several events, and a
-- statement trigger on every UPDATE would also run for each status change the workers make.
--
-- Lock order is unchanged: an AFTER statement trigger runs after the rows' own triggers, so the
-- counters are still locked last (photo → galleries → counters, see 0003).

-- Adds to '<prefix>_live' and '<prefix>_trashed' in one UPDATE (the same lock order for every
-- caller), skipping a counter whose delta is 0.
create function add_to_live_and_trashed(prefix text, live_delta bigint, trashed_delta bigint) returns void
language sql as $$
    update row_counts
       set n = n + case name when prefix || '_live' then live_delta else trashed_delta end
     where name in (prefix || '_live', prefix || '_trashed')
       and (case name when prefix || '_live' then live_delta else trashed_delta end) <> 0;
$$;

-- Per statement: the inserted or deleted rows are in the transition table `changed_rows`.
create function count_live_and_trashed_rows() returns trigger
language plpgsql as $$
declare
    sign bigint := case tg_op when 'INSERT' then 1 else -1 end;
begin
    perform add_to_live_and_trashed(tg_argv[0], sign * count(*) filter (where deleted_at is null),
                                    sign * count(*) filter (where deleted_at is not null))
       from changed_rows;
    return null;
end
$$;

-- Per row, for trash and restore: 0001's function, now through the shared update.
create or replace function count_live_and_trashed() returns trigger
language plpgsql as $$
begin
    perform add_to_live_and_trashed(tg_argv[0],
        (new.deleted_at is null)::int - (old.deleted_at is null)::int,
        (new.deleted_at is not null)::int - (old.deleted_at is not null)::int);
    return null;
end
$$;

drop trigger photos_count on photos;
create trigger photos_count_trash after update of deleted_at on photos
    for each row execute function count_live_and_trashed('photos');
create trigger photos_count_insert after insert on photos
    referencing new table as changed_rows
    for each statement execute function count_live_and_trashed_rows('photos');
create trigger photos_count_delete after delete on photos
    referencing old table as changed_rows
    for each statement execute function count_live_and_trashed_rows('photos');

drop trigger galleries_count on galleries;
create trigger galleries_count_trash after update of deleted_at on galleries
    for each row execute function count_live_and_trashed('galleries');
create trigger galleries_count_insert after insert on galleries
    referencing new table as changed_rows
    for each statement execute function count_live_and_trashed_rows('galleries');
create trigger galleries_count_delete after delete on galleries
    referencing old table as changed_rows
    for each statement execute function count_live_and_trashed_rows('galleries');
