-- 0010_class_change_sequences: a change sequence per Parse class, for the ETags of find and count.
--
-- Every transaction that inserts, deletes or updates rows of photos, galleries or gallery_items
-- adds one to the sequence of each class it changed, and sends the new value as a NOTIFY on
-- `galleryd_class_changes` ("<Class> <seq>"), delivered at commit. The server keeps the values in
-- memory from those notifications (ClassChangeSequences), so it answers If-None-Match with 304
-- without a query; after (re)connecting its listener it reads this table once.
--
-- Like the row counters of 0004, statement triggers with transition tables see every change: one
-- call per statement, whatever its number of rows, and nothing for a statement that changed no
-- row (a retried DELETE of a trashed photo). UPDATE gets its own trigger, since a trigger with a
-- transition table may have only one event; it covers trash and restore (deleted_at), a
-- derivative becoming ready (status and the thumbnail columns), edits of any visible field and
-- the position shifts of a gallery item move (every update also moves updated_at, a visible
-- field). Cascades (a gallery's items deleted with it) and the counters' own updates of galleries
-- (photo_count) are statements too, so they mark their classes.
--
-- Unlike the counters, the sequence row is not updated (and so locked) by the statement: a row
-- held from the first write until commit would serialize every writer of the class, and a
-- transaction holding it while it waits for a row another writer holds, which waits for the
-- sequence, would deadlock (a transactional batch editing two photos against a PUT of the
-- second). The statement trigger only marks the class for this transaction (a transaction-local
-- setting, and one row in class_change_pending); a deferred constraint trigger on that row makes
-- the bump at commit, once per class and transaction, when the transaction waits for nothing
-- else. A bump locks the sequence rows of its class and of every class ranked before it, in rank
-- order, so two committing transactions never wait on each other's sequence rows in a cycle.

create table class_change_sequences (
    class_name text primary key,
    -- The fixed order sequence rows are locked in.
    lock_rank  int not null unique,
    seq        bigint not null default 0
);

insert into class_change_sequences (class_name, lock_rank) values ('Gallery', 1), ('GalleryItem', 2), ('Photo', 3);

-- Adds one to the class's sequence and announces the new value at commit.
create function bump_class_change_sequence(class text) returns void
language plpgsql as $$
declare
    next bigint;
begin
    perform 1 from class_change_sequences
     where lock_rank <= (select lock_rank from class_change_sequences where class_name = class)
     order by lock_rank
       for update;
    update class_change_sequences set seq = seq + 1 where class_name = class returning seq into next;
    perform pg_notify('galleryd_class_changes', class || ' ' || next);
end
$$;

-- The classes a transaction has changed and not yet bumped; rows live only until its commit.
create table class_change_pending (class_name text not null);

-- Per statement: marks tg_argv[0] as changed by this transaction when the transition table
-- `changed_rows` holds a row (once per class and transaction; rolled back with a savepoint).
create function mark_class_changed() returns trigger
language plpgsql as $$
begin
    if current_setting('galleryd.changed_' || tg_argv[0], true) is distinct from '1'
       and exists (select 1 from changed_rows) then
        perform set_config('galleryd.changed_' || tg_argv[0], '1', true);
        insert into class_change_pending (class_name) values (tg_argv[0]);
    end if;
    return null;
end
$$;

-- At commit (deferred): bumps the marked class and forgets the mark.
create function bump_pending_class_change() returns trigger
language plpgsql as $$
begin
    perform bump_class_change_sequence(new.class_name);
    delete from class_change_pending where class_name = new.class_name;
    return null;
end
$$;

create constraint trigger class_change_pending_bump after insert on class_change_pending
    deferrable initially deferred
    for each row execute function bump_pending_class_change();

create trigger photos_seq_insert after insert on photos
    referencing new table as changed_rows
    for each statement execute function mark_class_changed('Photo');
create trigger photos_seq_update after update on photos
    referencing new table as changed_rows
    for each statement execute function mark_class_changed('Photo');
create trigger photos_seq_delete after delete on photos
    referencing old table as changed_rows
    for each statement execute function mark_class_changed('Photo');

create trigger galleries_seq_insert after insert on galleries
    referencing new table as changed_rows
    for each statement execute function mark_class_changed('Gallery');
create trigger galleries_seq_update after update on galleries
    referencing new table as changed_rows
    for each statement execute function mark_class_changed('Gallery');
create trigger galleries_seq_delete after delete on galleries
    referencing old table as changed_rows
    for each statement execute function mark_class_changed('Gallery');

create trigger gallery_items_seq_insert after insert on gallery_items
    referencing new table as changed_rows
    for each statement execute function mark_class_changed('GalleryItem');
create trigger gallery_items_seq_update after update on gallery_items
    referencing new table as changed_rows
    for each statement execute function mark_class_changed('GalleryItem');
create trigger gallery_items_seq_delete after delete on gallery_items
    referencing old table as changed_rows
    for each statement execute function mark_class_changed('GalleryItem');
