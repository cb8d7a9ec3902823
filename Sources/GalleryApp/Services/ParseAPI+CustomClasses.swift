import Foundation

/// The class operations on custom classes: the same routes and batch as the built-in classes,
/// their class-level permissions checked before anything runs.
extension ParseAPI {
    /// The class called `className` (103 when there is none).
    func resolve(_ className: String) throws -> ParseClass {
        if let schema = ParseClassSchema.named(className) { return .builtIn(schema) }
        if let view = try views.view(named: className) { return .view(view) }
        return .custom(try customClass(className))
    }

    /// The custom class `className` (103 when there is none).
    func customClass(_ className: String) throws -> CustomClass {
        guard let custom = try schemas.catalog.lookup(className) else {
            throw ParseError(
                code: ParseError.Code.invalidClassName, message: "Invalid class name: \(className.prefix(100)).")
        }
        return custom
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
