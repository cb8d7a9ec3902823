import Foundation

/// The chunked body (RFC 9112 §7.1): chunk sizes, their extensions, and the trailer section.
extension HTTPRequestParser {
    /// RFC 9112 §7.1: chunk-size [ chunk-ext ] CRLF, then the chunk's data (or, for the last
    /// chunk, the trailer section).
    mutating func parseChunkSize(_ p: UnsafeRawBufferPointer) throws -> (event: Step, consumed: Int) {
        guard let base = p.baseAddress, p.count > 0 else { return (.nothing, 0) }
        let window = min(p.count, limits.chunkLineBytes)
        guard let hit = memchr(base, Int32(Self.lf), window) else {
            if p.count >= limits.chunkLineBytes { throw HTTPParseError.invalidChunkSize }
            return (.nothing, 0)
        }
        let idx = UnsafeRawPointer(hit) - base
        guard idx > 0, p[idx - 1] == Self.cr else { throw HTTPParseError.bareLineFeed }
        let end = idx - 1
        // chunk-size = 1*HEXDIG; more than 15 digits would overflow.
        var i = 0
        var size = 0
        while i < end, let digit = Self.hexValue(p[i]) {
            size = size << 4 | digit
            i += 1
        }
        guard i > 0, i <= 15 else { throw HTTPParseError.invalidChunkSize }
        // chunk-ext = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] ): ignored, but it
        // must start with ";" and contain no control characters.
        while i < end, p[i] == Self.sp || p[i] == Self.htab { i += 1 }
        if i < end {
            guard p[i] == 0x3B else { throw HTTPParseError.invalidChunkSize }
            for k in i..<end where (p[k] < 0x20 && p[k] != Self.htab) || p[k] == 0x7F {
                throw HTTPParseError.invalidChunkSize
            }
        }
        if size == 0 {
            // last-chunk: the trailer section follows (RFC 9112 §7.1.2).
            state = .trailers
        } else {
            bodyReceived += size
            if bodyReceived > bodyLimit { throw HTTPParseError.bodyTooLarge }
            state = .chunkData(remaining: size)
        }
        return (.nothing, idx + 1)
    }

    /// RFC 9112 §7.1.2: trailer-section = *( field-line CRLF ), then the final CRLF.
    mutating func parseTrailerLine(_ p: UnsafeRawBufferPointer) throws -> (event: Step, consumed: Int) {
        guard let base = p.baseAddress, p.count > 0 else { return (.nothing, 0) }
        guard let hit = memchr(base, Int32(Self.lf), p.count) else {
            if trailerBytes + p.count > limits.headerBytes { throw HTTPParseError.headerSectionTooLarge }
            return (.nothing, 0)
        }
        let idx = UnsafeRawPointer(hit) - base
        guard idx > 0, p[idx - 1] == Self.cr else { throw HTTPParseError.bareLineFeed }
        trailerBytes += idx + 1
        if trailerBytes > limits.headerBytes { throw HTTPParseError.headerSectionTooLarge }
        if idx == 1 {
            endMessage()
            return (.end, 2)
        }
        let (name, value) = try Self.parseFieldLine(p, 0, idx - 1)
        trailers.add(name, value)
        if trailers.count > limits.headerCount { throw HTTPParseError.tooManyHeaderFields }
        return (.nothing, idx + 1)
    }
}
