-- 0028: fields of an app's own on the built-in classes (issue #27, "may gain custom fields (app
-- metadata on Photo)"; docs/decisions/042-app-fields-on-built-in-classes.md).
--
-- A field added through `PUT /parse/schemas/<Class>` (or by a save the class's `addField`
-- permission allows) is a typed, nullable column `app_<n>` of the class's own table (photos,
-- galleries, gallery_items), added and dropped by the server (BuiltInAppFields) in the same
-- transaction as its row here. `fields` lists them as custom_classes.fields does
-- (`[{"name","type","targetClass"?,"column"}]`); `next_column` numbers the next one, so a
-- dropped column's name is never reused. A class without a row has no app fields, and its
-- statements are exactly those of a class without this migration.
create table builtin_class_fields (
    class_name text primary key,
    fields jsonb not null default '[]',
    next_column integer not null default 1
);
