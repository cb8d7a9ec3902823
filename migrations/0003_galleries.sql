-- 0003_galleries: galleries.photo_count counts only the items whose photo is live (a trashed photo
-- disappears from its galleries and comes back on restore, so it must not be counted while in the
-- trash), and deleting a photo for good removes its gallery items with their gaps closed, so
-- positions stay the contiguous 0…count−1 of each gallery whoever deletes the photo.
--
-- Lock order, shared with GalleryService (which locks a photo FOR SHARE before its gallery FOR
-- UPDATE): photo row first, then the galleries holding it in object_id order, then their items,
-- then row_counts (0001's AFTER triggers). Keeping one order means trashing, restoring or
-- purging a photo never deadlocks with item inserts, moves and removals or with each other.

-- Whether a photo exists and is not in Recently Deleted.
create function photo_is_live(photo text) returns boolean
language sql stable parallel safe as $$
    select exists (select 1 from photos where object_id = photo and deleted_at is null)
$$;

-- Replaces 0001's version, which counted every item: only items with a live photo count.
create or replace function count_gallery_items() returns trigger
language plpgsql as $$
begin
    if tg_op in ('UPDATE', 'DELETE') and photo_is_live(old.photo_id) then
        update galleries set photo_count = photo_count - 1 where object_id = old.gallery_id;
    end if;
    if tg_op in ('INSERT', 'UPDATE') and photo_is_live(new.photo_id) then
        update galleries set photo_count = photo_count + 1 where object_id = new.gallery_id;
    end if;
    return null;
end
$$;

drop trigger gallery_items_count on gallery_items;
create trigger gallery_items_count after insert or delete or update of gallery_id, photo_id on gallery_items
    for each row execute function count_gallery_items();

-- A photo moving into or out of the trash leaves or rejoins the count of every gallery holding it.
-- A BEFORE trigger, so the galleries are locked right after the photo row and before the AFTER
-- trigger of 0001 updates row_counts: photo → galleries → counters, the order of a delete too.
create function count_gallery_photos_on_trash() returns trigger
language plpgsql as $$
declare
    delta int := case when new.deleted_at is null then 1 else -1 end;
begin
    perform 1 from galleries
     where object_id in (select gallery_id from gallery_items where photo_id = new.object_id)
     order by object_id
       for update;
    update galleries set photo_count = photo_count + delta
     where object_id in (select gallery_id from gallery_items where photo_id = new.object_id);
    return new;
end
$$;

create trigger photos_gallery_count before update of deleted_at on photos
    for each row when ((old.deleted_at is null) is distinct from (new.deleted_at is null))
    execute function count_gallery_photos_on_trash();

-- Before a photo row goes (for good), its gallery items go, and the items after each one move up,
-- so no gallery is left with a hole in its positions (the foreign key's cascade would leave one).
-- The items' delete trigger still sees the photo here, so a live photo's count is taken off too.
create function remove_photo_from_galleries() returns trigger
language plpgsql as $$
begin
    perform 1 from galleries
     where object_id in (select gallery_id from gallery_items where photo_id = old.object_id)
     order by object_id
       for update;
    with removed as (
        delete from gallery_items where photo_id = old.object_id returning gallery_id, position
    )
    update gallery_items gi set position = gi.position - 1
      from removed
     where gi.gallery_id = removed.gallery_id and gi.position > removed.position;
    return old;
end
$$;

create trigger photos_remove_from_galleries before delete on photos
    for each row execute function remove_photo_from_galleries();

-- Existing data: recount with the new rule and close any holes an earlier cascade left.
update gallery_items gi set position = numbered.n - 1
  from (select object_id, row_number() over (partition by gallery_id order by position, object_id) as n
          from gallery_items) numbered
 where gi.object_id = numbered.object_id and gi.position <> numbered.n - 1;

update galleries g set photo_count = (
    select count(*) from gallery_items gi join photos p on p.object_id = gi.photo_id
     where gi.gallery_id = g.object_id and p.deleted_at is null)
 where photo_count is distinct from (
    select count(*) from gallery_items gi join photos p on p.object_id = gi.photo_id
     where gi.gallery_id = g.object_id and p.deleted_at is null);
