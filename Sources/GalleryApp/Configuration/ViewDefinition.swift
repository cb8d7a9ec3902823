import TOMLKit

/// One `[[views]]` table of the config file: a read-only Parse class (`class`) over Photo
/// (`source`), each of its fields a path into a photo (`filename`, `thumbnail.url`), so an
/// existing app reads galleryd's own derivatives under its own names (docs/decisions/038).
/// Checked when the file is read: a bad view stops `serve` and `check-config` (exit 2).
public struct ViewDefinition: Sendable, Equatable {
    /// One field of the view: its name and the source path it shows.
    public struct Field: Sendable, Equatable {
        /// The field's name in the view (`thumbnailURLString`).
        public let name: String
        /// What it shows: a Photo field (`title`), or a file's `url` or `name` (`thumbnail.url`).
        public let path: String

        /// A field.
        public init(name: String, path: String) {
            self.name = name
            self.path = path
        }
    }

    /// What of a source field a path names.
    enum Part: Sendable {
        /// The field's value.
        case value
        /// A file's signed URL, as a String.
        case url
        /// A file's name, as a String.
        case name
    }

    /// The view's Parse class name.
    public let className: String
    /// The class it reads (only `Photo`).
    public let source: String
    /// Its fields, by name.
    public let fields: [Field]

    /// A view; `validated()` checks it.
    public init(className: String, source: String, fields: [Field]) {
        self.className = className
        self.source = source
        self.fields = fields.sorted { $0.name < $1.name }
    }

    /// The config file's key.
    static let key = "views"

    /// The sources a view may read.
    static let sources = ["Photo"]

    /// Photo fields a view may not show: access and trash are Photo's own business, and the display
    /// sizes are written only on request.
    static let hiddenSourceFields: Set<String> = ["ACL", "owner", "deletedAt", "sizes"]

    /// The Photo field and part `path` names, or nil when it names none a view may show.
    static func resolve(_ path: String) -> (field: ParseField, part: Part)? {
        let pieces = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard pieces.count <= 2, let field = ParseClassSchema.photo.field(named: pieces[0]),
            !hiddenSourceFields.contains(field.name)
        else { return nil }
        guard pieces.count == 2 else { return (field, .value) }
        guard field.type == .file else { return nil }
        switch pieces[1] {
        case "url": return (field, .url)
        case "name": return (field, .name)
        default: return nil
        }
    }

    /// The `[[views]]` of a config file's text, each checked (`ConfigurationError` naming the view).
    static func parse(_ text: String, file: String) throws -> [ViewDefinition] {
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw ConfigurationError.syntax(file: file, line: error.source.begin.line, reason: error.description)
        }
        guard let value = table[key] else { return [] }
        guard let array = value.array else {
            throw ConfigurationError.invalid(key: key, reason: "must be an array of tables ([[views]])")
        }
        var views: [ViewDefinition] = []
        for (index, element) in array.enumerated() {
            guard let entry = element.table else {
                throw ConfigurationError.invalid(key: "\(key)[\(index)]", reason: "must be a table ([[views]])")
            }
            views.append(try parse(entry, index: index))
        }
        try validate(views)
        return views
    }

    private static func parse(_ entry: TOMLTable, index: Int) throws -> ViewDefinition {
        let name = "\(key)[\(index)]"
        for member in entry.keys where !["class", "source", "fields"].contains(member) {
            throw ConfigurationError.invalid(
                key: name, reason: "unknown key \(member.prefix(100)) (class, source, fields)")
        }
        guard let className = entry["class"]?.string else {
            throw ConfigurationError.invalid(
                key: name, reason: "class (the view's Parse class name, a string) is required")
        }
        guard let source = entry["source"]?.string else {
            throw ConfigurationError.invalid(key: name, reason: "source (\"Photo\") is required")
        }
        guard let fieldsTable = entry["fields"]?.table else {
            throw ConfigurationError.invalid(
                key: name, reason: "[views.fields] (field name = source path, e.g. filename = \"filename\") is required"
            )
        }
        var fields: [Field] = []
        for field in fieldsTable.keys {
            guard let path = fieldsTable[field]?.string else {
                throw ConfigurationError.invalid(
                    key: "\(name).fields.\(field.prefix(100))", reason: "must be a source path string")
            }
            fields.append(Field(name: field, path: path))
        }
        return ViewDefinition(className: className, source: source, fields: fields)
    }

    /// Every view's names and paths: a Parse class name no built-in class has and no other view,
    /// the source Photo, at least one field, each a Parse field name (not a default one) showing
    /// a Photo field that exists.
    static func validate(_ views: [ViewDefinition]) throws {
        var seen: Set<String> = []
        for (index, view) in views.enumerated() {
            let name = "\(key)[\(index)]"
            guard ParseClassName.isValidClassName(view.className) else {
                throw ConfigurationError.invalid(
                    key: name,
                    reason:
                        "class \"\(view.className.prefix(100))\" is not a Parse class name (a letter, then letters, digits, _)"
                )
            }
            guard ParseClassSchema.named(view.className) == nil else {
                throw ConfigurationError.invalid(key: name, reason: "class \(view.className) is a built-in class")
            }
            guard seen.insert(view.className).inserted else {
                throw ConfigurationError.invalid(key: name, reason: "class \(view.className) is defined twice")
            }
            guard sources.contains(view.source) else {
                throw ConfigurationError.invalid(
                    key: name, reason: "unknown source \"\(view.source.prefix(100))\" (a view reads Photo)")
            }
            guard !view.fields.isEmpty else {
                throw ConfigurationError.invalid(key: name, reason: "[views.fields] names no field")
            }
            for field in view.fields {
                let key = "\(name).fields.\(field.name.prefix(100))"
                guard ParseClassName.isValidFieldName(field.name) else {
                    throw ConfigurationError.invalid(
                        key: key, reason: "not a Parse field name (a letter, then letters, digits, _)")
                }
                guard !ParseClassName.defaultFields.contains(field.name) else {
                    throw ConfigurationError.invalid(
                        key: key, reason: "objectId, createdAt, updatedAt and ACL are every view's own")
                }
                guard resolve(field.path) != nil else {
                    throw ConfigurationError.invalid(
                        key: key,
                        reason: "unknown source path \"\(field.path.prefix(100))\" (a Photo field such as title, "
                            + "or a file's url or name: thumbnail.url, preview.url, original.name)")
                }
            }
        }
    }

    /// The views as config file lines (what `check-config` prints), or a commented example.
    static func rendered(_ views: [ViewDefinition]) -> [String] {
        var lines = ["# Read-only classes over Photo, one [[views]] table each (docs/operations.md, Views)."]
        guard !views.isEmpty else {
            return lines + [
                "# [[views]]", "# class = \"Resource\"", "# source = \"Photo\"", "# [views.fields]",
                "# filename = \"filename\"", "# thumbnailURLString = \"thumbnail.url\"",
                "# fileURLString = \"preview.url\"",
            ]
        }
        for view in views {
            lines += [
                "[[views]]", "class = \(ConfigurationFile.quote(view.className))",
                "source = \(ConfigurationFile.quote(view.source))", "[views.fields]",
            ]
            for field in view.fields {
                lines.append("\(ConfigurationFile.quote(field.name)) = \(ConfigurationFile.quote(field.path))")
            }
        }
        return lines
    }
}
