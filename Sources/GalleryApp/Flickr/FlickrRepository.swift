import Foundation
import Postgres

/// The statements of the Flickr API: photos and galleries (Flickr's photosets) a caller may see.
///
/// Who sees what is the Parse API's access filter (`ParseSQLCompiler.accessFilter`), applied to
/// the gallery items that reach a photo: a caller without a session sees the photos of galleries
/// whose ACL gives `*` read when `public_read` is on (docs/security.md), and nothing otherwise; a
/// user sees their own photos and those of galleries they may read. Trashed photos and galleries
/// are never shown here.
struct FlickrRepository: Sendable {
    let pool: PostgresPool
    /// `public_read`: whether `*`-readable galleries are readable without a session.
    let publicRead: Bool

    typealias Binds = ParseSQLCompiler.Binds

    /// SQL true when `caller` may see photo `p` through a gallery item.
    private func throughGallery(_ caller: ParseCaller, binds: inout Binds) -> String {
        let access = ParseAccess(caller: caller, publicRead: publicRead)
        let filter =
            ParseSQLCompiler.accessFilter(.galleryItem, alias: "gi", access: access, need: .read, binds: &binds)
            ?? "true"
        return "exists (select 1 from gallery_items gi join galleries gg on gg.object_id = gi.gallery_id"
            + " and gg.deleted_at is null where gi.photo_id = p.object_id and \(filter))"
    }

    /// SQL true for the photos `p` that `caller` may see.
    func visible(_ caller: ParseCaller, binds: inout Binds) -> String {
        var parts = ["p.deleted_at is null"]
        switch caller {
        case .master:
            break
        case .user(let id):
            parts.append(
                "(p.owner_id = \(binds.add(.text(id), cast: "text")) or \(throughGallery(caller, binds: &binds)))")
        case .anonymous:
            parts.append(throughGallery(caller, binds: &binds))
        }
        return parts.joined(separator: " and ")
    }

    /// SQL true for a public photo `p` (what a caller without a session sees).
    private func isPublic(binds: inout Binds) -> String {
        publicRead ? throughGallery(.anonymous, binds: &binds) : "false"
    }

    /// One page of the photos `caller` may see that match `search`, and how many match in all.
    func search(_ search: FlickrSearch, caller: ParseCaller) throws -> (photos: [FlickrPhoto], total: Int) {
        var binds = Binds()
        var conditions = [visible(caller, binds: &binds)]
        var order = "p.created_at desc, p.object_id desc"
        if let text = search.text {
            let query = "websearch_to_tsquery('simple', \(binds.add(.text(text), cast: "text")))"
            conditions.append("p.search @@ \(query)")
            if search.sort == .relevance { order = "ts_rank(p.search, \(query)) desc, " + order }
        }
        if !search.tags.isEmpty {
            conditions.append(
                "p.tags \(search.allTags ? "@>" : "&&") \(binds.add(.textArray(search.tags), cast: "text[]"))")
        }
        if let user = search.userId { conditions.append("p.owner_id = \(binds.add(.text(user), cast: "text"))") }
        for (date, sql) in [
            (search.minUploaded, "p.created_at >= "), (search.maxUploaded, "p.created_at <= "),
            (search.minTaken, "p.taken_at >= "), (search.maxTaken, "p.taken_at <= "),
        ] {
            if let date { conditions.append(sql + binds.add(.timestamp(date), cast: "timestamptz")) }
        }
        switch search.sort {
        case .datePostedAsc: order = "p.created_at asc, p.object_id asc"
        case .dateTakenDesc: order = "p.taken_at desc nulls last, " + order
        case .dateTakenAsc: order = "p.taken_at asc nulls last, p.created_at asc, p.object_id asc"
        case .datePostedDesc, .relevance: break
        }
        let publicSQL = isPublic(binds: &binds)
        let whereSQL = conditions.joined(separator: " and ")
        let limit = binds.add(.int(Int64(search.perPage)), cast: "bigint")
        let offset = binds.add(.int(Int64(search.page - 1) * Int64(search.perPage)), cast: "bigint")
        let sql = """
            select \(FlickrPhoto.columns(publicSQL: publicSQL)), count(*) over () as total
            from photos p left join users u on u.object_id = p.owner_id
            where \(whereSQL) order by \(order) limit \(limit) offset \(offset)
            """
        let rows = try pool.query(sql, binds.values.postgresBinds, retry: .safe)
        if let first = rows.first {
            return (try rows.map(FlickrPhoto.init(row:)), Int(try first.decode(Int64.self, "total")))
        }
        // A page past the last: the total still counts.
        let count = try pool.query(
            "select count(*)::bigint as total from photos p where \(whereSQL)",
            Array(binds.values.postgresBinds.dropLast(2)),
            retry: .safe)
        return ([], Int(try count[0].decode(Int64.self, "total")))
    }

