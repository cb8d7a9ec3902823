import Foundation
import Testing

@testable import GalleryApp

/// The JavaScript SDK's JSON upload read in one pass (`JSONUploadScanner`, decision 027, session 23),
/// over the wire: hostile bodies each refused in Parse's format with nothing stored or spooled, and
/// hundreds of concurrent uploads (keyed, keyless, with bad keys or bad base64, cut off mid-body,
/// sent with jitter) each answered as alone, the spool empty and the server serving after them.
@Suite(.serialized) struct UploadJSONFileStreamTests {
    typealias JSONUpload = UploadJSONFileTests

    /// The SDK's request as raw bytes, so a test can send part of it.
    static func request(_ body: [UInt8], name: String = "a.jpg") -> (head: [UInt8], body: [UInt8]) {
        let head =
            "POST /parse/files/\(name) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain;charset=UTF-8\r\n"
            + "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        return (Array(head.utf8), body)
    }

    /// One exchange over its own connection; `cutAt` closes the connection after that many body bytes.
    static func send(_ port: Int, _ body: [UInt8], cutAt: Int? = nil, jitter: Bool = false) throws -> RawHTTP.Response?
    {
        let (head, body) = request(body)
        let client = try RawHTTP(port: port, receiveTimeout: 60)
        let split = cutAt ?? (jitter ? Int.random(in: 0...body.count) : body.count)
        guard client.send(head + body[..<split]) else { return nil }
        if cutAt != nil { return nil }  // closed by deinit, mid-body
        if jitter { usleep(UInt32.random(in: 0...2000)) }
        guard client.send(Array(body[split...])) else { return nil }
        return try RawHTTP.parse(client.readUntilClosed().bytes)
    }

