-- 0027: the camera that made a photo (issue #28): EXIF Make and Model (IFD0 0x010F, 0x0110) read
-- from the original at upload — JPEG APP1, HEIF's Exif item, PNG eXIf, WebP EXIF — cleaned to at
-- most 64 characters (EXIFReader.cameraText). The upload's `files` row keeps them until a photo
-- attaches the file and copies them, as it does `taken_at`. Photos stored before this migration,
-- and originals without them, have nulls.
alter table files
    add column camera_make text,
    add column camera_model text;

alter table photos
    add column camera_make text,
    add column camera_model text;
