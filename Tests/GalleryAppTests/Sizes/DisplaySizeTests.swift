import Testing

@testable import GalleryApp

/// The ladder as Flickr names it: extras letters, file-name suffixes, labels and pixel sizes.
struct DisplaySizeTests {
    @Test func ladder_HasFlickrsEdgesSuffixesAndLabels() {
        let expected: [(DisplaySize, Int?, String, String)] = [
            (.sq, 75, "s", "Square"), (.q, 150, "q", "Large Square"), (.t, 100, "t", "Thumbnail"),
            (.s, 240, "m", "Small"), (.n, 320, "n", "Small 320"), (.w, 400, "w", "Small 400"),
            (.m, 500, "", "Medium"), (.z, 640, "z", "Medium 640"), (.c, 800, "c", "Medium 800"),
            (.b, 1024, "b", "Large"), (.h, 1600, "h", "Large 1600"), (.k, 2048, "k", "Large 2048"),
            (.o, nil, "o", "Original"),
        ]
        #expect(DisplaySize.allCases.count == expected.count)
        for (size, edge, suffix, label) in expected {
            #expect(size.edge == edge, "\(size)")
            #expect(size.fileSuffix == suffix, "\(size)")
            #expect(size.label == label, "\(size)")
            #expect(DisplaySize(fileSuffix: suffix) == size, "\(size)")
            #expect(size.urlExtra == "url_\(size.rawValue)")
        }
        #expect(DisplaySize(fileSuffix: "x") == nil)
        #expect(DisplaySize(rawValue: "xl") == nil)
        #expect(!DisplaySize.rendered.contains(.o))
    }

    @Test func rawValueBytes_ReadsEveryName_AndNothingElse() {
        func size(_ name: [UInt8]) -> DisplaySize? { name.withUnsafeBufferPointer { DisplaySize(rawValueBytes: $0) } }
        for expected in DisplaySize.allCases {
            #expect(size(Array(expected.rawValue.utf8)) == expected, "\(expected)")
        }
        // Not names: empty, too long, another case, a prefix or an extension of a name, a NUL
        // after one, the two letters swapped, a byte that is not ASCII.
        for name in ["", "sqq", "S", "SQ", "qs", "x", "s.", "k1"] { #expect(size(Array(name.utf8)) == nil, "\(name)") }
        #expect(size([UInt8(ascii: "s"), 0]) == nil)
        #expect(size([0]) == nil)
        #expect(size([UInt8(ascii: "s"), UInt8(ascii: "q"), 0]) == nil)
        #expect(size([0xC3, 0x9F]) == nil)
    }

    @Test func sizeRoute_ReadsTheSizeFromTheFileName_OrThePathsLastSegment() {
        #expect(SizeRoutes.size(named: "s.jpg") == .s)
        #expect(SizeRoutes.size(named: "sq.jpg") == .sq)
        #expect(SizeRoutes.size(named: "sizes/AbC123xyz0/k.jpg") == .k)
        #expect(SizeRoutes.size(named: "s/1796428800/Z8-6R2_x/sizes/AbC123xyz0/z.jpg") == .z)
        // The original is not a rendered size; unknown names, other extensions and cases are not sizes.
        for name in [
            "o.jpg", "sizes/id/o.jpg", "xl.jpg", "s.JPG", "s.jpeg", "s.png", ".jpg", "jpg", "", "sizes/id/.jpg",
        ] {
            #expect(SizeRoutes.size(named: Substring(name)) == nil, "\(name)")
        }
        #expect(SizeRoutes.size(named: "sizes/s.jpg/x.jpg") == nil, "only the last segment names the size")
        #expect(SizeRoutes.size(named: "sizes/id/s.jpg"[...].dropLast(4)) == nil)
        let piece = "sizes/id/q.jpg?x"[...].dropLast(2)
        #expect(SizeRoutes.size(named: piece) == .q, "a piece of a longer path")
    }

    @Test func dimensions_FitTheLongestEdge_NeverEnlarge_AndSquaresCrop() {
        #expect(DisplaySize.s.dimensions(width: 4000, height: 3000) == (240, 180))
        #expect(DisplaySize.s.dimensions(width: 3000, height: 4000) == (180, 240))
        #expect(DisplaySize.m.dimensions(width: 6000, height: 1000) == (500, 83))
        #expect(DisplaySize.z.dimensions(width: 200, height: 100) == (200, 100))
        #expect(DisplaySize.k.dimensions(width: 4000, height: 3000) == (2048, 1536))
        #expect(DisplaySize.sq.dimensions(width: 4000, height: 3000) == (75, 75))
        #expect(DisplaySize.q.dimensions(width: 120, height: 90) == (90, 90))
        #expect(DisplaySize.o.dimensions(width: 4000, height: 3000) == (4000, 3000))
        // A sliver keeps at least a pixel.
        #expect(DisplaySize.t.dimensions(width: 5000, height: 2) == (100, 1))
    }
}
