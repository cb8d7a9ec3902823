/// A PostgreSQL data type, identified by its OID (`pg_type.oid`).
///
/// Used to tell the server how to read a bound parameter and to check a column's type before
/// decoding it. Built-in types have fixed OIDs (see `pg_type.dat`); others (extensions, domains over
/// arrays) compare by number and print as `oid N`.
public struct PostgresType: Hashable, Sendable, CustomStringConvertible {
    /// The type's OID.
    public let oid: UInt32

    /// Wraps an OID, as libpq reports it for a column.
    public init(oid: UInt32) { self.oid = oid }

    /// No type: the server infers the parameter's type from context, as for a quoted literal.
    public static let unknown = PostgresType(oid: 0)
    /// `bool`
    public static let bool = PostgresType(oid: 16)
    /// `bytea`
    public static let bytea = PostgresType(oid: 17)
    /// `"char"` (single byte)
    public static let char = PostgresType(oid: 18)
    /// `name` (identifiers in the catalogs)
    public static let name = PostgresType(oid: 19)
    /// `int8` / `bigint`
    public static let int8 = PostgresType(oid: 20)
    /// `int2` / `smallint`
    public static let int2 = PostgresType(oid: 21)
    /// `int4` / `integer`
    public static let int4 = PostgresType(oid: 23)
    /// `text`
    public static let text = PostgresType(oid: 25)
    /// `oid`
    public static let oidType = PostgresType(oid: 26)
    /// `json`
    public static let json = PostgresType(oid: 114)
    /// `float4` / `real`
    public static let float4 = PostgresType(oid: 700)
    /// `float8` / `double precision`
    public static let float8 = PostgresType(oid: 701)
    /// The type of an untyped literal that was never resolved.
    public static let unknownLiteral = PostgresType(oid: 705)
    /// `bpchar` / `char(n)`
    public static let bpchar = PostgresType(oid: 1042)
    /// `varchar`
    public static let varchar = PostgresType(oid: 1043)
    /// `date`
    public static let date = PostgresType(oid: 1082)
    /// `timestamp` (without time zone)
    public static let timestamp = PostgresType(oid: 1114)
    /// `timestamptz`
    public static let timestamptz = PostgresType(oid: 1184)
    /// `numeric`
    public static let numeric = PostgresType(oid: 1700)
    /// `uuid`
    public static let uuid = PostgresType(oid: 2950)
    /// `jsonb`
    public static let jsonb = PostgresType(oid: 3802)
    /// `tsvector`
    public static let tsvector = PostgresType(oid: 3614)
    /// `name[]`
    public static let nameArray = PostgresType(oid: 1003)
    /// `int2[]`
    public static let int2Array = PostgresType(oid: 1005)
    /// `int4[]`
    public static let int4Array = PostgresType(oid: 1007)
    /// `text[]`
    public static let textArray = PostgresType(oid: 1009)
    /// `bpchar[]`
    public static let bpcharArray = PostgresType(oid: 1014)
    /// `varchar[]`
    public static let varcharArray = PostgresType(oid: 1015)
    /// `int8[]`
    public static let int8Array = PostgresType(oid: 1016)

    /// The SQL name of built-in types this file knows, `oid N` otherwise.
    public var description: String {
        switch self {
        case .unknown: return "unknown"
        case .bool: return "boolean"
        case .bytea: return "bytea"
        case .char: return "\"char\""
        case .name: return "name"
        case .int8: return "bigint"
        case .int2: return "smallint"
        case .int4: return "integer"
        case .text: return "text"
        case .oidType: return "oid"
        case .json: return "json"
        case .float4: return "real"
        case .float8: return "double precision"
        case .unknownLiteral: return "unknown"
        case .bpchar: return "character"
        case .varchar: return "character varying"
        case .date: return "date"
        case .timestamp: return "timestamp without time zone"
        case .timestamptz: return "timestamp with time zone"
        case .numeric: return "numeric"
        case .uuid: return "uuid"
        case .jsonb: return "jsonb"
        case .tsvector: return "tsvector"
        case .nameArray: return "name[]"
        case .int2Array: return "smallint[]"
        case .int4Array: return "integer[]"
        case .textArray: return "text[]"
        case .bpcharArray: return "character[]"
        case .varcharArray: return "character varying[]"
        case .int8Array: return "bigint[]"
        default: return "oid \(oid)"
        }
    }
}
