/// Bytes written piece by piece (a response head, an access-log line) into raw memory kept from
/// one use to the next, so each piece is a bounds check and a copy; the finished bytes then go
/// where they belong in one append (an `Array` append checks uniqueness and capacity every time:
/// about sixty instructions, and a head or a log line has twenty-odd pieces; decision 041). Each
/// is owned by one event loop's encoder or log buffer and used on that loop's thread only.
final class ScratchBytes {
    /// The start of the memory (bound to bytes, written through raw pointers).
    private var base: UnsafeMutablePointer<UInt8>
    /// Bytes the memory holds.
    private var capacity: Int
    /// Bytes written since `removeAll`.
    private(set) var count = 0

    /// Room for `capacity` bytes, grown when more come.
    init(capacity: Int = 1024) {
        self.capacity = max(64, capacity)
        base = UnsafeMutablePointer<UInt8>.allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    /// Starts over (the memory is kept).
    func removeAll() { count = 0 }

    /// The bytes so far.
    var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: count) }

    /// The bytes written from offset `start` on, less the last `dropping`.
    @inline(__always)
    func bytes(from start: Int, dropping: Int = 0) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base + start, count: max(0, count - dropping - start))
    }

    /// Takes back what was written after the first `count` bytes.
    @inline(__always)
    func truncate(to count: Int) { self.count = min(self.count, count) }

    /// Appends `bytes`.
    @inline(__always)
    func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count)
        UnsafeMutableRawPointer(base + count).copyMemory(from: source, byteCount: bytes.count)
        count += bytes.count
    }

    /// Appends the bytes of an array.
    @inline(__always)
    func append(_ bytes: [UInt8]) { bytes.withUnsafeBytes { append($0) } }

    /// Appends a literal.
    @inline(__always)
    func append(_ text: StaticString) {
        append(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends one byte.
    @inline(__always)
    func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    /// Appends a field line, `name: value` and CRLF, with one bounds check. The buffers' counts and
    /// addresses are read once: in a large caller their accessors are not always inlined (decision
    /// 041, round 7).
    @inline(__always)
    func appendField(_ name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) {
        let nameCount = name.count
        let valueCount = value.count
        reserve(nameCount + valueCount + 4)
        let start = count
        let out = UnsafeMutableRawPointer(base) + start
        if let source = name.baseAddress { out.copyMemory(from: source, byteCount: nameCount) }
        out.storeBytes(of: (0x203A as UInt16).littleEndian, toByteOffset: nameCount, as: UInt16.self)  // ": "
        if let source = value.baseAddress { (out + nameCount + 2).copyMemory(from: source, byteCount: valueCount) }
        // CRLF
        out.storeBytes(of: (0x0A0D as UInt16).littleEndian, toByteOffset: nameCount + 2 + valueCount, as: UInt16.self)
        count = start + nameCount + valueCount + 4
    }

    /// Appends an integer in decimal: its digits counted first, then written in place from the
    /// last (a status, a length and a duration per access-log line, a length per head).
    /// The small case (a status, most durations' milliseconds, a small length) is inlined where it
    /// is called: the larger function's entry and exit cost as much as its three digits.
    @inline(__always)
    func appendDecimal(_ value: Int) {
        if value >= 0 && value < 1000 {
            appendSmallDecimal(value)
        } else {
            appendLargeDecimal(value)
        }
    }

    /// `appendDecimal` of a negative number or one of four digits or more.
    private func appendLargeDecimal(_ value: Int) {
        if value < 0 {
            append(0x2D)
            appendDecimal(value == Int.min ? Int.max : -value)
            return
        }
        var digits = 1
        var bound = 10
        while digits < 19 && value >= bound {
            digits += 1
            bound &*= 10
        }
        reserve(digits)
        // The memory and count read once: each access to a class's stored property is checked.
        let start = count
        let out = base + start
        var n = UInt(bitPattern: value)
        var i = digits
        while i > 0 {
            i -= 1
            out[i] = UInt8(truncatingIfNeeded: 0x30 + n % 10)
            n /= 10
        }
        count = start + digits
    }

    /// A point and three decimals, `.041` for 41 (0...999): the fraction of a duration in
    /// milliseconds, written with one bounds check.
    func appendFraction(_ thousandths: Int) {
        reserve(4)
        let start = count
        let out = base + start
        let v = UInt(bitPattern: thousandths) % 1000
        out[0] = 0x2E
        out[1] = UInt8(truncatingIfNeeded: 0x30 + v / 100)
        out[2] = UInt8(truncatingIfNeeded: 0x30 + v / 10 % 10)
        out[3] = UInt8(truncatingIfNeeded: 0x30 + v % 10)
        count = start + 4
    }

    /// `appendDecimal` of 0...999, without counting digits in a loop.
    @inline(__always)
    private func appendSmallDecimal(_ value: Int) {
        reserve(3)
        let start = count
        let out = base + start
        let v = UInt(bitPattern: value)
        if v >= 100 {
            out[0] = UInt8(truncatingIfNeeded: 0x30 + v / 100)
            out[1] = UInt8(truncatingIfNeeded: 0x30 + v / 10 % 10)
            out[2] = UInt8(truncatingIfNeeded: 0x30 + v % 10)
            count = start + 3
        } else if v >= 10 {
            out[0] = UInt8(truncatingIfNeeded: 0x30 + v / 10)
            out[1] = UInt8(truncatingIfNeeded: 0x30 + v % 10)
            count = start + 2
        } else {
            out[0] = UInt8(truncatingIfNeeded: 0x30 + v)
            count = start + 1
        }
    }

    /// Makes room for `more` bytes after `count`.
    @inline(__always)
    private func reserve(_ more: Int) {
        if count + more > capacity { grow(to: count + more) }
    }

    private func grow(to needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        grown.initialize(from: base, count: count)
        base.deallocate()
        base = grown
        capacity = newCapacity
    }
}