    /// Photo `id` when `caller` may see it.
    func photo(_ id: String, caller: ParseCaller) throws -> FlickrPhoto? {
        var binds = Binds()
        let idSQL = binds.add(.text(id), cast: "text")
        let visible = visible(caller, binds: &binds)
        let sql =
            "select \(FlickrPhoto.columns(publicSQL: isPublic(binds: &binds))) from photos p"
            + " left join users u on u.object_id = p.owner_id where p.object_id = \(idSQL) and \(visible)"
        return try pool.query(sql, binds.values.postgresBinds, retry: .safe).first.map(FlickrPhoto.init(row:))
    }

    /// The galleries `caller` may read, of `ownerId` when given, newest first.
    func photosets(ownerId: String?, caller: ParseCaller, page: Int, perPage: Int) throws -> (
        sets: [FlickrPhotoset], total: Int
    ) {
        var binds = Binds()
        var conditions = [gallerySQL(caller, binds: &binds)]
        if let ownerId { conditions.append("g.owner_id = \(binds.add(.text(ownerId), cast: "text"))") }
        let whereSQL = conditions.joined(separator: " and ")
        let limit = binds.add(.int(Int64(perPage)), cast: "bigint")
        let offset = binds.add(.int(Int64(page - 1) * Int64(perPage)), cast: "bigint")
        let rows = try pool.query(
            "select \(FlickrPhotoset.columns), count(*) over () as total from galleries g left join users u on u.object_id = g.owner_id"
                + " where \(whereSQL) order by g.created_at desc, g.object_id desc limit \(limit) offset \(offset)",
            binds.values.postgresBinds, retry: .safe)
        let total = try rows.first.map { Int(try $0.decode(Int64.self, "total")) } ?? 0
        return (try rows.map(FlickrPhotoset.init(row:)), total)
    }

    /// Gallery `id` when `caller` may read it.
    func photoset(_ id: String, caller: ParseCaller) throws -> FlickrPhotoset? {
        var binds = Binds()
        let idSQL = binds.add(.text(id), cast: "text")
        let filter = gallerySQL(caller, binds: &binds)
        return try pool.query(
            "select \(FlickrPhotoset.columns) from galleries g left join users u on u.object_id = g.owner_id"
                + " where g.object_id = \(idSQL) and \(filter)", binds.values.postgresBinds, retry: .safe
        ).first.map(FlickrPhotoset.init(row:))
    }

    /// One page of the live photos of gallery `id` (already checked readable), in gallery order.
    func photosetPhotos(_ id: String, page: Int, perPage: Int) throws -> [FlickrPhoto] {
        var binds = Binds()
        let idSQL = binds.add(.text(id), cast: "text")
        let publicSQL = isPublic(binds: &binds)
        let limit = binds.add(.int(Int64(perPage)), cast: "bigint")
        let offset = binds.add(.int(Int64(page - 1) * Int64(perPage)), cast: "bigint")
        let sql = """
            select \(FlickrPhoto.columns(publicSQL: publicSQL)) from gallery_items i
            join photos p on p.object_id = i.photo_id and p.deleted_at is null
            left join users u on u.object_id = p.owner_id
            where i.gallery_id = \(idSQL) order by i.position limit \(limit) offset \(offset)
            """
        return try pool.query(sql, binds.values.postgresBinds, retry: .safe).map(FlickrPhoto.init(row:))
    }

    /// The username of user `id`, nil when there is no such user.
    func username(_ id: String) throws -> String? {
        try pool.query("select username from users where object_id = $1", [id], retry: .safe).first.map {
            try $0.decode(String.self, "username")
        }
    }

    /// SQL true for the live galleries `g` that `caller` may read.
    private func gallerySQL(_ caller: ParseCaller, binds: inout Binds) -> String {
        let access = ParseAccess(caller: caller, publicRead: publicRead)
        let filter =
            ParseSQLCompiler.accessFilter(.gallery, alias: "g", access: access, need: .read, binds: &binds) ?? "true"
        return "g.deleted_at is null and \(filter)"
    }
}
