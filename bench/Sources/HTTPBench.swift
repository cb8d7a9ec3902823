import Foundation
import HTTPServer
import Logging

/// `galleryd-bench http-server --port N [--loops N] [--io-backend dispatch|epoll] [--access-log text|json|off]`:
/// serves `GET /fixed`, a fixed 2 KiB body from a non-blocking route, until SIGTERM or SIGINT, for
/// bench/http.sh to compare against nginx. The access log (text by default, as galleryd serves)
/// goes to standard error.
enum HTTPBench {
    static func run(_ arguments: [String]) {
        var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 8081)
        configuration.accessLog.format = .text
        var index = 0
        while index < arguments.count {
            let value = index + 1 < arguments.count ? arguments[index + 1] : ""
            switch arguments[index] {
            case "--port": configuration.port = Int(value) ?? configuration.port
            case "--host": configuration.host = value
            case "--loops": configuration.eventLoopThreads = Int(value) ?? configuration.eventLoopThreads
            case "--io-backend":
                guard let backend = HTTPIOBackend(rawValue: value) else { fallthrough }
                configuration.ioBackend = backend
            case "--access-log":
                guard let format = HTTPAccessLogFormat(rawValue: value) else { fallthrough }
                configuration.accessLog.format = format
            default:
                FileHandle.standardError.write(
                    Data(
                        "usage: galleryd-bench http-server --port N [--host H] [--loops N] [--io-backend dispatch|epoll] [--access-log text|json|off]\n"
                            .utf8))
                exit(2)
            }
            index += 2
        }
        var logger = Logger(label: "galleryd.http")
        logger.logLevel = .warning

        let body = [UInt8]((0..<2048).map { UInt8(ascii: "a") + UInt8($0 % 26) })
        let fixed = HTTPResponse(status: .ok, contentType: "application/octet-stream", bytes: body)
        let router = HTTPRouter()
        router.add(HTTPRoute(.get, "/fixed", mayBlock: false) { _ in fixed })
        // `GET /file?path=P` sends a file with sendfile and nothing else: isolates the file path's cost.
        router.add(
            HTTPRoute(.get, "/file", mayBlock: false) { request in
                let path = String(request.query?.dropFirst(5) ?? "")
                var st = stat()
                guard stat(path, &st) == 0 else { return HTTPResponse(status: .notFound) }
                return HTTPResponse(
                    status: .ok, headers: ["Content-Type": "image/jpeg"],
                    body: .file(path: path, offset: 0, length: Int(st.st_size)))
            })

        let server = HTTPServer(configuration: configuration, router: router, logger: logger)
        do {
            try server.start()
        } catch {
            FileHandle.standardError.write(Data("http-server: \(error)\n".utf8))
            exit(1)
        }
        var sources: [DispatchSourceSignal] = []
        for signalNumber in [SIGTERM, SIGINT] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { server.shutdown() }
            source.resume()
            sources.append(source)
        }
        print("http-server listening on \(configuration.host):\(server.port)")
        fflush(nil)  // every output stream: `stdout` is a C global Swift 6 will not read unchecked
        server.wait()
        withExtendedLifetime(sources) {}
        exit(0)
    }
}
