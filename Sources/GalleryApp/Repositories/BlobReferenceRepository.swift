import Postgres

/// Which blobs the database refers to, across tables: the originals of `files` and each photo's
/// original, thumbnail and preview. `StorageMigration` copies exactly these.
struct BlobReferenceRepository: Sendable {
    let pool: PostgresPool

    /// Every blob key a row names, sorted, without duplicates.
    func allKeys() throws -> [String] {
        try pool.query(
            """
            select key from files
            union select original_key from photos where original_key is not null
            union select thumbnail_key from photos where thumbnail_key is not null
            union select preview_key from photos where preview_key is not null
            order by 1
            """, retry: .safe
        ).map { try $0.decode(String.self, "key") }
    }
}
