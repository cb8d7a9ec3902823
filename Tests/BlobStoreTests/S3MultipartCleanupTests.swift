import Foundation
import Testing

@testable import BlobStore

/// The clean-up of open multipart uploads (`S3BlobStore.abortMultipartUploads`) against moto: paged
/// with S3's markers, bounded per pass, going on where a pass stopped, never throwing. moto lists
/// every upload in one answer whatever `max-uploads` asks, so `MultipartPagingTransport` pages its
/// answer as S3 does; the uploads and their aborts are moto's. moto dates every upload in 2010, so
/// `now` is a cutoff after all of them.
@Suite(.enabled(if: S3TestServer.isProvided, S3TestServer.skipReason), .serialized)
struct S3MultipartCleanupTests {
    static let directories = ["originals", "thumbnails", "previews"]

    /// A store on a fresh prefix with 2 uploads outside its directories (`backups/`), 9 under
    /// `originals/` and 2 under `previews/` (13 in all, keys in that order), and another store's 2
    /// under the same directories of its own prefix. Returns the store, its paging transport, the
    /// other store, and the ids of the uploads that are not the store's to abort.
    func bucket() throws -> (
        store: S3BlobStore, paging: MultipartPagingTransport, other: S3BlobStore, kept: Set<String>
    ) {
        let configuration = S3TestServer.configuration()
        let paging = MultipartPagingTransport(S3Client(configuration: configuration).transport)
        let store = S3BlobStore(configuration: configuration, transport: paging)
        let other = S3BlobStore(configuration: S3TestServer.configuration())
        var kept: Set<String> = []
        for i in 0..<2 { kept.insert(try store.client.createMultipartUpload("backups/b\(i).bin")) }
        for i in 0..<9 { _ = try store.client.createMultipartUpload("originals/o\(i).heic") }
        for i in 0..<2 { _ = try store.client.createMultipartUpload("previews/p\(i).jpg") }
        for i in 0..<2 { kept.insert(try other.client.createMultipartUpload("originals/x\(i).heic")) }
        return (store, paging, other, kept)
    }

    func open(_ stores: S3BlobStore...) throws -> Set<String> {
        Set(try stores.flatMap { try $0.client.listMultipartUploads().map(\.uploadId) })
    }

    func clean(_ store: S3BlobStore, bound: Int = 100, pageSize: Int) -> S3BlobStore.MultipartCleanup {
        store.abortMultipartUploads(
            startedBefore: Date(), directories: Self.directories, bound: bound, pageSize: pageSize)
    }

    /// More open uploads than one page: every page is read (S3's markers), every stale upload under
    /// the store's directories aborted, the others left.
    @Test func pagesThroughEveryPage_AbortingTheStaleOnesUnderItsDirectories() throws {
        let (store, paging, other, kept) = try bucket()
        defer { try? abortAll(store, other) }
        #expect(try open(store, other).count == 15)
        let before = paging.listings.count
        let cleanup = clean(store, pageSize: 2)
        let targets = paging.listings.dropFirst(before)
        #expect(cleanup == .init(aborted: 11, listed: 13, pages: 7, resumedAfter: nil, stopped: nil))
        #expect(try open(store, other) == kept)
        #expect(targets.count == 7)
        #expect(targets.allSatisfy { $0.contains("max-uploads=2") })
        #expect(targets.dropFirst().allSatisfy { $0.contains("key-marker=") && $0.contains("upload-id-marker=") })
        let prefix = store.client.configuration.prefix.replacingOccurrences(of: "/", with: "%2F")
        #expect(targets.allSatisfy { $0.contains("prefix=\(prefix)") }, "listed under the store's prefix only")
        // Nothing left to abort: a pass from the top lists the two outside its directories.
        #expect(clean(store, pageSize: 2) == .init(aborted: 0, listed: 2, pages: 1))
    }

    /// A pass lists at most its bound; the next goes on after the last upload it handled, and the
    /// one after the end starts again at the top.
    @Test func keepsItsBound_AndTheNextPassGoesOnWhereItStopped() throws {
        let (store, _, other, kept) = try bucket()
        defer { try? abortAll(store, other) }
        let first = clean(store, bound: 5, pageSize: 2)
        #expect(first.stopped == .bound(5))
        // backups b0 b1 (not its directory), originals o0 o1 o2: 2 + 2 + 1 asked for.
        #expect((first.aborted, first.listed, first.pages) == (3, 5, 3))
        let second = clean(store, bound: 5, pageSize: 2)
        #expect(second.resumedAfter?.key == store.client.configuration.prefix + "originals/o2.heic")
        #expect((second.aborted, second.listed, second.pages, second.stopped) == (5, 5, 3, .bound(5)))
        let third = clean(store, bound: 5, pageSize: 2)
        #expect((third.aborted, third.listed, third.pages, third.stopped) == (3, 3, 2, nil))
        #expect(try open(store, other) == kept)
        let fourth = clean(store, bound: 5, pageSize: 2)
        #expect(fourth.resumedAfter == nil)
        #expect((fourth.aborted, fourth.listed) == (0, 2))
    }

