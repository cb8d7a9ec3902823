import BlobStore
import Foundation
import HTTPServer
import Postgres

/// The Parse operations on classes, independent of how they arrive: the HTTP routes call them
/// directly and `POST /batch` calls them for each sub-request, so both behave the same.
struct ParseAPI: Sendable {
    /// The result of one operation: a status and a JSON body, plus `Location` for creations.
    struct Result: Sendable {
        var status: HTTPStatus
        var json: [UInt8]
        var location: String? = nil
    }

    /// Where finds, gets and the compiled writes run.
    let pool: PostgresPool
    /// The few slots expensive query shapes queue for.
    let expensiveQueries: ExpensiveQueryGate
    /// Photo creation from an uploaded file.
    let uploads: UploadService
    /// DELETE (to the trash) and the purges.
    let trash: TrashService
    /// Gallery and item changes.
    let galleries: GalleryService
    /// The server's public base URL, read per request: by default it names the bound port, which
    /// is known only once the server has started (after the routes were registered).
    let publicURL: @Sendable () -> String
    /// The bucket and CDN base of file URLs.
    let bucket: String, publicAssetURL: String
    /// Signs file URLs (nil: `bucket_public`, plain URLs).
    var assetSigner: AssetURLSigner? = nil
    /// Re-read after every write (`refreshAfterWrite`), so ETags follow this server's own writes at once.
    var classChanges: ClassChangeSequences? = nil
    /// The Parse mount (`/parse`), for `Location`.
    let mountPath: String
    /// Query and body limits.
    let limits: ParseLimits
    /// The custom classes' schema changes (and their catalog).
    let schemas: SchemaService
    /// Writes to objects of custom classes.
    var customObjects: CustomObjectService
    /// The views over photos of the config file (`[[views]]`).
    var views: ViewCatalog

    /// The operations with their collaborators.
    init(
        pool: PostgresPool, expensiveQueries: ExpensiveQueryGate, uploads: UploadService, trash: TrashService,
        publicURL: @escaping @Sendable () -> String, bucket: String, publicAssetURL: String, mountPath: String,
        limits: ParseLimits
    ) {
        self.pool = pool
        self.expensiveQueries = expensiveQueries
        self.uploads = uploads
        self.trash = trash
        self.galleries = GalleryService(pool: pool)
        self.publicURL = publicURL
        self.bucket = bucket
        self.publicAssetURL = publicAssetURL
        self.mountPath = mountPath
        self.limits = limits
        let schemas = SchemaService(
            pool: pool, catalog: CustomClassCatalog(pool: pool), builtIns: BuiltInClassPermissions(pool: pool),
            appFields: BuiltInAppFields(pool: pool))
        self.schemas = schemas
        self.customObjects = CustomObjectService(schemas: schemas, limits: limits, allowClientClassCreation: false)
        self.views = ViewCatalog([], pool: pool)
    }

    var encoder: ParseObjectEncoder {
        ParseObjectEncoder(publicURL: publicURL(), bucket: bucket, assetURL: publicAssetURL, signer: assetSigner)
    }

    static func schema(_ className: String) throws -> ParseClassSchema {
        guard let schema = ParseClassSchema.named(className) else {
            throw ParseError(
                code: ParseError.Code.invalidClassName, message: "Invalid class name: \(className.prefix(100)).")
        }
        return schema
    }

    /// An objectId from a path, checked before it reaches SQL: one no object can have (a NUL byte,
    /// which PostgreSQL cannot even take as a parameter, spaces, 5000 characters) is 101, as for any
    /// id that does not exist.
    static func checkedObjectId(_ objectId: String) throws -> String {
        guard ParseObjectID.isPlausible(objectId) else { throw ParseError.objectNotFound() }
        return objectId
    }

    /// `GET /classes/<Class>`: a page of objects and/or their count, of the rows `access` may read.
    func find(_ className: String, items: [(name: String, value: String)], access: ParseAccess = .master) throws
        -> Result
    {
        try find(try findQuery(className, items: items, access: access))
    }

    /// The validated query of `GET /classes/<Class>` (102 for anything unknown), for `access`.
    func findQuery(_ className: String, items: [(name: String, value: String)], access: ParseAccess = .master) throws
        -> ParseQuery
    {
        let parseClass = try resolve(className)
        var query = try parseFind(parseClass, items: items, access: access)
        query.access = access
        try parseClass.authorize(&query, query.count && query.limit == 0 ? .count : .find, builtIns: schemas.builtIns)
        try checkSubqueries(query)
        return query
    }

