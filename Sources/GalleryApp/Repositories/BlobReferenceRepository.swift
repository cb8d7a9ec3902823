import Postgres

/// Which blobs the database refers to, across tables: the originals of `files`, each photo's
/// original, thumbnail and preview, and the rendered display sizes `photo_sizes` lists (a cache,
/// copied so the new store serves them warm instead of rendering each again on its first request).
/// `StorageMigration` copies exactly these.
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
            union select blob_key from photo_sizes
            order by 1
            """, retry: .safe
        ).map { try $0.decode(String.self, "key") }
    }
}
