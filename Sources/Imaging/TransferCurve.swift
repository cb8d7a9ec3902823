import Foundation
import Logging
import Synchronization

/// The log of the imaging module (its level is the one `galleryd` bootstraps).
let imagingLogger = Logger(label: "galleryd.imaging")

/// How an nclx original's code values become linear light: its transfer characteristics (ITU-T
/// H.273 Table 3), decision 074. Only the curves galleryd converts have a case of their own;
/// everything else is read as sRGB, which is what galleryd did for every nclx original before.
enum TransferCurve: Equatable, Sendable {
    /// sRGB's curve (13), and what is shown as sRGB, as browsers do: the SDR camera curves of
    /// BT.709, BT.601 and BT.2020 (1, 6, 14, 15) and their relatives (7, 11, 12), unspecified (2),
    /// and unknown or reserved codes. Decoded as before, byte for byte.
    case sRGB
    /// Linear light (8).
    case linear
    /// A plain power law: 2.2 (4, BT.470 System M) or 2.8 (5, BT.470 System B/G).
    case gamma(Double)
    /// BT.2100 PQ (16, SMPTE ST 2084): absolute luminance up to 10 000 cd/m².
    case pq
    /// BT.2100 HLG (18, ARIB STD-B67): relative scene light, shown on a 1000 cd/m² display.
    case hlg

    /// BT.2408's HDR reference white (diffuse white), cd/m²: what SDR white stands for.
    static let referenceWhite = 203.0
    /// HLG's nominal display peak (BT.2100 Table 5, Lw), cd/m², at which the OOTF's system gamma is 1.2.
    static let hlgPeak = 1000.0
    /// The peak assumed for PQ without a usable `clli` or `mdcv` (what BT.2408 and Chrome assume).
    static let defaultPQPeak = 1000.0

    /// The codes with a curve of their own, which galleryd converts.
    static let convertedCodes = [4, 5, 8, 16, 18]
    /// The codes read as sRGB without a word (1, 2, 6, 7, 11–15); the others seen are logged once.
    private static let shownAsSRGB: Set<Int> = [1, 2, 6, 7, 11, 12, 13, 14, 15]
    /// Codes already logged as not converted, so that each is logged once per process.
    private static let logged = Mutex<Set<Int>>([])

    /// The curve of nclx transfer characteristics `code`; one galleryd does not convert (0, 3, 9,
    /// 10, 17, 19 and over: reserved, logarithmic, DCI) is logged once at debug and read as sRGB.
    init(nclxTransfer code: Int) {
        switch code {
        case 4: self = .gamma(2.2)
        case 5: self = .gamma(2.8)
        case 8: self = .linear
        case 16: self = .pq
        case 18: self = .hlg
        default:
            self = .sRGB
            guard !Self.shownAsSRGB.contains(code) else { return }
            let first = Self.logged.withLock { $0.insert(code).inserted }
            if first {
                imagingLogger.debug(
                    "nclx transfer characteristics not converted: read as sRGB", metadata: ["transfer": "\(code)"])
            }
        }
    }

    /// The codes logged as not converted so far (for the tests).
    static var loggedCodes: Set<Int> { logged.withLock { $0 } }

    /// Whether the curve reaches above SDR white, so the converter tone maps it.
    var isHDR: Bool { self == .pq || self == .hlg }

    /// Linear light of the normalised code value `v` (0…1): relative to SDR white (1) for the
    /// SDR curves; PQ's luminance over `referenceWhite`; HLG's scene light E (0…1, before its OOTF).
    func linear(_ v: Double) -> Double {
        let v = min(max(v, 0), 1)
        switch self {
        case .sRGB: return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
        case .linear: return v
        case .gamma(let exponent): return pow(v, exponent)
        case .pq: return Self.pqLuminance(v) / Self.referenceWhite
        case .hlg: return Self.hlgSceneLight(v)
        }
    }

    /// SMPTE ST 2084's EOTF: the PQ signal `e` (0…1) → cd/m² (BT.2100 Table 4).
    static func pqLuminance(_ e: Double) -> Double {
        let p = pow(max(e, 0), 1 / PQ.m2)
        return 10000 * pow(max(p - PQ.c1, 0) / (PQ.c2 - PQ.c3 * p), 1 / PQ.m1)
    }

    /// SMPTE ST 2084's inverse EOTF: cd/m² → the PQ signal (0…1).
    static func pqSignal(_ luminance: Double) -> Double {
        let y = pow(min(max(luminance / 10000, 0), 1), PQ.m1)
        return pow((PQ.c1 + PQ.c2 * y) / (1 + PQ.c3 * y), PQ.m2)
    }

    /// BT.2100's HLG inverse OETF: the signal `e` (0…1) → normalised scene light (0…1, Table 5).
    static func hlgSceneLight(_ e: Double) -> Double {
        e <= 0.5 ? e * e / 3 : (exp((e - HLG.c) / HLG.a) + HLG.b) / 12
    }

    /// PQ's constants (SMPTE ST 2084, BT.2100 Table 4).
    private enum PQ {
        static let m1 = 2610.0 / 16384
        static let m2 = 2523.0 / 4096 * 128
        static let c1 = 3424.0 / 4096
        static let c2 = 2413.0 / 4096 * 32
        static let c3 = 2392.0 / 4096 * 32
    }

    /// HLG's constants (BT.2100 Table 5).
    private enum HLG {
        static let a = 0.17883277
        static let b = 1 - 4 * a
        static let c = 0.5 - a * log(4 * a)
    }
}