    /// moto itself answers more than `max-uploads` asks: the bound holds inside a page.
    @Test func keepsItsBound_WhenTheStoreAnswersMoreThanAsked() throws {
        let (paged, _, other, kept) = try bucket()
        defer { try? abortAll(paged, other) }
        let store = S3BlobStore(configuration: paged.client.configuration)
        var passes: [S3BlobStore.MultipartCleanup] = []
        repeat {
            passes.append(clean(store, bound: 5, pageSize: 2))
        } while passes.last?.stopped != nil && passes.count < 10
        #expect(passes.dropLast().allSatisfy { $0.listed == 5 && $0.pages == 1 && $0.stopped == .bound(5) })
        #expect(passes.reduce(0) { $0 + $1.aborted } == 11)
        #expect(try open(store, other) == kept)
    }

    /// The listing fails half way (the store stopped): the pass keeps what it aborted, says why it
    /// stopped, throws nothing; the next pass goes on from the page that failed.
    @Test func aListingThatFailsHalfWay_LeavesTheRestToTheNextPass() throws {
        let (store, paging, other, kept) = try bucket()
        defer { try? abortAll(store, other) }
        // The first page (b0 b1 o0 o1) is read, the store stops before the second.
        let first = clean(store, bound: 4, pageSize: 4)
        #expect((first.aborted, first.listed, first.stopped) == (2, 4, .bound(4)))
        paging.failListings = true
        let failed = clean(store, pageSize: 4)
        #expect((failed.aborted, failed.listed, failed.pages) == (0, 0, 0))
        guard case .failed(let message)? = failed.stopped else {
            Issue.record("expected a failure, got \(String(describing: failed.stopped))")
            return
        }
        #expect(message.contains("connection refused"))
        paging.failListings = false
        let resumed = clean(store, pageSize: 4)
        #expect(resumed.resumedAfter?.key == store.client.configuration.prefix + "originals/o1.heic")
        #expect((resumed.aborted, resumed.listed, resumed.stopped) == (9, 9, nil))
        #expect(try open(store, other) == kept)
    }

    /// An upload whose abort keeps failing (a policy that denies it) ends the pass it is met in, but
    /// does not stop the clean-up there for good: the next pass goes on after it, and it is tried
    /// again once a pass has gone round the whole listing.
    @Test func anAbortThatKeepsFailing_IsPassed_AndTriedAgainNextRound() throws {
        let (store, paging, other, kept) = try bucket()
        defer { try? abortAll(store, other) }
        paging.failAborts = ["originals/o3.heic"]
        // Pages of 4: b0 b1 o0 o1, then o2 o3 …: o0, o1, o2 aborted, o3 refused.
        let first = clean(store, pageSize: 4)
        #expect((first.aborted, first.listed) == (3, 6))
        guard case .failed(let message)? = first.stopped else {
            Issue.record("expected a failure, got \(String(describing: first.stopped))")
            return
        }
        #expect(message.contains("access denied"))
        // After o3: o4 … o8, p0, p1, to the listing's end.
        let second = clean(store, pageSize: 4)
        #expect(second.resumedAfter?.key == store.client.configuration.prefix + "originals/o3.heic")
        #expect((second.aborted, second.stopped) == (7, nil))
        paging.failAborts = []
        var passes: [S3BlobStore.MultipartCleanup] = []
        repeat {
            passes.append(clean(store, pageSize: 4))
        } while passes.reduce(0, { $0 + $1.aborted }) == 0 && passes.count < 3
        #expect(passes.reduce(0) { $0 + $1.aborted } == 1)
        #expect(try open(store, other) == kept)
    }

    /// A store answering fewer uploads a page than asked: a pass makes no more requests than a
    /// listing of its bound in full pages would (here 6 uploads, pages of 3: 2 + 1), and stops there.
    @Test func shortPages_StopAtTheRequestsOfFullOnes() throws {
        let (store, paging, other, kept) = try bucket()
        defer { try? abortAll(store, other) }
        paging.shortPages = 1
        let first = clean(store, bound: 6, pageSize: 3)
        #expect((first.pages, first.listed, first.stopped) == (3, 3, .bound(6)))
        #expect(paging.listings.count == 3)
        paging.shortPages = nil
        var passes = [first]
        repeat {
            passes.append(clean(store, bound: 6, pageSize: 3))
        } while passes.last?.stopped != nil && passes.count < 10
        #expect(passes.reduce(0) { $0 + $1.aborted } == 11)
        #expect(try open(store, other) == kept)
    }

    /// A store whose truncated pages name the same markers again (a bad page): the pass stops
    /// there rather than list it for ever, and each pass still gets a page further.
    @Test func markersThatDoNotMove_StopThePass_AndEachPassGetsFurther() throws {
        let (store, paging, other, kept) = try bucket()
        defer { try? abortAll(store, other) }
        paging.stuck = true
        var passes: [S3BlobStore.MultipartCleanup] = []
        repeat {
            passes.append(clean(store, pageSize: 3))
        } while passes.last?.stopped != nil && passes.count < 10
        #expect(passes.count == 4)
        for pass in passes.dropLast() {
            guard case .failed(let message)? = pass.stopped else {
                Issue.record("expected a failure, got \(String(describing: pass.stopped))")
                continue
            }
            #expect(message.contains("do not move"))
        }
        #expect(passes.reduce(0) { $0 + $1.aborted } == 11)
        #expect(try open(store, other) == kept)
    }

    func abortAll(_ stores: S3BlobStore...) throws {
        for store in stores {
            let client = S3Client(configuration: store.client.configuration)
            for upload in try client.listMultipartUploads() {
                try client.abortMultipartUpload(
                    String(upload.key.dropFirst(client.configuration.prefix.count)), uploadId: upload.uploadId)
            }
        }
    }
}
