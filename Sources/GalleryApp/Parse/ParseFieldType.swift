/// The Parse type of a class field, which decides the JSON shape, the SQL cast of bound values
/// and which query operators apply.
public enum ParseFieldType: Equatable, Sendable {
    /// A Parse String (`text` column).
    case string
    /// A Parse Number held as an integer (`int`/`bigint` column).
    case int
    /// A Parse Number held as a double (`double precision` column).
    case double
    /// A Parse Date (`timestamptz` column).
    case date
    /// A Parse Array of Strings (`text[]` column).
    case stringArray
    /// A Parse File, stored as a blob key (`…_key` column).
    case file
    /// A Parse Pointer to the named class, stored as the target's objectId (`…_id` column).
    case pointer(String)
    /// A Parse Boolean (`boolean` column).
    case bool
    /// A Parse ACL (`{"<userId>":{"read":true,"write":true},"*":{"read":true}}`), stored as jsonb.
    case acl
    /// A custom class's Object, Array, File, GeoPoint or Bytes field (the Parse type name), stored
    /// as jsonb in its Parse JSON form and written back as it is; only `$exists` queries it.
    case json(String)

    /// The PostgreSQL type that bound values for this field are cast to.
    var sqlCast: String {
        switch self {
        case .string, .file, .pointer: return "text"
        case .int: return "bigint"
        case .double: return "float8"
        case .date: return "timestamptz"
        case .stringArray: return "text[]"
        case .bool: return "boolean"
        case .acl, .json: return "jsonb"
        }
    }

    /// The name used in error messages (Parse's type names).
    var parseName: String {
        switch self {
        case .string: return "String"
        case .int, .double: return "Number"
        case .date: return "Date"
        case .stringArray: return "Array"
        case .file: return "File"
        case .pointer(let className): return "Pointer<\(className)>"
        case .bool: return "Boolean"
        case .acl: return "ACL"
        case .json(let name): return name
        }
    }
}
