import BlobStore
import Foundation

/// `galleryd-bench s3-get --endpoint URL --bucket B --access-key K --secret S --key KEY
/// --transport socket|urlsession [--count N]`: GETs one object N times, one after another, and
/// prints requests/s, bytes/s and the process's CPU time (user + system) per GET, for bench/s3.sh
/// to compare our socket client with URLSession (FoundationNetworking).
enum S3Bench {
    static func run(_ arguments: [String]) {
        var options: [String: String] = ["--count": "200", "--transport": "socket", "--bucket": "galleryd-bench"]
        for index in stride(from: 0, to: arguments.count - 1, by: 2) {
            options[arguments[index]] = arguments[index + 1]
        }
        guard let endpointText = options["--endpoint"], let endpoint = URL(string: endpointText),
            let key = options["--key"],
            let accessKey = options["--access-key"], let secret = options["--secret"],
            let count = Int(options["--count"]!)
        else {
            FileHandle.standardError.write(
                Data(
                    "usage: galleryd-bench s3-get --endpoint URL --bucket B --access-key K --secret S --key KEY --transport socket|urlsession [--count N]\n"
                        .utf8))
            exit(2)
        }
        let configuration = S3Configuration(
            endpoint: endpoint, bucket: options["--bucket"]!, accessKeyId: accessKey, secretAccessKey: secret)
        let transport: S3Transport =
            options["--transport"] == "urlsession"
            ? S3URLSessionTransport(endpoint: endpoint, timeout: 30)
            : S3SocketTransport(host: endpoint.host ?? "127.0.0.1", port: endpoint.port ?? 80, timeout: 30)
        let client = S3Client(configuration: configuration, transport: transport)
        var bytes = 0
        // One warm-up request (connection, URLSession start-up).
        _ = try? client.getObject(key, sink: { _ in })
        let cpuBefore = cpuSeconds()
        let start = Date()
        for _ in 0..<count {
            do {
                _ = try client.getObject(key, sink: { bytes += $0.count })
            } catch {
                FileHandle.standardError.write(Data("s3-get: \(error)\n".utf8))
                exit(1)
            }
        }
        let elapsed = Date().timeIntervalSince(start)
        let cpu = cpuSeconds() - cpuBefore
        print(
            String(
                format: "%@: %d GETs of %d bytes in %.2f s: %.0f GET/s, %.1f MB/s, %.3f ms CPU per GET",
                options["--transport"]!, count, bytes / max(count, 1), elapsed, Double(count) / elapsed,
                Double(bytes) / elapsed / 1e6, cpu / Double(count) * 1000))
    }

    private static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
            + Double(usage.ru_stime.tv_usec) / 1e6
    }
}
