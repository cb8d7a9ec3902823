/// Decodes base64 (RFC 4648 §4, the alphabet `FileReader.readAsDataURL` and the JavaScript SDK's
/// `encodeBase64` write) in chunks of at most `chunkBytes`, so a large file is never held decoded
/// in memory. Strict about what it takes: ASCII whitespace is skipped (MIME-style line breaks);
/// `=` padding only at the end, and complete; any other character is refused with its position.
/// Fed in pieces split anywhere (`feed`, then `finish`), as the JSON upload's scanner reads them.
struct Base64StreamDecoder {
    /// Why the text is not base64.
    struct Invalid: Error, CustomStringConvertible {
        let description: String
    }

    /// Decoded bytes handed over at a time.
    static let chunkBytes = 48 * 1024

    /// The sextet of each ASCII byte, 0xFF for none.
    private static let sextets: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            table[Int(c)] = UInt8(i)
        }
        return table
    }()
    private static let dataURL = Array("data:".utf8)

    private var out: [UInt8] = []  // chunkBytes long once fed; its first `filled` bytes are decoded
    private var filled = 0
    private var group: UInt32 = 0
    private var count = 0  // sextets in the current group
    private var padding = 0
    private var index = 0  // characters read so far
    private var dataURLMatched = 0  // leading characters that spell "data:"

    /// Decodes all of `text`, calling `emit` with each chunk of bytes in order.
    mutating func decode(_ text: UnsafeBufferPointer<UInt8>, emit: ([UInt8]) throws -> Void) throws {
        try feed(text, emit: emit)
        try finish(emit: emit)
    }

    /// Decodes the next characters of the text (split anywhere), calling `emit` with each full chunk.
    /// The state is worked on in the loop's own locals and the table and chunk through pointers, once
    /// per piece: a lazy global, an array append or a captured variable per character cost more than
    /// the decoding itself. After an error the decoder is not fed again.
    mutating func feed(_ text: UnsafeBufferPointer<UInt8>, emit: ([UInt8]) throws -> Void) throws {
        var out = self.out.count == Self.chunkBytes ? self.out : [UInt8](repeating: 0, count: Self.chunkBytes)
        self.out = []  // so that `out` is the chunk's only reference
        let start = (filled, group, count, padding, index, dataURLMatched)
        let end = try Self.sextets.withUnsafeBufferPointer { sextets in
            try out.withUnsafeMutableBufferPointer { chunk in
                var (filled, group, count, padding, index, dataURLMatched) = start
                var i = 0
                while i < text.count {
                    // The common case in bulk: whole groups of four plain characters, decoded without
                    // the group's state, until a character that is not one (whitespace, padding, an
                    // error: taken one at a time below, with its position) or the text's end.
                    if count == 0, padding == 0, index >= 5 {
                        while i + 4 <= text.count {
                            let a = sextets[Int(text[i])]
                            let b = sextets[Int(text[i + 1])]
                            let c = sextets[Int(text[i + 2])]
                            let d = sextets[Int(text[i + 3])]
                            guard (a | b | c | d) & 0xC0 == 0 else { break }
                            let bits = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                            chunk[filled] = UInt8(truncatingIfNeeded: bits >> 16)
                            chunk[filled + 1] = UInt8(truncatingIfNeeded: bits >> 8)
                            chunk[filled + 2] = UInt8(truncatingIfNeeded: bits)
                            filled += 3
                            i += 4
                            index += 4
                            if filled + 3 > chunk.count {
                                try emit(Array(chunk[0..<filled]))
                                filled = 0
                            }
                        }
                        guard i < text.count else { break }
                    }
                    let byte = text[i]
                    i += 1
                    // A data: URL's prefix, refused at its colon (before the colon's own complaint).
                    if index < 5, dataURLMatched == index, byte == Self.dataURL[index] {
                        dataURLMatched += 1
                        if dataURLMatched == 5 {
                            throw Invalid(
                                description:
                                    "The file's base64 is a data: URL; send only the base64 after its comma, as the Parse SDK does."
                            )
                        }
                    }
                    let sextet = sextets[Int(byte)]
                    if sextet != 0xFF, padding == 0 {
                        index += 1
                        group = group << 6 | UInt32(sextet)
                        count += 1
                        guard count == 4 else { continue }
                        chunk[filled] = UInt8(truncatingIfNeeded: group >> 16)
                        chunk[filled + 1] = UInt8(truncatingIfNeeded: group >> 8)
                        chunk[filled + 2] = UInt8(truncatingIfNeeded: group)
                        filled += 3
                        group = 0
                        count = 0
                        if filled + 3 > chunk.count {
                            try emit(Array(chunk[0..<filled]))
                            filled = 0
                        }
                        continue
                    }
                    switch byte {
                    case 0x20, 0x09, 0x0A, 0x0D:
                        break
                    case UInt8(ascii: "="):
                        // Only after two or three sextets of the last group, at most two.
                        guard count >= 2, count + padding < 4 else { throw Self.invalid(index, byte) }
                        padding += 1
                    default:
                        throw Self.invalid(index, byte)
                    }
                    index += 1
                }
                return (filled, group, count, padding, index, dataURLMatched)
            }
        }
        (filled, group, count, padding, index, dataURLMatched) = end
        self.out = out
    }

    /// The end of the text: the last group, and the bytes not yet handed on.
    mutating func finish(emit: ([UInt8]) throws -> Void) throws {
        var tail = Array(out.prefix(filled))
        // The last group: 2 or 3 sextets give 1 or 2 bytes; padding, when given, completes it.
        switch count {
        case 0:
            break
        case 2, 3:
            guard padding == 0 || count + padding == 4 else {
                throw Invalid(description: "The file's base64 ends with incomplete padding.")
            }
            group <<= UInt32(6 * (4 - count))
            tail.append(UInt8(truncatingIfNeeded: group >> 16))
            if count == 3 { tail.append(UInt8(truncatingIfNeeded: group >> 8)) }
        default:
            throw Invalid(description: "The file's base64 is truncated: its last group has a single character.")
        }
        if !tail.isEmpty { try emit(tail) }
        out = []
        filled = 0
    }

    private static func invalid(_ index: Int, _ byte: UInt8) -> Invalid {
        let shown = byte >= 0x21 && byte < 0x7F ? "'\(Character(Unicode.Scalar(byte)))'" : "byte \(byte)"
        return Invalid(description: "The file's base64 is invalid: \(shown) at character \(index).")
    }
}
