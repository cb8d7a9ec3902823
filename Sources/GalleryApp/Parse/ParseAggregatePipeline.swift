/// An aggregation pipeline (`/aggregate/<Class>`, Parse Server's AggregateRouter) compiled to one
/// statement: `$match` (a `where`, the classes' operators), `$group` (`_id` or `objectId`: null, a
/// `"$field"` or an object of them; accumulators `$sum`, `$avg`, `$min`, `$max`, `$count`),
/// `$sort`, `$skip`, `$limit` and `$project` (`{"field":1}`), in that order, each at most once.
/// Field references are Parse field names (`"$width"`); output names (a group's accumulators) are
/// letters, digits and `_`; everything a client sends is a bind or a validated name. Trashed rows
/// are left out, as finds leave them. Rows come back as JSON objects, a group's key as `objectId`.
public struct ParseAggregatePipeline: Sendable {
    /// The statement: one `text` column, each row's JSON object.
    public let statement: ParseSQLStatement

    /// The stages in the one order they may come in.
    static let stageOrder = ["$match", "$group", "$sort", "$skip", "$limit", "$project"]

    /// Compiles `pipeline` (a JSON array of one-key stage objects, or one object of stages) on
    /// `schema`; `classes` resolves the classes `$match`'s subqueries and `$relatedTo` name (nil: 102).
    public static func compile(
        _ pipeline: ParseJSONValue, schema: ParseClassSchema, limits: ParseLimits,
        classes: ParseWhereParser.ClassResolver? = nil
    ) throws -> ParseAggregatePipeline {
        var stages: [(String, ParseJSONValue)] = []
        switch pipeline {
        case .array(let items):
            for item in items {
                guard case .object(let stage) = item, stage.members.count == 1 else {
                    throw ParseError.invalidQuery(
                        "Each pipeline stage is an object with one key, like {\"$match\":{…}}.")
                }
                stages.append((stage.members[0].key, stage.members[0].value))
            }
        case .object(let object):
            // One object of stages: they run in the one order.
            stages = object.members.map { ($0.key.hasPrefix("$") ? $0.key : "$" + $0.key, $0.value) }
                .sorted { (stageOrder.firstIndex(of: $0.0) ?? -1) < (stageOrder.firstIndex(of: $1.0) ?? -1) }
        default:
            throw ParseError.invalidQuery("pipeline must be an array of stages.")
        }
        var last = -1
        for (name, _) in stages {
            guard let index = stageOrder.firstIndex(of: name) else {
                throw ParseError.invalidQuery(
                    "Unsupported pipeline stage \(ParseWhereParser.quoted(String(name.prefix(30)))): use \(stageOrder.joined(separator: ", "))."
                )
            }
            guard index > last else {
                throw ParseError.invalidQuery(
                    "Pipeline stages go once each, in the order \(stageOrder.joined(separator: ", ")).")
            }
            last = index
        }
        let stage = Dictionary(stages, uniquingKeysWith: { first, _ in first })
        var binds = ParseSQLCompiler.Binds()
        var conditions: [String] = schema.hasTrash ? ["t.deleted_at is null"] : []
        if let match = stage["$match"] {
            var writer = ParseJSONWriter()
            writer.value(match)
            let query = try ParseQuery.find(
                schema, items: [("where", String(decoding: writer.bytes, as: UTF8.self))], limits: limits,
                classes: classes)
            if let condition = query.condition {
                conditions.append(
                    ParseSQLCompiler.conditionSQL(condition, schema: schema, binds: &binds, access: .master))
            }
        }
        // The inner select list: output name → SQL expression.
        var outputs: [(name: String, sql: String)] = []
        var groupBy: String?
        if let group = stage["$group"] {
            guard case .object(let spec) = group else { throw ParseError.invalidQuery("$group must be an object.") }
            guard let key = spec["_id"] ?? spec["objectId"] else {
                throw ParseError.invalidQuery("$group needs _id (or objectId).")
            }
            let keySQL = try groupKey(key, schema)
            outputs.append(("objectId", keySQL))
            groupBy = keySQL == "null" ? nil : keySQL
            for member in spec.members where member.key != "_id" && member.key != "objectId" {
                outputs.append((try outputName(member.key), try accumulator(member.value, schema, name: member.key)))
            }
        } else {
            for field in schema.fields {
                guard let column = column(field) else { continue }
                outputs.append((field.name, "t.\(column)"))
            }
        }
        if let project = stage["$project"] {
            guard case .object(let spec) = project, !spec.isEmpty else {
                throw ParseError.invalidQuery("$project must be an object like {\"title\":1}.")
            }
            var kept: Set<String> = ["objectId"]
            for member in spec.members {
                guard member.value == .int(1) || member.value == .bool(true) else {
                    throw ParseError.invalidQuery("$project takes fields to keep: {\"\(member.key.prefix(30))\":1}.")
                }
                guard outputs.contains(where: { $0.name == member.key }) else {
                    throw ParseError.invalidQuery(
                        "$project names no field of the pipeline: \(ParseWhereParser.quoted(String(member.key.prefix(50))))."
                    )
                }
                kept.insert(member.key)
            }
            outputs.removeAll { !kept.contains($0.name) }
        }
        var sql =
            "select to_jsonb(x)::text from (select "
            + outputs.map { "\($0.sql) as \"\($0.name)\"" }.joined(separator: ", ")
            + " from \(schema.table) t"
        if !conditions.isEmpty { sql += " where " + conditions.joined(separator: " and ") }
        if let groupBy { sql += " group by " + groupBy }
        sql += ") x"
        if let sort = stage["$sort"] {
            guard case .object(let spec) = sort, !spec.isEmpty else {
                throw ParseError.invalidQuery("$sort must be an object like {\"total\":-1}.")
            }
            let terms = try spec.members.map { member -> String in
                guard outputs.contains(where: { $0.name == member.key }) else {
                    throw ParseError.invalidQuery(
                        "$sort names no field of the pipeline: \(ParseWhereParser.quoted(String(member.key.prefix(50))))."
                    )
                }
                switch member.value {
                case .int(1): return "x.\"\(member.key)\" asc"
                case .int(-1): return "x.\"\(member.key)\" desc"
                default: throw ParseError.invalidQuery("$sort takes 1 or -1.")
                }
            }
            sql += " order by " + terms.joined(separator: ", ")
        }
        for (name, cap) in [("$limit", limits.maxLimit), ("$skip", limits.maxSkip)] {
            guard let value = stage[name] else { continue }
            guard case .int(let n) = value, n >= 0, n <= Int64(cap) else {
                throw ParseError.invalidQuery("\(name) must be 0 to \(cap).")
            }
            let placeholder = binds.add(.int(n), cast: "bigint")
            sql += (name == "$limit" ? " limit " : " offset ") + placeholder
        }
        return ParseAggregatePipeline(statement: ParseSQLStatement(sql: sql, binds: binds.values))
    }

