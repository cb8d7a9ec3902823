/// The naming rules of classes, fields and indexes, as Parse Server's `SchemaController` has them
/// (`classNameIsValid`, `fieldNameIsValid`, the default columns): checked before a name is stored.
/// No name a client sends ever reaches SQL: tables, columns and indexes are named by the server.
enum ParseClassName {
    /// Parse Server's system classes: valid names, but not ones an app may define here.
    static let systemClasses: Set<String> = [
        "_User", "_Installation", "_Role", "_Session", "_Product", "_PushStatus", "_JobStatus", "_JobSchedule",
        "_Audience", "_Idempotency",
    ]

    /// The fields every class has (`defaultColumns._Default`), which no schema may add or delete.
    static let defaultFields: Set<String> = ["objectId", "createdAt", "updatedAt", "ACL"]

    /// Names Parse Server refuses as fields (`invalidColumns`), besides `className`.
    static let invalidFields: Set<String> = ["length", "className"]

    /// Longest accepted class, field or index name (Parse sets none; a name is not a document).
    static let maxLength = 100

    /// `^[A-Za-z][A-Za-z0-9_]*$` (`classAndFieldRegex`), at most `maxLength` characters.
    static func matchesNamePattern(_ name: String) -> Bool {
        let utf8 = Array(name.utf8)
        guard let first = utf8.first, utf8.count <= maxLength, isLetter(first) else { return false }
        return utf8.allSatisfy { isLetter($0) || ($0 >= 48 && $0 <= 57) || $0 == 95 }
    }

    /// Whether an app may define a class called `name`: the pattern (so no leading `_`: the
    /// system classes are Parse Server's own).
    static func isValidClassName(_ name: String) -> Bool {
        matchesNamePattern(name)
    }

    /// Whether `name` may be a field name at all (`fieldNameIsValid`).
    static func isValidFieldName(_ name: String) -> Bool {
        matchesNamePattern(name) && !invalidFields.contains(name)
    }

    /// Whether an index may be called `name` (the same pattern, plus Parse's own `_id_`).
    static func isValidIndexName(_ name: String) -> Bool {
        matchesNamePattern(name)
    }

    /// Parse Server's 103 message for a class name it refuses (`invalidClassNameMessage`).
    static func invalidClassNameError(_ name: String) -> ParseError {
        ParseError(
            code: ParseError.Code.invalidClassName,
            message:
                "Invalid classname: \(name.prefix(maxLength)), classnames can only have alphanumeric characters and _, and must start with an alpha character "
        )
    }

    /// 105 `invalid field name: <name>`.
    static func invalidFieldNameError(_ name: String) -> ParseError {
        ParseError.invalidKeyName("invalid field name: \(name.prefix(maxLength))")
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122)
    }
}
