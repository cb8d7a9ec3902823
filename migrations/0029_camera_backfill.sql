-- 0029: which photos still need their camera read from the original (issue #28). Photos stored
-- before 0027 have no camera_make/camera_model; the worker's background pass (CameraBackfill)
-- reads each such original's EXIF once and sets camera_checked, whether or not it found a camera,
-- so an original without one (a screenshot) is not read again at every start.
--
-- Rows already stored keep a null camera_checked (added without a default, so no row is rewritten
-- and no update trigger fires: updated_at and LiveQuery stay as they were); rows inserted from now
-- on, whose camera was read at upload, get true. The pass looks at the nulls without a camera.
alter table photos add column camera_checked boolean;
alter table photos alter column camera_checked set default true;

create index photos_camera_unchecked on photos (object_id)
    where camera_checked is null and camera_make is null and camera_model is null;
