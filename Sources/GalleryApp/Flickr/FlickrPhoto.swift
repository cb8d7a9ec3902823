import Foundation
import Postgres

/// A photo as the Flickr methods answer it: one row of `FlickrRepository`'s statements.
struct FlickrPhoto: Sendable {
    /// What the display sizes need (id, size, stored files).
    var sized: SizedPhoto
    /// The owner's objectId (Flickr's `owner` NSID), empty for a photo without one.
    var ownerId: String
    /// The owner's username (`ownername`).
    var ownerName: String
    /// The title.
    var title: String
    /// The tags, in order.
    var tags: [String]
    /// Upload time, Unix seconds (`dateupload`).
    var uploaded: Int
    /// Last change, Unix seconds (`lastupdate`).
    var updated: Int
    /// When taken, `YYYY-MM-DD HH:MM:SS` in UTC (`datetaken`), nil when unknown.
    var taken: String?
    /// Whether anyone may see it (a public gallery holds it, with `public_read`).
    var isPublic: Bool

    /// The photo's objectId (Flickr's `id`).
    var id: String { sized.objectId }

    /// The columns `init(row:)` reads, by position: they come first in a select. Over `photos p`
    /// and `users u` (left joined on the owner); `publicSQL` is SQL true when the photo is public.
    static func columns(publicSQL: String) -> String {
        """
        p.object_id, p.width, p.height, p.original_key, p.preview_key, p.preview_width, p.preview_height,
        p.thumbnail_key, p.thumbnail_width, p.thumbnail_height, coalesce(p.owner_id, '') as owner_id,
        coalesce(u.username, '') as owner_name, p.title, array_to_string(p.tags, E'\\x1f') as tags,
        extract(epoch from p.created_at)::bigint as uploaded, extract(epoch from p.updated_at)::bigint as updated,
        to_char(p.taken_at at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS') as taken, (\(publicSQL)) as is_public
        """
    }

    /// The photo of a row selected with `columns(publicSQL:)` (read by position: a page decodes
    /// every column of every row, and a lookup by name scans the column names).
    init(row: PostgresRow) throws {
        let previewWidth = try row.decode(Int?.self, 5)
        let previewHeight = try row.decode(Int?.self, 6)
        let thumbWidth = try row.decode(Int?.self, 8)
        let thumbHeight = try row.decode(Int?.self, 9)
        sized = SizedPhoto(
            objectId: try row.decode(String.self, 0), width: try row.decode(Int.self, 1),
            height: try row.decode(Int.self, 2), originalKey: try row.decode(String.self, 3),
            previewKey: try row.decode(String?.self, 4),
            previewSize: previewWidth.flatMap { width in previewHeight.map { (width, $0) } },
            thumbnailKey: try row.decode(String?.self, 7),
            thumbnailSize: thumbWidth.flatMap { width in thumbHeight.map { (width, $0) } })
        ownerId = try row.decode(String.self, 10)
        ownerName = try row.decode(String.self, 11)
        title = try row.decode(String.self, 12)
        let tagText = try row.decode(String.self, 13)
        tags =
            tagText.isEmpty ? [] : tagText.split(separator: "\u{1F}", omittingEmptySubsequences: false).map(String.init)
        uploaded = Int(try row.decode(Int64.self, 14))
        updated = Int(try row.decode(Int64.self, 15))
        taken = try row.decode(String?.self, 16)
        isPublic = try row.decode(Bool.self, 17)
    }
}
