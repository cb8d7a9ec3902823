/// One field of a fixed Parse class: its Parse name, where its value comes from in SQL, its
/// type, and what clients may do with it. Immutable; a class so that the encoder's pass over a
/// projection's fields for every row costs a reference count, not a copy of every string.
public final class ParseField: Sendable {
    /// Where a field's value comes from.
    public enum Source: Equatable, Sendable {
        /// A column of the class's table.
        case column(String)
        /// A Gallery's cover: the photo of the first item (lowest position) whose photo is
        /// not in the trash, computed by a subquery.
        case coverPhoto
        /// A column shown only on the caller's own row and to the master key (`_User.email`, the
        /// field Parse Server protects by default); null, so left out, on everyone else's.
        case selfOnly(String)
        /// A Photo's display sizes (`DisplaySize`), written as `{"t":{"url","width","height"},…}`
        /// from its id and preview, selected as one text value (`SizeColumns`). Only when `keys`
        /// names it: the default record stays as it was.
        case displaySizes
    }

    /// The Parse field name (`takenAt`).
    public let name: String
    /// The field's type.
    public let type: ParseFieldType
    /// Where the value comes from.
    public let source: Source
    /// The name of the result column holding the value (the table column, or the alias of
    /// a computed value).
    public let column: String
    /// Whether `where` may constrain it (files: only `$exists`).
    public let isQueryable: Bool
    /// Whether `order` may name it.
    public let isSortable: Bool
    /// Whether a POST body may set it.
    public let isCreatable: Bool
    /// Whether a POST body must set it.
    public let isRequiredOnCreate: Bool
    /// Whether a PUT body may set it.
    public let isUpdatable: Bool
    /// Whether a PUT body may send `{"__op":"Delete"}` for it (deletedAt: restore from trash).
    public let isRestorable: Bool
    /// Whether it is `createdAt`/`updatedAt`, written as a bare ISO string rather than a
    /// `{"__type":"Date"}` object.
    public let isBuiltInDate: Bool
    /// For a pointer that `include` can expand: the table alias of the joined row; its
    /// columns are selected as `<alias>__<column>`.
    public let joinAlias: String?
    /// The name as a JSON object key, `"name":`, written once here instead of per object.
    public let jsonKey: [UInt8]

    /// A field; the flags default to a read-only, queryable, sortable column.
    public init(
        _ name: String, _ type: ParseFieldType, source: Source, queryable: Bool = true, sortable: Bool = true,
        creatable: Bool = false, requiredOnCreate: Bool = false, updatable: Bool = false, restorable: Bool = false,
        builtInDate: Bool = false, joinAlias: String? = nil
    ) {
        self.name = name
        self.type = type
        self.source = source
        switch source {
        case .column(let column), .selfOnly(let column): self.column = column
        case .coverPhoto: self.column = "cover_photo_id"
        case .displaySizes: self.column = "display_sizes"
        }
        self.isQueryable = queryable
        self.isSortable = sortable
        self.isCreatable = creatable
        self.isRequiredOnCreate = requiredOnCreate
        self.isUpdatable = updatable
        self.isRestorable = restorable
        self.isBuiltInDate = builtInDate
        self.joinAlias = joinAlias
        var key = ParseJSONWriter(capacity: name.utf8.count + 3)
        key.beginObject()
        key.key(name)
        self.jsonKey = Array(key.bytes.dropFirst())
    }

    /// A field stored in the column `column`.
    public convenience init(
        _ name: String, _ column: String, _ type: ParseFieldType, queryable: Bool = true, sortable: Bool = true,
        creatable: Bool = false, requiredOnCreate: Bool = false, updatable: Bool = false, restorable: Bool = false,
        builtInDate: Bool = false, joinAlias: String? = nil
    ) {
        self.init(
            name, type, source: .column(column), queryable: queryable, sortable: sortable, creatable: creatable,
            requiredOnCreate: requiredOnCreate, updatable: updatable, restorable: restorable, builtInDate: builtInDate,
            joinAlias: joinAlias)
    }

    /// The class a pointer field points to, or nil for other types.
    public var pointerClassName: String? {
        if case .pointer(let className) = type { return className }
        return nil
    }

    /// Whether the field is always part of an object (objectId, createdAt, updatedAt), whatever
    /// `keys` and `excludeKeys` say.
    /// Whether the field is written only when `keys` names it (the display sizes).
    public var isOptIn: Bool { source == .displaySizes }

    public var isAlwaysSelected: Bool {
        name == "objectId" || name == "createdAt" || name == "updatedAt"
    }
}