    /// 101 unless `access` may `need` the object (missing and not the caller's look the same).
    func require(_ need: ParseAccessNeed, _ schema: ParseClassSchema, _ objectId: String, _ access: ParseAccess) throws
    {
        if access.caller.isMaster { return }
        let check = ParseSQLCompiler.accessCheck(schema, objectId: objectId, access: access, need: need)
        guard try pool.query(check.sql, check.binds.postgresBinds, retry: .safe).count == 1 else {
            throw ParseError.objectNotFound()
        }
    }

    /// The owner of an object `access` creates: the session's user; a user the master key names
    /// (`owner`, a `_User` pointer); nil (ownerless) for the master key without one. Without a
    /// session (the app's keys alone): 119, whether or not accounts exist.
    func owner(for write: ParseWriteBody, _ access: ParseAccess) throws -> String? {
        var named: String?
        if case .pointer(let id)? = write["owner"] { named = id }
        switch access.caller {
        case .master:
            if let named, try !OwnershipRepository(pool: pool).userExists(named) {
                throw ParseError.invalidPointer("owner names no user: \(named).")
            }
            return named
        case .user(let userId):
            if let named, named != userId {
                throw ParseError.operationForbidden("Only the master key may create an object for another user.")
            }
            return userId
        case .anonymous:
            throw ParseError.authenticationRequired()
        }
    }

    /// Runs a validated find with the caller's access: with `explain` (master key only, else
    /// Parse Server's 102) the plan, else a page of objects and/or their count.
    func findOrExplain(_ query: ParseQuery) throws -> Result {
        guard query.explain else { return try find(query) }
        guard query.access.caller.isMaster else {
            throw ParseError.invalidQuery("Using the explain query parameter requires the master key")
        }
        return try explain(query)
    }

