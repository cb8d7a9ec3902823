import Foundation

extension ParseCompiledQuery {
    /// The statements `GET /parse/classes/<className>?<rawQuery>` runs: the query string decoded,
    /// validated and compiled by the same calls as the route (`ParseQueryString.decode`,
    /// `ParseQuery.find`, `ParseSQLCompiler.compile`) with the route's limits from `configuration`.
    /// For looking at the real SQL (`galleryd compile-query`, `bench/manifest.sh`), not for serving.
    /// `access` is the caller's, as the route sets it (the master key's by default; a user's adds
    /// the owner filter and counts from the owner's counter).
    public static func find(
        className: String, rawQuery: String, configuration: GalleryConfiguration, access: ParseAccess = .master
    ) throws -> ParseCompiledQuery {
        guard let schema = ParseClassSchema.named(className) else {
            throw ParseError(
                code: ParseError.Code.invalidClassName, message: "Invalid class name: \(className.prefix(100)).")
        }
        // The same limits as ParseAPI.init(application:).
        var limits = ParseLimits()
        limits.maxLimit = configuration.maxQueryLimit
        limits.maxSkip = configuration.maxQuerySkip
        limits.maxJSONDepth = configuration.maxJSONDepth
        limits.maxBodyBytes = configuration.maxBodyBytes
        var query = try ParseQuery.find(schema, items: ParseQueryString.decode(rawQuery), limits: limits)
        query.access = access
        return ParseSQLCompiler.compile(query)
    }
}
