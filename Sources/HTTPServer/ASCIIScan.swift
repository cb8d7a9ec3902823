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

    /// Whether `bytes` hold a byte below 14 (CR and LF among them, but also HTAB and the other low
    /// controls): the first test of a handler's field name or value before its line is written,
    /// with `hasLineBreak` only when this says yes. Words are tested without a branch and looked at
    /// once at the end, the tail (most names and many values are under eight bytes) as one word.
    @inline(__always)
    static func hasByteBelow14(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return false }
        let count = bytes.count
        let end = base + count
        var p = base
        var marks: UInt64 = 0
        while end - p >= 8 {
            let word = p.loadUnaligned(as: UInt64.self)
            marks |= (word &- ones &* 14) & ~word
            p += 8
        }
        if p < end {
            let word = tailWord(base, count)
            marks |= (word &- ones &* 14) & ~word
        }
        return marks & highs != 0
    }

    /// Whether `bytes` hold a CR or an LF: a header field that would split the head (RFC 9110 §5.5).
    /// Runs over every field line of every response head: a word is first tested for any byte
    /// below 14 (one test; field text has none but the rare HTAB), and only such a word for CR and LF.
    static func hasLineBreak(_ bytes: UnsafeRawBufferPointer) -> Bool {
        anyWord(bytes) { word in hasLess(word, 14) && (has(word, 13) || has(word, 10)) }
    }

    /// Whether `bytes` hold a byte the access log's text format escapes: a control character,
    /// DEL, `"` or `\`. The words' tests are gathered without a branch and looked at once at the
    /// end, the tail as one word (`tailWord`): a path is nearly always clean, and a test and a
    /// branch per word, and four per byte of the tail, cost more (decision 041, round 7).
    static func needsLogEscape(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return false }
        let count = bytes.count
        @inline(__always) func marks(_ word: UInt64) -> UInt64 {
            let del = word ^ (ones &* 0x7F)
            let quote = word ^ (ones &* 0x22)
            let backslash = word ^ (ones &* 0x5C)
            // Each term marks (high bit) a byte below 0x20, or equal to DEL, `"` or `\`; a borrow
            // may mark a byte after a real one, never one in a word without any.
            return ((word &- ones &* 0x20) & ~word) | ((del &- ones) & ~del) | ((quote &- ones) & ~quote)
                | ((backslash &- ones) & ~backslash)
        }
        // A pointer walks the words: an index compared with the count costs an overflow check per
        // word (half again as many instructions, in a micro-benchmark of a 90-byte and a 7-byte path).
        let end = base + count
        var p = base
        var found: UInt64 = 0
        while end - p >= 8 {
            found |= marks(p.loadUnaligned(as: UInt64.self))
            p += 8
        }
        if p < end { found |= marks(tailWord(base, count)) }
        return found & highs != 0
    }

    /// The last bytes of a buffer as one word for a yes/no test: its last eight bytes read again
    /// when it has eight (those tested already are tested twice), else its bytes copied into a word
    /// of `a` (which no test here looks for): cheaper than a byte loop of four compares and
    /// branches a byte (decision 041, round 7).
    @inline(__always)
    private static func tailWord(_ base: UnsafeRawPointer, _ count: Int) -> UInt64 {
        if count >= 8 { return base.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self) }
        var word = ones &* 0x61
        withUnsafeMutableBytes(of: &word) { $0.baseAddress!.copyMemory(from: base, byteCount: count) }
        return word
    }
}
