import Testing
@testable import Imaging

@Test func placeholder_Imaging() { #expect(Bool(true)) }
