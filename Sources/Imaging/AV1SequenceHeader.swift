/// The largest frame size in an AV1 sequence header (AV1 Bitstream & Decoding Process
/// Specification §5.5): what the AV1 decoder may allocate, whatever the AVIF `ispe` declares.
enum AV1SequenceHeader {
    /// The sequence header OBU type (§6.2.2).
    static let obuType = 1

    /// `max_frame_width_minus_1 + 1` × `max_frame_height_minus_1 + 1` of a sequence header OBU's
    /// payload. Throws `corrupt` when the payload ends before them.
    static func maxFrameSize<Bytes: Collection<UInt8>>(payload: Bytes) throws -> (width: Int, height: Int) {
        var bits = HEVCSequenceParameterSet.BitReader(bytes: payload)
        try bits.skip(3)  // seq_profile
        try bits.skip(1)  // still_picture
        if try bits.read(1) == 1 {  // reduced_still_picture_header
            try bits.skip(5)  // seq_level_idx[0]
        } else {
            var decoderModel = false
            var delayLength = 0
            if try bits.read(1) == 1 {  // timing_info_present_flag
                try bits.skip(64)  // num_units_in_display_tick, time_scale
                if try bits.read(1) == 1 { try bits.uvlc() }  // equal_picture_interval
                decoderModel = try bits.read(1) == 1
                if decoderModel {
                    delayLength = try bits.read(5) + 1
                    try bits.skip(32 + 5 + 5)
                }
            }
            let initialDisplayDelay = try bits.read(1) == 1
            for _ in 0...(try bits.read(5)) {  // operating_points_cnt_minus_1
                try bits.skip(12)  // operating_point_idc
                if try bits.read(5) > 7 { try bits.skip(1) }  // seq_level_idx, seq_tier
                if decoderModel, try bits.read(1) == 1 { try bits.skip(2 * delayLength + 1) }
                if initialDisplayDelay, try bits.read(1) == 1 { try bits.skip(4) }
            }
        }
        let widthBits = try bits.read(4) + 1
        let heightBits = try bits.read(4) + 1
        return (try bits.read(widthBits) + 1, try bits.read(heightBits) + 1)
    }

    /// The max frame sizes of the sequence headers among `obus`, OBUs one after another (§5.3),
    /// each with its size field or running to the end. `read(offset, count)` gives up to `count`
    /// bytes at `offset`, fewer at the end.
    static func sizes(_ total: Int, _ read: (Int, Int) throws -> [UInt8]) throws -> [(width: Int, height: Int)] {
        var sizes: [(width: Int, height: Int)] = []
        var offset = 0
        for _ in 0..<HEIFCodedSize.maxNALUnits {
            guard offset < total else { return sizes }
            let head = try read(offset, 10)
            guard let first = head.first else { return sizes }
            guard first & 0x80 == 0 else { throw ImageError.corrupt("AV1 OBU with its forbidden bit set") }
            var at = first & 4 != 0 ? 2 : 1  // obu_extension_flag
            var size = max(0, total - offset - at)
            if first & 2 != 0 {  // obu_has_size_field: leb128 (§4.10.5)
                size = 0
                for index in 0..<8 {
                    guard at < head.count else { throw ImageError.corrupt("AV1 OBU size is cut short") }
                    size |= Int(head[at] & 0x7F) << (7 * index)
                    at += 1
                    if head[at - 1] & 0x80 == 0 { break }
                }
                guard size < 1 << 32 else { throw ImageError.corrupt("AV1 OBU of \(size) bytes") }
            }
            if Int(first >> 3 & 15) == obuType {
                sizes.append(try maxFrameSize(payload: try read(offset + at, min(size, 4096))))
            }
            offset += at + size
        }
        throw ImageError.corrupt("AV1 image has over \(HEIFCodedSize.maxNALUnits) OBUs")
    }
}
