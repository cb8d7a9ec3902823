import Foundation
import Testing

@testable import GalleryApp

/// scrypt strings: self-describing, salted, checked in constant time, and flagged for a rehash
/// when weaker than the current parameters.
struct PasswordHasherTests {
    let weak = PasswordHasher(parameters: .init(n: 1024, r: 8, p: 1))

    @Test func hash_IsSelfDescribing_Salted_AndVerifies() throws {
        let first = try weak.hash("secret")
        let second = try weak.hash("secret")
        #expect(first.hasPrefix("scrypt$1024$8$1$"))
        #expect(first != second)
        #expect(!first.contains("secret"))
        #expect(try weak.verify("secret", against: first) == .init(matches: true, needsRehash: false))
        #expect(try weak.verify("Secret", against: first).matches == false)
        #expect(try weak.verify("", against: first).matches == false)
    }

    @Test func verify_FlagsWeakerParameters_ForARehash() throws {
        let stronger = PasswordHasher(parameters: .init(n: 2048, r: 8, p: 1))
        let stored = try weak.hash("secret")
        #expect(try stronger.verify("secret", against: stored) == .init(matches: true, needsRehash: true))
        #expect(try stronger.verify("wrong", against: stored) == .init(matches: false, needsRehash: false))
        #expect(try weak.verify("secret", against: try stronger.hash("secret")).needsRehash == false)
    }

    @Test func verify_NeverMatches_AMalformedOrHostileString() throws {
        let good = try weak.hash("secret")
        var parts = good.split(separator: "$").map(String.init)
        parts[1] = "4194304"  // 2^22: a gigabyte-sized derivation, refused
        for stored in [
            "", "secret", "bcrypt$x", parts.joined(separator: "$"),
            good.replacingOccurrences(of: "$1024$", with: "$1000$"),
            String(good.dropLast(4)),
        ] {
            #expect(try weak.verify("secret", against: stored).matches == false, "\(stored)")
        }
    }
}
