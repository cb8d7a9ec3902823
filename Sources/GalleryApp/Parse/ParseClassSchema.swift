/// A fixed Parse class backed by one table: its fields in output order, trash behaviour and
/// O(1) counter. Column names in SQL come only from here.
public struct ParseClassSchema: Sendable {
    /// The Parse class name (`Photo`).
    public let className: String
    /// The table (`photos`).
    public let table: String
    /// The fields, in the order objects are written.
    public let fields: [ParseField]
    /// Whether rows move to the trash (`deleted_at`) and queries hide trashed rows by default.
    public let hasTrash: Bool
    /// The `row_counts` name counting the live rows, used for a count without conditions.
    public let liveCountName: String?
    /// The `owner_row_counts` name counting, per user, the live rows a user's unconditioned count
    /// counts (Photo: their own; Gallery: the non-public ones they own or are granted; 0014, 0015).
    public let userCountName: String?
    /// The `row_counts` name counting the live rows everyone may read (Gallery: ACL `*` read), added
    /// to a user's counter, and alone a reader's without a session under `public_read` (0015).
    public let publicLiveCountName: String?
    /// Pointer fields whose target's trash hides this row (GalleryItem: its photo and gallery).
    public let hiddenWithTrashedTargets: [String]
    /// The `tsvector` column that `$text` searches, or nil when the class has none.
    public let searchColumn: String?
    /// The fields folded into `searchColumn`; `$text` may be written on any of them.
    public let searchFields: [String]

    /// Whether an app defined the class (`CustomClass`): its class-level permissions decide who
    /// reads it, so statements add no row filter, and its unconditioned count is its counter for anyone.
    public let isCustom: Bool
    /// The Relation fields (a custom class's), by name: what `$relatedTo` reads.
    public let relations: [String: ParseRelationField]

    private let fieldsByName: [String: Int]

    /// A class schema.
    public init(
        className: String, table: String, fields: [ParseField], hasTrash: Bool, liveCountName: String?,
        userCountName: String? = nil, publicLiveCountName: String? = nil,
        hiddenWithTrashedTargets: [String] = [], searchColumn: String? = nil, searchFields: [String] = [],
        isCustom: Bool = false, relations: [String: ParseRelationField] = [:]
    ) {
        self.isCustom = isCustom
        self.relations = relations
        self.className = className
        self.table = table
        self.fields = fields
        self.hasTrash = hasTrash
        self.liveCountName = liveCountName
        self.userCountName = userCountName
        self.publicLiveCountName = publicLiveCountName
        self.hiddenWithTrashedTargets = hiddenWithTrashedTargets
        self.searchColumn = searchColumn
        self.searchFields = searchFields
        var byName: [String: Int] = [:]
        for (index, field) in fields.enumerated() { byName[field.name] = index }
        self.fieldsByName = byName
    }

    /// The field named `name`, or nil.
    public func field(named name: String) -> ParseField? {
        fieldsByName[name].map { fields[$0] }
    }

    /// The schema for a Parse class name, or nil when the class does not exist.
    public static func named(_ className: String) -> ParseClassSchema? {
        switch className {
        case "Photo": return photo
        case "Gallery": return gallery
        case "GalleryItem": return galleryItem
        default: return nil
        }
    }

    /// Every class.
    public static let all: [ParseClassSchema] = [photo, gallery, galleryItem]

    private static let objectId = ParseField("objectId", "object_id", .string)
    private static let createdAt = ParseField("createdAt", "created_at", .date, builtInDate: true)
    private static let updatedAt = ParseField("updatedAt", "updated_at", .date, builtInDate: true)
    private static let deletedAt = ParseField("deletedAt", "deleted_at", .date, restorable: true)
    /// The user the object belongs to (set from the session on create; the master key may name one).
    private static let owner = ParseField("owner", "owner_id", .pointer("_User"), sortable: false, creatable: true)