    static func json(_ response: RawHTTP.Response) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
    }

    /// Waits (up to 10 s) for the spool directory to empty: a cut-off body's file goes with its connection.
    static func spoolEmpties(_ server: TestServer) throws -> [String] {
        var left = try JSONUpload.spooled(server)
        for _ in 0..<100 where !left.isEmpty {
            usleep(100_000)
            left = try JSONUpload.spooled(server)
        }
        return left
    }

    /// Bodies built to hurt: each a clear refusal in Parse's JSON format (403 `unauthorized` for a
    /// body that is not an upload's JSON, as Parse Server's `JSON.parse` failure; 400 with code 209
    /// for a session token no session has), nothing stored, nothing left in the spool, the server serving after.
    @Test func hostileBodies_AreRefusedAndNothingIsKept() throws {
        let jpeg = try TestJPEG.make(width: 48, height: 32, seed: 3)
        let server = try JSONUpload.makeServer(listening: true, maxUploadBytes: 40_000_000)
        defer { server.stop() }
        let user = try server.makeUser("js-hostile")
        let good = [UInt8](JSONUpload.sdkBody(jpeg, type: "image/jpeg", session: user.token))
        let b64 = Data(jpeg).base64EncodedString()
        let keys = #""_ApplicationId":"\#(TestServer.appID)","_JavaScriptKey":"\#(JSONUpload.jsKey)""#
        let session = #""_SessionToken":"\#(user.token)""#
        func body(_ text: String) -> [UInt8] { Array(text.utf8) }
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        let hostile: [(String, [UInt8], Int, String)] = [
            ("10,000-deep fileData", body(#"{"base64":"\#(b64)","fileData":\#(deep),\#(keys),\#(session)}"#), 403, ""),
            (
                "50 MB session token",
                body(
                    #"{"base64":"\#(b64)",\#(keys),"_SessionToken":"r:\#(String(repeating: "a", count: 50_000_000))"}"#),
                400, "Invalid session token"
            ),
            (
                "50 MB app id",
                body(#"{"base64":"\#(b64)","_ApplicationId":"\#(String(repeating: "a", count: 50_000_000))"}"#),
                403, ""
            ),
            ("\\u0000 in the base64", body(#"{"base64":"\u0000\#(b64)",\#(keys),\#(session)}"#), 403, ""),
            ("NUL in the base64", body(#"{"base64":""#) + [0] + body(#"\#(b64)",\#(keys),\#(session)}"#), 403, ""),
            ("NUL between members", body(#"{"base64":"\#(b64)","#) + [0] + body(#"\#(keys),\#(session)}"#), 403, ""),
            (
                "invalid UTF-8 in the base64",
                body(#"{"base64":"\#(b64)"#) + [0xC3, 0x28] + body(#"",\#(keys),\#(session)}"#),
                403, ""
            ),
            (
                "invalid UTF-8 in the token",
                body(#"{"base64":"\#(b64)",\#(keys),"_SessionToken":""#) + [0xFF, 0x22, 0x7D], 403, ""
            ),
            ("ends inside a string", Array(good.prefix(good.count / 2)), 403, ""),
            ("ends inside the keys", Array(good.dropLast(3)), 403, ""),
            ("trailing garbage", good + body(" {}"), 403, ""),
            ("two sessions", body(#"{"base64":"\#(b64)",\#(keys),\#(session),\#(session)}"#), 403, ""),
            ("two base64s", body(#"{"base64":"QQ==",\#(keys),\#(session),"base64":"\#(b64)"}"#), 403, ""),
            ("base64 a number", body(#"{"base64":12,\#(keys),\#(session)}"#), 400, "no base64"),
            (
                "bad keys, bad base64",
                body(#"{"base64":"*",\#(keys.replacingOccurrences(of: "test-js", with: "x"))}"#), 403, ""
            ),
            (
                "bad base64 before the keys", body(#"{"base64":"\#(b64)*",\#(keys),\#(session)}"#), 400,
                "'*' at character"
            ),
        ]
        for (label, bytes, status, message) in hostile {
            let answer = try #require(try Self.send(server.application.port, bytes), "\(label)")
            #expect(answer.status == status, "\(label): \(String(decoding: answer.body, as: UTF8.self))")
            let json = Self.json(answer)
            if status == 403 {
                #expect(json["error"] as? String == "unauthorized", "\(label)")
            } else {
                let code = message.hasPrefix("Invalid session") ? 209 : 130
                #expect(json["code"] as? Int == code, "\(label): \(json)")
                #expect((json["error"] as? String ?? "").contains(message), "\(label): \(json)")
            }
        }
        #expect(try Self.spoolEmpties(server).isEmpty, "nothing left in the spool")
        // The server serves, and the body's escapes (JSONSerialization writes "\/"), a member met twice
        // that galleryd does not read (the whole-body parser refused it) and a spooled body all work.
        let big = try TestJPEG.make(width: 1600, height: 1200, seed: 7)
        var text = String(decoding: JSONUpload.sdkBody(big, type: "image/jpeg", session: user.token), as: UTF8.self)
        text.insert(contentsOf: #""fileData":{"tags":{"a":["\ud83d\ude00"]}},"#, at: text.index(after: text.startIndex))
        #expect(text.contains(#"\/"#) && text.utf8.count > 64 * 1024)
        let stored = try #require(try Self.send(server.application.port, Array(text.utf8)))
        #expect(stored.status == 201, "\(String(decoding: stored.body, as: UTF8.self))")
        #expect(Self.json(stored)["name"] as? String == "\(JSONUpload.sha(big)).jpg")
    }

    /// Hundreds of JSON uploads at once with jitter, from 8 threads: keyed good ones (201 with the
    /// decoded file's sha, retried on 503 as the SDK does), keyless ones (403), bad keys (403), bad
    /// base64 (130) and bodies cut off mid-way (no answer). Every answer is its own, the spool is
    /// empty after, and the server still serves.
    @Test func sdkUploads_Concurrent_EachAnsweredAsAlone() throws {
        // Two handler threads: one JSON upload slot, so the slot is fought over (503s, retried).
        let server = try TestServer(workers: 1, listening: true) {
            $0.restKey = JSONUpload.jsKey
            $0.handlerThreads = 2
        }
        defer { server.stop() }
        #expect(server.application.jsonUploadSlots.capacity == 1)
        let user = try server.makeUser("js-race")
        let files = try (0..<6).map { try TestJPEG.make(width: 40 + 300 * $0, height: 30 + 225 * $0, seed: UInt64($0)) }
        let port = server.application.port
        let rounds = 320
        let failures = Locked<[String]>([])
        let busy = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 8) { lane in
            for round in stride(from: lane, to: rounds, by: 8) {
                let file = files[round % files.count]
                do {
                    if let failure = try Self.upload(
                        round: round, file: file, port: port, token: user.token, busy: busy)
                    {
                        failures.withValue { $0.append(failure) }
                    }
                } catch {
                    failures.withValue { $0.append("round \(round): \(error)") }
                }
            }
        }
        let failed = failures.current
        print("UploadJSONFileStreamTests: \(rounds) rounds, \(busy.current) answers 503 (retried)")
        #expect(failed.isEmpty, "\(failed.count) failed: \(failed.prefix(5))")
        #expect(try Self.spoolEmpties(server).isEmpty, "nothing left in the spool")
        #expect(server.application.jsonUploadSlots.inUse == 0)
        let after = try JSONUpload.post(
            server, "after.jpg", JSONUpload.sdkBody(files[0], type: "image/jpeg", session: user.token))
        #expect(after.status == 201, "\(after.text)")
    }

    /// One round of the race; nil when it was answered as it should be, else what went wrong.
    static func upload(round: Int, file: [UInt8], port: Int, token: String, busy: Locked<Int>) throws -> String? {
        let kind = round % 5
        let body: [UInt8]
        switch kind {
        case 0: body = [UInt8](JSONUpload.sdkBody(file, type: "image/jpeg", session: token))
        case 1: body = [UInt8](JSONUpload.sdkBody(file, appID: nil, jsKey: nil, session: token))
        case 2: body = [UInt8](JSONUpload.sdkBody(file, jsKey: "wrong", session: token))
        case 3: body = [UInt8](JSONUpload.sdkBody(nil, session: token, base64: Data(file).base64EncodedString() + "*"))
        default:
            let whole = [UInt8](JSONUpload.sdkBody(file, masterKey: TestServer.masterKey))
            _ = try send(port, whole, cutAt: Int.random(in: 1..<whole.count))
            return nil
        }
        for _ in 0..<200 {
            guard let answer = try send(port, body, jitter: true) else { return "round \(round): closed" }
            let json = json(answer)
            if answer.status == 503 {  // every slot taken: the SDK tries again
                busy.withValue { $0 += 1 }
                usleep(UInt32.random(in: 1000...20_000))
                continue
            }
            switch kind {
            case 0:
                guard answer.status == 201, json["name"] as? String == "\(JSONUpload.sha(file)).jpg" else {
                    return "round \(round): \(answer.status) \(json)"
                }
            case 1, 2:
                guard answer.status == 403, json["error"] as? String == "unauthorized" else {
                    return "round \(round): \(answer.status) \(json)"
                }
            default:
                guard answer.status == 400, json["code"] as? Int == 130 else {
                    return "round \(round): \(answer.status) \(json)"
                }
            }
            return nil
        }
        return "round \(round): busy 200 times"
    }
}
