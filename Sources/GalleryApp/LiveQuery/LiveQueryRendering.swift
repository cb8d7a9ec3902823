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

    /// The object named only, `{"className":…,"objectId":…}`: what a subscriber who lost access to
    /// the row is told of it.
    func identity() -> String? {
        if let cached = cache["id"] { return cached }
        guard let id = (event.new ?? event.old)?["object_id"] as? String,
            let data = try? JSONSerialization.data(
                withJSONObject: ["className": event.schema.className, "objectId": id], options: [.sortedKeys]),
            let text = String(data: data, encoding: .utf8)
        else { return nil }
        cache["id"] = text
        return text
    }

    /// The object before (`old`) or after the change, limited to `keys`, as JSON text.
    func object(old: Bool, keys: Set<String>?) -> String? {
        guard let row = old ? event.old : event.new else { return nil }
        let key = (old ? "o:" : "n:") + (keys.map { $0.sorted().joined(separator: ",") } ?? "*")
        if let cached = cache[key] { return cached }
        let object = event.parseObject(row, keys: keys, encoder: encoder)
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]),
            let text = String(data: data, encoding: .utf8)
        else { return nil }
        cache[key] = text
        return text
    }
}
