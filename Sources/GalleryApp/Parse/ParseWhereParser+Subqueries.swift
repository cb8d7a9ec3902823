/// The operators that compare a field with another query's results (`$inQuery`, `$notInQuery`,
/// `$select`, `$dontSelect`, Parse Server's `RestQuery.replaceInQuery`/`replaceSelect`) and
/// `$containedBy`. A subquery is validated here against its own class and compiled into the same
/// statement (`ParseSQLCompiler`), never run on its own.
extension ParseWhereParser {
    /// What a query reads of another class: a subquery's rows (`find`), included objects (`get`),
    /// or the object owning a `$relatedTo`'s relation and the objects a `where` on a Relation
    /// field names (`get`).
    public enum ClassUse: Sendable {
        case subquery, include, relatedTo
    }

    /// A class a subquery, include or `$relatedTo` names, as the caller may read it: 103 for a name
    /// no class may have, 119 for a class the caller cannot read that way (Parse Server's "not
    /// allowed to access non-existent class" and its class-level permission answer; a `$relatedTo`
    /// owner is `refused` instead); nil for a class that does not exist, to the master key (Parse
    /// Server finds no rows in it).
    public typealias ClassResolver = (String, ClassUse) throws -> ParseReadableClass?

    /// `{"$inQuery":{"where":{…},"className":"Post"}}` on a Pointer: the pointer is (`negated`: is
    /// not) one of the subquery's objects. 102 for any other shape or field type.
    mutating func inQuery(_ field: ParseField, _ value: ParseJSONValue, negated: Bool, operator name: String) throws
        -> ParseCondition
    {
        guard case .object(let object) = value, case .string(let className)? = object["className"],
            let whereJSON = object["where"], object.keys.allSatisfy({ $0 == "where" || $0 == "className" })
        else { throw ParseError.invalidQuery("improper usage of \(name)") }
        guard case .pointer(let target) = field.type else {
            throw ParseError.invalidQuery("\(name) is only supported on Pointer fields, not on \(field.name)")
        }
        let found = try subquery(className, where: whereJSON, key: "objectId", operator: name)
        // A pointer to another class is never one of the subquery's objects.
        guard let found, found.schema.className == target else { return negated ? .and([]) : .or([]) }
        return .inSubquery(field: field.name, found, negated: negated)
    }

    /// `{"$select":{"query":{"className":"Team","where":{…}},"key":"city"}}`: the field's value is
    /// (`negated`: is not) a value of `key` in the subquery's objects. 102 for another shape, a
    /// key the class lacks, or a key whose type cannot equal the field's.
    mutating func selectKey(_ field: ParseField, _ value: ParseJSONValue, negated: Bool, operator name: String) throws
        -> ParseCondition
    {
        guard case .object(let object) = value, object.members.count == 2, case .string(let key)? = object["key"],
            case .object(let query)? = object["query"], case .string(let className)? = query["className"],
            query.keys.allSatisfy({ $0 == "where" || $0 == "className" })
        else { throw ParseError.invalidQuery("improper usage of \(name)") }
        guard Self.comparable(field.type) != nil else {
            throw ParseError.invalidQuery("\(name) is not supported on \(field.type.parseName) field \(field.name)")
        }
        guard let found = try subquery(className, where: query["where"], key: key, operator: name) else {
            return negated ? .and([]) : .or([])
        }
        if let keyField = found.schema.field(named: key), Self.comparable(keyField.type) != Self.comparable(field.type)
        {
            throw ParseError.invalidQuery(
                "\(name): \(found.schema.className).\(keyField.name) is a \(keyField.type.parseName), \(field.name) a \(field.type.parseName)"
            )
        }
        return .inSubquery(field: field.name, found, negated: negated)
    }

