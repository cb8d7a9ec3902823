import Foundation
import Testing

@testable import GalleryApp

/// The JSON upload's one-pass reader (`JSONUploadScanner`) and its base64 decoder fed in pieces:
/// every body read whole, in 1-byte pieces and in a few other piece sizes gives the same members,
/// the same base64 text and the same refusal; what it accepts and refuses is `ParseJSONParser`'s.
@Suite struct JSONUploadScannerTests {
    /// What a scan found: the members, the base64 member's kind and text, or why it refused.
    struct Scan: Equatable {
        var members: [String: JSONUploadScanner.Captured] = [:]
        var base64: JSONUploadScanner.Base64Member = .absent
        var text: [UInt8] = []
        var refusal: String?
    }

    static func scan(_ body: [UInt8], piece: Int, maxDepth: Int = 23) -> Scan {
        var scanner = JSONUploadScanner(maxDepth: maxDepth)
        var text: [UInt8] = []
        do {
            try body.withUnsafeBufferPointer { all in
                var start = 0
                while start < all.count {
                    let end = min(all.count, start + piece)
                    try scanner.feed(UnsafeBufferPointer(rebasing: all[start..<end])) { text.append(contentsOf: $0) }
                    start = end
                }
            }
            try scanner.finish()
        } catch {
            return Scan(refusal: "\(error)")
        }
        return Scan(members: scanner.members, base64: scanner.base64, text: text)
    }

    /// The scan of `body`, the same whatever the pieces it comes in.
    static func scanned(_ body: [UInt8], maxDepth: Int = 23, sourceLocation: SourceLocation = #_sourceLocation)
        -> Scan
    {
        let whole = scan(body, piece: max(1, body.count), maxDepth: maxDepth)
        for piece in [1, 2, 3, 5, 64] {
            let again = scan(body, piece: piece, maxDepth: maxDepth)
            #expect(again == whole, "pieces of \(piece) bytes", sourceLocation: sourceLocation)
        }
        return whole
    }

    static func scanned(_ body: String, maxDepth: Int = 23) -> Scan { scanned(Array(body.utf8), maxDepth: maxDepth) }

    @Test func sdkBody_KeepsTheKeysAndStreamsTheBase64() throws {
        let body = UploadJSONFileTests.sdkBody(
            Array("a photo's bytes".utf8), session: "r:0123456789abcdef", masterKey: "m")
        let scan = Self.scanned([UInt8](body))
        #expect(scan.refusal == nil)
        #expect(scan.base64 == .string)
        #expect(scan.text == Array(Data("a photo's bytes".utf8).base64EncodedString().utf8))
        #expect(
            scan.members == [
                "_ApplicationId": .string(TestServer.appID), "_JavaScriptKey": .string(UploadJSONFileTests.jsKey),
                "_SessionToken": .string("r:0123456789abcdef"), "_MasterKey": .string("m"),
            ])
    }

