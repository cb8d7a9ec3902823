/// Byte-class scans of the hot path (the request target, field values, the access log's text),
/// eight bytes at a time: each word is tested with a few integer operations for the bytes that
/// matter (the classic "has a byte less than n" and "has a zero byte" tricks), and only a word
/// that has one is looked at byte by byte. A request target is ~90 bytes, and scanned three times
/// per request (the parser, the router, the access log): per byte, that was a compare and a branch
/// each time (decision 041).
enum ASCIIScan {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highs: UInt64 = 0x8080_8080_8080_8080

    /// Whether some byte of `word` is below `n` (n ≤ 128); exact as a yes/no.
    @inline(__always)
    private static func hasLess(_ word: UInt64, _ n: UInt64) -> Bool {
        (word &- ones &* n) & ~word & highs != 0
    }

    /// Whether some byte of `word` is above `n` (n ≤ 127); exact as a yes/no.
    @inline(__always)
    private static func hasMore(_ word: UInt64, _ n: UInt64) -> Bool {
        ((word &+ ones &* (127 - n)) | word) & highs != 0
    }

    /// Whether some byte of `word` equals `byte`; exact as a yes/no.
    @inline(__always)
    private static func has(_ word: UInt64, _ byte: UInt8) -> Bool {
        let x = word ^ (ones &* UInt64(byte))
        return (x &- ones) & ~x & highs != 0
    }

    /// Whether `test` holds for some word of `bytes`, each byte being in a word tested: the last,
    /// partial word is the buffer's last eight bytes read again, and a buffer under eight bytes is
    /// one word padded with `a` (which no scan here looks for). No byte-by-byte tail: most field
    /// names and values, ids and methods are a word or two long (decision 041).
    @inline(__always)
    private static func anyWord(_ bytes: UnsafeRawBufferPointer, _ test: (UInt64) -> Bool) -> Bool {
        let count = bytes.count
        guard let base = bytes.baseAddress, count > 0 else { return false }
        if count < 8 {
            var word = ones &* 0x61
            withUnsafeMutableBytes(of: &word) { $0.baseAddress!.copyMemory(from: base, byteCount: count) }
            return test(word)
        }
        var i = 0
        while true {
            if test(base.loadUnaligned(fromByteOffset: min(i, count - 8), as: UInt64.self)) { return true }
            i += 8
            if i >= count { return false }
        }
    }

    /// Whether every byte of `bytes` is ASCII (below 0x80).
    static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        !anyWord(bytes) { $0 & highs != 0 }
    }

    /// The index of the first byte of `bytes` from `start` that is not visible ASCII (0x21–0x7E),
    /// or `bytes.count`: what a request target may hold (RFC 9112 §3.2, as the parser reads it).
    static func firstNonVisible(_ bytes: UnsafeRawBufferPointer, from start: Int = 0) -> Int {
        var i = start
        if let base = bytes.baseAddress {
            while i + 8 <= bytes.count {
                let word = base.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                if hasLess(word, 0x21) || hasMore(word, 0x7E) { break }
                i += 8
            }
        }
        while i < bytes.count {
            let c = bytes[i]
            if c <= 0x20 || c >= 0x7F { return i }
            i += 1
        }
        return i
    }

    /// Whether `bytes` hold a control character other than HTAB, or DEL: what a field value may
    /// not (RFC 9110 §5.5). A word with a byte below 0x20 is looked at byte by byte, as it may be
    /// an HTAB.
    static func hasInvalidFieldByte(_ bytes: UnsafeRawBufferPointer) -> Bool {
        anyWord(bytes) { word in
            if has(word, 0x7F) { return true }
            guard hasLess(word, 0x20) else { return false }
            for shift in stride(from: 0 as UInt64, to: 64, by: 8) {
                let c = UInt8(truncatingIfNeeded: word >> shift)
                if c < 0x20 && c != 0x09 { return true }
            }
            return false
        }
    }

    /// The number of CR and LF bytes in `bytes`: a head's field lines hold two each (their CRLF),
    /// and more only when a name or value has one (RFC 9110 §5.5). One pass over all the lines of
    /// a head; a word is first tested for any byte below 14, and only such a word counted exactly.
    static func lineBreakCount(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        let count = bytes.count
        var total = 0
        var i = 0
        while i + 8 <= count {
            let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            if hasLess(word, 14) { total += lineBreaks(in: word) }
            i += 8
        }
        if i < count {
            guard count >= 8 else {
                for k in 0..<count {
                    let byte = base.load(fromByteOffset: k, as: UInt8.self)
                    if byte == 13 || byte == 10 { total += 1 }
                }
                return total
            }
            // The last eight bytes, those counted already shifted out (zeros: neither CR nor LF).
            let last = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self))
            total += lineBreaks(in: last >> UInt64(8 * (i + 8 - count)))
        }
        return total
    }

    /// The CR and LF bytes of `word`, counted exactly: a byte's high bit marks it when it is zero
    /// after the xor (a test without the borrow of `has`, which may mark the byte after a match).
    @inline(__always)
    private static func lineBreaks(in word: UInt64) -> Int {
        let lows = ~highs
        @inline(__always) func zeros(_ x: UInt64) -> UInt64 { ~(((x & lows) &+ lows) | x | lows) }
        return (zeros(word ^ (ones &* 13)) | zeros(word ^ (ones &* 10))).nonzeroBitCount
    }

    /// Whether `bytes` hold a CR or an LF: a header field that would split the head (RFC 9110 §5.5).
    /// Runs over every field line of every response head: a word is first tested for any byte
    /// below 14 (one test; field text has none but the rare HTAB), and only such a word for CR and LF.
    static func hasLineBreak(_ bytes: UnsafeRawBufferPointer) -> Bool {
        anyWord(bytes) { word in hasLess(word, 14) && (has(word, 13) || has(word, 10)) }
    }

    /// Whether `bytes` hold a byte the access log's text format escapes: a control character,
    /// DEL, `"` or `\`. Its own loop, not `anyWord`: the log's fields are short (`GET`, an id),
    /// and a padded word cost more than their tails (decision 041).
    static func needsLogEscape(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        if let base = bytes.baseAddress {
            while i + 8 <= bytes.count {
                let word = base.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                if hasLess(word, 0x20) || has(word, 0x7F) || has(word, 0x22) || has(word, 0x5C) { return true }
                i += 8
            }
        }
        while i < bytes.count {
            let c = bytes[i]
            if c < 0x20 || c == 0x7F || c == 0x22 || c == 0x5C { return true }
            i += 1
        }
        return false
    }
}
