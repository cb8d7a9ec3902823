import Testing

@testable import Imaging

/// `EXIFReader`: the camera's Make and Model from IFD0, cleaned, and never a crash on hostile values.
@Suite struct EXIFReaderTests {
    /// The APP1 payload (from `Exif\0\0`) of a segment made by `TestImages.exifSegment`.
    static func payload(_ segment: [UInt8]) -> ArraySlice<UInt8> { segment.dropFirst(4) }

    @Test(arguments: [true, false])
    func parse_ReadsMakeAndModel_InEitherByteOrder(littleEndian: Bool) throws {
        let segment = TestImages.exifSegment(
            orientation: 6, littleEndian: littleEndian, date: "2024:05:06 07:08:09", make: Array("Apple".utf8),
            model: Array("iPhone 15 Pro".utf8))
        let fields = try #require(EXIFReader.parse(app1: Self.payload(segment)))
        #expect(fields.make == "Apple" && fields.model == "iPhone 15 Pro")
        #expect(fields.orientation == 6 && fields.takenAt?.timeIntervalSince1970 == 1_714_979_289)
    }

    @Test func parse_ReadsAValueStoredInline() throws {
        // "LGE" and its NUL fit in the entry's four value bytes.
        let segment = TestImages.exifSegment(orientation: 1, littleEndian: true, make: Array("LGE".utf8))
        #expect(EXIFReader.parse(app1: Self.payload(segment))?.make == "LGE")
    }

    @Test func parse_LeavesTheCameraNil_WhenAbsentOrBlank() throws {
        let none = TestImages.exifSegment(orientation: 1, littleEndian: false)
        let fields = try #require(EXIFReader.parse(app1: Self.payload(none)))
        #expect(fields.make == nil && fields.model == nil)
        let blank = TestImages.exifSegment(
            orientation: 1, littleEndian: false, make: Array("    ".utf8), model: [0x01, 0x02, 0x7F])
        let blankFields = try #require(EXIFReader.parse(app1: Self.payload(blank)))
        #expect(blankFields.make == nil && blankFields.model == nil)
    }

    @Test func parse_CutsALongModel_AndIgnoresAHugeOne() throws {
        let long = TestImages.exifSegment(
            orientation: 1, littleEndian: true, make: Array(String(repeating: "Canon ", count: 50).utf8))
        let make = try #require(EXIFReader.parse(app1: Self.payload(long))?.make)
        #expect(make.count <= EXIFReader.maxCameraText && make.hasPrefix("Canon Canon") && !make.hasSuffix(" "))
        let huge = TestImages.exifSegment(
            orientation: 3, littleEndian: true, make: [UInt8](repeating: 0x41, count: EXIFReader.maxCameraBytes + 10),
            model: Array("X100V".utf8))
        let fields = try #require(EXIFReader.parse(app1: Self.payload(huge)))
        #expect(fields.make == nil && fields.model == "X100V" && fields.orientation == 3)
    }

    @Test func cameraText_DropsControlAndInvalidBytes_AndFoldsSpaces() {
        #expect(EXIFReader.cameraText(Array("  NIKON\tCORPORATION \r\n".utf8)[...]) == "NIKON CORPORATION")
        #expect(EXIFReader.cameraText(Array("Canon   EOS  R5".utf8)[...]) == "Canon EOS R5")
        #expect(EXIFReader.cameraText([0x53, 0x6F, 0xFF, 0xFE, 0x6E, 0x79][...]) == "Sony")
        #expect(EXIFReader.cameraText(Array("Leica\u{200B} Q2".utf8)[...]) == "Leica Q2")
        #expect(EXIFReader.cameraText(Array("Ricoh GR Ⅲ".utf8)[...]) == "Ricoh GR Ⅲ")
        #expect(EXIFReader.cameraText([0xFF, 0x00][...]) == nil)
    }

    @Test func parse_SurvivesCameraEntriesPointingAnywhere() {
        // IFD0 with a Make and a Model whose counts and offsets are random: nothing read out of bounds.
        var state: UInt64 = 28
        func next() -> UInt32 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt32(truncatingIfNeeded: state >> 32)
        }
        for _ in 0..<500 {
            var tiff: [UInt8] = [0x49, 0x49, 42, 0, 8, 0, 0, 0, 2, 0]
            for tag: UInt16 in [0x010F, 0x0110] {
                let count = next() % 3 == 0 ? next() : next() % 80
                let offset = next() % 2 == 0 ? next() : next() % 120
                tiff += [UInt8(tag & 0xFF), UInt8(tag >> 8), UInt8(next() % 3 == 0 ? 7 : 2), 0]
                tiff += withUnsafeBytes(of: count.littleEndian, Array.init)
                tiff += withUnsafeBytes(of: offset.littleEndian, Array.init)
            }
            tiff += [0, 0, 0, 0]
            for _ in 0..<(next() % 100) { tiff.append(UInt8(truncatingIfNeeded: next())) }
            let fields = EXIFReader.parse(app1: (Array("Exif".utf8) + [0, 0] + tiff)[...])
            for text in [fields?.make, fields?.model].compactMap({ $0 }) {
                #expect(!text.isEmpty && text.count <= EXIFReader.maxCameraText)
                #expect(!text.unicodeScalars.contains { $0.value < 0x20 || $0 == "\u{FFFD}" })
            }
        }
    }
}
