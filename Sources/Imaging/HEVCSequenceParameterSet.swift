/// The coded picture size in an HEVC sequence parameter set (ITU-T H.265 §7.3.2.2): what
/// libde265 allocates and decodes, whatever the HEIF `ispe` property around it declares.
enum HEVCSequenceParameterSet {
    /// The SPS NAL unit type (H.265 Table 7-1).
    static let nalType: UInt8 = 33

    /// The NAL unit type of a NAL unit whose first byte is `first`.
    static func type(_ first: UInt8) -> UInt8 { first >> 1 & 0x3F }

    /// `pic_width_in_luma_samples` × `pic_height_in_luma_samples` of an SPS NAL unit (its two-byte
    /// header first, emulation-prevention bytes still in). Throws `corrupt` for anything that is
    /// not a whole SPS up to those fields, or declares a size no HEVC level allows (over 65536 a side).
    static func codedSize<Bytes: Collection<UInt8>>(nal: Bytes) throws -> (width: Int, height: Int) {
        guard nal.count > 2, let first = nal.first, type(first) == nalType else {
            throw ImageError.corrupt("HEVC parameter set is not an SPS")
        }
        var bits = BitReader(rbsp: nal.dropFirst(2))
        try bits.skip(4)  // sps_video_parameter_set_id
        let subLayers = try bits.read(3)  // sps_max_sub_layers_minus1
        try bits.skip(1)  // sps_temporal_id_nesting_flag
        // profile_tier_level(1, sps_max_sub_layers_minus1) (§7.3.3): the general profile (88 bits)
        // and level (8 bits), then each sub-layer's presence flags and what they say is present.
        try bits.skip(96)
        var present: [(profile: Bool, level: Bool)] = []
        for _ in 0..<subLayers { present.append((try bits.read(1) == 1, try bits.read(1) == 1)) }
        if subLayers > 0 { try bits.skip(2 * (8 - subLayers)) }
        for layer in present {
            if layer.profile { try bits.skip(88) }
            if layer.level { try bits.skip(8) }
        }
        guard try bits.unsignedExpGolomb() <= 15 else { throw ImageError.corrupt("HEVC SPS id over 15") }
        let chroma = try bits.unsignedExpGolomb()
        guard chroma <= 3 else { throw ImageError.corrupt("HEVC chroma_format_idc \(chroma)") }
        if chroma == 3 { try bits.skip(1) }  // separate_colour_plane_flag
        let width = try bits.unsignedExpGolomb()
        let height = try bits.unsignedExpGolomb()
        guard (1...65536).contains(width), (1...65536).contains(height) else {
            throw ImageError.corrupt("HEVC SPS declares a \(width)×\(height) picture")
        }
        return (width, height)
    }

    /// Bits of a NAL unit's payload, most significant first, with emulation-prevention bytes (the
    /// 03 of each 00 00 03) removed (§7.4.2), or of an AV1 OBU's. Reading past the end is an error.
    struct BitReader {
        private var bytes: [UInt8] = []
        private var at = 0

        init<Bytes: Collection<UInt8>>(rbsp: Bytes) {
            var zeros = 0
            for byte in rbsp {
                if zeros >= 2, byte == 3 {
                    zeros = 0
                    continue
                }
                zeros = byte == 0 ? zeros + 1 : 0
                bytes.append(byte)
            }
        }

        /// Bits of `bytes` as they are (AV1 has no emulation prevention).
        init<Bytes: Collection<UInt8>>(bytes: Bytes) {
            self.bytes = Array(bytes)
        }

        mutating func read(_ count: Int) throws -> Int {
            guard at + count <= bytes.count * 8 else { throw ImageError.corrupt("HEVC SPS is cut short") }
            var value = 0
            for _ in 0..<count {
                value = value << 1 | Int(bytes[at >> 3] >> (7 - UInt8(at & 7)) & 1)
                at += 1
            }
            return value
        }

        mutating func skip(_ count: Int) throws { _ = try read(count) }

        /// ue(v) (§9.2): up to 31 leading zeros, so at most 2³² − 2.
        mutating func unsignedExpGolomb() throws -> Int {
            var zeros = 0
            while try read(1) == 0 {
                zeros += 1
                guard zeros <= 31 else { throw ImageError.corrupt("HEVC SPS has an Exp-Golomb code over 32 bits") }
            }
            return (1 << zeros) - 1 + (try read(zeros))
        }

        /// AV1's uvlc() (§4.10.3): 32 leading zeros or more stand for 2³² − 1.
        @discardableResult mutating func uvlc() throws -> Int {
            var zeros = 0
            while try read(1) == 0 { zeros += 1 }
            return zeros >= 32 ? (1 << 32) - 1 : (1 << zeros) - 1 + (try read(zeros))
        }
    }
}
