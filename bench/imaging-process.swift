// `galleryd process FILE --out DIR` for the imaging benches, linked against a release build of
// the Imaging target only (bench/imaging-process.sh builds it): the same pipeline and outputs,
// and the JSON keys bench/imaging-formats.sh reads (displayWidth, displayHeight, ms.decode, the
// camera), without building the whole server in release. The Swift runtime is linked dynamically
// (galleryd's release build links it statically, a few ms less at start).
import Foundation
import Imaging

// Called as galleryd's `process` is (`[process] FILE --out DIR [--quality Q] [--thumbnail-quality Q]
// [--quantizer NAME]`), so GALLERYD=… bench/imaging.sh and bench/imaging-formats.sh, and BIN=…
// bench/imaging-oracle.py run it in galleryd's place.
var arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "process" { arguments.removeFirst() }
var spec = DerivativeSpec()
var valid = arguments.count >= 3 && arguments[1] == "--out" && arguments.count % 2 == 1
for index in stride(from: 3, to: valid ? arguments.count : 3, by: 2) {
    let value = arguments[index + 1]
    switch (arguments[index], Int(value), JPEGQuantizer(rawValue: value)) {
    case ("--quality", let quality?, _): spec.quality = quality
    case ("--thumbnail-quality", let quality?, _): spec.thumbnailQuality = quality
    case ("--quantizer", _, let quantizer?): spec.quantizer = quantizer
    default: valid = false
    }
}
guard valid else {
    FileHandle.standardError.write(
        Data(
            "usage: imaging-process [process] FILE --out DIR [--quality Q] [--thumbnail-quality Q] [--quantizer NAME]\n"
                .utf8))
    exit(2)
}
let started = DispatchTime.now().uptimeNanoseconds
do {
    let result = try ImagePipeline.process(fileAt: arguments[0], spec: spec)
    try FileManager.default.createDirectory(atPath: arguments[2], withIntermediateDirectories: true)
    try Data(result.thumbnail.jpeg).write(to: URL(fileURLWithPath: arguments[2] + "/thumbnail.jpg"))
    try Data(result.preview.jpeg).write(to: URL(fileURLWithPath: arguments[2] + "/preview.jpg"))
    var ms = result.timings.map { "\"\($0.stage)\":\(String(format: "%.2f", $0.milliseconds))" }
    ms.append("\"total\":\(String(format: "%.2f", Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6))")
    let info = result.info
    print(
        "{\"format\":\"\(info.format.rawValue)\",\"displayWidth\":\(info.displayWidth),"
            + "\"displayHeight\":\(info.displayHeight),\"cameraMake\":\"\(info.cameraMake ?? "")\","
            + "\"cameraModel\":\"\(info.cameraModel ?? "")\",\"ms\":{\(ms.joined(separator: ","))}}")
} catch {
    FileHandle.standardError.write(Data("imaging-process: \(arguments[0]): \(error)\n".utf8))
    exit(1)
}
