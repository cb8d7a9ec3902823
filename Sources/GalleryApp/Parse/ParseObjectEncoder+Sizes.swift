extension ParseObjectEncoder {
    /// Writes `"sizes":{"sq":{"url":…,"width":75,"height":75},…}` for every rendered size of a
    /// photo, from the `display_sizes` value (`<objectId> <previewKey> <width> <height>`, see
    /// `ParseField.Source.displaySizes`); nothing while the photo has no preview (not processed).
    /// The URLs are signed with this answer's expiry, as its files are.
    func writeSizes(_ value: String, into writer: inout ParseJSONWriter) {
        let parts = value.split(separator: " ")
        guard parts.count == 4, let width = Int(parts[2]), let height = Int(parts[3]) else { return }
        let objectId = String(parts[0])
        let preview = (key: String(parts[1]), width: width, height: height)
        writer.key("sizes")
        writer.beginObject()
        for size in DisplaySize.rendered {
            guard let location = SizeService.location(objectId: objectId, preview: preview, size: size) else {
                continue
            }
            writer.key(size.rawValue)
            writer.beginObject()
            writer.key("url")
            writer.string(url(forKey: location.key))
            writer.key("width")
            writer.int(Int64(location.width))
            writer.key("height")
            writer.int(Int64(location.height))
            writer.endObject()
        }
        writer.endObject()
    }
}
