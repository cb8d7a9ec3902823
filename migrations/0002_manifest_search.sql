-- 0002_manifest_search: $text finds the words of a file name.
--
-- The 'simple' parser reads a whole file name as one token ('img_0001.jpg', 'holiday-beach.jpg'),
-- so a search for "holiday" or "IMG_0001" found nothing in filenames. The search vector now also
-- holds the file name with every run of non-alphanumerics turned into a space ('img', '0001',
-- 'jpg'), after the name itself, so words and phrases match. The column is regenerated in place
-- (one table rewrite) and its GIN index rebuilt.

alter table photos drop column search;

alter table photos add column search tsvector generated always as (
    to_tsvector('simple'::regconfig,
        filename || ' ' || regexp_replace(filename, '[^[:alnum:]]+', ' ', 'g') || ' ' || title || ' '
        || coalesce(photo_tags_text(tags), ''))
) stored;

create index photos_search_idx on photos using gin (search);
