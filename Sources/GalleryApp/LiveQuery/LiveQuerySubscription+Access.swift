extension LiveQuerySubscription {
    /// Whether `access` could be sent any row of `className` under `LiveQueryEvent.readable` once
    /// accounts exist: a caller without a session reads only public galleries and their items
    /// (`public_read`), never photos, so its subscriptions to anything else are refused (119) at
    /// once rather than accepted to stay silent.
    static func mayEverRead(_ className: String, by access: ParseAccess) -> Bool {
        guard access.caller == .anonymous else { return true }
        return access.publicRead && (className == "Gallery" || className == "GalleryItem")
    }
}
