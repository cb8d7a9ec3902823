import Testing
@testable import BlobStore

@Test func placeholder_BlobStore() { #expect(Bool(true)) }
