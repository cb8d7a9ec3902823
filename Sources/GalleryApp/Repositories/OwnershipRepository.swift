import Foundation
import Postgres

/// Statements about who owns what (migrations/0014_owners.sql): whether a user exists, whether a
/// user owns anything, and the upgrade of a single-tenant install that gives ownerless rows to the
/// first admin.
public struct OwnershipRepository: Sendable {
    /// How many rows `assignOwnerlessRowsToFirstAdmin` gave away, and to whom (nil: no admin yet).
    public struct Assignment: Sendable, Equatable {
        public var adminId: String?
        public var photos: Int64
        public var galleries: Int64
        public var galleryItems: Int64

        /// Whether any row moved.
        public var isEmpty: Bool { photos == 0 && galleries == 0 && galleryItems == 0 }
    }

    let pool: PostgresPool

    public init(pool: PostgresPool) { self.pool = pool }

    /// Gives every photo, gallery and gallery item without an owner (made before accounts existed)
    /// to the first admin user (the oldest with `is_admin`), and recounts that user's photo
    /// counters. Nothing happens while there is no admin. Idempotent; `galleryd users create
    /// --admin` calls it, and so do `migrate` and `serve` (docs/operations.md, "Upgrading to accounts").
    @discardableResult
    public func assignOwnerlessRowsToFirstAdmin() throws -> Assignment {
        // Idempotent, so it may be re-run after a lost connection (the counts then say what the re-run did).
        let row = try pool.query(
            "select admin_id, photos, galleries, gallery_items from assign_ownerless_rows()", retry: .safe
        ).first
        return Assignment(
            adminId: try row?.decode(String?.self, 0), photos: try row?.decode(Int64.self, 1) ?? 0,
            galleries: try row?.decode(Int64.self, 2) ?? 0, galleryItems: try row?.decode(Int64.self, 3) ?? 0)
    }

    /// Whether the user owns any photo, gallery or gallery item (its row cannot be deleted then).
    func ownsContent(_ userId: String) throws -> Bool {
        try pool.query(
            """
            select exists (select 1 from photos where owner_id = $1) or exists (select 1 from galleries where owner_id = $1)
                   or exists (select 1 from gallery_items where owner_id = $1)
            """, [userId], retry: .safe
        ).first?.decode(Bool.self, 0) ?? false
    }

    /// Whether a user with this objectId exists.
    func userExists(_ objectId: String) throws -> Bool {
        try pool.query("select 1 from users where object_id = $1", [objectId], retry: .safe).count == 1
    }
}
