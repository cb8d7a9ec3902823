/// Rewrites the picture size in the sequence parameter sets of an `hvcC` box, so that a tile
/// `heif-enc` coded says it is coded at another size (ITU-T H.265 §7.3.2.2): a decompression bomb
/// behind a small `ispe`. The rest of the SPS is kept bit for bit; its trailing bits and
/// emulation-prevention bytes are written again.
extension HEIFAssembler.Tile {
    /// This tile with every SPS in its `hvcC` declaring a `width`×`height` picture.
    public func coded(width: Int, height: Int) -> HEIFAssembler.Tile {
        var copy = self
        copy.hvcC = Self.rewriting(hvcC: hvcC) { sps in HEVCSizeRewriter.rewrite(sps: sps, width: width, height: height)
        }
        return copy
    }

    /// This tile with every SPS in its `hvcC` replaced by `replace`'s bytes (a corrupt one).
    public func replacingSPS(with replace: @escaping ([UInt8]) -> [UInt8]) -> HEIFAssembler.Tile {
        var copy = self
        copy.hvcC = Self.rewriting(hvcC: hvcC, replace)
        return copy
    }

    /// The SPS NAL units (two-byte header first) of this tile's `hvcC`.
    public var sequenceParameterSets: [[UInt8]] {
        var found: [[UInt8]] = []
        _ = Self.rewriting(hvcC: hvcC) { sps in
            found.append(sps)
            return sps
        }
        return found
    }

    /// `hvcC` (a whole box) with each SPS NAL unit replaced by `replace`'s result.
    static func rewriting(hvcC: [UInt8], _ replace: ([UInt8]) -> [UInt8]) -> [UInt8] {
        var out = Array(hvcC[8..<31])  // the 22 bytes of configuration and the array count
        var at = 31
        for _ in 0..<Int(hvcC[30]) {
            let type = hvcC[at] & 0x3F
            let count = Int(hvcC[at + 1]) << 8 | Int(hvcC[at + 2])
            out += hvcC[at..<at + 3]
            at += 3
            for _ in 0..<count {
                let length = Int(hvcC[at]) << 8 | Int(hvcC[at + 1])
                var nal = Array(hvcC[(at + 2)..<(at + 2 + length)])
                if type == 33 { nal = replace(nal) }
                out += HEIFAssembler.u16(nal.count) + nal
                at += 2 + length
            }
        }
        return HEIFAssembler.box("hvcC", out)
    }
}

/// The SPS bit surgery behind `HEIFAssembler.Tile.coded(width:height:)`.
public enum HEVCSizeRewriter {
    /// `sps` (an SPS NAL unit) declaring `width`×`height` instead of its own size.
    public static func rewrite(sps: [UInt8], width: Int, height: Int) -> [UInt8] {
        var bits = RBSPBits(sps.dropFirst(2), emulationPrevention: true)
        bits.at = 4
        let subLayers = bits.read(3)
        bits.at += 1 + 96
        var present: [(Int, Int)] = []
        for _ in 0..<subLayers { present.append((bits.read(1), bits.read(1))) }
        if subLayers > 0 { bits.at += 2 * (8 - subLayers) }
        for (profile, level) in present { bits.at += profile * 88 + level * 8 }
        _ = bits.ue()
        if bits.ue() == 3 { bits.at += 1 }
        let sizeStart = bits.at
        _ = bits.ue()
        _ = bits.ue()
        return Array(sps.prefix(2))
            + bits.bytes(replacing: sizeStart..<bits.at, with: expGolomb(width) + expGolomb(height))
    }

    static func expGolomb(_ value: Int) -> [Bool] {
        let code = value + 1
        let length = Int.bitWidth - code.leadingZeroBitCount
        return [Bool](repeating: false, count: length - 1) + RBSPBits.field(code, length)
    }
}

/// The bits of a raw byte sequence payload (an HEVC NAL unit's after its header, with its
/// emulation-prevention bytes taken out, ITU-T H.265 §7.4.2; or an AV1 OBU's payload), read in
/// order and written back with one run of them replaced.
struct RBSPBits {
    var bits: [Bool] = []
    /// Where the next `read` starts.
    var at = 0
    /// Whether emulation-prevention bytes (`00 00 03`) are taken out and put back.
    let emulationPrevention: Bool

    init(_ bytes: some Sequence<UInt8>, emulationPrevention: Bool) {
        self.emulationPrevention = emulationPrevention
        var zeros = 0
        for byte in bytes {
            if emulationPrevention, zeros >= 2, byte == 3 {
                zeros = 0
                continue
            }
            zeros = byte == 0 ? zeros + 1 : 0
            bits += Self.field(Int(byte), 8)
        }
    }

