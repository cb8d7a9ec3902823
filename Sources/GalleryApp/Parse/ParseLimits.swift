/// Limits on Parse requests, each with a safe default and the reason for it. Wired to config
/// keys by the app; tests use small values to exercise each one.
public struct ParseLimits: Sendable, Equatable {
    /// `limit` when the query gives none (Parse Server's default).
    public var defaultLimit: Int = 100
    /// Largest `limit` honoured; larger values are clamped (Parse Server's `maxLimit`), so one
    /// request cannot ask for the whole table.
    public var maxLimit: Int = 1000
    /// Largest `skip`; deep OFFSETs scan and discard rows, so beyond this the client must page with
    /// the keyset cursor (by `createdAt`, then `objectId`) instead. Parse Server has no cap.
    public var maxSkip: Int = 10_000
    /// Largest `where` parameter in bytes: a 1000-item `$in` of pointers fits, a megabyte does not.
    public var maxWhereBytes: Int = 128 * 1024
    /// Deepest JSON nesting accepted in `where` and request bodies; real queries need < 8, and a
    /// recursive parser must not be driven into the stack guard.
    public var maxJSONDepth: Int = 16
    /// Most values in one `$in`, `$nin` or `$all` list (bounds bind size and planning time).
    public var maxInListCount: Int = 1000
    /// Most branches in one `$or` / `$and` and most constraints overall, which bounds SQL size.
    public var maxConditions: Int = 200
    /// Longest `$regex` pattern in bytes; regex compile time in PostgreSQL grows with it.
    public var maxRegexLength: Int = 256
    /// Largest counted repetition (`{n}`) in a `$regex`; PostgreSQL's own limit is 255.
    public var maxRegexRepetition: Int = 255
    /// Longest `$text` search term in bytes.
    public var maxSearchTermLength: Int = 1024
    /// Longest string value (in bytes) in a `where` comparison.
    public var maxStringValueBytes: Int = 8 * 1024
    /// Largest request body accepted by `ParseWriteBody` in bytes.
    public var maxBodyBytes: Int = 256 * 1024
    /// Longest Photo `title` in characters.
    public var maxTitleLength: Int = 1000
    /// Most tags on one Photo.
    public var maxTagCount: Int = 100
    /// Longest tag in characters.
    public var maxTagLength: Int = 100
    /// Longest Gallery `name` in characters (after trimming whitespace).
    public var maxGalleryNameLength: Int = 200
    /// Largest GalleryItem `position` accepted in a body (positions are contiguous from 0).
    public var maxPosition: Int = 1_000_000

    /// The defaults documented on each property.
    public init() {}
}
