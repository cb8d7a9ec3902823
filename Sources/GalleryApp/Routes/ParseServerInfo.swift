/// `GET /serverInfo` (master key): Parse Server's `FeaturesRouter` answer,
/// `{"features":{…},"parseServerVersion":"…"}`, telling dashboards and SDKs which optional Parse
/// Server features this server has. Every group is Parse Server's; galleryd has none of them
/// (no global config, hooks, cloud code, logs, push or schema API), so each flag says false
/// rather than a client trying a route that is not there.
enum ParseServerInfo {
    /// The Parse Server release whose REST behaviour galleryd follows (the query parameters of
    /// `ClassesRouter.optionsFromBody`, `explain` for the master key only, `X-Parse-Request-Id`).
    /// SDKs read it as a semantic version.
    static let parseServerVersion = "7.0.0"

    /// The features, group by group, in Parse Server's names.
    static let features: [(group: String, flags: [(name: String, value: Bool)])] = [
        ("globalConfig", [("create", false), ("read", false), ("update", false), ("delete", false)]),
        ("hooks", [("create", false), ("read", false), ("update", false), ("delete", false)]),
        ("cloudCode", [("jobs", false)]),
        ("logs", [("level", false), ("size", false), ("order", false), ("until", false), ("from", false)]),
        (
            "push",
            [
                ("immediatePush", false), ("scheduledPush", false), ("storedPushData", false), ("pushAudiences", false),
                ("localization", false),
            ]
        ),
        (
            "schemas",
            [
                ("addField", false), ("removeField", false), ("addClass", false), ("removeClass", false),
                ("clearAllDataFromClass", false), ("exportClass", false), ("editClassLevelPermissions", false),
                ("editPointerPermissions", false),
            ]
        ),
        ("settings", [("securityCheck", false)]),
    ]

    /// The answer's JSON, written once.
    static let json: [UInt8] = {
        var writer = ParseJSONWriter()
        writer.beginObject()
        writer.key("features")
        writer.beginObject()
        for (group, flags) in features {
            writer.key(group)
            writer.beginObject()
            for (name, value) in flags {
                writer.key(name)
                writer.bool(value)
            }
            writer.endObject()
        }
        writer.endObject()
        writer.key("parseServerVersion")
        writer.string(parseServerVersion)
        writer.endObject()
        return writer.bytes
    }()
}
