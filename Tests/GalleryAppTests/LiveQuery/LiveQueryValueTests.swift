import Foundation
import Testing

@testable import GalleryApp

/// Operands of a LiveQuery `where` as `JSONSerialization` hands them over, where on Linux every
/// `NSNumber` of 0 or 1 also casts to `Bool`.
struct LiveQueryValueTests {
    private func parsed(_ json: String) throws -> Any {
        let object = try JSONSerialization.jsonObject(with: Data("{\"v\":\(json)}".utf8)) as? [String: Any]
        return try #require(object?["v"])
    }

    @Test func numberOperandsOfZeroAndOneAreNumbers() throws {
        for text in ["0", "1", "1.0", "2"] {
            let value = try LiveQueryValue.operand(try parsed(text), type: .double, field: "rank")
            #expect(value == .number(Double(text)!), "\(text)")
        }
    }

    @Test func booleansAreNotNumbersAndNumbersAreNotBooleans() throws {
        #expect(throws: LiveQueryError.self) {
            try LiveQueryValue.operand(try parsed("true"), type: .double, field: "rank")
        }
        #expect(throws: LiveQueryError.self) { try LiveQueryValue.operand(try parsed("1"), type: .bool, field: "flag") }
        #expect(try LiveQueryValue.operand(try parsed("true"), type: .bool, field: "flag") == .bool(true))
        #expect(try LiveQueryValue.operand(try parsed("false"), type: .bool, field: "flag") == .bool(false))
    }
}
