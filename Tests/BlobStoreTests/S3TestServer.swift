import Foundation
import Testing

@testable import BlobStore

/// The moto S3 server that scripts/test.sh starts (authentication on), and boto3 as an independent
/// client to check what our code stored. Tests that need it are enabled only when the script
/// provided `GALLERYD_TEST_S3_ENDPOINT`.
enum S3TestServer {
    /// Why S3 tests are skipped when run outside scripts/test.sh.
    static let skipReason: Comment =
        "GALLERYD_TEST_S3_ENDPOINT is not set: run the tests with `make test` (scripts/test.sh), which starts moto"

    /// Whether the test script provided an S3 endpoint.
    static var isProvided: Bool { value("GALLERYD_TEST_S3_ENDPOINT") != nil }

    /// A configuration for the test bucket under a fresh prefix, so tests never see each other's keys.
    static func configuration(
        secret: String? = nil, multipartThreshold: Int64 = 64 << 20,
        retry: S3RetryPolicy = S3RetryPolicy(baseDelay: 0.01, maxDelay: 0.05)
    ) -> S3Configuration {
        S3Configuration(
            endpoint: URL(string: value("GALLERYD_TEST_S3_ENDPOINT")!)!, region: "us-east-1",
            bucket: value("GALLERYD_TEST_S3_BUCKET") ?? "galleryd-test",
            accessKeyId: value("GALLERYD_TEST_S3_ACCESS_KEY") ?? "",
            secretAccessKey: secret ?? value("GALLERYD_TEST_S3_SECRET_KEY") ?? "",
            pathStyle: true, prefix: "t-\(UUID().uuidString.prefix(8))/", multipartThreshold: multipartThreshold,
            multipartPartSize: 5 << 20, retry: retry)
    }

    /// Runs a Python snippet with boto3 (`s3` is a client with the test key, `bucket` the bucket,
    /// `args` the extra arguments) and returns its standard output, trimmed.
    static func boto3(_ code: String, _ args: [String] = []) throws -> String {
        let prelude = """
            import sys, json, hashlib, boto3
            s3 = boto3.client("s3", endpoint_url="\(value("GALLERYD_TEST_S3_ENDPOINT")!)", region_name="us-east-1",
                aws_access_key_id="\(value("GALLERYD_TEST_S3_ACCESS_KEY")!)", aws_secret_access_key="\(value("GALLERYD_TEST_S3_SECRET_KEY")!)")
            bucket = "\(value("GALLERYD_TEST_S3_BUCKET") ?? "galleryd-test")"
            args = sys.argv[1:]

            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: value("GALLERYD_TEST_PYTHON") ?? "/usr/bin/python3")
        process.arguments = ["-c", prelude + code] + args
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw S3TestFailure("boto3 exited with \(process.terminationStatus)")
        }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// SHA-256 (hex) of the object as boto3 reads it, or "absent".
    static func boto3SHA256(_ fullKey: String) throws -> String {
        try boto3(
            """
            try:
                print(hashlib.sha256(s3.get_object(Bucket=bucket, Key=args[0])["Body"].read()).hexdigest())
            except s3.exceptions.NoSuchKey:
                print("absent")
            """, [fullKey])
    }

    /// The keys boto3 lists under a prefix.
    static func boto3Keys(prefix: String) throws -> [String] {
        let text = try boto3(
            """
            r = s3.list_objects_v2(Bucket=bucket, Prefix=args[0])
            print(json.dumps([o["Key"] for o in r.get("Contents", [])]))
            """, [prefix])
        return try JSONDecoder().decode([String].self, from: Data(text.utf8))
    }

    /// The `X-Amz-Signature` botocore's own presigner (`S3SigV4QueryAuth`) computes for the
    /// method-less GET of `url` at the `X-Amz-Date` and `X-Amz-Expires` that `url` names.
    static func botocorePresignedSignature(of url: URL) throws -> String {
        try boto3(
            """
            import datetime, urllib.parse
            import botocore.auth, botocore.awsrequest, botocore.credentials
            url = urllib.parse.urlsplit(args[0])
            query = dict(urllib.parse.parse_qsl(url.query))
            when = datetime.datetime.strptime(query["X-Amz-Date"], "%Y%m%dT%H%M%SZ")
            botocore.auth.get_current_datetime = lambda *a, **k: when
            credentials = botocore.credentials.Credentials(args[1], args[2])
            request = botocore.awsrequest.AWSRequest(method="GET", url=f"{url.scheme}://{url.netloc}{url.path}")
            botocore.auth.S3SigV4QueryAuth(credentials, "s3", "us-east-1", expires=int(query["X-Amz-Expires"])).add_auth(request)
            print(dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(request.url).query))["X-Amz-Signature"])
            """, [url.absoluteString, value("GALLERYD_TEST_S3_ACCESS_KEY")!, value("GALLERYD_TEST_S3_SECRET_KEY")!])
    }

    static func value(_ name: String) -> String? {
        ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }
}

/// A test precondition that did not hold.
struct S3TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
