extension LiveQuerySubscription {
    /// Whether `access` could be sent any row of `className` under `LiveQueryEvent.readable` once
    /// accounts exist: a caller without a session reads only public galleries, their items,
    /// public photos and the accounts (`public_read`), so without it every subscription is
    /// refused (119) at once rather than accepted to stay silent.
    static func mayEverRead(_ className: String, by access: ParseAccess) -> Bool {
        guard access.caller == .anonymous else { return true }
        return access.publicRead && ["Photo", "Gallery", "GalleryItem", "_User"].contains(className)
    }

    /// The field names a LiveQuery `where` tests, at any depth (`$or`, `$and`, `$nor` included).
    static func fieldNames(of whereObject: [String: Any]) -> Set<String> {
        var names: Set<String> = []
        for (key, value) in whereObject {
            if key.hasPrefix("$") {
                for case let inner as [String: Any] in (value as? [Any]) ?? [] {
                    names.formUnion(fieldNames(of: inner))
                }
            } else {
                names.insert(key)
            }
        }
        return names
    }
}
