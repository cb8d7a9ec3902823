import Foundation

/// The class operations on custom classes: the same routes and batch as the built-in classes,
/// their class-level permissions checked before anything runs.
extension ParseAPI {
    /// The class called `className` (103 when there is none).
    func resolve(_ className: String) throws -> ParseClass {
        if let schema = ParseClassSchema.named(className) { return .builtIn(try schemas.appFields.schema(of: schema)) }
        if let view = try views.view(named: className) { return .view(view) }
        return .custom(try customClass(className))
    }

    /// Whether finds of `className` skip ETags and kept answers: those of a built-in class whose
    /// permissions were changed (`PUT /parse/schemas/<Class>`) depend on permissions as well as
    /// rows, which its change sequences do not track. A custom class's permissions move its own
    /// sequence (migration 0025), and kept answers are keyed by the caller (`ParseAccess.tagKey`).
    func skipsAnswerCache(_ className: String) -> Bool {
        guard ParseClassSchema.named(className) != nil else { return false }
        return (try? schemas.builtIns.isDefault(className)) != true
    }

    /// The custom class `className` (103 when there is none).
    func customClass(_ className: String) throws -> CustomClass {
        guard let custom = try schemas.catalog.lookup(className) else {
            throw ParseError(
                code: ParseError.Code.invalidClassName, message: "Invalid class name: \(className.prefix(100)).")
        }
        return custom
    }

    /// 119 (or 101) unless a built-in class's permissions (`PUT /parse/schemas/<Class>`, open by
    /// default) let the caller of `access` perform `operation`.
    func requireBuiltIn(_ operation: ClassLevelPermissions.Operation, _ className: String, _ access: ParseAccess) throws
    {
        try schemas.builtIns.permissions(of: className).require(
            operation, on: className, caller: access.caller, roles: CustomObjectService.roles(of: access))
    }

    /// `POST /classes/<Class>` of a custom class: 201 with `objectId` and `createdAt`.
    func createCustom(_ className: String, body: [UInt8], access: ParseAccess) throws -> Result {
        try refuseViewWrite(className)
        let (objectId, createdAt) = try customObjects.create(className, body: body, access: access)
        return created(className, objectId: objectId, createdAt: createdAt)
    }

    /// `PUT /classes/<Class>/<objectId>` of a custom class: `{"updatedAt"}`.
    func updateCustom(_ className: String, objectId: String, body: [UInt8], access: ParseAccess) throws -> Result {
        try refuseViewWrite(className)
        let custom = try customClass(className)
        let updatedAt = try customObjects.update(
            custom, objectId: try Self.checkedObjectId(objectId), body: body, access: access)
        var json = ParseJSONWriter()
        json.beginObject()
        json.key("updatedAt")
        json.string(ParseDate.format(updatedAt))
        json.endObject()
        return Result(status: .ok, json: json.bytes)
    }

    /// `DELETE /classes/<Class>/<objectId>` of a custom class: removed at once (no trash). `{}`.
    func deleteCustom(_ className: String, objectId: String, access: ParseAccess) throws -> Result {
        try refuseViewWrite(className)
        let custom = try customClass(className)
        try customObjects.delete(custom, objectId: try Self.checkedObjectId(objectId), access: access)
        return Result(status: .ok, json: Array("{}".utf8))
    }
}
