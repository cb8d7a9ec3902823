import Postgres

extension GalleryApplication {
    /// `ConfigurationError` when a view of the config file has the name of an app's custom class,
    /// which the view would hide: `serve` refuses to start (no query without views).
    func checkViews() throws {
        try Self.checkViews(configuration.views, pool: pool)
    }

    /// What `check-config --serving` runs: the same check on a pool of its own (needs `database_url`;
    /// nothing without views).
    public static func checkViews(configuration: GalleryConfiguration) throws {
        guard !configuration.views.isEmpty else { return }
        let (pool, _) = makeMigrator(configuration: configuration)
        defer { pool.shutdown() }
        try checkViews(configuration.views, pool: pool)
    }

    private static func checkViews(_ views: [ViewDefinition], pool: PostgresPool) throws {
        guard !views.isEmpty else { return }
        let clashes = try ViewCatalog(views, pool: pool).clashes(with: CustomClassCatalog(pool: pool))
        guard let name = clashes.first else { return }
        throw ConfigurationError.invalid(
            key: "views",
            reason: "class \(name) is already a custom class (GET /parse/schemas/\(name)): rename the view, "
                + "or move the class's data and DELETE /parse/schemas/\(name)")
    }
}
