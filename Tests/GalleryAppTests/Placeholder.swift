import Testing
@testable import GalleryApp

@Test func placeholder_GalleryApp() { #expect(Bool(true)) }
