import Foundation
import Testing

@testable import BlobStore

/// The worked examples of the S3 API reference ("Signature Calculations for the Authorization
/// Header" and "Authenticating Requests: Using Query Parameters"), which any correct SigV4 reproduces.
private let exampleSigner = S3Signer(
    accessKeyId: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    region: "us-east-1")
private let exampleDate = Date(timeIntervalSince1970: 1_369_353_600)  // 2013-05-24T00:00:00Z

@Test func signer_ReproducesTheAWSExample_ForAHeaderSignedGet() throws {
    var headers = [("Host", "examplebucket.s3.amazonaws.com"), ("Range", "bytes=0-9")]
    exampleSigner.sign(
        method: "GET", path: "/test.txt", query: [], headers: &headers, payloadHash: S3Signer.emptyPayloadHash,
        date: exampleDate)
    let authorization = try #require(headers.first { $0.0 == "Authorization" }?.1)
    #expect(
        authorization == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
            + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
            + "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
}

@Test func signer_ReproducesTheAWSExample_ForAPresignedURL() throws {
    let query = exampleSigner.presignedQuery(
        method: "GET", host: "examplebucket.s3.amazonaws.com", path: "/test.txt", expires: 86400, date: exampleDate)
    #expect(query.last?.0 == "X-Amz-Signature")
    #expect(query.last?.1 == "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404")
}

@Test func signer_EncodesPaths_OnceAndKeepsSlashes() {
    #expect(S3Signer.encodePath("/b/a dir/été+x~y.jpg") == "/b/a%20dir/%C3%A9t%C3%A9%2Bx~y.jpg")
    #expect(S3Signer.canonicalQuery([("uploadId", "a/b=c"), ("partNumber", "2")]) == "partNumber=2&uploadId=a%2Fb%3Dc")
}

@Test func retryPolicy_RetriesServerFaultsAndThrottling_NeverOtherClientErrors() {
    #expect(S3RetryPolicy.isRetryable(status: 500, code: "InternalError"))
    #expect(S3RetryPolicy.isRetryable(status: 503, code: "SlowDown"))
    #expect(S3RetryPolicy.isRetryable(status: 429, code: "TooManyRequests"))
    #expect(!S3RetryPolicy.isRetryable(status: 403, code: "SignatureDoesNotMatch"))
    #expect(!S3RetryPolicy.isRetryable(status: 404, code: "NoSuchKey"))
    #expect(!S3RetryPolicy.isRetryable(status: 400, code: "InvalidPart"))
    let policy = S3RetryPolicy(baseDelay: 0.1, maxDelay: 1)
    for attempt in 1...8 {
        let delay = policy.delay(afterAttempt: attempt)
        #expect(delay >= 0 && delay <= min(1, 0.1 * pow(2, Double(attempt - 1))))
    }
}
