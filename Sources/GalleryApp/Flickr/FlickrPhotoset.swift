import Postgres

/// A gallery as Flickr's photoset methods answer it.
struct FlickrPhotoset: Sendable {
    /// The gallery's objectId.
    var id: String
    /// The owner's objectId, empty without one.
    var ownerId: String
    /// The owner's username.
    var ownerName: String
    /// The gallery's name (Flickr's `title`).
    var title: String
    /// Photos in it (`photo_count`).
    var count: Int
    /// The cover photo's objectId (Flickr's `primary`), nil without one.
    var primary: String?
    /// Created and last changed, Unix seconds.
    var created: Int, updated: Int

    /// The columns `init(row:)` reads, over `galleries g` and `users u` (left joined on the owner).
    static let columns = """
        g.object_id, coalesce(g.owner_id, '') as owner_id, coalesce(u.username, '') as owner_name, g.name, g.photo_count,
        g.cover_photo_id, extract(epoch from g.created_at)::bigint as created, extract(epoch from g.updated_at)::bigint as updated
        """

    /// The gallery of a row selected with `columns`.
    init(row: PostgresRow) throws {
        id = try row.decode(String.self, "object_id")
        ownerId = try row.decode(String.self, "owner_id")
        ownerName = try row.decode(String.self, "owner_name")
        title = try row.decode(String.self, "name")
        count = try row.decode(Int.self, "photo_count")
        primary = try row.decode(String?.self, "cover_photo_id")
        created = Int(try row.decode(Int64.self, "created"))
        updated = Int(try row.decode(Int64.self, "updated"))
    }
}
