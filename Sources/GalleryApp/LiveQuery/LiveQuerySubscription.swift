/// One `subscribe` of one client: the class, its compiled `where`, and the keys to send.
struct LiveQuerySubscription {
    /// The client's id for it.
    let requestId: Int
    /// The class subscribed to.
    let schema: ParseClassSchema
    /// The compiled `where`.
    let matcher: LiveQueryMatcher
    /// The fields to send, or nil for all.
    let keys: Set<String>?
    /// Who subscribed: events about rows it may not read are never sent (before and after a
    /// change are judged apart, so losing access is a `leave` and gaining it an `enter`).
    var access: ParseAccess = .master
    /// The hash of the session token `access` came from (nil for the master key and no session):
    /// when that session ends, so does the subscription (`LiveQueryClient.sessionEnded`).
    var sessionHash: String? = nil
    /// For a subscription to a view (`PhotoView`): its name and fields, under which each Photo
    /// event's object is sent; nil for a class of its own.
    var view: PhotoView.LiveSelection? = nil
    /// Protected fields left out of `keys` but sent on the rows where one of these columns holds
    /// the subscriber's id (`ParseClass.revealedBy`: `userField:` pointers, a `_User`'s own row).
    var revealedBy: [String: [String]] = [:]

    /// The fields sent of `row`: `keys`, with the protected fields `row` reveals to the subscriber.
    func keys(for row: [String: Any]?) -> Set<String>? {
        guard let keys, !revealedBy.isEmpty, let row, let userId = access.caller.userId else { return keys }
        let shown = revealedBy.filter { $0.value.contains { row[$0] as? String == userId } }.keys
        return shown.isEmpty ? keys : keys.union(shown)
    }

    /// The server op for `event` as seen through this subscription (Parse LiveQuery semantics:
    /// create, update, enter, leave, delete), or nil when it does not concern it.
    func operation(for event: LiveQueryEvent) -> String? {
        guard event.schema.className == schema.className else { return nil }
        let before = event.old.map { event.readable($0, by: access) && matcher.matches($0) } ?? false
        let after = event.new.map { event.readable($0, by: access) && matcher.matches($0) } ?? false
        switch event.operation {
        case .insert: return after ? "create" : nil
        case .delete: return before ? "delete" : nil
        case .update:
            switch (before, after) {
            case (true, true): return "update"
            case (false, true): return "enter"
            case (true, false): return "leave"
            case (false, false): return nil
            }
        }
    }
}
