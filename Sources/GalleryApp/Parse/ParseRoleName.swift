/// A role's name as Parse checks it (`ParseRole`'s rule in the SDKs and Parse Server): one or more
/// letters, digits, `_`, `-` and spaces, at most `maxLength` bytes. Names are compared exactly
/// (case-sensitive), as ACL keys `role:<Name>` are.
public enum ParseRoleName {
    /// Longer names are refused (Parse sets no bound; this keeps ACL keys and logs small).
    public static let maxLength = 128

    /// Whether `name` is a valid role name.
    public static func isValid(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= maxLength
            && name.unicodeScalars.allSatisfy { scalar in
                switch scalar {
                case "a"..."z", "A"..."Z", "0"..."9", "_", "-", " ": return true
                default: return false
                }
            }
    }

    /// `name` itself, or 142 with Parse's message when it is not a valid role name.
    public static func checked(_ name: String) throws -> String {
        guard isValid(name) else {
            throw ParseError.validationError(
                "A role's name can only contain alphanumeric characters, _, -, and spaces: \(ParseWhereParser.quoted(String(name.prefix(100))))."
            )
        }
        return name
    }
}
