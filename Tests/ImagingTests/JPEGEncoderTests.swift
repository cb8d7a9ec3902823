import Testing

@testable import Imaging

@Suite struct JPEGEncoderTests {
    @Test func encode_ScalesChromaTableAboveLuma() throws {
        let jpeg = try JPEGEncoder.encode(TestImages.noise(width: 64, height: 64), quality: 80, iccProfile: nil)
        // Each DQT segment: Pq/Tq, then 64 entries in zigzag order (the first is DC).
        var first: [Int: UInt8] = [:]
        var second: [Int: UInt8] = [:]
        for segment in TestImages.segments(jpeg) where segment.code == 0xDB {
            let payload = Array(segment.payload)
            var offset = 0
            while offset + 65 <= payload.count {
                first[Int(payload[offset] & 0x0F)] = payload[offset + 1]
                second[Int(payload[offset] & 0x0F)] = payload[offset + 2]
                offset += 65
            }
        }
        #expect(JPEGEncoder.chromaQuality(for: 80) == 83)
        #expect(JPEGEncoder.chromaQuality(for: 99) == 100)
        #expect(first[0] == 5)  // luma DC at quality + 4: 16 · 32% = 5.12
        #expect(second[0] == 6)  // 16 · 40% = 6.4
        #expect(first[1] == 5)  // 16 · 34% = 5.44
        #expect(second[1] == 5)
    }
}
