import Foundation

/// What an image's header says about it, read without decoding any pixel.
public struct ImageInfo: Sendable, Equatable {
    /// Width as stored in the file (before EXIF orientation); for HEIF, as displayed (after its
    /// `clap`, `irot` and `imir` transforms, which libheif applies while decoding).
    public var width: Int
    /// Height as stored in the file (before EXIF orientation).
    public var height: Int
    /// EXIF orientation, 1–8 (1 when absent or invalid).
    public var orientation: Int
    /// Width as displayed, after EXIF orientation.
    public var displayWidth: Int { orientationSwapsAxes ? height : width }
    /// Height as displayed, after EXIF orientation.
    public var displayHeight: Int { orientationSwapsAxes ? width : height }
    /// Number of colour components (1, 3 or 4).
    public var components: Int
    /// Colour space of the stored components.
    public var colorSpace: ImageColorSpace
    /// True for a progressive (SOF2) JPEG.
    public var isProgressive: Bool
    /// Embedded ICC profile, reassembled from its APP2 chunks.
    public var iccProfile: [UInt8]?
    /// EXIF DateTimeOriginal (with OffsetTimeOriginal when present, else read as UTC).
    public var takenAt: Date?
    /// EXIF Make (IFD0 0x010F), as `EXIFReader.cameraText` cleans it: `Apple`.
    public var cameraMake: String?
    /// EXIF Model (IFD0 0x0110), as `EXIFReader.cameraText` cleans it: `iPhone 15 Pro`.
    public var cameraModel: String?
    /// True when an Adobe APP14 marker is present: CMYK data is then stored inverted (Photoshop's convention).
    public var hasAdobeMarker: Bool
    /// Each component's sampling factors and quantization table, in frame order; empty when the
    /// header does not define a table for every component before the first scan.
    public var componentQuantization: [ComponentQuantization]
    /// The container format, recognised by the first bytes.
    public var format: ImageFormat

    /// Orientations 5–8 turn the image a quarter, so the displayed width is the stored height.
    public var orientationSwapsAxes: Bool { orientation >= 5 && orientation <= 8 }

    /// Creates an info value; the probe is the usual way to get one.
    public init(
        width: Int, height: Int, orientation: Int = 1, components: Int, colorSpace: ImageColorSpace,
        isProgressive: Bool, iccProfile: [UInt8]? = nil, takenAt: Date? = nil, cameraMake: String? = nil,
        cameraModel: String? = nil, hasAdobeMarker: Bool = false,
        componentQuantization: [ComponentQuantization] = [], format: ImageFormat = .jpeg
    ) {
        self.width = width
        self.height = height
        self.orientation = (1...8).contains(orientation) ? orientation : 1
        self.components = components
        self.colorSpace = colorSpace
        self.isProgressive = isProgressive
        self.iccProfile = iccProfile
        self.takenAt = takenAt
        self.cameraMake = cameraMake
        self.cameraModel = cameraModel
        self.hasAdobeMarker = hasAdobeMarker
        self.componentQuantization = componentQuantization
        self.format = format
    }
}

/// How one component of a JPEG was sampled and quantized (ITU T.81 §B.2.2, §B.2.4.1).
public struct ComponentQuantization: Sendable, Equatable {
    /// Horizontal and vertical sampling factors (1…4).
    public var horizontalSampling: Int
    public var verticalSampling: Int
    /// The 64 quantization steps in natural (row-major) order, 1…65535.
    public var steps: [UInt16]

    public init(horizontalSampling: Int, verticalSampling: Int, steps: [UInt16]) {
        self.horizontalSampling = horizontalSampling
        self.verticalSampling = verticalSampling
        self.steps = steps
    }
}