    /// `{"$relatedTo":{"object":<pointer>,"key":"likes"}}` at the top of a `where`: the objects in
    /// that object's Relation `key`. 102 for another shape, or a key that is not a Relation of the
    /// object's class to this class (Parse Server would find nothing); 103 and 119 as a subquery's
    /// class. As Parse Server since GHSA-wmwx-jr2p-4j4r: a key the owner's `protectedFields` hide
    /// from the caller is 119, and an owner the caller may not read (its class-level permissions,
    /// pointer permissions or ACL) relates nothing, so a relation never tells what its owner hides.
    mutating func relatedTo(_ value: ParseJSONValue) throws -> ParseCondition {
        guard case .object(let object) = value, object.members.count == 2, case .string(let key)? = object["key"],
            case .object(let pointer)? = object["object"], pointer["__type"] == .string("Pointer"),
            case .string(let className)? = pointer["className"], case .string(let objectId)? = pointer["objectId"]
        else { throw ParseError.invalidQuery("improper usage of $relatedTo") }
        guard ParseObjectID.isPlausible(objectId) else {
            throw ParseError.invalidPointer("invalid Pointer in $relatedTo")
        }
        guard let resolveClass else { throw ParseError.invalidQuery("$relatedTo is not supported here") }
        guard let owner = try resolveClass(className, .relatedTo) else {
            readsMissingClass = true
            return .or([])
        }
        let owning = owner.schema
        guard let relation = owning.relations[key] else {
            throw ParseError.invalidQuery("$relatedTo: \(Self.quoted(key)) is not a Relation of \(owning.className)")
        }
        guard relation.targetClass == schema.className else {
            throw ParseError.invalidQuery(
                "$relatedTo: \(owning.className).\(key) relates to \(relation.targetClass), not to \(schema.className)")
        }
        try owner.deny([key])
        subqueries.append(ParseSubquery(schema: owning, condition: nil, key: "objectId"))
        if owner.refused { return .or([]) }
        let ownerRow = ParseSubquery(
            schema: owning,
            condition: owner.narrowing(.compare(field: "objectId", op: .equal, value: .text(objectId))),
            key: "objectId")
        return .relatedTo(joinTable: relation.joinTable, owningId: objectId, owner: ownerRow)
    }

    /// `{"$containedBy":[…]}` on an array field: every element of the field is in the list.
    func containedBy(_ field: ParseField, _ value: ParseJSONValue) throws -> ParseCondition {
        guard case .array(let elements) = value else {
            throw ParseError.invalidQuery("bad $containedBy: should be an array")
        }
        guard elements.count <= limits.maxInListCount else {
            throw ParseError.invalidQuery("$containedBy on \(field.name) has more than \(limits.maxInListCount) values")
        }
        switch field.type {
        case .stringArray:
            return .arrayContainedBy(
                field: field.name, .textArray(try stringList(field, value, operator: "$containedBy")))
        case .json("Array"):
            var writer = ParseJSONWriter()
            writer.value(value)
            return .arrayContainedBy(field: field.name, .text(String(decoding: writer.bytes, as: UTF8.self)))
        default:
            throw ParseError.invalidQuery("$containedBy is only supported on Array fields, not on \(field.name)")
        }
    }

    /// The family of values a field's type compares with: numbers with numbers, else the same type.
    static func comparable(_ type: ParseFieldType) -> String? {
        switch type {
        case .int, .double: return "number"
        case .string, .pointer: return "text"
        case .date: return "date"
        case .bool: return "bool"
        case .stringArray, .file, .acl, .json: return nil
        }
    }

    /// The subquery on `className` selecting `key`, its `where` validated against that class
    /// (sharing this query's constraint budget); nil for a class the master key finds no rows in.
    private mutating func subquery(_ className: String, where json: ParseJSONValue?, key: String, operator name: String)
        throws -> ParseSubquery?
    {
        guard let resolveClass else { throw ParseError.invalidQuery("\(name) is not supported here") }
        guard let readable = try resolveClass(className, .subquery) else {
            readsMissingClass = true
            return nil
        }
        let schema = readable.schema
        guard let keyField = schema.field(named: key), case .column = keyField.source,
            Self.comparable(keyField.type) != nil
        else {
            throw ParseError.invalidQuery(
                "\(name): \(Self.quoted(key)) is not a field of \(schema.className) that can be compared")
        }
        // A protected field may be neither selected (its values would become the outer field's)
        // nor constrained (the matches would tell its values): 119, as a find of the class.
        try readable.deny([key])
        var inner = ParseWhereParser(schema: schema, limits: limits)
        inner.resolveClass = resolveClass
        inner.conditionCount = conditionCount
        let condition = try json.flatMap { try inner.parse($0) }
        try readable.deny(condition?.fieldNames ?? [])
        conditionCount = inner.conditionCount
        readsMissingClass = readsMissingClass || inner.readsMissingClass
        let found = ParseSubquery(schema: schema, condition: readable.narrowing(condition), key: key)
        subqueries += inner.subqueries + [found]
        return found
    }
}
