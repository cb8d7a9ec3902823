import Foundation

/// Where a ListMultipartUploads page starts: after the upload `uploadId` of `key` (the full key, the
/// configured prefix included), as S3's `key-marker` and `upload-id-marker`; a truncated page's
/// `NextKeyMarker` and `NextUploadIdMarker` name the next one.
public struct S3MultipartMarker: Sendable, Equatable {
    /// The key the listing goes on after (or after `uploadId` of it).
    public var key: String
    /// The upload of `key` the listing goes on after; empty for "after every upload of `key`".
    public var uploadId: String

    public init(key: String, uploadId: String) {
        self.key = key
        self.uploadId = uploadId
    }
}

/// One page of ListMultipartUploads: open uploads in the store's order (by key, then by start).
public struct S3MultipartUploadPage: Sendable {
    /// An upload: its full key, its id, when it was started (now when the date cannot be read).
    public typealias Upload = (key: String, uploadId: String, initiated: Date)
    /// The page's uploads.
    public var uploads: [Upload]
    /// Where the next page starts; nil when this page ends the listing (`IsTruncated` false).
    public var next: S3MultipartMarker?
}

extension S3Client {
    /// S3's largest (and default) page of ListMultipartUploads.
    public static let maxUploadsPerPage = 1000

    /// One page of ListMultipartUploads: at most `maxUploads` (1 to 1,000) open uploads whose keys
    /// start with the configured prefix and then `prefix`, after `marker`. Paged as S3's API and
    /// boto3's paginator do (`key-marker`, `upload-id-marker`; `IsTruncated`, `NextKeyMarker`,
    /// `NextUploadIdMarker`); a truncated page without `NextKeyMarker` goes on after its last upload.
    public func listMultipartUploadsPage(
        prefix: String = "", after marker: S3MultipartMarker? = nil, maxUploads: Int = S3Client.maxUploadsPerPage
    ) throws -> S3MultipartUploadPage {
        var query = [("uploads", ""), ("max-uploads", String(min(max(maxUploads, 1), Self.maxUploadsPerPage)))]
        let fullPrefix = configuration.prefix + prefix
        if !fullPrefix.isEmpty { query.append(("prefix", fullPrefix)) }
        if let marker {
            query.append(("key-marker", marker.key))
            // S3 ignores upload-id-marker without key-marker, and an empty one means "after every upload of the key".
            if !marker.uploadId.isEmpty { query.append(("upload-id-marker", marker.uploadId)) }
        }
        var answer = [UInt8]()
        _ = try perform(
            S3HTTPRequest(method: "GET", path: path(nil), query: query), payloadHash: S3Signer.emptyPayloadHash,
            operation: "list-multipart", key: configuration.bucket, sink: { answer.append(contentsOf: $0) })
        let text = String(decoding: answer, as: UTF8.self)
        let uploads: [S3MultipartUploadPage.Upload] = S3XML.elements("Upload", in: text).compactMap { upload in
            guard let key = S3XML.value("Key", in: upload), let id = S3XML.value("UploadId", in: upload) else {
                return nil
            }
            // Without a readable date the upload counts as just started (never aborted as stale).
            let stamp = S3XML.value("Initiated", in: upload) ?? ""
            return (key, id, Self.isoFractional.date(from: stamp) ?? Self.iso.date(from: stamp) ?? Date())
        }
        guard S3XML.value("IsTruncated", in: text) == "true" else { return S3MultipartUploadPage(uploads: uploads) }
        if let key = S3XML.value("NextKeyMarker", in: text), !key.isEmpty {
            let next = S3MultipartMarker(key: key, uploadId: S3XML.value("NextUploadIdMarker", in: text) ?? "")
            return S3MultipartUploadPage(uploads: uploads, next: next)
        }
        guard let last = uploads.last else {
            throw BlobStoreError.remote(
                operation: "list-multipart", key: configuration.bucket, status: 200, code: "MalformedAnswer",
                message: "a truncated page with neither NextKeyMarker nor an upload")
        }
        return S3MultipartUploadPage(uploads: uploads, next: S3MultipartMarker(key: last.key, uploadId: last.uploadId))
    }

    /// Every multipart upload in progress under the configured prefix (full keys), page after page,
    /// for tests; the orphan collector pages with a bound instead (`S3BlobStore.abortMultipartUploads`).
    public func listMultipartUploads() throws -> [S3MultipartUploadPage.Upload] {
        var found: [S3MultipartUploadPage.Upload] = []
        var marker: S3MultipartMarker?
        repeat {
            let page = try listMultipartUploadsPage(after: marker)
            found += page.uploads
            guard page.next != marker else { break }
            marker = page.next
        } while marker != nil
        return found
    }
}
