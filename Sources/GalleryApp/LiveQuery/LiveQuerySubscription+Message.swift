/// The text frame one event sends through one subscription.
extension LiveQuerySubscription {
    /// The server message `event` means to this subscription of client `clientId`, or nil when it
    /// sends none. A `leave` because the subscriber may no longer read the row (a gallery unshared
    /// from them) names the object only (className and objectId): the row as it is now, with its
    /// new name and ACL, is no longer theirs to see. Any other op carries the object (and for
    /// update, enter and leave the object as it was, Parse Server's `original`).
    func message(for event: LiveQueryEvent, rendering: LiveQueryRendering, clientId: Int) -> String? {
        guard let op = operation(for: event) else { return nil }
        let object: String?
        var original: String?
        if op == "leave", let new = event.new, !event.readable(new, by: access) {
            object = rendering.identity(className: view?.className)
        } else if let view {
            object = rendering.object(old: op == "delete", view: view)
            if op != "create" && op != "delete" { original = rendering.object(old: true, view: view) }
        } else {
            object = rendering.object(old: op == "delete", keys: keys(for: op == "delete" ? event.old : event.new))
            if op != "create" && op != "delete" { original = rendering.object(old: true, keys: keys(for: event.old)) }
        }
        guard let object else { return nil }
        // Written by hand around the shared object JSON (keys in sorted order, like the rest).
        var text = "{\"clientId\":\(clientId),\"object\":\(object),\"op\":\"\(op)\""
        if let original { text += ",\"original\":\(original)" }
        return text + ",\"requestId\":\(requestId)}"
    }
}
