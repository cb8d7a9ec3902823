import Foundation

extension S3BlobStore {
    /// What one clean-up pass over the bucket's open multipart uploads did.
    public struct MultipartCleanup: Sendable, Equatable {
        /// Why a pass ended before the listing's end.
        public enum Stop: Sendable, Equatable {
            /// It listed its bound of uploads, or made the requests a listing of them in full pages
            /// takes (a store answering short pages); the next pass goes on after the last one.
            case bound(Int)
            /// A listing or an abort failed (the error, as text); the next pass goes on from there.
            case failed(String)
        }

        /// Uploads aborted.
        public var aborted = 0
        /// Open uploads listed (what the bound counts).
        public var listed = 0
        /// ListMultipartUploads requests answered.
        public var pages = 0
        /// Where the pass began: after this upload, or at the top (nil).
        public var resumedAfter: S3MultipartMarker?
        /// Why it ended early; nil when it reached the listing's end.
        public var stopped: Stop?
    }

    /// The most open uploads one clean-up pass lists: 10 of S3's 1,000-upload pages, so at most
    /// 10 ListMultipartUploads and 10,000 AbortMultipartUpload requests a pass (the orphan
    /// collector's pass is hourly). A bucket with more (a long crash loop of large uploads) is
    /// cleared over several passes, each going on where the one before stopped.
    public static let multipartCleanupBound = 10_000

    /// Aborts the multipart uploads under this store's directories (`directories`, after the configured
    /// prefix) started before `cutoff`. `putMultipart` aborts its upload on any error, but a process
    /// killed between CreateMultipartUpload and CompleteMultipartUpload leaves the upload open: its
    /// parts stay stored (and billed), invisible to object listings, and nothing else aborts them
    /// (decision 027, sessions 23 and 24). The listing is paged (`pageSize` uploads a request, S3's
    /// markers) and bounded (`bound` uploads listed a pass); a pass that stops early, at its bound or
    /// at a failed request, leaves the rest to the next, which starts after the last upload it
    /// handled. Never throws: what it did and why it stopped are in the answer, for the caller's log.
    public func abortMultipartUploads(
        startedBefore cutoff: Date, directories: [String], bound: Int = S3BlobStore.multipartCleanupBound,
        pageSize: Int = S3Client.maxUploadsPerPage
    ) -> MultipartCleanup {
        let prefix = client.configuration.prefix
        let bound = max(bound, 1)
        let pageLimit = (bound + max(pageSize, 1) - 1) / max(pageSize, 1) + 1
        var result = MultipartCleanup()
        // After the last upload handled (or where the next page starts): where the next pass goes on.
        var position = multipartCursor.withLock { $0 }
        result.resumedAfter = position
        defer { multipartCursor.withLock { $0 = result.stopped == nil ? nil : position } }
        do {
            while true {
                let requested = position
                let page = try client.listMultipartUploadsPage(
                    after: requested, maxUploads: min(pageSize, bound - result.listed))
                result.pages += 1
                for upload in page.uploads {
                    // A store answering more than `max-uploads` asked for: the bound still holds.
                    guard result.listed < bound else {
                        result.stopped = .bound(bound)
                        return result
                    }
                    result.listed += 1
                    // Past this upload before its abort: an abort that keeps failing (a policy that
                    // denies it, say) ends this pass, and the next goes on after it rather than stop at
                    // it every hour; it is tried again once a pass has gone round the whole listing.
                    position = S3MultipartMarker(key: upload.key, uploadId: upload.uploadId)
                    if upload.key.hasPrefix(prefix), upload.initiated < cutoff {
                        let key = String(upload.key.dropFirst(prefix.count))
                        if directories.contains(where: { key.hasPrefix($0 + "/") }),
                            try abort(key, uploadId: upload.uploadId)
                        {
                            result.aborted += 1
                        }
                    }
                }
                guard let next = page.next else { return result }
                // A marker that does not move would list the same page for ever.
                guard next != requested else {
                    throw BlobStoreError.remote(
                        operation: "list-multipart", key: client.configuration.bucket, status: 200,
                        code: "MalformedAnswer", message: "the next page's markers do not move past \(next.key)")
                }
                position = next
                // Pages shorter than asked (or empty, truncated ones) count too: a pass makes at most
                // the requests a full-page listing of its bound would.
                if result.listed >= bound || result.pages >= pageLimit {
                    result.stopped = .bound(bound)
                    return result
                }
            }
        } catch {
            result.stopped = .failed("\(error)")
            return result
        }
    }

    /// AbortMultipartUpload; false when the upload is already gone (`NoSuchUpload`: completed, or
    /// aborted by another instance's pass meanwhile).
    private func abort(_ key: String, uploadId: String) throws -> Bool {
        do {
            try client.abortMultipartUpload(key, uploadId: uploadId)
            return true
        } catch BlobStoreError.remote(_, _, 404, _, _) {
            return false
        }
    }
}
