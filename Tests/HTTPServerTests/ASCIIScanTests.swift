import Testing

@testable import HTTPServer

/// The word-at-a-time scans against their byte-by-byte definitions: every byte value at every
/// position of buffers from 0 to 19 bytes (so in a whole word, in a second word and in the tail),
/// among bytes that pass, and after a start offset.
@Suite struct ASCIIScanTests {
    /// Runs `check` on every buffer of `length` bytes of `filler` with one byte replaced.
    private func everyByteAtEveryPosition(filler: UInt8, _ check: ([UInt8]) -> Void) {
        for length in 0..<20 {
            check([UInt8](repeating: filler, count: length))
            for position in 0..<length {
                for value in 0...255 {
                    var bytes = [UInt8](repeating: filler, count: length)
                    bytes[position] = UInt8(value)
                    check(bytes)
                }
            }
        }
    }

    @Test func firstNonVisible_FindsTheFirstByteOutside0x21To0x7E_FromAnyStart() {
        var mismatches = 0
        everyByteAtEveryPosition(filler: UInt8(ascii: "a")) { bytes in
            for start in [0, 1, 3] where start <= bytes.count {
                let expected = bytes.indices.first { $0 >= start && (bytes[$0] <= 0x20 || bytes[$0] >= 0x7F) }
                let found = bytes.withUnsafeBytes { ASCIIScan.firstNonVisible($0, from: start) }
                if found != (expected ?? bytes.count) { mismatches += 1 }
            }
        }
        #expect(mismatches == 0)
    }

    @Test func hasInvalidFieldByte_IsTrueExactlyForControlsButTab_AndDEL() {
        var mismatches = 0
        for filler in [UInt8(ascii: "a"), 0x09, 0xC3] {
            everyByteAtEveryPosition(filler: filler) { bytes in
                let expected = bytes.contains { $0 < 0x20 && $0 != 0x09 || $0 == 0x7F }
                if bytes.withUnsafeBytes({ ASCIIScan.hasInvalidFieldByte($0) }) != expected { mismatches += 1 }
            }
        }
        #expect(mismatches == 0)
    }

    @Test func needsLogEscape_IsTrueExactlyForControls_DEL_Quote_AndBackslash() {
        var mismatches = 0
        for filler in [UInt8(ascii: "/"), 0xE2] {
            everyByteAtEveryPosition(filler: filler) { bytes in
                let expected = bytes.contains { $0 < 0x20 || $0 == 0x7F || $0 == 0x22 || $0 == 0x5C }
                if bytes.withUnsafeBytes({ ASCIIScan.needsLogEscape($0) }) != expected { mismatches += 1 }
            }
        }
        #expect(mismatches == 0)
    }

    @Test func hasLineBreak_IsTrueExactlyForCRAndLF() {
        var mismatches = 0
        for filler in [UInt8(ascii: "a"), 0x0B] {
            everyByteAtEveryPosition(filler: filler) { bytes in
                let expected = bytes.contains { $0 == 13 || $0 == 10 }
                if bytes.withUnsafeBytes({ ASCIIScan.hasLineBreak($0) }) != expected { mismatches += 1 }
            }
        }
        #expect(mismatches == 0)
    }

    @Test func hasByteBelow14_IsTrueExactlyForTheBytesBelow14() {
        var mismatches = 0
        // Fillers: a letter, a byte just above 13 and one far above (UTF-8 lead byte).
        for filler in [UInt8(ascii: "a"), 14, 0xE2] {
            everyByteAtEveryPosition(filler: filler) { bytes in
                let expected = bytes.contains { $0 < 14 }
                if bytes.withUnsafeBytes({ ASCIIScan.hasByteBelow14($0) }) != expected { mismatches += 1 }
            }
        }
        #expect(mismatches == 0)
    }

    @Test func isASCII_IsFalseExactlyWhenAByteIsAbove0x7F() {
        var mismatches = 0
        everyByteAtEveryPosition(filler: UInt8(ascii: "a")) { bytes in
            if bytes.withUnsafeBytes({ ASCIIScan.isASCII($0) }) != bytes.allSatisfy({ $0 < 0x80 }) { mismatches += 1 }
        }
        #expect(mismatches == 0)
    }
}
