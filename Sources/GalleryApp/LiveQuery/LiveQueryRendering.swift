import Foundation

/// The JSON of one event's objects, rendered once per distinct `keys` and shared by every
/// subscription that sends it: with 1,000 subscribers an event costs a few serialisations, not
/// 1,000. Used on the listener thread only, for one event.
final class LiveQueryRendering {
    private let event: LiveQueryEvent
    private let encoder: ParseObjectEncoder
    private var cache: [String: String] = [:]

    init(event: LiveQueryEvent, encoder: ParseObjectEncoder) {
        self.event = event
        self.encoder = encoder
    }

    /// The object named only, `{"className":…,"objectId":…}` (the event's class, or the view
    /// `className`): what a subscriber who lost access to the row is told of it.
    func identity(className: String? = nil) -> String? {
        let name = className ?? event.schema.className
        let key = "id:" + name
        if let cached = cache[key] { return cached }
        guard let id = (event.new ?? event.old)?["object_id"] as? String,
            let text = Self.text(["className": name, "objectId": id])
        else { return nil }
        cache[key] = text
        return text
    }

    /// The object before (`old`) or after the change as the view subscription `view` sends it.
    func object(old: Bool, view: PhotoView.LiveSelection) -> String? {
        guard let row = old ? event.old : event.new else { return nil }
        let key = (old ? "vo:" : "vn:") + view.className + ":" + view.fields.map(\.name).joined(separator: ",")
        if let cached = cache[key] { return cached }
        let photo = event.parseObject(row, keys: view.photoKeys, encoder: encoder)
        guard let text = Self.text(view.object(from: photo)) else { return nil }
        cache[key] = text
        return text
    }

    private static func text(_ object: [String: Any]) -> String? {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return nil }
        return String(data: data, encoding: .utf8)
    }

    /// The object before (`old`) or after the change, limited to `keys`, as JSON text.
    func object(old: Bool, keys: Set<String>?) -> String? {
        guard let row = old ? event.old : event.new else { return nil }
        let key = (old ? "o:" : "n:") + (keys.map { $0.sorted().joined(separator: ",") } ?? "*")
        if let cached = cache[key] { return cached }
        guard let text = Self.text(event.parseObject(row, keys: keys, encoder: encoder)) else { return nil }
        cache[key] = text
        return text
    }
}
