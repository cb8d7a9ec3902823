extension JSONUploadScanner {
    /// Where the run of plain string bytes (printable ASCII but `"` and `\`) that starts at `start`
    /// ends: a base64 text is one such run up to its closing quote. Eight bytes at a time while none of
    /// them ends it (a byte ≥ 0x80, below 0x20, `"` or `\`, each found with the word tricks of
    /// "Bit Twiddling Hacks": hasless, haszero), then byte by byte.
    static func plainRunEnd(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var end = start
        let n = bytes.count
        if let base = bytes.baseAddress {
            let ones: UInt64 = 0x0101_0101_0101_0101
            let high: UInt64 = 0x8080_8080_8080_8080
            while end + 8 <= n {
                let word = UnsafeRawPointer(base).loadUnaligned(fromByteOffset: end, as: UInt64.self)
                let quote = word ^ (ones &* 0x22)
                let backslash = word ^ (ones &* 0x5C)
                let control = (word &- ones &* 0x20) & ~word
                let ends = (word | control | ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash)) & high
                guard ends == 0 else { break }
                end += 8
            }
        }
        while end < n, bytes[end] >= 0x20, bytes[end] < 0x80, bytes[end] != 0x22, bytes[end] != 0x5C {
            end += 1
        }
        return end
    }
}
