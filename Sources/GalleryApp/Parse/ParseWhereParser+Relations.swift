/// A `where` on a Relation field, as Parse Server's `DatabaseController.reduceInRelation` reads it:
/// `{"likes":<pointer>}` (and `$eq`) finds the objects whose relation holds that object, `$in` one
/// of several, `$ne` and `$nin` the objects whose relation holds none of them; `$all` (which Parse
/// Server turns into no match) the objects whose relation holds every one. The targets are read as
/// the caller may read their class, as a `$relatedTo` owner is (docs/decisions/043 and 046): a
/// target the caller may not get is held by no object, so a relation never tells that an object it
/// cannot read exists, nor who holds it.
extension ParseWhereParser {
    /// The condition `value` puts on the Relation field `name`; 102 for any other operator or a
    /// value that is not a pointer (106 for a pointer to another class, as on a Pointer field).
    mutating func relationConstraint(_ name: String, _ relation: ParseRelationField, _ value: ParseJSONValue)
        throws -> ParseCondition
    {
        try count()
        guard let resolveClass else {
            throw ParseError.invalidQuery("a where on Relation \(Self.quoted(name)) is not supported here")
        }
        guard case .object(let object) = value else { throw Self.misuse(name) }
        // The target class as a get of it: refused or narrowed by its pointer permissions.
        let target = try resolveClass(relation.targetClass, .relatedTo)
        if let target {
            subqueries.append(ParseSubquery(schema: target.schema, condition: nil, key: "objectId"))
        } else {
            readsMissingClass = true
        }
        func holds(_ ids: [String]) -> ParseCondition {
            guard let target else { return .or([]) }
            // No id, or a class the caller may not get: no target (the field stays named, so a
            // protected relation is 119 whatever the list).
            let named: ParseCondition
            if ids.isEmpty || target.refused {
                named = .or([])
            } else if ids.count == 1 {
                named = .compare(field: "objectId", op: .equal, value: .text(ids[0]))
            } else {
                named = .inList(field: "objectId", values: ids.map { .text($0) }, orNull: false, negated: false)
            }
            return .inRelation(
                field: name, joinTable: relation.joinTable,
                targets: ParseSubquery(schema: target.schema, condition: target.narrowing(named), key: "objectId"))
        }
        if object["__type"] != nil {
            return holds([try pointerId(name, relation, value)])
        }
        guard !object.isEmpty else { throw Self.misuse(name) }
        var parts: [ParseCondition] = []
        for member in object.members {
            try count()
            switch member.key {
            case "$eq":
                parts.append(holds([try pointerId(name, relation, member.value)]))
            case "$ne":
                parts.append(.not(holds([try pointerId(name, relation, member.value)])))
            case "$in":
                parts.append(holds(try pointerIds(name, relation, member.value, operator: "$in")))
            case "$nin":
                parts.append(.not(holds(try pointerIds(name, relation, member.value, operator: "$nin"))))
            case "$all":
                let ids = try pointerIds(name, relation, member.value, operator: "$all")
                // Every one held; none named matches nothing (MongoDB's `$all: []`).
                parts.append(ids.isEmpty ? holds([]) : .and(ids.map { holds([$0]) }))
            default:
                throw Self.misuse(name)
            }
        }
        return parts.count == 1 ? parts[0] : .and(parts)
    }

    private static func misuse(_ name: String) -> ParseError {
        ParseError.invalidQuery(
            "\(quoted(name)) is a Relation: it takes a pointer, or $eq, $ne, $in, $nin or $all with pointers")
    }

    /// The objectIds of an array of pointers, at most `maxInListCount`, without repeats.
    private func pointerIds(
        _ name: String, _ relation: ParseRelationField, _ value: ParseJSONValue, operator op: String
    ) throws -> [String] {
        guard case .array(let elements) = value else {
            throw ParseError.invalidQuery("\(op) on \(Self.quoted(name)) must be an array of pointers")
        }
        guard elements.count <= limits.maxInListCount else {
            throw ParseError.invalidQuery("\(op) on \(Self.quoted(name)) has more than \(limits.maxInListCount) values")
        }
        var ids: [String] = []
        for element in elements {
            let id = try pointerId(name, relation, element)
            if !ids.contains(id) { ids.append(id) }
        }
        return ids
    }

    /// The objectId of `{"__type":"Pointer","className":<target>,"objectId":…}`.
    private func pointerId(_ name: String, _ relation: ParseRelationField, _ value: ParseJSONValue) throws -> String {
        guard case .object(let object) = value, object["__type"] == .string("Pointer") else {
            throw Self.misuse(name)
        }
        guard object.members.count == 3, case .string(let className)? = object["className"],
            case .string(let objectId)? = object["objectId"], ParseObjectID.isPlausible(objectId)
        else { throw ParseError.invalidPointer("invalid Pointer for \(Self.quoted(name))") }
        guard className == relation.targetClass else {
            throw ParseError.invalidPointer(
                "\(Self.quoted(name)) relates to \(relation.targetClass), not to \(Self.quoted(className))")
        }
        return objectId
    }
}
