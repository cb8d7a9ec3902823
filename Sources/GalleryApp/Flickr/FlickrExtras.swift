import Foundation

/// The `extras` of a photo list: comma-separated names; unknown ones are ignored, as Flickr does.
struct FlickrExtras: Sendable {
    private let names: Set<String>
    /// The sizes whose `url_*` (with `width_*`, `height_*`) were asked for, smallest first.
    let sizes: [DisplaySize]

    /// The extras of an `extras` argument.
    init(_ text: String?) {
        names = Set((text ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        let asked = names
        sizes = DisplaySize.allCases.filter { asked.contains($0.urlExtra) }
    }

    /// Whether `name` was asked for.
    func contains(_ name: String) -> Bool { names.contains(name) }
}
