-- bench/photo-acl.sh, after migration 0022: 200 of bob's photos shared with role:Friends, 2 public.
update photos set acl = '{"role:Friends":{"read":true}}'
 where owner_id = 'bobBBBBBBB' and object_id like '%7' and object_id < 'p000002000';
update photos set acl = '{"*":{"read":true}}' where object_id in ('p000050008', 'p000090009');
analyze photos;
