// `galleryd process FILE --out DIR` for the imaging benches, linked against a release build of
// the Imaging target only (bench/imaging-process.sh builds it): the same pipeline and outputs,
// and the JSON keys bench/imaging-formats.sh reads (displayWidth, displayHeight, ms.decode, the
// camera), without building the whole server in release. The Swift runtime is linked dynamically
// (galleryd's release build links it statically, a few ms less at start).
import Foundation
import Imaging

let arguments = CommandLine.arguments
guard arguments.count == 4, arguments[2] == "--out" else {
    FileHandle.standardError.write(Data("usage: imaging-process FILE --out DIR\n".utf8))
    exit(2)
}
let started = DispatchTime.now().uptimeNanoseconds
do {
    let result = try ImagePipeline.process(fileAt: arguments[1], spec: DerivativeSpec())
    try FileManager.default.createDirectory(atPath: arguments[3], withIntermediateDirectories: true)
    try Data(result.thumbnail.jpeg).write(to: URL(fileURLWithPath: arguments[3] + "/thumbnail.jpg"))
    try Data(result.preview.jpeg).write(to: URL(fileURLWithPath: arguments[3] + "/preview.jpg"))
    var ms = result.timings.map { "\"\($0.stage)\":\(String(format: "%.2f", $0.milliseconds))" }
    ms.append("\"total\":\(String(format: "%.2f", Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6))")
    let info = result.info
    print(
        "{\"format\":\"\(info.format.rawValue)\",\"displayWidth\":\(info.displayWidth),"
            + "\"displayHeight\":\(info.displayHeight),\"cameraMake\":\"\(info.cameraMake ?? "")\","
            + "\"cameraModel\":\"\(info.cameraModel ?? "")\",\"ms\":{\(ms.joined(separator: ","))}}")
} catch {
    FileHandle.standardError.write(Data("imaging-process: \(arguments[1]): \(error)\n".utf8))
    exit(1)
}