    /// The column of a field an aggregation may read (every stored field; not a computed one).
    private static func column(_ field: ParseField) -> String? {
        switch field.source {
        case .column(let column), .selfOnly(let column): return column
        case .coverPhoto, .displaySizes: return nil
        }
    }

    /// The field a `"$name"` reference names, or 102.
    private static func reference(_ value: ParseJSONValue, _ schema: ParseClassSchema) throws -> (ParseField, String) {
        guard case .string(let text) = value, text.hasPrefix("$"),
            let field = schema.field(named: String(text.dropFirst())),
            let column = column(field)
        else { throw ParseError.invalidQuery("A field reference is \"$<field>\" of \(schema.className).") }
        return (field, "t.\(column)")
    }

    private static func groupKey(_ key: ParseJSONValue, _ schema: ParseClassSchema) throws -> String {
        switch key {
        case .null: return "null"
        case .object(let parts):
            guard !parts.isEmpty, parts.members.count <= 8 else {
                throw ParseError.invalidQuery("A compound _id has 1 to 8 fields.")
            }
            let pairs = try parts.members.map { "'\(try outputName($0.key))', \(try reference($0.value, schema).1)" }
            return "jsonb_build_object(" + pairs.joined(separator: ", ") + ")"
        default:
            return try reference(key, schema).1
        }
    }

    private static func accumulator(_ value: ParseJSONValue, _ schema: ParseClassSchema, name: String) throws -> String
    {
        guard case .object(let spec) = value, spec.members.count == 1 else {
            throw ParseError.invalidQuery("\(name) must be one accumulator, like {\"$sum\":1}.")
        }
        let op = spec.members[0].key
        let argument = spec.members[0].value
        switch (op, argument) {
        case ("$count", .object(let empty)) where empty.isEmpty:
            return "count(*)"
        case ("$sum", .int(let n)):
            return "count(*) * \(n)"
        case ("$sum", _), ("$avg", _), ("$min", _), ("$max", _):
            let (field, column) = try reference(argument, schema)
            let numeric = field.type == .int || field.type == .double
            let ordered = numeric || field.type == .date || field.type == .string
            guard op == "$min" || op == "$max" ? ordered : numeric else {
                throw ParseError.invalidQuery("\(op) on \(field.name) (\(field.type.parseName)) is not supported.")
            }
            return "\(op.dropFirst())(\(column))"
        default:
            throw ParseError.invalidQuery(
                "Accumulators are $sum, $avg, $min, $max and $count: \(ParseWhereParser.quoted(String(op.prefix(30))))."
            )
        }
    }

    /// An output name, checked so it can be quoted into SQL as an identifier.
    private static func outputName(_ name: String) throws -> String {
        guard let first = name.unicodeScalars.first, ("a"..."z").contains(first) || ("A"..."Z").contains(first),
            name.utf8.count <= 63,
            name.unicodeScalars.allSatisfy({
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_"
            })
        else {
            throw ParseError.invalidQuery(
                "Output names are a letter, then letters, digits and _: \(ParseWhereParser.quoted(String(name.prefix(50))))."
            )
        }
        return name
    }
}
