import Foundation

/// A LiveQuery subscription to a view (issue 27 item 5): its `where` and `keys` name the view's
/// fields and are translated to Photo's exactly as a find's are (`translate`, so an unknown name
/// is 102 and a URL field takes only `$exists`); it then matches Photo's events under Photo's
/// access rules, and each object it sends is rewritten under the view's names (`object(from:)`),
/// so a subscriber sees what a find of the view shows them.
extension PhotoView {
    /// What one view subscription sends: the view's name and the fields `keys` selected.
    struct LiveSelection: Sendable {
        /// The view's class name, the `className` of every object sent.
        let className: String
        /// The view fields sent (objectId, createdAt and updatedAt always).
        let fields: [Field]
        /// The Photo fields those read: what the event's Photo object is limited to.
        var photoKeys: Set<String> { Set(fields.map(\.source.name)) }

        /// The view's object for `photo`, a Photo object as `LiveQueryEvent.parseObject` makes it:
        /// each selected field under its view name (a file's URL or name as a String), null
        /// values left out, as a find of the view writes them.
        func object(from photo: [String: Any]) -> [String: Any] {
            var object: [String: Any] = ["className": className]
            for field in fields {
                guard let value = photo[field.source.name] else { continue }
                switch field.part {
                case .value:
                    object[field.name] = value
                case .url:
                    if let url = (value as? [String: Any])?["url"] as? String { object[field.name] = url }
                case .name:
                    if let key = (value as? [String: Any])?["name"] as? String {
                        object[field.name] = PhotoView.Selection.fileName(key)
                    }
                }
            }
            return object
        }
    }

    /// A subscription's `where` (view names) as Photo's, and what it sends for `keys` (view
    /// names; nil: every field): ParseError 102 for a name the view lacks, as a find answers.
    func live(where whereObject: [String: Any], keys: [String]?, limits: ParseLimits) throws -> (
        where: [String: Any], selection: LiveSelection
    ) {
        let whereText = String(decoding: try JSONSerialization.data(withJSONObject: whereObject), as: UTF8.self)
        var items: [(name: String, value: String)] = [(name: "where", value: whereText)]
        if let keys { items.append((name: "keys", value: keys.joined(separator: ","))) }
        let (photoItems, selection) = try translate(items, limits: limits)
        let photoWhere =
            photoItems.first { $0.name == "where" }.flatMap {
                (try? JSONSerialization.jsonObject(with: Data($0.value.utf8))) as? [String: Any]
            } ?? [:]
        return (photoWhere, LiveSelection(className: className, fields: selection.fields))
    }
}