    /// Photo: an uploaded image with its derivatives (table `photos`).
    public static let photo = ParseClassSchema(
        className: "Photo", table: "photos",
        fields: [
            objectId, createdAt, updatedAt,
            ParseField("filename", "filename", .string),
            ParseField("title", "title", .string, creatable: true, updatable: true),
            ParseField("tags", "tags", .stringArray, sortable: false, creatable: true, updatable: true),
            ParseField("contentType", "content_type", .string),
            ParseField("byteSize", "byte_size", .int),
            ParseField("checksum", "checksum", .string),
            ParseField("width", "width", .int),
            ParseField("height", "height", .int),
            ParseField("aspectRatio", "aspect_ratio", .double),
            ParseField("takenAt", "taken_at", .date),
            // EXIF Make and Model of the original (migration 0027).
            ParseField("cameraMake", "camera_make", .string),
            ParseField("cameraModel", "camera_model", .string),
            ParseField("status", "status", .string),
            ParseField("error", "error", .string),
            ParseField("dominantColor", "dominant_color", .string),
            ParseField("thumbhash", "thumbhash", .string, sortable: false),
            ParseField("sizes", .string, source: .displaySizes, queryable: false, sortable: false),
            deletedAt,
            ParseField("original", "original_key", .file, sortable: false, creatable: true, requiredOnCreate: true),
            ParseField("thumbnail", "thumbnail_key", .file, sortable: false),
            ParseField("preview", "preview_key", .file, sortable: false),
            ParseField("thumbnailWidth", "thumbnail_width", .int),
            ParseField("thumbnailHeight", "thumbnail_height", .int),
            ParseField("previewWidth", "preview_width", .int),
            ParseField("previewHeight", "preview_height", .int),
            owner,
            // Grants beyond the owner, who always has every right (migration 0022).
            ParseField("ACL", "acl", .acl, queryable: false, sortable: false, creatable: true, updatable: true),
        ],
        hasTrash: true, liveCountName: "photos_live", userCountName: "photos_live", searchColumn: "search",
        searchFields: ["filename", "title", "tags"])

    /// _User: the accounts (table `users`) as a find reads them, for the SDKs' `ParseQuery` on
    /// `_User` (looking someone up to share a gallery with): never a password or its hash, and
    /// `email` only on the caller's own row and for the master key (Parse Server's default
    /// `protectedFields` `{"*":["email"]}`). Not in `named(_:)`: the class routes do not serve it;
    /// `UserRoutes` does, and finds through `ParseAPI.findUsers`.
    public static let user = ParseClassSchema(
        className: "_User", table: "users",
        fields: [
            objectId, createdAt, updatedAt,
            ParseField("username", "username", .string),
            ParseField("email", .string, source: .selfOnly("email"), sortable: false),
        ],
        hasTrash: false, liveCountName: nil)

    /// Gallery: a named, ordered collection of photos (table `galleries`).
    public static let gallery = ParseClassSchema(
        className: "Gallery", table: "galleries",
        fields: [
            objectId, createdAt, updatedAt,
            ParseField("name", "name", .string, creatable: true, requiredOnCreate: true, updatable: true),
            deletedAt,
            ParseField("photoCount", "photo_count", .int),
            ParseField(
                "coverPhoto", .pointer("Photo"), source: .coverPhoto, queryable: false, sortable: false, joinAlias: "cp"
            ),
            owner,
            ParseField("ACL", "acl", .acl, queryable: false, sortable: false, creatable: true, updatable: true),
        ],
        hasTrash: true, liveCountName: "galleries_live", userCountName: "galleries_readable",
        publicLiveCountName: "galleries_public_live")

    /// GalleryItem: one photo at one position of one gallery (table `gallery_items`).
    public static let galleryItem = ParseClassSchema(
        className: "GalleryItem", table: "gallery_items",
        fields: [
            objectId, createdAt, updatedAt,
            ParseField(
                "gallery", "gallery_id", .pointer("Gallery"), sortable: false, creatable: true, requiredOnCreate: true,
                joinAlias: "g"),
            ParseField(
                "photo", "photo_id", .pointer("Photo"), sortable: false, creatable: true, requiredOnCreate: true,
                joinAlias: "p"),
            ParseField("position", "position", .int, creatable: true, updatable: true),
            owner,
        ],
        hasTrash: false, liveCountName: nil, hiddenWithTrashedTargets: ["gallery", "photo"])
}
