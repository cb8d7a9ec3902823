import Testing
@testable import HTTPServer

@Test func placeholder_HTTPServer() { #expect(Bool(true)) }