    /// `explain`: `{"results":[{"QUERY PLAN":[…]}]}`, the rows of PostgreSQL's `EXPLAIN (FORMAT
    /// JSON)` of the page's statement (of the count's with `limit=0`), as Parse Server's
    /// PostgreSQL adapter answers it. The query is planned, not run.
    func explain(_ query: ParseQuery) throws -> Result {
        let compiled = ParseSQLCompiler.compile(query)
        guard let statement = compiled.select ?? compiled.count else {
            return Result(status: .ok, json: Array(#"{"results":[]}"#.utf8))
        }
        let plans = try pool.withConnection { connection in
            try connection.query("explain (format json) " + statement.sql, statement.binds.postgresBinds).map {
                try $0.decode(String.self, 0)
            }
        }
        var json = ParseJSONWriter()
        json.beginObject()
        json.key("results")
        json.beginArray()
        for plan in plans {
            json.beginObject()
            json.key("QUERY PLAN")
            // PostgreSQL's own JSON document.
            json.raw(Array(plan.utf8))
            json.endObject()
        }
        json.endArray()
        json.endObject()
        return Result(status: .ok, json: json.bytes)
    }

    /// Runs a validated find query: a page of objects and/or their count.
    func find(_ query: ParseQuery) throws -> Result {
        let compiled = ParseSQLCompiler.compile(query)
        var rows: [PostgresRow] = []
        var count: Int64?
        var encoder = self.encoder
        let run = { (connection: PostgresConnection) throws -> Void in
            if let select = compiled.select {
                rows = Array(try connection.query(select.sql, select.binds.postgresBinds, retry: .safe))
                encoder.included = try self.includedObjects(
                    query.includes, rows: rows, projection: compiled.projection, access: query.access,
                    connection: connection)
            }
            if let countStatement = compiled.count {
                count =
                    try connection.query(countStatement.sql, countStatement.binds.postgresBinds, retry: .safe).first?
                    .decode(Int64.self, 0) ?? 0
            }
        }
        // Expensive shapes queue for their own few slots, with a shorter timeout, so they never
        // hold every pooled connection while cheap pages wait.
        if query.isExpensive {
            try expensiveQueries.run(on: pool, run)
        } else {
            try pool.withConnection(run)
        }
        let json =
            try query.view?.findResponse(rows, count: count, encoder: encoder)
            ?? encoder.findResponse(rows, projection: compiled.projection, count: count)
        return Result(status: .ok, json: json)
    }

    /// `GET /classes/<Class>/<objectId>`.
    func get(
        _ className: String, objectId: String, items: [(name: String, value: String)], access: ParseAccess = .master
    ) throws -> Result {
        let parseClass = try resolve(className)
        if case .view(let view) = parseClass {
            try view.permissions.require(
                .get, on: view.className, caller: access.caller, roles: CustomObjectService.roles(of: access))
            return try getView(view, objectId: objectId, items: items, access: access)
        }
        let schema = parseClass.schema
        var query = try ParseQuery.get(
            schema, objectId: try Self.checkedObjectId(objectId), items: items, limits: limits,
            classes: { try self.otherClass($0, $1, access: access) })
        query.access = access
        try parseClass.authorize(&query, .get, builtIns: schemas.builtIns)
        guard let object = try object(query) else { throw ParseError.objectNotFound() }
        return Result(status: .ok, json: object)
    }

    /// `POST /classes/<Class>`: 201 with `objectId` and `createdAt` (200 when an upload of the
    /// same bytes already was a photo, with that photo's id).
    func create(_ className: String, body: [UInt8], access: ParseAccess = .master) throws -> Result {
        defer { classChanges?.refreshAfterWrite() }
        guard let schema = ParseClassSchema.named(className) else {
            return try createCustom(className, body: body, access: access)
        }
        try requireBuiltIn(.create, className, access)
        let (fixedBody, appBody) = try splitAppFields(body, of: schema)
        let write = try ParseWriteBody.parse(fixedBody, schema: schema, mode: .create, limits: limits)
        if write.restores { throw ParseError.invalidKeyName("deletedAt cannot be set on create.") }
        let owner = try self.owner(for: write, access)
        let appChanges = try appFieldChanges(appBody, of: schema, access: access)
        let objectId: String
        let createdAt: Date
        var isNew = true
        switch schema.className {
        case "Photo":
            guard case .file(let fileName)? = write["original"] else {
                throw ParseError.validationError("original (a File from POST /files/<name>) is required.")
            }
            var title = ""
            if case .string(let t)? = write["title"] { title = t }
            var tags: [String] = []
            if case .stringArray(let t)? = write["tags"] { tags = t }
            let photo = try uploads.createPhoto(
                fileName: fileName, title: title, tags: tags, owner: owner, anyFile: access.caller.isMaster)
            (objectId, createdAt, isNew) = (photo.objectId, photo.createdAt, photo.isNew)
            // Grants beyond the owner; until set, the photo is its owner's alone (the safe side).
            if case .acl(let acl)? = write["ACL"] {
                try pool.query("update photos set acl = $2::jsonb where object_id = $1::text", [objectId, acl.json])
            }
        case "Gallery":
            guard case .string(let name)? = write["name"] else { throw ParseError.validationError("name is required.") }
            var acl: ParseACL?
            if case .acl(let value)? = write["ACL"] { acl = value }
            (objectId, createdAt) = try galleries.createGallery(name: name, owner: owner, acl: acl)
        case "GalleryItem":
            guard case .pointer(let gallery)? = write["gallery"], case .pointer(let photo)? = write["photo"] else {
                throw ParseError.validationError("gallery and photo pointers are required.")
            }
            var position: Int?
            if case .int(let p)? = write["position"] { position = Int(p) }
            // Into a gallery the caller may edit, a photo the caller owns (a photo seen only through
            // someone's shared gallery is not the caller's to share further).
            try require(.edit, ParseClassSchema.gallery, gallery, access)
            try require(.own, ParseClassSchema.photo, photo, access)
            (objectId, createdAt) = try galleries.addItem(
                gallery: gallery, photo: photo, position: position, owner: owner)
        default:
            throw ParseError.operationForbidden("\(schema.className) objects cannot be created.")
        }
        _ = try applyAppFields(appChanges, schema, objectId: objectId)
        return created(schema.className, objectId: objectId, createdAt: createdAt, status: isNew ? .created : .ok)
    }

    /// A create's answer, for every class: `{"objectId","createdAt"}` with the new object's `Location`.
    func created(_ className: String, objectId: String, createdAt: Date, status: HTTPStatus = .created) -> Result {
        var json = ParseJSONWriter()
        json.beginObject()
        json.key("objectId")
        json.string(objectId)
        json.key("createdAt")
        json.string(ParseDate.format(createdAt))
        json.endObject()
        let location = publicURL() + mountPath + "/classes/\(className)/\(objectId)"
        return Result(status: status, json: json.bytes, location: location)
    }

    /// `PUT /classes/<Class>/<objectId>`: `{"updatedAt"}`. Trashed objects can only be restored (119 otherwise).
    func update(_ className: String, objectId: String, body: [UInt8], access: ParseAccess = .master) throws -> Result {
        defer { classChanges?.refreshAfterWrite() }
        guard let schema = ParseClassSchema.named(className) else {
            return try updateCustom(className, objectId: objectId, body: body, access: access)
        }
        try requireBuiltIn(.update, className, access)
        let objectId = try Self.checkedObjectId(objectId)
        let (fixedBody, appBody) = try splitAppFields(body, of: schema)
        let write = try ParseWriteBody.parse(fixedBody, schema: schema, mode: .update, limits: limits)
        let appChanges = try appFieldChanges(appBody, of: schema, access: access)
        let updatedAt: Date
        // A gallery's ACL and a restore are its owner's; a name (or an item's move) its editors'.
        let need: ParseAccessNeed = write.restores || write["ACL"] != nil ? .own : .edit
        let lock = ParseSQLCompiler.lockForUpdate(write, objectId: objectId, access: access, need: need)
        if schema.className == "GalleryItem" {
            try require(.edit, schema, objectId, access)
            // position is its only writable field (ParseWriteBody answers 105 for any other, or
            // checks it is sent back unchanged: an item's gallery and photo never change, so the
            // check may come before the move); an empty body changes nothing.
            if !write.expectations.isEmpty {
                guard let row = try pool.query(lock.sql, lock.binds.postgresBinds).first else {
                    throw ParseError.objectNotFound()
                }
                try Self.checkUnchanged(row, write)
            }
            var moved: Date?
            if case .int(let position)? = write["position"] {
                moved = try galleries.moveItem(objectId, to: Int(position))
            }
            updatedAt =
                try applyAppFields(appChanges, schema, objectId: objectId) ?? moved
                ?? galleries.itemUpdatedAt(objectId)
        } else {
            updatedAt = try pool.transaction { connection -> Date in
                // One statement locks the row and compares the read-only fields sent back.
                guard let row = try connection.query(lock.sql, lock.binds.postgresBinds).first else {
                    throw ParseError.objectNotFound()
                }
                let trashed = try row.decode(Date?.self, "deleted_at") != nil
                if trashed && !write.restores {
                    throw ParseError.operationForbidden(
                        "\(schema.className) \(objectId) is in Recently Deleted; restore it first.")
                }
                try Self.checkUnchanged(row, write)
                var appUpdatedAt: Date?
                if let appChanges, !appChanges.isEmpty {
                    appUpdatedAt = try Self.applyAppFields(
                        appChanges, table: schema.table, objectId: objectId, on: connection)
                }
                guard let statement = ParseSQLCompiler.update(write, objectId: objectId) else {
                    return try appUpdatedAt ?? row.decode(Date.self, "updated_at")
                }
                guard let updated = try connection.query(statement.sql, statement.binds.postgresBinds).first else {
                    throw ParseError.objectNotFound()
                }
                // Array operations are checked against the limit after the fact, in the same
                // transaction: too many values rolls the change back.
                for assignment in write.assignments {
                    guard case .arrayOperation = assignment.value, let field = schema.field(named: assignment.field)
                    else { continue }
                    if try updated.decode(Int64.self, field.column + "_count") > Int64(limits.maxTagCount) {
                        throw ParseError.validationError("\(field.name) may hold at most \(limits.maxTagCount) values.")
                    }
                }
                return try updated.decode(Date.self, "updated_at")
            }
        }
        var json = ParseJSONWriter()
        json.beginObject()
        json.key("updatedAt")
        json.string(ParseDate.format(updatedAt))
        json.endObject()
        return Result(status: .ok, json: json.bytes)
    }

    /// 105 unless the locked row's `unchanged` says every read-only field sent back holds the
    /// value sent (a fetched object saved again); names the fields for the client.
    static func checkUnchanged(_ row: PostgresRow, _ write: ParseWriteBody) throws {
        guard !write.expectations.isEmpty, try row.decode(Bool.self, "unchanged") == false else { return }
        let names = write.expectations.map(\.field).joined(separator: ", ")
        let verb = write.expectations.count == 1 ? "is" : "are"
        throw ParseError.invalidKeyName("\(names) \(verb) read-only: sent with a value other than the current one.")
    }
}
