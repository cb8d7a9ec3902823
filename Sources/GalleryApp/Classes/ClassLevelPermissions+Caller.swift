/// What the class-level permissions leave one caller: the objects of an operation (all of them,
/// or those a pointer permission gives them) and the fields they never see (`protectedFields`),
/// as Parse Server's `DatabaseController.addPointerPermissions` and `addProtectedFields` decide.
extension ClassLevelPermissions {
    /// The objects a permitted operation reaches.
    enum Grant: Equatable, Sendable {
        /// Every object (the ACLs still apply).
        case all
        /// Only objects whose `_User` pointer fields named here point to the caller (any of them).
        case pointedBy([String])
    }

    /// The pointer fields that stand in for a missing grant of `operation`: `readUserFields` for
    /// get, find and count, `writeUserFields` for update and delete; none for create and addField.
    func pointerFields(for operation: Operation) -> [String] {
        switch operation {
        case .get, .find, .count: return readUserFields
        case .update, .delete: return writeUserFields
        case .create, .addField: return []
        }
    }

    /// Which objects of `className` the caller may `operation`: all with a grant (or the master
    /// key), those pointing to them through a pointer permission, else 119 (101 without a session
    /// where only signed-in users may). A caller without a session matches no pointer: no object.
    func grant(_ operation: Operation, on className: String, caller: ParseCaller, roles: Set<String>) throws -> Grant {
        if caller.isMaster || allows(operation, userId: caller.userId, roles: roles) { return .all }
        let fields = pointerFields(for: operation)
        if !fields.isEmpty { return .pointedBy(fields) }
        try require(operation, on: className, caller: caller, roles: roles)
        return .all
    }

    /// The fields hidden from a caller (never for the master key): the intersection of every
    /// `protectedFields` entry that applies to them — `*`, `authenticated` for a signed-in user,
    /// their objectId, `role:<Name>` for each role they hold — or none when no entry applies.
    /// So `{"*":["email"],"role:Admin":[]}` hides `email` from everyone but the role's members.
    func hiddenFields(caller: ParseCaller, roles: Set<String>) -> Set<String> {
        if caller.isMaster { return [] }
        var sets: [[String]] = []
        if let everyone = protectedFields["*"] { sets.append(everyone) }
        if let userId = caller.userId {
            if let signedIn = protectedFields["authenticated"] { sets.append(signedIn) }
            for role in roles.sorted() {
                if let fields = protectedFields["role:" + role] { sets.append(fields) }
            }
            if let own = protectedFields[userId] { sets.append(own) }
        }
        guard var hidden = sets.first.map(Set.init) else { return [] }
        for fields in sets.dropFirst() { hidden.formIntersection(fields) }
        return hidden
    }

    /// For each field of `hidden` (the caller's `hiddenFields`), the `userField:<pointer>` entries
    /// that show it on the objects whose pointer names the caller: as Parse Server's
    /// `filterSensitiveData`, such an object hides only the intersection of `hidden` and every
    /// matching entry, so a field is shown there when any matching entry leaves it out. Only a
    /// signed-in caller can be pointed to; `{"*":["email"],"userField:owner":[]}` shows `email`
    /// to each object's owner alone.
    func revealingPointers(hidden: Set<String>, caller: ParseCaller) -> [String: [String]] {
        guard caller.userId != nil, !hidden.isEmpty else { return [:] }
        var revealing: [String: [String]] = [:]
        for (key, fields) in protectedFields.sorted(by: { $0.key < $1.key }) {
            guard let pointer = Self.userFieldName(key) else { continue }
            for name in hidden.subtracting(fields) { revealing[name, default: []].append(pointer) }
        }
        return revealing
    }

    /// 107 (as Parse Server's `validatePointerPermission`) unless every `readUserFields` and
    /// `writeUserFields` entry is a Pointer to `_User` of `custom`.
    func checkPointerFields(of custom: CustomClass) throws {
        for (key, fields) in [("readUserFields", readUserFields), ("writeUserFields", writeUserFields)] {
            for name in fields {
                guard let field = custom.field(named: name), field.type.kind == .pointer,
                    field.type.targetClass == "_User"
                else {
                    throw ParseError.invalidJSON(
                        "'\(name.prefix(100))' is not a valid column for class level pointer permissions \(key)")
                }
            }
        }
    }
}
