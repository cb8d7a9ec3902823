import Foundation
import HTTPServer

/// Checks Parse keys on a request: the application id (always), the REST API key (when
/// configured) and the master key. Comparisons take the same time whatever the input,
/// so a key cannot be guessed byte by byte from response times.
public struct KeyChecker: Sendable {
    /// What a request is allowed to do.
    public enum Access: Int, Comparable, Sendable {
        /// Wrong or missing application id (or REST key when one is set).
        case none
        /// Read and write as an app client.
        case client
        /// Everything, including purging and admin endpoints.
        case master

        public static func < (a: Access, b: Access) -> Bool { a.rawValue < b.rawValue }
    }

    let appID: [UInt8]
    let restKey: [UInt8]?
    let masterKey: [UInt8]?

    public init(appID: String, restKey: String?, masterKey: String?) {
        self.appID = Array(appID.utf8)
        self.restKey = restKey.map { Array($0.utf8) }
        self.masterKey = masterKey.map { Array($0.utf8) }
    }

    /// Keys as a client presented them.
    public struct Keys: Sendable {
        public var appID: String?
        public var restKey: String?
        public var masterKey: String?

        public init(appID: String?, restKey: String?, masterKey: String?) {
            self.appID = appID
            self.restKey = restKey
            self.masterKey = masterKey
        }
    }

    /// The access the request's headers grant.
    public func access(_ request: HTTPRequest) -> Access { access(headerKeys(request)) }

    /// The access the headers grant, or, when the request has no application id header, the keys
    /// its body carried (the JavaScript SDK's `_ApplicationId`; `_JavaScriptKey` stands for the
    /// REST key). Parse Server reads the body only in that case too.
    public func access(_ request: HTTPRequest, bodyKeys: Keys?) -> Access {
        guard request.headers["X-Parse-Application-Id"] == nil, let keys = bodyKeys, keys.appID != nil else {
            return access(request)
        }
        return access(keys)
    }

    /// Whether the request carries the master key (`X-Parse-Master-Key`, or `Authorization: Bearer` for scrapers).
    public func isMaster(_ request: HTTPRequest) -> Bool { isMaster(headerKeys(request).masterKey) }

    /// The keys in the request's headers.
    private func headerKeys(_ request: HTTPRequest) -> Keys {
        var master = request.headers["X-Parse-Master-Key"]
        if master == nil, let auth = request.headers["Authorization"], auth.hasPrefix("Bearer ") {
            master = String(auth.dropFirst(7))
        }
        return Keys(
            appID: request.headers["X-Parse-Application-Id"], restKey: request.headers["X-Parse-REST-API-Key"],
            masterKey: master)
    }

    /// The access a set of keys grants, wherever the client put them.
    func access(_ keys: Keys) -> Access {
        guard let id = keys.appID, Self.constantTimeEquals(id, appID) else { return .none }
        if isMaster(keys.masterKey) { return .master }
        if let restKey {
            guard let given = keys.restKey, Self.constantTimeEquals(given, restKey) else { return .none }
        }
        return .client
    }

    /// Which key makes `keys` grant no access, for the log (the name, never the value): the
    /// application id when it is missing or not this application's, else the REST key (one is
    /// configured, and it is missing or wrong); nil when they grant access.
    func refused(_ keys: Keys) -> RefusedKey? {
        guard access(keys) == .none else { return nil }
        guard let id = keys.appID, Self.constantTimeEquals(id, appID) else { return .appID }
        return .restKey
    }

    /// The key `refused` names.
    enum RefusedKey: Sendable { case appID, restKey }

    private func isMaster(_ given: String?) -> Bool {
        guard let masterKey, let given else { return false }
        return Self.constantTimeEquals(given, masterKey)
    }

    /// `constantTimeEquals` of a presented key's UTF-8 bytes, read in place (every request's keys
    /// are checked: no copy of them per request).
    static func constantTimeEquals(_ given: String, _ key: [UInt8]) -> Bool {
        if let equal = given.utf8.withContiguousStorageIfAvailable({ given in
            key.withUnsafeBufferPointer { constantTimeEquals(given, $0) }
        }) {
            return equal
        }
        return constantTimeEquals(Array(given.utf8), key)
    }

    /// Compares two byte strings in time that depends only on their lengths.
    static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.withUnsafeBufferPointer { a in b.withUnsafeBufferPointer { b in constantTimeEquals(a, b) } }
    }

    private static func constantTimeEquals(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        var difference = UInt8(truncatingIfNeeded: a.count ^ b.count)
        let n = max(a.count, b.count)
        for i in 0..<n {
            let x = i < a.count ? a[i] : 0
            let y = i < b.count ? b[i] : 0
            difference |= x ^ y
        }
        return difference == 0 && a.count == b.count
    }
}
