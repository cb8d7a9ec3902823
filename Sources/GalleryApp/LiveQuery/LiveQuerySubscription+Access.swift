extension LiveQuerySubscription {
    /// Whether `access` could be sent any row of `className` under `LiveQueryEvent.readable` once
    /// accounts exist: a caller without a session reads only public galleries, their items and
    /// public photos (`public_read`), so without it every subscription is refused (119) at once
    /// rather than accepted to stay silent.
    static func mayEverRead(_ className: String, by access: ParseAccess) -> Bool {
        guard access.caller == .anonymous else { return true }
        return access.publicRead && ["Photo", "Gallery", "GalleryItem"].contains(className)
    }
}
