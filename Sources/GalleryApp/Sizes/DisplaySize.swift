/// One rung of the display-size ladder: Flickr's named sizes, so a client that speaks Flickr (or a
/// web page building a `srcset`) asks for the pixels it shows and no more.
///
/// The raw value is the letter of Flickr's `url_*` extra (`url_s` is `DisplaySize.s`, 240 px).
/// Flickr's file names use other letters (`fileSuffix`: `_m` is 240 px), which clients rewrite
/// (PhotoViewer turns `_m` into `_t` and `_h`); `init(fileSuffix:)` reads them back. The squares
/// are centre-cropped; every other size fits its longest edge and is never enlarged; `o` is the
/// original itself.
public enum DisplaySize: String, CaseIterable, Sendable, Codable {
    /// 75×75, centre-cropped. Flickr "Square", file suffix `_s`.
    case sq
    /// 150×150, centre-cropped. Flickr "Large Square", file suffix `_q`.
    case q
    /// Longest edge 100. Flickr "Thumbnail", `_t`.
    case t
    /// Longest edge 240. Flickr "Small", `_m`.
    case s
    /// Longest edge 320. Flickr "Small 320", `_n`.
    case n
    /// Longest edge 400. Flickr "Small 400", `_w`.
    case w
    /// Longest edge 500. Flickr "Medium", no suffix.
    case m
    /// Longest edge 640. Flickr "Medium 640", `_z`.
    case z
    /// Longest edge 800. Flickr "Medium 800", `_c`.
    case c
    /// Longest edge 1024. Flickr "Large", `_b`.
    case b
    /// Longest edge 1600. Flickr "Large 1600", `_h`.
    case h
    /// Longest edge 2048. Flickr "Large 2048", `_k`.
    case k
    /// The original file as uploaded. Flickr "Original", `_o`.
    case o

    /// The side of a square size, or the longest edge of the others; nil for the original.
    public var edge: Int? {
        switch self {
        case .sq: return 75
        case .q: return 150
        case .t: return 100
        case .s: return 240
        case .n: return 320
        case .w: return 400
        case .m: return 500
        case .z: return 640
        case .c: return 800
        case .b: return 1024
        case .h: return 1600
        case .k: return 2048
        case .o: return nil
        }
    }

    /// Whether the size is a centre-cropped square.
    public var isSquare: Bool { self == .sq || self == .q }

    /// The letter after the underscore in Flickr's file names (`<id>_<secret>_<suffix>.jpg`);
    /// empty for `m` (500 px), whose file name has no suffix.
    public var fileSuffix: String {
        switch self {
        case .sq: return "s"
        case .s: return "m"
        case .m: return ""
        default: return rawValue
        }
    }

    /// The size a Flickr file-name suffix names (`"m"` → `s`, `""` → `m`); nil for an unknown one.
    public init?(fileSuffix: String) {
        guard let size = Self.allCases.first(where: { $0.fileSuffix == fileSuffix }) else { return nil }
        self = size
    }

    /// The `label` of `flickr.photos.getSizes`.
    public var label: String {
        switch self {
        case .sq: return "Square"
        case .q: return "Large Square"
        case .t: return "Thumbnail"
        case .s: return "Small"
        case .n: return "Small 320"
        case .w: return "Small 400"
        case .m: return "Medium"
        case .z: return "Medium 640"
        case .c: return "Medium 800"
        case .b: return "Large"
        case .h: return "Large 1600"
        case .k: return "Large 2048"
        case .o: return "Original"
        }
    }

    /// The name of the `extras` value asking for this size's URL, e.g. `url_s`.
    public var urlExtra: String { "url_" + rawValue }
    /// The key of this size's width next to its URL in Flickr's answers, e.g. `width_s`.
    public var widthKey: String { "width_" + rawValue }
    /// The key of this size's height next to its URL in Flickr's answers, e.g. `height_s`.
    public var heightKey: String { "height_" + rawValue }

    /// The size whose raw value is the bytes `name` (`s`, `sq`…), or nil: read without making a
    /// String, as the size route does on every request (`String` and `init(rawValue:)` cost
    /// several hundred instructions; this is a scan of thirteen numbers).
    public init?(rawValueBytes name: UnsafeBufferPointer<UInt8>) {
        guard name.count == 1 || name.count == 2 else { return nil }
        let code = Self.code(name)
        guard let size = Self.byCode.first(where: { $0.code == code })?.size else { return nil }
        self = size
    }

    /// Every size by the number its raw value's bytes make (`code`).
    private static let byCode: [(code: UInt32, size: DisplaySize)] = allCases.map { size in
        var name = size.rawValue
        return (name.withUTF8 { code($0) }, size)
    }

    /// One or two bytes and their count as one number: equal exactly when the bytes are.
    private static func code(_ name: UnsafeBufferPointer<UInt8>) -> UInt32 {
        var code = UInt32(name.count) << 16
        for (index, byte) in name.prefix(2).enumerated() { code |= UInt32(byte) << (8 * index) }
        return code
    }

    /// The sizes that are rendered (all but the original), smallest first.
    public static let rendered: [DisplaySize] = allCases.filter { $0 != .o }

    /// The pixel size of this rendition of an image displayed at `width`×`height` (upright): the
    /// square's side (never more than the shorter edge), or the longest edge fitted to `edge`
    /// without enlarging, the other edge rounded half away from zero and at least 1 pixel (the rule
    /// of the preview, `DerivativeSpec.fit`), or the image's own size for the original.
    public func dimensions(width: Int, height: Int) -> (width: Int, height: Int) {
        let width = max(1, width)
        let height = max(1, height)
        guard let edge else { return (width, height) }
        if isSquare {
            let side = min(edge, width, height)
            return (side, side)
        }
        let widthIsLonger = width >= height
        let longer = widthIsLonger ? width : height
        let shorter = widthIsLonger ? height : width
        guard edge < longer else { return (width, height) }
        let shrink = Double(longer) / Double(edge)
        let scaled = min(shorter, max(1, Int((Double(shorter) / shrink).rounded())))
        return widthIsLonger ? (edge, scaled) : (scaled, edge)
    }
}
