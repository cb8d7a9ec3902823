import Postgres
import Synchronization

/// The views of the config file, by class name, with their class-level permissions from
/// `view_permissions` (migration 0026), read once and kept: a lookup of a name that is no view
/// costs no query, and a view's reads cost none for its permissions. A change made here replaces
/// the kept permissions after commit; another server's change is seen after a restart
/// (docs/decisions/038).
final class ViewCatalog: Sendable {
    private let pool: PostgresPool
    /// The views as the config file defines them, with their default permissions.
    private let views: [String: PhotoView]
    /// The stored permissions by view name, once read, and a number that moves with every change,
    /// so a read that began before a change does not keep what it read.
    private let stored = Mutex<(generation: UInt64, kept: Kept?)>((0, nil))

    /// What was read of `view_permissions`, with each view's manifest-cache name made from it once.
    private struct Kept {
        let permissions: [String: ClassLevelPermissions]
        let cacheNames: [String: String]
    }

    /// The views of `definitions` (checked when the config was read), read through `pool`.
    init(_ definitions: [ViewDefinition], pool: PostgresPool) {
        self.pool = pool
        var views: [String: PhotoView] = [:]
        for definition in definitions {
            views[definition.className] = PhotoView(definition, permissions: PhotoView.defaultPermissions)
        }
        self.views = views
    }

    /// Whether a view is called `className` (no query).
    func contains(_ className: String) -> Bool { views[className] != nil }

    /// The view called `className` with its current permissions, or nil when there is none.
    func view(named className: String) throws -> PhotoView? {
        guard let view = views[className] else { return nil }
        return try kept().permissions[className].map { view.with(permissions: $0) } ?? view
    }

    /// The name a find of `className` is kept under in the manifest cache: a view's carries its
    /// permissions, so a change of them is a new key, whose first find checks them again (a kept
    /// key answers without compiling the query); any other class's is its name.
    func cacheName(_ className: String) throws -> String {
        guard views[className] != nil else { return className }
        return try kept().cacheNames[className] ?? className
    }

    /// `cacheName(_:)` without a query, for the event loop: nil for a view whose permissions
    /// were not read yet (or changed since), so the caller takes the pool's path, which reads them.
    func keptCacheName(_ className: String) -> String? {
        guard views[className] != nil else { return className }
        return stored.withLock { $0.kept?.cacheNames[className] }
    }

    /// Every view, by name.
    func all() throws -> [PhotoView] {
        try views.keys.sorted().compactMap { try view(named: $0) }
    }

    /// Stores `permissions` for the view `className`; the next lookup reads what was committed.
    func store(_ permissions: ClassLevelPermissions, for className: String) throws {
        try pool.query(
            "insert into view_permissions (class_name, clp) values ($1, $2::jsonb) on conflict (class_name)"
                + " do update set clp = excluded.clp, updated_at = now()",
            [className, permissions.json])
        stored.withLock {
            $0.generation &+= 1
            $0.kept = nil
        }
    }

    /// The view names an app's custom classes already use (`check-config --serving`, `serve`):
    /// such a class would be hidden behind its view.
    func clashes(with catalog: CustomClassCatalog) throws -> [String] {
        try views.keys.sorted().filter { try catalog.lookup($0) != nil }
    }

    private func kept() throws -> Kept {
        let (known, generation) = stored.withLock { ($0.kept, $0.generation) }
        if let known { return known }
        var read: [String: ClassLevelPermissions] = [:]
        for row in try pool.query("select class_name, clp::text from view_permissions", retry: .safe) {
            let clp = try ParseJSONParser.parse(try row.decode(String.self, 1), maxDepth: 16)
            read[try row.decode(String.self, 0)] = try ClassLevelPermissions.parse(clp)
        }
        var names: [String: String] = [:]
        for (name, view) in views { names[name] = name + "\u{0}" + (read[name] ?? view.permissions).json }
        let kept = Kept(permissions: read, cacheNames: names)
        stored.withLock { if $0.generation == generation { $0.kept = kept } }
        return kept
    }
}
