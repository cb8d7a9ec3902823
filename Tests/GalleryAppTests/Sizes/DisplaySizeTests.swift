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
