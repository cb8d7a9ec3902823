import BlobStore
import Crypto
import Foundation

/// Where a JSON upload's base64 goes as the body is read (`ParseRoutes.readJSONUpload`): decoded
/// (`Base64StreamDecoder`) into a new file in the spool directory, hashed with SHA-256 as it is
/// written, the upload's reservation grown to cover the body and the decoded bytes. The first error
/// (not base64, over the budget, a full disk) stops the writing and removes the file at once; it is
/// thrown by `result()`, after the keys' check, so a request with bad keys is 403 whatever its base64.
/// The file is removed by `remove()` (or when this is let go) unless the upload stored it.
final class JSONUploadSpool {
    private let directory: String
    private let reservation: UploadAdmission.Reservation?
    private let jsonBytes: Int
    private var decoder = Base64StreamDecoder()
    private var hasher = SHA256()
    private var fd: Int32 = -1
    private var path: String?
    private var written = 0
    private var failure: Error?

    /// A spool for a body of `jsonBytes` bytes, charged to `reservation` when there is one.
    init(directory: String, reservation: UploadAdmission.Reservation?, jsonBytes: Int) {
        self.directory = directory
        self.reservation = reservation
        self.jsonBytes = jsonBytes
    }

    deinit { remove() }

    /// Decodes the next characters of the base64 text (the scanner's sink; never throws: the first
    /// error is kept for `result()`).
    func decode(_ text: UnsafeBufferPointer<UInt8>) {
        guard failure == nil else { return }
        do { try decoder.feed(text, emit: write) } catch { fail(error) }
    }

    /// The decoded file once the text has ended: its path, SHA-256 and size. 130 for text that is
    /// not base64 or decodes to nothing; the reservation's or the disk's error as it was thrown.
    func result() throws -> (path: String, sha256: String, byteSize: Int) {
        if failure == nil {
            do { try decoder.finish(emit: write) } catch { fail(error) }
        }
        closeFile()
        if let failure {
            if let invalid = failure as? Base64StreamDecoder.Invalid {
                throw ParseError(code: ParseError.Code.fileSaveError, message: invalid.description)
            }
            throw failure
        }
        guard written > 0, let path else {
            remove()
            throw ParseError(code: ParseError.Code.fileSaveError, message: "The file is empty.")
        }
        return (path, SHA256BodyObserver.hex(hasher.finalize()), written)
    }

    /// Closes and removes the file, if there is one.
    func remove() {
        closeFile()
        if let path { unlink(path) }
        path = nil
    }

    private func write(_ chunk: [UInt8]) throws {
        if fd < 0 {
            let path = directory + "/" + UUID().uuidString
            fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw ParseError.internalServerError("cannot create an upload spool file") }
            self.path = path
        }
        try reservation?.cover(jsonBytes + written + chunk.count)
        try LocalBlobStore.writeAll(fd, chunk, path: path ?? "")
        chunk.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        written += chunk.count
    }

    private func fail(_ error: Error) {
        failure = error
        remove()
    }

    private func closeFile() {
        if fd >= 0 { close(fd) }
        fd = -1
    }
}
