/// A read of a view as the Photo query that runs it: `where`, `order`, `keys` and `excludeKeys`
/// name the view's fields, translated here to Photo's (names are looked up, never passed on
/// unchecked: one the view does not have is 102); the other parameters go to `ParseQuery` as
/// they are, so limits, counts, errors and the access filter are Photo's.
extension PhotoView {
    /// The view fields an answer carries (from `keys` and `excludeKeys`).
    struct Selection: Sendable {
        /// The fields written, in the view's order.
        let fields: [Field]
    }

    /// The query of `GET /classes/<View>` (with the caller's access still to set).
    func findQuery(_ items: [(name: String, value: String)], limits: ParseLimits) throws -> ParseQuery {
        let (photoItems, selection) = try translate(items, limits: limits)
        var query = try ParseQuery.find(.photo, items: photoItems, limits: limits)
        query.view = selection
        return query
    }

    /// The query of `GET /classes/<View>/<objectId>`.
    func getQuery(objectId: String, _ items: [(name: String, value: String)], limits: ParseLimits) throws
        -> ParseQuery
    {
        let (photoItems, selection) = try translate(items, limits: limits)
        var query = try ParseQuery.get(.photo, objectId: objectId, items: photoItems, limits: limits)
        query.view = selection
        return query
    }

    /// The Photo query's items, and the fields to write: `keys` is always given to Photo (the
    /// source fields of the selected view fields), so a page selects only the columns it writes.
    func translate(_ items: [(name: String, value: String)], limits: ParseLimits) throws -> (
        [(name: String, value: String)], Selection
    ) {
        var photoItems: [(name: String, value: String)] = []
        var seen: Set<String> = []
        var keys: String?
        var excludeKeys: String?
        for item in items {
            guard ["where", "order", "keys", "excludeKeys", "include", "includeAll"].contains(item.name) else {
                photoItems.append(item)
                continue
            }
            guard seen.insert(item.name).inserted else {
                throw ParseError.invalidQuery("parameter \(item.name) is given more than once")
            }
            switch item.name {
            case "where":
                photoItems.append((name: "where", value: try translateWhere(item.value, limits: limits)))
            case "order":
                if let order = try translateOrder(item.value) { photoItems.append((name: "order", value: order)) }
            case "keys":
                keys = try ParseQuery.commaList(item.value, name: "keys")
            case "excludeKeys":
                excludeKeys = try ParseQuery.commaList(item.value, name: "excludeKeys")
            case "include":
                // A view has no pointers: an include may name its fields and expands nothing.
                for name in try names(ParseQuery.commaList(item.value, name: "include")) where name != "*" {
                    guard field(named: name) != nil else {
                        throw ParseError.invalidQuery("include names unknown field \(ParseWhereParser.quoted(name))")
                    }
                }
            default:  // includeAll: nothing to include; Photo checks the flag.
                photoItems.append(item)
            }
        }
        var selected = fields
        if let keys {
            var wanted: Set<String> = []
            for name in names(keys) {
                guard field(named: name) != nil else {
                    throw ParseError.invalidQuery("keys names unknown field \(ParseWhereParser.quoted(name))")
                }
                wanted.insert(name)
            }
            selected = fields.filter { $0.isDefault || wanted.contains($0.name) }
        }
        if let excludeKeys {
            var unwanted: Set<String> = []
            for name in names(excludeKeys) {
                guard field(named: name) != nil else {
                    throw ParseError.invalidQuery("excludeKeys names unknown field \(ParseWhereParser.quoted(name))")
                }
                unwanted.insert(name)
            }
            selected = selected.filter { $0.isDefault || !unwanted.contains($0.name) }
        }
        var sources: [String] = []
        for field in selected where !sources.contains(field.source.name) { sources.append(field.source.name) }
        photoItems.append((name: "keys", value: sources.joined(separator: ",")))
        return (photoItems, Selection(fields: selected))
    }

    private func names(_ list: String?) -> [String] {
        guard let list, !list.isEmpty else { return [] }
        return list.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
    }

    /// `order` on the view's names (`-name` descending; `$score` as Photo has it).
    private func translateOrder(_ text: String) throws -> String? {
        guard let list = try ParseQuery.commaList(text, name: "order") else { return nil }
        return try names(list).map { key -> String in
            if key == "$score" { return key }
            let descending = key.hasPrefix("-")
            let name = descending ? String(key.dropFirst()) : key
            guard let field = field(named: name) else {
                throw ParseError.invalidQuery("order names unknown field \(ParseWhereParser.quoted(name))")
            }
            guard field.isSortable else {
                throw ParseError.invalidQuery("\(className).\(field.name) cannot be ordered by")
            }
            return (descending ? "-" : "") + field.source.name
        }.joined(separator: ",")
    }

    /// `where` with the view's field names replaced by Photo's, through `$or`, `$and` and `$nor`.
    private func translateWhere(_ text: String, limits: ParseLimits) throws -> String {
        guard text.utf8.count <= limits.maxWhereBytes else {
            throw ParseError.invalidQuery("where is larger than \(limits.maxWhereBytes) bytes")
        }
        let json: ParseJSONValue
        do {
            json = try ParseJSONParser.parse(text, maxDepth: limits.maxJSONDepth)
        } catch let error as ParseError where error.code == ParseError.Code.invalidJSON {
            throw ParseError.invalidQuery("where is not valid JSON: \(error.message)")
        }
        guard case .object(let object) = json else { return text }
        var writer = ParseJSONWriter()
        writer.value(.object(try translate(object)))
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    private func translate(_ object: ParseJSONObject) throws -> ParseJSONObject {
        var translated = ParseJSONObject()
        for member in object.members {
            if member.key.hasPrefix("$") {
                guard ["$or", "$and", "$nor"].contains(member.key), case .array(let branches) = member.value else {
                    // Photo's parser answers for the operator.
                    translated.members.append(member)
                    continue
                }
                let mapped = try branches.map { branch -> ParseJSONValue in
                    guard case .object(let branchObject) = branch else { return branch }
                    return .object(try translate(branchObject))
                }
                translated.members.append(.init(key: member.key, value: .array(mapped)))
                continue
            }
            guard let field = field(named: member.key) else {
                throw ParseError.invalidQuery(
                    "unknown field \(ParseWhereParser.quoted(member.key)) for class \(className)")
            }
            if !field.isComparable {
                guard case .object(let constraint) = member.value, constraint.keys == ["$exists"] else {
                    throw ParseError.invalidQuery("\(className).\(field.name) may only be queried with $exists")
                }
            }
            translated.members.append(.init(key: field.source.name, value: member.value))
        }
        return translated
    }
}
