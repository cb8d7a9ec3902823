-- bench/photo-acl.sh, before migration 0022: 102k photos. alice owns 60k and bob 40k,
-- interleaved; dave owns 1k spread over the same time; eve owns 1k all older than the rest
-- (the worst case for one `owner or shared` filter); carol owns none.
insert into users (object_id, username, password_hash) values
    ('aliceAAAAA', 'alice', 'x'), ('bobBBBBBBB', 'bob', 'x'), ('carolCCCCC', 'carol', 'x'),
    ('daveDDDDDD', 'dave', 'x'), ('eveEEEEEEE', 'eve', 'x');
insert into photos (object_id, filename, byte_size, checksum, width, height, aspect_ratio, original_key, status, owner_id, created_at)
select 'p' || lpad(i::text, 9, '0'), 'row-' || i || '.jpg', 1000, md5(i::text), 400, 300, 1.33,
       'originals/' || md5(i::text) || '.jpg', 'ready',
       case when i % 10 < 6 then 'aliceAAAAA' else 'bobBBBBBBB' end, now() - (i || ' seconds')::interval
from generate_series(1, 100000) i;
insert into photos (object_id, filename, byte_size, checksum, width, height, aspect_ratio, original_key, status, owner_id, created_at)
select 'd' || lpad(i::text, 9, '0'), 'd-' || i || '.jpg', 1000, md5('d' || i), 400, 300, 1.33, 'originals/x.jpg', 'ready',
       'daveDDDDDD', now() - (i * 100 || ' seconds')::interval
from generate_series(1, 1000) i;
insert into photos (object_id, filename, byte_size, checksum, width, height, aspect_ratio, original_key, status, owner_id, created_at)
select 'e' || lpad(i::text, 9, '0'), 'e-' || i || '.jpg', 1000, md5('e' || i), 400, 300, 1.33, 'originals/x.jpg', 'ready',
       'eveEEEEEEE', now() - interval '10 years' - (i || ' seconds')::interval
from generate_series(1, 1000) i;
analyze photos;
