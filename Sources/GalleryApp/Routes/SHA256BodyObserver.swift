import Crypto
import Foundation
import HTTPServer

/// Hashes a request body with SHA-256 while it streams in, so an upload's content address is
/// known when the body has arrived, without reading the spooled file again. It lives as long as
/// the request, so it also holds the upload's disk reservation, if any, until the request is done,
/// and grows it as the bytes arrive (refusing the rest of the body when there is no room).
// @unchecked: fed on the connection's loop thread; the handler reads it after the body is complete (no lock per chunk).
public final class SHA256BodyObserver: HTTPBodyObserver, @unchecked Sendable {
    private var hasher = SHA256()
    private var finished: String?
    /// The upload's share of the spool budget, released with this observer.
    let reservation: UploadAdmission.Reservation?
    private var received = 0

    /// An observer holding `reservation` (nil for none) for the life of the request.
    public init(reservation: UploadAdmission.Reservation? = nil) { self.reservation = reservation }

    public func consume(_ chunk: UnsafeRawBufferPointer) throws {
        received += chunk.count
        try reservation?.cover(received)
        hasher.update(bufferPointer: chunk)
    }

    /// The digest as lowercase hex; call once the body is complete.
    public var hexDigest: String {
        if let finished { return finished }
        let digest = SHA256BodyObserver.hex(hasher.finalize())
        finished = digest
        return digest
    }

    /// A digest as lowercase hex, the form content addresses use.
    static func hex(_ digest: SHA256.Digest) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(SHA256.byteCount * 2)
        for byte in digest {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
