import CResampleKernels

/// The gray check (decision 069) of a preview that is encoded while it is resampled (a downscaled PNG or
/// WebP preview, decision 044), which is never kept whole, so `PixelBuffer.isAchromatic` cannot look at it.
///
/// Each of the preview's rows, as it goes to the colour encoder, is checked as `isAchromatic` checks a row
/// (red and blue within `PixelBuffer.achromaticTolerance` of green) and, while every row so far has been,
/// its luma is kept (one C pass for both, `gd_gray_row`): one byte a pixel, libjpeg's weights rounded as
/// `PixelBuffer.grayscale()` rounds them, so `preview` is the bytes `grayscale()` of the kept preview would
/// be. The first colourful row drops the luma, so a colour photo pays a row or so of checking and no memory;
/// a gray one pays a quarter of a kept RGBX preview, beside the colour encoder's coefficients (decision 069,
/// session 22). A picture whose colour starts at its last row is colour: every row is checked.
///
/// Fed on one thread (the resampler's vertical pass), read after that thread has been joined.
final class StreamedGrayCheck {
    /// Preview width in pixels (RGBX rows of `width * 4` bytes are taken).
    let width: Int
    /// Preview height: rows to take.
    let height: Int
    /// The luma of the rows taken so far; emptied at the first colourful row. Its pages are touched
    /// only as rows are written (allocated uninitialised).
    private var luma: [UInt8]
    private var rowsTaken = 0
    /// False from the first colourful row on.
    private(set) var isGraySoFar = true

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
        luma = [UInt8](unsafeUninitializedCapacity: width * height) { _, count in count = width * height }
    }

    /// Takes the next RGBX row of the preview (`width * 4` bytes), before the encoder may change it.
    func take(row: UnsafePointer<UInt8>) {
        guard isGraySoFar, rowsTaken < height else { return }
        // The row's luma and worst difference in one vectorised pass (`gd_gray_row`); a colour row's luma is
        // written over the buffer that is then dropped.
        let (width, offset) = (width, rowsTaken * width)
        let worst = luma.withUnsafeMutableBufferPointer { out in
            gd_gray_row(row, width, out.baseAddress! + offset, StreamingResampler.avx2)
        }
        guard worst <= PixelBuffer.achromaticTolerance else {
            isGraySoFar = false
            luma = []
            return
        }
        rowsTaken += 1
    }

    /// The preview as one gray channel when every one of its rows was achromatic; nil when one was not,
    /// or when fewer than `height` rows were taken.
    var preview: PixelBuffer? {
        guard isGraySoFar, rowsTaken == height else { return nil }
        return PixelBuffer(width: width, height: height, channels: 1, bytes: luma)
    }
}
