import Testing
@testable import Postgres

@Test func placeholder_Postgres() { #expect(Bool(true)) }