    @Test func escapes_AreDecodedInKeysValuesAndTheBase64() {
        let scan = Self.scanned(
            #"{"base64":"\/9j\/4A\u0041Q\r\n","\u005fApplicationId":"a\"b\\c\/d\b\f\n\r\t","#
                + #""_JavaScriptKey":"\u00e9\u20AC\ud83d\ude00é€😀","fileData":{"x":"\"}"}}"#)
        #expect(scan.refusal == nil, "\(scan.refusal ?? "")")
        #expect(scan.text == Array("/9j/4AAQ\r\n".utf8))
        #expect(scan.members["_ApplicationId"] == .string("a\"b\\c/d\u{08}\u{0C}\n\r\t"))
        #expect(scan.members["_JavaScriptKey"] == .string("é€😀é€😀"))
    }

    @Test func otherMembers_OfEveryType_AreSkipped() {
        let scan = Self.scanned(
            #" { "fileData" : {"metadata":{},"tags":{"a":[1,-2.5e3,0,true,false,null,[],{"k":[[]]}]}}, "#
                + #""n": -0.0E+1, "t": true, "f": false, "z": null, "s": "", "x":1, "x":2, "base64": "" } "#)
        #expect(scan.refusal == nil, "\(scan.refusal ?? "")")
        #expect(scan.base64 == .string && scan.text.isEmpty && scan.members.isEmpty)
    }

    @Test func keyMembersAndBase64_OfAnotherType_AreMarked() {
        let scan = Self.scanned(#"{"_ApplicationId":5,"_MasterKey":null,"_SessionToken":["t"],"base64":{"a":"b"}}"#)
        #expect(scan.refusal == nil)
        #expect(scan.base64 == .notString && scan.text.isEmpty)
        #expect(scan.members == ["_ApplicationId": .notString, "_MasterKey": .notString, "_SessionToken": .notString])
    }

    /// A key member longer than the cap keeps its first 4 KiB only; a key that long is not one of ours.
    @Test func longStrings_AreCappedNotKept() {
        let token = String(repeating: "t", count: 1_000_000)
        let longKey = "_MasterKey" + String(repeating: " ", count: 5000)
        let scan = Self.scan(
            Array("{\"_SessionToken\":\"\(token)\",\"\(longKey)\":\"k\",\"base64\":\"QQ==\"}".utf8), piece: 65536)
        #expect(scan.refusal == nil)
        #expect(scan.members == ["_SessionToken": .overlong(prefix: String(repeating: "t", count: 4096))])
        #expect(scan.text == Array("QQ==".utf8))
    }

    /// Every malformed body is refused (403 upstream), whatever the pieces; the reason names it.
    @Test(
        arguments: [
            ("", "unexpected end"), ("   ", "unexpected end"), ("[1,2]", "not a JSON object"),
            ("\"s\"", "not a JSON object"),
            ("{", "unexpected end"), (#"{"a"}"#, "expected ':'"), (#"{"a":}"#, "unexpected character"),
            (#"{"a":1,}"#, "expected a string key"), ("{} x", "after the JSON value"), ("{}{}", "after the JSON value"),
            (#"{"a":tru}"#, "invalid literal"), (#"{"a":01}"#, "expected ','"), (#"{"a":1.}"#, "invalid number"),
            (#"{"a":-}"#, "invalid number"), (#"{"a":1e}"#, "invalid number"), (#"{"a":1e999}"#, "out of range"),
            (#"{"a":[1,2}"#, "expected ',' or ']'"), (#"{"a":\u0000}"#, "unexpected character"),
            ("{\u{0}}", "expected a string key"), ("{\"a\":1}\u{0}", "after the JSON value"),
            (#"{"a":"\u0000"}"#, "\\u0000"), (#"{"base64":"QQ\u0000=="}"#, "\\u0000"),
            (#"{"a":"\ud800"}"#, "lone surrogate"),
            (#"{"a":"\udc00"}"#, "lone surrogate"), (#"{"a":"\ud800\u0041"}"#, "lone surrogate"),
            (#"{"a":"\ud800x"}"#, "lone surrogate"), (#"{"a":"\x"}"#, "invalid escape"),
            (#"{"a":"\u12G4"}"#, "\\u escape"),
            (#"{"base64":"QQ==","base64":"QQ=="}"#, "duplicate key base64"),
            (#"{"_ApplicationId":"a","\u005fApplicationId":"b"}"#, "duplicate key _ApplicationId"),
            (#"{"base64":"QQ=="#, "unterminated string"), (#"{"base64":"QQ==\"#, "unterminated string"),
            (#"{"fileData":{"a":[{"b":[{}]}]}}"#, "deeper than 5"),
        ] as [(String, String)])
    func malformed_IsRefused(body: String, reason: String) {
        let scan = Self.scanned(Array(body.utf8), maxDepth: 5)
        #expect(scan.refusal?.contains(reason) == true, "\(body): \(scan.refusal ?? "accepted")")
    }

    /// Bytes no JSON text may hold in a string: raw control characters and invalid UTF-8.
    @Test(
        arguments: [
            [0x00], [0x1F], [0xC3, 0x28], [0xC0, 0x80], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80],
            [0xF4, 0x90, 0x80, 0x80],
            [0xF8, 0x88, 0x80, 0x80], [0xFF], [0x80], [0xE2, 0x82],
        ] as [[UInt8]])
    func badBytesInAString_AreRefused(bytes: [UInt8]) {
        for member in ["base64", "_ApplicationId", "fileData"] {
            let body = Array("{\"\(member)\":\"QQ".utf8) + bytes + Array("==\"}".utf8)
            let scan = Self.scanned(body)
            #expect(scan.refusal != nil, "\(member): \(bytes)")
        }
    }

    /// 10,000 nested arrays in `fileData`: refused at the depth limit, the stack no deeper.
    @Test func deepNesting_IsRefusedAtTheLimit() {
        let body =
            "{\"fileData\":" + String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000) + "}"
        #expect(Self.scan(Array(body.utf8), piece: 4096).refusal?.contains("deeper than 23") == true)
        let allowed = "{\"fileData\":" + String(repeating: "[", count: 22) + String(repeating: "]", count: 22) + "}"
        #expect(Self.scan(Array(allowed.utf8), piece: 1).refusal == nil)
    }

    /// Bodies changed byte by byte and cut short: the scanner accepts exactly what `ParseJSONParser`
    /// (the whole-body parser it replaces) accepts, and keeps the same key members.
    @Test func mutatedBodies_AgreeWithTheWholeBodyParser() throws {
        let seed =
            #"{"base64":"/9j/\/4A=","fileData":{"metadata":{},"tags":{"k":[1,-2.5e3,true,null]}},"#
            + #""_ContentType":"image/jpeg","_ApplicationId":"app\u00e9","_JavaScriptKey":"k\ud83d\ude00","#
            + #""_ClientVersion":"js5.3.0","_SessionToken":"r:abc","n":12345678901234567890}"#
        let bytes = Array(seed.utf8)
        let replacements: [UInt8] = Array(#"{}[]",:\/"u0 -.eE1aZ"#.utf8) + [0x00, 0x1F, 0x80, 0xC3, 0xFF, 0x09]
        var generator = SplitMix64(state: 23)
        var agreed = 0
        for round in 0..<4000 {
            var body = bytes
            for _ in 0..<(1 + round % 3) {
                body[Int.random(in: 0..<body.count, using: &generator)] = replacements.randomElement(using: &generator)!
            }
            if round % 5 == 0 { body.removeLast(Int.random(in: 1..<body.count, using: &generator)) }
            let scan = Self.scan(body, piece: 1 + round % 7, maxDepth: 6)
            let whole = try? ParseJSONParser.parse(body, maxDepth: 6)
            guard case .object(let object) = whole else {
                #expect(scan.refusal != nil, "accepted: \(String(decoding: body, as: UTF8.self))")
                continue
            }
            #expect(scan.refusal == nil, "\(scan.refusal ?? ""): \(String(decoding: body, as: UTF8.self))")
            for name in JSONUploadScanner.recordedMembers {
                let expected: JSONUploadScanner.Captured? = object[name].map {
                    if case .string(let text) = $0 { return .string(text) }
                    return .notString
                }
                #expect(scan.members[name] == expected, "\(name): \(String(decoding: body, as: UTF8.self))")
            }
            agreed += 1
        }
        #expect(agreed > 100, "enough mutated bodies stay valid JSON to compare their members")
    }

    /// The base64 decoder fed a character at a time gives the bytes and the errors of the whole text.
    @Test func base64Decoder_InPieces_AsWhole() throws {
        let bytes = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7919 >> 3) }
        let text = Array(Data(bytes).base64EncodedString(options: .lineLength76Characters).utf8)
        for piece in [1, 3, 4, 1000, text.count] {
            #expect(try Self.decode(text, piece: piece) == bytes)
        }
        for (bad, reason) in [
            ("data:image/jpeg;base64,QQ==", "data: URL"), ("/9j/4AAQ*SkZJRg==", "'*' at character 8"),
            ("QQ=A", "'A' at character 3"), ("QQ=", "incomplete padding"), ("QUJDR", "single character"),
            ("data", ""), ("dat:", "':' at character 3"),
        ] {
            for piece in [1, 2, 100] {
                do {
                    _ = try Self.decode(Array(bad.utf8), piece: piece)
                    #expect(reason.isEmpty, "\(bad) decoded")
                } catch {
                    #expect(!reason.isEmpty && "\(error)".contains(reason), "\(bad): \(error)")
                }
            }
        }
    }

    /// The run scan that finds a base64 text's end eight bytes at a time stops exactly where the
    /// byte-by-byte definition does: every byte value, at every place in and across the words, from
    /// every start.
    @Test func plainRunEnd_StopsAtTheFirstByteThatEndsARun() {
        func ends(_ byte: UInt8) -> Bool { byte < 0x20 || byte >= 0x80 || byte == 0x22 || byte == 0x5C }
        for value in 0...255 {
            let byte = UInt8(value)
            for place in 0..<24 {
                var bytes = [UInt8](repeating: UInt8(ascii: "A"), count: 24)
                bytes[place] = byte
                bytes.withUnsafeBufferPointer { all in
                    for start in 0...place {
                        let end = JSONUploadScanner.plainRunEnd(all, from: start)
                        #expect(end == (ends(byte) ? place : 24), "byte \(byte) at \(place) from \(start)")
                    }
                    #expect(
                        JSONUploadScanner.plainRunEnd(UnsafeBufferPointer(rebasing: all[..<place]), from: 0) == place)
                }
            }
        }
    }

    /// The decoder's bulk groups and its one-character steps give what a one-character-at-a-time
    /// decoder gives (the bytes, or the same error with the same position), on seeded texts with
    /// whitespace, padding and bad characters anywhere, fed in pieces of every size used above.
    @Test func base64Decoder_BulkGroups_AgreeWithOneCharacterAtATime() throws {
        var random = SplitMix64(state: 24)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        let odd = Array(" \n\r\t=*-_.:\"\\".utf8) + [0, 0x7F, 0x80, 0xFF]
        for round in 0..<600 {
            let length = Int.random(in: 0...90, using: &random)
            var text = (0..<length).map { _ in alphabet.randomElement(using: &random)! }
            for _ in 0..<Int.random(in: 0...3, using: &random) where round % 3 != 0 {
                text.insert(odd.randomElement(using: &random)!, at: Int.random(in: 0...text.count, using: &random))
            }
            if round % 5 == 0 { text += Array("==".utf8.prefix(Int.random(in: 1...2, using: &random))) }
            let expected = Self.oneAtATime(text)
            for piece in [1, 2, 3, 5, 64, max(1, text.count)] {
                let got: String
                do { got = "\(try Self.decode(text, piece: piece))" } catch { got = "\(error)" }
                #expect(got == expected, "\(String(decoding: text, as: UTF8.self)) in pieces of \(piece)")
            }
        }
    }

    /// RFC 4648 base64 as `Base64StreamDecoder` defines it, a character at a time (its loop before
    /// the bulk groups): the bytes, or the error's text.
    static func oneAtATime(_ text: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var (out, group, count, padding) = ([UInt8](), UInt32(0), 0, 0)
        for (index, byte) in text.enumerated() {
            if index == 4, text.starts(with: Array("data:".utf8)) {
                return "The file's base64 is a data: URL; send only the base64 after its comma, as the Parse SDK does."
            }
            if let sextet = alphabet.firstIndex(of: byte), padding == 0 {
                group = group << 6 | UInt32(sextet)
                count += 1
                if count == 4 {
                    out += [UInt8(truncatingIfNeeded: group >> 16), UInt8(truncatingIfNeeded: group >> 8)]
                    out.append(UInt8(truncatingIfNeeded: group))
                    (group, count) = (0, 0)
                }
            } else if [0x20, 0x09, 0x0A, 0x0D].contains(byte) {
                continue
            } else if byte == UInt8(ascii: "="), count >= 2, count + padding < 4 {
                padding += 1
            } else {
                let shown = byte >= 0x21 && byte < 0x7F ? "'\(Character(Unicode.Scalar(byte)))'" : "byte \(byte)"
                return "The file's base64 is invalid: \(shown) at character \(index)."
            }
        }
        switch count {
        case 0: break
        case 2, 3:
            guard padding == 0 || count + padding == 4 else { return "The file's base64 ends with incomplete padding." }
            group <<= UInt32(6 * (4 - count))
            out.append(UInt8(truncatingIfNeeded: group >> 16))
            if count == 3 { out.append(UInt8(truncatingIfNeeded: group >> 8)) }
        default: return "The file's base64 is truncated: its last group has a single character."
        }
        return "\(out)"
    }

    static func decode(_ text: [UInt8], piece: Int) throws -> [UInt8] {
        var decoder = Base64StreamDecoder()
        var out: [UInt8] = []
        try text.withUnsafeBufferPointer { all in
            var start = 0
            while start < all.count {
                let end = min(all.count, start + piece)
                try decoder.feed(UnsafeBufferPointer(rebasing: all[start..<end])) { out += $0 }
                start = end
            }
        }
        try decoder.finish { out += $0 }
        return out
    }
}

/// A seeded generator, so a failing mutation is the same on every run.
private struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