    /// The next `count` bits as an unsigned number.
    mutating func read(_ count: Int) -> Int {
        defer { at += count }
        return bits[at..<at + count].reduce(0) { $0 << 1 | ($1 ? 1 : 0) }
    }

    /// The next unsigned Exp-Golomb code (H.265 §9.2).
    mutating func ue() -> Int {
        var zeros = 0
        while read(1) == 0 { zeros += 1 }
        return (1 << zeros) - 1 + read(zeros)
    }

    /// `value`'s lowest `count` bits, most significant first.
    static func field(_ value: Int, _ count: Int) -> [Bool] { (0..<count).reversed().map { value >> $0 & 1 == 1 } }

    /// The payload with `range` of its bits replaced by `replacement`: its trailing bits (the last
    /// 1 and the zeros after it) written again after the rest, emulation prevention put back.
    func bytes(replacing range: Range<Int>, with replacement: [Bool]) -> [UInt8] {
        let end = bits.lastIndex(of: true)!
        var rewritten = Array(bits[..<range.lowerBound]) + replacement + bits[range.upperBound..<end] + [true]
        while rewritten.count % 8 != 0 { rewritten.append(false) }
        var out: [UInt8] = []
        var zeros = 0
        for i in stride(from: 0, to: rewritten.count, by: 8) {
            let byte = rewritten[i..<i + 8].reduce(UInt8(0)) { $0 << 1 | ($1 ? 1 : 0) }
            if emulationPrevention, zeros >= 2, byte <= 3 {
                out.append(3)
                zeros = 0
            }
            zeros = byte == 0 ? zeros + 1 : 0
            out.append(byte)
        }
        return out
    }
}

extension HEIFAssembler.Tile {
    /// This AV1 tile with the sequence header in its data declaring a `width`×`height` largest
    /// frame (AV1 specification §5.5: 16-bit size fields, the rest kept bit for bit).
    public func codedAV1(width: Int, height: Int) -> HEIFAssembler.Tile {
        var copy = self
        var out: [UInt8] = []
        var at = 0
        while at < data.count {
            let first = data[at]
            var header = first & 4 != 0 ? 2 : 1
            var size = 0
            for index in 0..<8 {
                size |= Int(data[at + header] & 0x7F) << (7 * index)
                header += 1
                if data[at + header - 1] & 0x80 == 0 { break }
            }
            var payload = Array(data[(at + header)..<(at + header + size)])
            if first >> 3 & 15 == 1 { payload = HEVCSizeRewriter.rewrite(av1SequenceHeader: payload, width, height) }
            out += data[at..<at + (first & 4 != 0 ? 2 : 1)] + HEVCSizeRewriter.leb128(payload.count) + payload
            at += header + size
        }
        copy.data = out
        return copy
    }
}

extension HEVCSizeRewriter {
    static func leb128(_ value: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        var rest = value
        repeat {
            bytes.append(UInt8(rest & 0x7F) | (rest > 0x7F ? 0x80 : 0))
            rest >>= 7
        } while rest > 0
        return bytes
    }

    static func rewrite(av1SequenceHeader payload: [UInt8], _ width: Int, _ height: Int) -> [UInt8] {
        var bits = RBSPBits(payload, emulationPrevention: false)
        bits.at = 4
        if bits.read(1) == 1 {
            bits.at += 5
        } else {
            var decoderModel = false
            var delayLength = 0
            if bits.read(1) == 1 {
                bits.at += 64
                if bits.read(1) == 1 {
                    var zeros = 0
                    while bits.read(1) == 0 { zeros += 1 }
                    bits.at += zeros
                }
                decoderModel = bits.read(1) == 1
                if decoderModel {
                    delayLength = bits.read(5) + 1
                    bits.at += 42
                }
            }
            let initialDisplayDelay = bits.read(1) == 1
            for _ in 0...bits.read(5) {
                bits.at += 12
                if bits.read(5) > 7 { bits.at += 1 }
                if decoderModel, bits.read(1) == 1 { bits.at += 2 * delayLength + 1 }
                if initialDisplayDelay, bits.read(1) == 1 { bits.at += 4 }
            }
        }
        let sizeStart = bits.at
        let widthBits = bits.read(4) + 1
        let heightBits = bits.read(4) + 1
        bits.at += widthBits + heightBits
        let size =
            RBSPBits.field(15, 4) + RBSPBits.field(15, 4) + RBSPBits.field(width - 1, 16)
            + RBSPBits.field(height - 1, 16)
        return bits.bytes(replacing: sizeStart..<bits.at, with: size)
    }
}
