import HTTPServer

/// Parse Config (Parse Server's GlobalConfigRouter): `GET /config` answers
/// `{"params":{…}}` to the app's keys (without the master-key-only parameters) and
/// `{"params":{…},"masterKeyOnly":{…}}` to the master key; `PUT /config` (master key) takes
/// `{"params":{"name":value|{"__op":"Delete"}},"masterKeyOnly":{"name":true}}`, keeps the values in
/// PostgreSQL and answers `{"result":true}`. Parameter names are 1 to 128 characters without
/// control characters (107 otherwise); a value is any JSON value.
struct ParseConfigRoutes {
    let repository: ParseConfigRepository
    let keys: KeyChecker
    let mountPath: String
    let maxJSONDepth: Int

    /// At most this many parameters in one PUT.
    static let maxChanges = 1_000

    func register(on routes: HTTPRouteGroup) {
        let (repository, keys, depth) = (repository, keys, maxJSONDepth)
        routes.add(
            HTTPRoute(.get, mountPath + "/config") { request in
                try ParseRoutes.require(.client, request, keys)
                let master = keys.access(request) == .master
                return .json(Self.document(try repository.all(master: master), master: master))
            })
        routes.add(
            HTTPRoute(.put, mountPath + "/config") { request in
                try ParseRoutes.require(.master, request, keys)
                try repository.apply(try Self.changes(try ParseRoutes.body(request), maxDepth: depth))
                return HTTPResponse.json(Array(#"{"result":true}"#.utf8)).notStored()
            })
    }

    /// A PUT body's changes: each parameter's JSON (nil to delete) and master-key-only flag.
    static func changes(_ body: [UInt8], maxDepth: Int) throws -> [(name: String, json: String?, masterKeyOnly: Bool)] {
        guard case .object(let object) = try ParseJSONParser.parse(body, maxDepth: maxDepth) else {
            throw ParseError.invalidJSON("The body must be a JSON object.")
        }
        for key in object.keys where key != "params" && key != "masterKeyOnly" {
            throw ParseError.invalidJSON(
                "Unknown key \(ParseWhereParser.quoted(String(key.prefix(50)))): use params and masterKeyOnly.")
        }
        guard case .object(let params)? = object["params"] else {
            throw ParseError.invalidJSON("params must be an object.")
        }
        var masterOnly = ParseJSONObject()
        if let value = object["masterKeyOnly"] {
            guard case .object(let flags) = value else {
                throw ParseError.invalidJSON("masterKeyOnly must be an object.")
            }
            masterOnly = flags
        }
        guard params.members.count <= maxChanges else {
            throw ParseError.invalidJSON("At most \(maxChanges) parameters at once.")
        }
        return try params.members.map { member in
            let name = member.key
            guard !name.isEmpty, name.count <= 128,
                !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
            else {
                throw ParseError.invalidJSON(
                    "Config parameter names are 1 to 128 characters: \(ParseWhereParser.quoted(String(name.prefix(50))))."
                )
            }
            var flag = false
            switch masterOnly[name] {
            case nil, .bool(false)?: flag = false
            case .bool(true)?: flag = true
            default: throw ParseError.invalidJSON("masterKeyOnly.\(name.prefix(50)) must be true or false.")
            }
            if case .object(let op) = member.value, let kind = op["__op"] {
                guard kind == .string("Delete"), op.members.count == 1 else {
                    throw ParseError.invalidJSON("A config parameter takes a value or {\"__op\":\"Delete\"}.")
                }
                return (name, nil, flag)
            }
            var writer = ParseJSONWriter()
            writer.value(member.value)
            return (name, String(decoding: writer.bytes, as: UTF8.self), flag)
        }
    }

    /// `{"params":{…}}`, with `"masterKeyOnly":{…}` for the master key.
    static func document(_ parameters: [ParseConfigRepository.Parameter], master: Bool) -> [UInt8] {
        var json = ParseJSONWriter()
        json.beginObject()
        json.key("params")
        json.beginObject()
        for parameter in parameters {
            json.key(parameter.name)
            json.raw(Array(parameter.json.utf8))
        }
        json.endObject()
        if master {
            json.key("masterKeyOnly")
            json.beginObject()
            for parameter in parameters where parameter.masterKeyOnly {
                json.key(parameter.name)
                json.bool(true)
            }
            json.endObject()
        }
        json.endObject()
        return json.bytes
    }
}
