import Foundation
import GalleryTestSupport
import Testing

@testable import Imaging

/// The one box walker of galleryd's HEIF checks (`ISOBMFFBoxes`, ISO/IEC 14496-12 §4.2): sizes 0
/// (to the end), 1 (a 64-bit largesize) and under the header's, boxes past their container's end,
/// headers cut short, full boxes and nesting, through the walker and the three parsers on it
/// (`HEIFItems`, `HEIFAlpha`, `ContainerEnd`). Files are built with `HEIFAssembler`; no encoder runs
/// but in `boxes_WalkAHeifEncFile`.
@Suite struct ISOBMFFBoxesTests {
    typealias Box = ISOBMFFBoxes.Box

    static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] { HEIFAssembler.box(type, payload) }

    /// A box with size 1 and its size in a 64-bit largesize after the type.
    static func largeBox(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        HEIFAssembler.u32(1) + Array(type.utf8) + u64(payload.count + 16) + payload
    }

    /// A box with size 0: it runs to the end of its container.
    static func openBox(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        HEIFAssembler.u32(0) + Array(type.utf8) + payload
    }

    static func u64(_ value: Int) -> [UInt8] { HEIFAssembler.u32(value >> 32) + HEIFAssembler.u32(value) }

    static let ftyp = box("ftyp", Array("heic".utf8) + HEIFAssembler.u32(0) + Array("mif1heic".utf8))

    /// A tile with made-up coded data: the walker and the parsers never decode it.
    static var tile: HEIFAssembler.Tile {
        HEIFAssembler.Tile(
            heifEncOutput: box("hvcC", [UInt8](repeating: 1, count: 23)) + box("mdat", [9, 8, 7, 6]), width: 64,
            height: 64)
    }

    /// A 2×1 grid (items 1 and 2 its tiles, 3 the grid) with an alpha image (item 4) beside it.
    static let file = HEIFAssembler.assemble(
        tiles: [tile, tile], columns: 2, grid: true,
        attached: [.init(tile, .auxiliary(HEIFAssembler.alphaType))])

    static func types(_ boxes: [Box]) -> [String] { boxes.map(\.type) }

    /// The top-level boxes of `file`: ftyp, meta, mdat.
    static func topLevel() throws -> (ftyp: Box, meta: Box, mdat: Box) {
        let boxes = ISOBMFFBoxes.boxes(in: file, 0..<file.count)
        try #require(types(boxes) == ["ftyp", "meta", "mdat"])
        return (boxes[0], boxes[1], boxes[2])
    }

    @Test func header_ReadsSizesZeroOneAndPlain() throws {
        let plain = try ISOBMFFBoxes.header(Self.box("free", [1, 2, 3])[...])
        #expect(plain == .init(type: "free", length: 8, size: 11))
        let large = try ISOBMFFBoxes.header(Self.largeBox("mdat", [1, 2, 3])[...])
        #expect(large == .init(type: "mdat", length: 16, size: 19))
        let open = try ISOBMFFBoxes.header(Self.openBox("mdat", [1, 2, 3])[...])
        #expect(open == .init(type: "mdat", length: 8, size: nil))
        // A header in the middle of an array slice is read from the slice's start.
        let bytes = [7, 7] + Self.box("free", [1])
        #expect(try ISOBMFFBoxes.header(bytes[2...]) == .init(type: "free", length: 8, size: 9))
    }

    @Test func header_RefusesShortHeadersAndBadSizes() throws {
        #expect(throws: ImageError.truncated) { try ISOBMFFBoxes.header(Self.box("free", [])[..<7]) }
        #expect(throws: ImageError.truncated) { try ISOBMFFBoxes.header(Self.largeBox("mdat", [])[..<15]) }
        for size in 2..<8 {
            let bytes = HEIFAssembler.u32(size) + Array("free".utf8)
            #expect(throws: ImageError.corrupt("HEIF box 'free' of size \(size)")) {
                try ISOBMFFBoxes.header(bytes[...])
            }
        }
        for large in [0, 8, 15, ISOBMFFBoxes.maxSize + 1, Int.max, -1] {
            let bytes = HEIFAssembler.u32(1) + Array("mdat".utf8) + Self.u64(large)
            #expect(throws: ImageError.self, "largesize \(large)") { try ISOBMFFBoxes.header(bytes[...]) }
        }
        #expect(try ISOBMFFBoxes.header(in: MemoryByteSource(bytes: Array(Self.ftyp.prefix(7))), at: 0) == nil)
        #expect(try ISOBMFFBoxes.header(in: MemoryByteSource(bytes: Self.ftyp), at: Self.ftyp.count) == nil)
        #expect(try ISOBMFFBoxes.header(in: MemoryByteSource(bytes: Self.ftyp), at: 0)?.size == Self.ftyp.count)
    }

    /// Size 0 runs to the end of the range walked, not of the array; size 1 takes its largesize;
    /// each payload starts after its header.
    @Test func boxes_WalkSizesZeroOneAndPlain() {
        let bytes =
            Self.ftyp + Self.largeBox("mdat", [1, 2, 3, 4, 5]) + Self.openBox("free", [6, 7, 8]) + [0xEE, 0xEE]
        let end = bytes.count - 2
        let boxes = ISOBMFFBoxes.boxes(in: bytes, 0..<end)
        let ftyp = Self.ftyp.count
        #expect(
            boxes == [
                Box(type: "ftyp", payload: 8..<ftyp), Box(type: "mdat", payload: (ftyp + 16)..<(ftyp + 21)),
                Box(type: "free", payload: (ftyp + 29)..<end),
            ])
        // A walk from inside the array, and one over a range larger than the array (clamped).
        #expect(ISOBMFFBoxes.boxes(in: bytes, ftyp..<end) == Array(boxes.dropFirst()))
        #expect(ISOBMFFBoxes.boxes(in: bytes, 0..<(bytes.count + 100)).last?.payload.upperBound == bytes.count)
        #expect(ISOBMFFBoxes.boxes(in: bytes, end..<end).isEmpty)
    }

    /// The walk stops at the first box that does not fit, keeping the ones before it.
    @Test func boxes_StopAtABoxThatDoesNotFit() {
        let first = Self.ftyp
        let wanted = [Box(type: "ftyp", payload: 8..<first.count)]
        let bad: [(String, [UInt8])] = [
            ("size under 8", HEIFAssembler.u32(7) + Array("free".utf8) + [0, 0, 0, 0]),
            ("size 1 with a largesize under 16", HEIFAssembler.u32(1) + Array("free".utf8) + Self.u64(8) + [0]),
            ("largesize with its top bit set", HEIFAssembler.u32(1) + Array("free".utf8) + Self.u64(-16)),
            ("a size past the end", HEIFAssembler.u32(100) + Array("free".utf8) + [1, 2, 3]),
            ("a largesize past the end", Array(Self.largeBox("mdat", [1, 2]).dropLast())),
            ("a header cut short", Array(Self.box("free", [1]).prefix(5))),
            ("a largesize header cut short", Array(Self.largeBox("mdat", [1]).prefix(12))),
        ]
        for (what, tail) in bad {
            let bytes = first + tail + Self.box("free", [])
            #expect(ISOBMFFBoxes.boxes(in: bytes, 0..<(first.count + tail.count)) == wanted, "\(what)")
        }
        // A size past the end of a nested range stops there, though the array goes on.
        let nested = Self.box("iprp", Self.box("ipco", [1, 2, 3, 4])) + [0, 0, 0, 0]
        let outer = ISOBMFFBoxes.boxes(in: nested, 0..<12)
        #expect(outer.isEmpty)
    }

    /// A full box's version and flags are skipped before its children; one too short for them has none.
    @Test func fullBoxes_SkipVersionAndFlags() throws {
        let dimg = Self.box(
            "dimg", HEIFAssembler.u32(3) + HEIFAssembler.u16(2) + HEIFAssembler.u32(1) + HEIFAssembler.u32(2))
        let iref = HEIFAssembler.fullBox("iref", dimg, version: 1)
        let top = ISOBMFFBoxes.boxes(in: iref, 0..<iref.count)
        try #require(top.count == 1)
        #expect(top[0].fullPayload == 12..<iref.count)
        #expect(Self.types(ISOBMFFBoxes.children(ofFull: top[0], in: iref)) == ["dimg"])
        #expect(Self.types(ISOBMFFBoxes.boxes(in: iref, top[0].payload)) != ["dimg"])
        let short = Self.box("meta", [0, 0, 0])
        let shortBox = try #require(ISOBMFFBoxes.boxes(in: short, 0..<short.count).first)
        #expect(shortBox.fullPayload == nil)
        #expect(ISOBMFFBoxes.children(ofFull: shortBox, in: short).isEmpty)

        // Version 1 of iref has 32-bit item IDs; `HEIFItems` reads them from the full box's version.
        let meta =
            [0, 0, 0, 0] + HEIFAssembler.fullBox("pitm", HEIFAssembler.u16(3))
            + HEIFAssembler.fullBox("iinf", HEIFAssembler.u16(0)) + iref
        let items = try HEIFItems.parse(meta: meta)
        #expect(items.primary == 3 && items.derivedFrom == [3: [1, 2]])
    }

    /// meta → iprp → ipco, and the items `HEIFItems` reads from them.
    @Test func boxes_WalkNestedBoxes() throws {
        let file = Self.file
        let (_, meta, _) = try Self.topLevel()
        let metaChildren = ISOBMFFBoxes.children(ofFull: meta, in: file)
        #expect(Self.types(metaChildren) == ["hdlr", "pitm", "iloc", "iinf", "iref", "iprp"])
        let iprp = try #require(metaChildren.last)
        let iprpChildren = ISOBMFFBoxes.boxes(in: file, iprp.payload)
        #expect(Self.types(iprpChildren) == ["ipco", "ipma"])
        let properties = ISOBMFFBoxes.boxes(in: file, iprpChildren[0].payload)
        #expect(Self.types(properties) == ["hvcC", "hvcC", "ispe", "ispe", "hvcC", "ispe", "auxC"])
        let iinf = metaChildren[3]
        let infe = try #require(
            iinf.fullPayload.map { ISOBMFFBoxes.boxes(in: file, ($0.lowerBound + 2)..<$0.upperBound) })
        #expect(Self.types(infe) == ["infe", "infe", "infe", "infe"])

        let items = try HEIFItems.read(MemoryByteSource(bytes: file))
        #expect(items.primary == 3)
        #expect(items.types == [1: "hvc1", 2: "hvc1", 3: "grid", 4: "hvc1"])
        #expect(items.derivedFrom == [3: [1, 2]])
        #expect(items.property("auxC", of: 4) != nil && items.property("ispe", of: 3) != nil)
    }

    @Test func boxes_WalkAHeifEncFile() throws {
        let heic = try FixtureTools.heic(HEIFTests.solidPNG((200, 30, 30)), options: ["-q", "50"])
        let top = ISOBMFFBoxes.boxes(in: heic, 0..<heic.count)
        #expect(Self.types(top) == ["ftyp", "meta", "mdat"])
        #expect(top.last?.payload.upperBound == heic.count)
        let children = Self.types(ISOBMFFBoxes.children(ofFull: top[1], in: heic))
        #expect(["pitm", "iinf", "iloc", "iprp"].allSatisfy(children.contains))
    }

    /// `HEIFItems` finds a meta box with a largesize, or with size 0 at the end of the file, and
    /// says there is none when a size-0 box before it runs to the end.
    @Test func items_FindMetaBoxesOfAnySize() throws {
        let (_, meta, mdat) = try Self.topLevel()
        let file = Self.file
        let metaPayload = Array(file[meta.payload])
        let mdatBox = Array(file[(mdat.payload.lowerBound - 8)..<mdat.payload.upperBound])
        let expected = try HEIFItems.parse(meta: metaPayload)
        let layouts: [(String, [UInt8])] = [
            ("largesize", Self.ftyp + Self.largeBox("meta", metaPayload) + mdatBox),
            ("size 0 at the end", Self.ftyp + mdatBox + Self.openBox("meta", metaPayload)),
        ]
        for (what, bytes) in layouts {
            let items = try HEIFItems.read(MemoryByteSource(bytes: bytes))
            #expect(items.primary == expected.primary && items.types == expected.types, "\(what)")
            #expect(items.derivedFrom == expected.derivedFrom, "\(what)")
            #expect(
                try ContainerEnd.isComplete(
                    source: MemoryByteSource(bytes: bytes), format: .heif, fileSize: bytes.count),
                "\(what)")
        }
        let hidden = Self.ftyp + Self.openBox("mdat", mdatBox) + Self.box("meta", metaPayload)
        #expect(throws: ImageError.corrupt("HEIF has no meta box")) {
            try HEIFItems.read(MemoryByteSource(bytes: hidden))
        }
        let cut = Self.ftyp + Self.box("meta", metaPayload).dropLast()
        #expect(throws: ImageError.truncated) { try HEIFItems.read(MemoryByteSource(bytes: Array(cut))) }
        let huge = Self.ftyp + HEIFAssembler.u32(1) + Array("meta".utf8) + Self.u64(HEIFItems.maxMetaSize + 1)
        #expect(throws: ImageError.corrupt("HEIF meta box of \(HEIFItems.maxMetaSize + 1) bytes")) {
            try HEIFItems.read(MemoryByteSource(bytes: huge))
        }
    }

    /// A file is whole when its top-level boxes tile it: cut anywhere but between two boxes, it is
    /// not; a size-0 last box is whole however long; a box under its header's size is not.
    @Test func containerEnd_WalksTopLevelBoxes() throws {
        func complete(_ bytes: [UInt8]) throws -> Bool {
            try ContainerEnd.isComplete(source: MemoryByteSource(bytes: bytes), format: .avif, fileSize: bytes.count)
        }
        let (ftyp, meta, _) = try Self.topLevel()
        let boundaries: Set<Int> = [ftyp.payload.upperBound, meta.payload.upperBound, Self.file.count]
        for cut in 1...Self.file.count {
            #expect(try complete(Array(Self.file.prefix(cut))) == boundaries.contains(cut), "cut at \(cut)")
        }
        #expect(try complete(Self.ftyp + Self.largeBox("mdat", [1, 2, 3])))
        #expect(try !complete(Self.ftyp + Self.largeBox("mdat", [1, 2, 3]).dropLast()))
        #expect(try complete(Self.ftyp + Self.openBox("mdat", [])))
        #expect(try complete(Self.ftyp + Self.openBox("mdat", [1, 2, 3])))
        #expect(try !complete(Self.ftyp + HEIFAssembler.u32(1) + Array("free".utf8) + Self.u64(8) + [0, 0, 0, 0]))
        #expect(try !complete(Self.ftyp + HEIFAssembler.u32(4) + Array("free".utf8)))
    }

    /// Every prefix of the file, and the file with any one byte set to 0, 1, 0x7F, 0x80 or 0xFF,
    /// walked to any depth and read by every parser on the walker: errors, never a trap, and no
    /// payload outside the range it was found in.
    @Test func badInput_NeverTraps() throws {
        let file = Self.file
        var variants = (0..<file.count).map { Array(file.prefix($0)) }
        for at in file.indices {
            for value: UInt8 in [0, 1, 0x7F, 0x80, 0xFF] where file[at] != value {
                var copy = file
                copy[at] = value
                variants.append(copy)
            }
        }
        for bytes in variants {
            _ = Self.walk(bytes, 0..<bytes.count, depth: 0)
            _ = try? HEIFItems.read(MemoryByteSource(bytes: bytes))
            _ = HEIFAlpha.hidingAlpha(in: bytes)
            _ = try ContainerEnd.isComplete(
                source: MemoryByteSource(bytes: bytes), format: .heif, fileSize: bytes.count)
        }
        #expect(Self.walk(file, 0..<file.count, depth: 0) >= 20)
    }

    /// Walks every box in `range` and in its payload, as a plain and as a full box, to depth 4;
    /// the number of boxes found.
    static func walk(_ bytes: [UInt8], _ range: Range<Int>, depth: Int) -> Int {
        guard depth < 4 else { return 0 }
        var count = 0
        for box in ISOBMFFBoxes.boxes(in: bytes, range) {
            #expect(box.payload.lowerBound >= range.lowerBound + 8 && box.payload.upperBound <= range.upperBound)
            count += 1 + walk(bytes, box.payload, depth: depth + 1)
            if let full = box.fullPayload { count += walk(bytes, full, depth: depth + 1) }
        }
        return count
    }
}
