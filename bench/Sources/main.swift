// galleryd-bench: load drivers and fixed servers that the bench/*.sh scripts run beside their peers.
// Usage: galleryd-bench http-server --port N | db --clients N --seconds S | metrics [--requests N]
//        | s3-get --endpoint URL ...
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "http-server": HTTPBench.run(Array(arguments.dropFirst()))
case "db": DBBench.run(Array(arguments.dropFirst()))
case "metrics": MetricsBench.run(Array(arguments.dropFirst()))
case "s3-get": S3Bench.run(Array(arguments.dropFirst()))
default:
    FileHandle.standardError.write(Data("usage: galleryd-bench http-server|db|metrics|s3-get [options]\n".utf8))
    exit(2)
}
