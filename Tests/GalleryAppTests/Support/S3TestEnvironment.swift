import BlobStore
import Foundation
import Testing

@testable import GalleryApp

/// The moto S3 server scripts/test.sh starts (authentication on), as the app's configuration sees
/// it, and boto3 to check independently what landed. Enabled only when the script provided it.
enum S3TestEnvironment {
    /// Why S3 app tests are skipped when run outside scripts/test.sh.
    static let skipReason: Comment =
        "GALLERYD_TEST_S3_ENDPOINT is not set: run the tests with `make test` (scripts/test.sh), which starts moto"

    /// Whether the test script provided an S3 endpoint.
    static var isProvided: Bool { value("GALLERYD_TEST_S3_ENDPOINT") != nil }

    /// Points a configuration at the test bucket under `prefix`.
    static func configure(_ configuration: inout GalleryConfiguration, prefix: String) {
        configuration.storage = "s3"
        configuration.s3Endpoint = value("GALLERYD_TEST_S3_ENDPOINT")!
        configuration.s3Bucket = value("GALLERYD_TEST_S3_BUCKET") ?? "galleryd-test"
        configuration.s3AccessKeyId = value("GALLERYD_TEST_S3_ACCESS_KEY")!
        configuration.s3SecretAccessKey = value("GALLERYD_TEST_S3_SECRET_KEY")!
        configuration.s3Prefix = prefix
    }

    /// The keys boto3 lists under a prefix, sorted.
    static func boto3Keys(prefix: String) throws -> [String] {
        let code = """
            import sys, json, boto3
            s3 = boto3.client("s3", endpoint_url=sys.argv[1], region_name="us-east-1",
                aws_access_key_id=sys.argv[2], aws_secret_access_key=sys.argv[3])
            r = s3.list_objects_v2(Bucket=sys.argv[4], Prefix=sys.argv[5])
            print(json.dumps(sorted(o["Key"] for o in r.get("Contents", []))))
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: value("GALLERYD_TEST_PYTHON") ?? "/usr/bin/python3")
        process.arguments = [
            "-c", code, value("GALLERYD_TEST_S3_ENDPOINT")!, value("GALLERYD_TEST_S3_ACCESS_KEY")!,
            value("GALLERYD_TEST_S3_SECRET_KEY")!, value("GALLERYD_TEST_S3_BUCKET") ?? "galleryd-test", prefix,
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return try JSONDecoder().decode([String].self, from: data)
    }

    /// Every object under a prefix as boto3 downloads it: key → SHA-256 (hex) of its bytes.
    static func boto3SHA256(prefix: String) throws -> [String: String] {
        let code = """
            import sys, json, hashlib, boto3
            s3 = boto3.client("s3", endpoint_url=sys.argv[1], region_name="us-east-1",
                aws_access_key_id=sys.argv[2], aws_secret_access_key=sys.argv[3])
            out = {}
            for page in s3.get_paginator("list_objects_v2").paginate(Bucket=sys.argv[4], Prefix=sys.argv[5]):
                for o in page.get("Contents", []):
                    body = s3.get_object(Bucket=sys.argv[4], Key=o["Key"])["Body"].read()
                    out[o["Key"]] = hashlib.sha256(body).hexdigest()
            print(json.dumps(out))
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: value("GALLERYD_TEST_PYTHON") ?? "/usr/bin/python3")
        process.arguments = [
            "-c", code, value("GALLERYD_TEST_S3_ENDPOINT")!, value("GALLERYD_TEST_S3_ACCESS_KEY")!,
            value("GALLERYD_TEST_S3_SECRET_KEY")!, value("GALLERYD_TEST_S3_BUCKET") ?? "galleryd-test", prefix,
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return try JSONDecoder().decode([String: String].self, from: data)
    }

    /// The `Content-Type` the bucket holds for a key (the full key, prefix included), as boto3 reads it.
    static func boto3ContentType(_ key: String) throws -> String {
        let code = """
            import sys, boto3
            s3 = boto3.client("s3", endpoint_url=sys.argv[1], region_name="us-east-1",
                aws_access_key_id=sys.argv[2], aws_secret_access_key=sys.argv[3])
            print(s3.head_object(Bucket=sys.argv[4], Key=sys.argv[5])["ContentType"])
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: value("GALLERYD_TEST_PYTHON") ?? "/usr/bin/python3")
        process.arguments = [
            "-c", code, value("GALLERYD_TEST_S3_ENDPOINT")!, value("GALLERYD_TEST_S3_ACCESS_KEY")!,
            value("GALLERYD_TEST_S3_SECRET_KEY")!, value("GALLERYD_TEST_S3_BUCKET") ?? "galleryd-test", key,
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func value(_ name: String) -> String? {
        ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }
}
