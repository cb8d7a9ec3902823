import Foundation

/// The character classes and byte helpers the parser reads with (RFC 9110 §5.6.2, RFC 5234).
extension HTTPRequestParser {
    /// RFC 9110 §5.6.2: tchar.
    @inline(__always)
    static func isTchar(_ c: UInt8) -> Bool {
        switch c {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
        case 0x21, 0x23, 0x24, 0x25, 0x26, 0x27, 0x2A, 0x2B, 0x2D, 0x2E, 0x5E, 0x5F, 0x60, 0x7C, 0x7E: return true
        default: return false
        }
    }

    /// DIGIT (RFC 5234).
    @inline(__always)
    static func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }

    @inline(__always)
    static func hexValue(_ c: UInt8) -> Int? {
        switch c {
        case 0x30...0x39: return Int(c - 0x30)
        case 0x41...0x46: return Int(c - 0x41 + 10)
        case 0x61...0x66: return Int(c - 0x61 + 10)
        default: return nil
        }
    }

    @inline(__always)
    static func string(_ p: UnsafeRawBufferPointer, _ from: Int, _ to: Int) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: p[from..<to]), as: UTF8.self)
    }

    /// Whether the bytes in `range` equal the lower-case ASCII `name`, ignoring case.
    static func equalsLower(_ p: UnsafeRawBufferPointer, _ range: Range<Int>, _ name: StaticString) -> Bool {
        let n = name.utf8Start
        var k = 0
        for i in range {
            if p[i] | 0x20 != n[k] { return false }
            k += 1
        }
        return true
    }
}
