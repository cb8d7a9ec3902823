/// Makes the request ids of one event loop: `<server prefix><loop index, base 36>.<counter, base 36>`
/// (`k3x9-0.1z`), unique within the server because the prefix is random per server and each loop
/// counts its own. Owned by its loop and used only on its thread, so it needs no lock.
struct HTTPRequestIDGenerator {
    /// The server's prefix, the loop index in base 36 and a dot: what every id here starts with.
    private let prefix: [UInt8]
    private var counter: UInt64 = 0

    /// The ids of loop `loopIndex` of a server whose ids start with `serverPrefix`.
    init(serverPrefix: String, loopIndex: Int) {
        prefix = Array((serverPrefix + String(loopIndex, radix: 36) + ".").utf8)
    }

    /// A random per-server prefix (four base-36 digits and a dash): ids of two servers, or of one
    /// server before and after a restart, are unlikely to meet in a log.
    static func randomServerPrefix() -> String {
        String(UInt32.random(in: 0..<(36 * 36 * 36 * 36)), radix: 36) + "-"
    }

    /// The next id: no allocation while it fits a small string (15 bytes). The prefix is copied in
    /// one go and the digits written through a pointer, without a bounds check per byte (decision
    /// 041, round 8).
    mutating func next() -> String {
        counter &+= 1
        let counter = self.counter
        var digits = 1
        var rest = counter / 36
        while rest > 0 {
            digits += 1
            rest /= 36
        }
        return prefix.withUnsafeBufferPointer { head in
            let headCount = head.count
            return String(unsafeUninitializedCapacity: headCount + digits) { out in
                guard let base = out.baseAddress else { return 0 }
                if let source = head.baseAddress { base.initialize(from: source, count: headCount) }
                let first = base + headCount
                var at = first + digits
                var value = counter
                repeat {
                    at -= 1
                    let digit = UInt8(truncatingIfNeeded: value % 36)
                    at.initialize(to: digit < 10 ? 0x30 + digit : 0x57 + digit)
                    value /= 36
                } while at > first
                return headCount + digits
            }
        }
    }
}
