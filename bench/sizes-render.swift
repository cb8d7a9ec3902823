// The cold render alone, in a release build: processes ORIGINAL once, then renders `s` (240×160)
// 31 times from its preview (or, with a second argument, its thumbnail) and prints the CPU per render.
// Built and run by bench/sizes-render.sh.
import Foundation
import Imaging

// Cold `s` render CPU from a 2048 preview: process the original once, then render s N times.
let original = try [UInt8](Data(contentsOf: URL(fileURLWithPath: CommandLine.arguments[1])))
let processed = try ImagePipeline.process(bytes: original)
let preview = processed.preview
let source = CommandLine.arguments.count > 2 ? processed.thumbnail : preview
print("source \(source.width)x\(source.height)")
print("preview \(preview.width)x\(preview.height), \(preview.jpeg.count) bytes")
func cpu() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1000
}
var samples: [Double] = []
for _ in 0..<31 {
    let start = cpu()
    let image = try SizeRenderer.render(bytes: source.jpeg, width: 240, height: 160, square: false)
    samples.append(cpu() - start)
    precondition(image.width == 240)
}
samples.sort()
print(
    String(
        format: "cold s render CPU: median %.2f ms, min %.2f, max %.2f over %d", samples[15], samples[0], samples[30],
        samples.count))
