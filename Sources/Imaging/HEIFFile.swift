import CHeif

/// A HEIF or AVIF file opened with libheif: its boxes parsed, its primary image's handle taken,
/// nothing decoded. Owns the libheif context and handle and frees them in `deinit`.
///
/// Only the primary image is ever used: never its thumbnail item (tiny), other top-level images,
/// or its auxiliary images (depth, alpha, Apple's gain map and portrait mattes, whatever their
/// size): libheif decodes none of them with the primary, an alpha image because it is hidden
/// from libheif (`HEIFAlpha`). Grid-tiled primaries (how phones store 12–48 MP photos) are
/// assembled by libheif, and its `clap`, `irot` and `imir` transforms are applied while
/// decoding, so the sizes here are as displayed.
final class HEIFFile {
    private let context: OpaquePointer
    private let handle: OpaquePointer
    /// The file's bytes when opened from memory (libheif reads them without a copy).
    private let memory: UnsafeMutableRawBufferPointer?
    /// The file's boxes for galleryd's own checks (`HEIFCodedSize`).
    private let source: () throws -> HeaderByteSource

    /// Opens the file at `path` (libheif reads its boxes, not its image data).
    convenience init(path: String) throws {
        try self.init(
            opened: Opened.open { context in heif_context_read_from_file(context, path, nil) },
            bytes: { try ImagePipeline.readFile(path) }, source: { try FileByteSource(path: path) })
    }

    /// Opens an in-memory file.
    convenience init(bytes: [UInt8]) throws {
        try self.init(opened: Opened.open(bytes: bytes), bytes: { bytes }, source: { MemoryByteSource(bytes: bytes) })
    }

    /// Takes `opened`, or, when its primary image has an alpha auxiliary image, the same file
    /// opened again from `bytes` with its alpha hidden (`HEIFAlpha`), so that it is never decoded.
    private init(
        opened first: Opened, bytes: () throws -> [UInt8], source: @escaping () throws -> HeaderByteSource
    ) throws {
        self.source = source
        var opened = first
        if heif_image_handle_has_alpha_channel(first.handle) != 0 {
            do {
                if let hidden = HEIFAlpha.hidingAlpha(in: try bytes()) {
                    opened = try Opened.open(bytes: hidden)
                    first.free()
                }
            } catch {
                first.free()
                throw error
            }
        }
        context = opened.context
        handle = opened.handle
        memory = opened.memory
    }

    /// A libheif context with its primary image's handle, and the memory it reads from, if any.
    private struct Opened {
        var context: OpaquePointer
        var handle: OpaquePointer
        var memory: UnsafeMutableRawBufferPointer?

        static func open(bytes: [UInt8]) throws -> Opened {
            let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, bytes.count), alignment: 16)
            memory.copyBytes(from: bytes)
            return try open(memory: memory) { context in
                heif_context_read_from_memory_without_copy(context, memory.baseAddress, bytes.count, nil)
            }
        }

        static func open(memory: UnsafeMutableRawBufferPointer? = nil, read: (OpaquePointer) -> heif_error) throws
            -> Opened
        {
            guard let context = heif_context_alloc() else {
                memory?.deallocate()
                throw ImageError.decodeFailed("libheif could not allocate a context")
            }
            do {
                try HEIFFile.check(read(context))
                var handle: OpaquePointer?
                try HEIFFile.check(heif_context_get_primary_image_handle(context, &handle))
                guard let handle else { throw ImageError.corrupt("HEIF has no primary image") }
                return Opened(context: context, handle: handle, memory: memory)
            } catch {
                heif_context_free(context)
                memory?.deallocate()
                throw error
            }
        }

        func free() {
            heif_image_handle_release(handle)
            heif_context_free(context)
            memory?.deallocate()
        }
    }

    deinit {
        Opened(context: context, handle: handle, memory: memory).free()
    }

    /// Size as displayed, EXIF date and camera, ICC profile (`format`: HEIC or AVIF, from the brands); refused over the pixel limit. The coded size
    /// (`ispe`, before `clap` crops it) is what the decoder allocates, so it is checked too, and
    /// so is the size each HEVC image libheif decodes for the primary is coded at (`HEIFCodedSize`).
    func probe(limits: ImageLimits, format: ImageFormat) throws -> ImageInfo {
        let width = Int(heif_image_handle_get_width(handle))
        let height = Int(heif_image_handle_get_height(handle))
        guard width > 0, height > 0 else { throw ImageError.corrupt("HEIF image size \(width)×\(height)") }
        let codedWidth = Int(heif_image_handle_get_ispe_width(handle))
        let codedHeight = Int(heif_image_handle_get_ispe_height(handle))
        for (w, h) in [(width, height), (codedWidth, codedHeight)] where w * h > limits.maxPixels {
            throw ImageError.tooManyPixels(width: w, height: h, limit: limits.maxPixels)
        }
        try HEIFCodedSize.check(try source(), limits: limits)
        let exif = exif()
        return ImageInfo(
            width: width, height: height, components: 3, colorSpace: .rgb, isProgressive: false,
            iccProfile: iccProfile(), takenAt: exif?.takenAt, cameraMake: exif?.make, cameraModel: exif?.model,
            format: format)
    }

    /// The `colr` ICC profile (`prof` or `rICC`), nil for nclx or none.
    func iccProfile() -> [UInt8]? {
        let type = heif_image_handle_get_color_profile_type(handle)
        guard type == heif_color_profile_type_prof || type == heif_color_profile_type_rICC else { return nil }
        let size = heif_image_handle_get_raw_color_profile_size(handle)
        guard size > 0 else { return nil }
        var profile = [UInt8](repeating: 0, count: size)
        guard heif_image_handle_get_raw_color_profile(handle, &profile).code == heif_error_Ok else { return nil }
        return profile
    }

    /// The nclx colour primaries (ITU-T H.273 Table 2) and transfer characteristics (Table 3), nil
    /// when the colour is described by an ICC profile or not at all (then sRGB is assumed).
    func nclx() -> (primaries: Int, transfer: Int)? {
        guard heif_image_handle_get_color_profile_type(handle) == heif_color_profile_type_nclx else { return nil }
        var nclx: UnsafeMutablePointer<heif_color_profile_nclx>?
        guard heif_image_handle_get_nclx_color_profile(handle, &nclx).code == heif_error_Ok, let nclx else {
            return nil
        }
        defer { heif_nclx_color_profile_free(nclx) }
        return (Int(nclx.pointee.color_primaries.rawValue), Int(nclx.pointee.transfer_characteristics.rawValue))
    }

    /// Bits per sample of the primary image's luma as coded (8, 10, 12).
    var lumaBits: Int { Int(heif_image_handle_get_luma_bits_per_pixel(handle)) }

    /// The first `Exif` item of the primary image: a 4-byte offset to the TIFF header, then the
    /// TIFF structure (ISO/IEC 23008-12 Annex A.2.1). Its orientation is informational only:
    /// `irot`/`imir` rule.
    private func exif() -> EXIFReader.Fields? {
        var id: heif_item_id = 0
        guard heif_image_handle_get_list_of_metadata_block_IDs(handle, "Exif", &id, 1) == 1 else { return nil }
        let size = heif_image_handle_get_metadata_size(handle, id)
        guard size > 4, size <= 4 << 20 else { return nil }
        var data = [UInt8](repeating: 0, count: size)
        guard heif_image_handle_get_metadata(handle, id, &data).code == heif_error_Ok else { return nil }
        let offset = data.prefix(4).reduce(0) { $0 << 8 | Int($1) }
        guard offset >= 0, offset < size - 4 else { return nil }
        return EXIFReader.parse(app1: [0x45, 0x78, 0x69, 0x66, 0, 0] + data[(4 + offset)...])
    }

    /// Decodes the primary image (grid tiles assembled, transforms applied) to 8-bit interleaved
    /// RGB; 10- and 12-bit images are reduced by libheif. Alpha, if any, is dropped.
    func decode() throws -> DecodedRaster {
        let image = try decodeImage(heif_chroma_interleaved_RGB, to8Bits: true)
        var stride: Int32 = 0
        guard let plane = heif_image_get_plane_readonly(image, heif_channel_interleaved, &stride) else {
            heif_image_release(image)
            throw ImageError.decodeFailed("libheif returned no interleaved plane")
        }
        return DecodedRaster(
            width: Int(heif_image_get_width(image, heif_channel_interleaved)),
            height: Int(heif_image_get_height(image, heif_channel_interleaved)), stride: Int(stride), layout: .rgb,
            pixels: plane, release: { heif_image_release(image) })
    }

    /// Decodes a primary image coded at more than 8 bits with its bits kept, to 16-bit planar RGB
    /// with its `clli` or `mdcv` peak, for the transfer conversion of an HDR, linear or gamma
    /// original (decision 074); nil for an 8-bit image (`decode` then). Alpha, if any, is dropped.
    func decodeKeepingBits() throws -> HEIFPlanarRows? {
        guard lumaBits > 8 else { return nil }
        let image = try decodeImage(heif_chroma_444, to8Bits: false)
        // A file whose `hvcC`/`av1C` says more bits than its coded image has is decoded at 8 by libheif,
        // which keeps the input's depth: it is read the 8-bit way then, as it was before decision 074.
        guard heif_image_get_bits_per_pixel_range(image, heif_channel_R) > 8 else {
            heif_image_release(image)
            return nil
        }
        return try HEIFPlanarRows(image: image, peakLuminance: Self.peakLuminance(image))
    }

    /// The primary image decoded by libheif to RGB in `chroma`, its 10 or 12 bits reduced to 8 when
    /// `to8Bits`; the caller releases it.
    private func decodeImage(_ chroma: heif_chroma, to8Bits: Bool) throws -> OpaquePointer {
        guard let options = heif_decoding_options_alloc() else { throw ImageError.decodeFailed("libheif options") }
        defer { heif_decoding_options_free(options) }
        options.pointee.convert_hdr_to_8bit = to8Bits ? 1 : 0
        var image: OpaquePointer?
        try Self.check(heif_decode_image(handle, &image, heif_colorspace_RGB, chroma, options))
        guard let image else { throw ImageError.decodeFailed("libheif returned no image") }
        return image
    }

    /// The peak the decoded `image` says its light reaches, cd/m²: its `clli` maximum content
    /// light level, else its `mdcv` mastering display's maximum luminance.
    private static func peakLuminance(_ image: OpaquePointer) -> Double? {
        if heif_image_has_content_light_level(image) != 0 {
            var level = heif_content_light_level()
            heif_image_get_content_light_level(image, &level)
            if level.max_content_light_level > 0 { return Double(level.max_content_light_level) }
        }
        if heif_image_has_mastering_display_colour_volume(image) != 0 {
            var volume = heif_mastering_display_colour_volume()
            var decoded = heif_decoded_mastering_display_colour_volume()
            heif_image_get_mastering_display_colour_volume(image, &volume)
            if heif_mastering_display_colour_volume_decode(&volume, &decoded).code == heif_error_Ok,
                decoded.max_display_mastering_luminance > 0
            {
                return decoded.max_display_mastering_luminance
            }
        }
        return nil
    }

    /// Throws the `ImageError` a libheif error stands for, with libheif's message.
    static func check(_ error: heif_error) throws {
        guard error.code != heif_error_Ok else { return }
        let message = error.message.map { String(cString: $0) } ?? "error \(error.code.rawValue)"
        switch error.code {
        case heif_error_Invalid_input where error.subcode == heif_suberror_End_of_data:
            throw ImageError.truncated
        case heif_error_Invalid_input, heif_error_Unsupported_filetype:
            throw ImageError.corrupt("libheif: \(message)")
        case heif_error_Input_does_not_exist:
            throw ImageError.io("libheif: \(message)")
        default:
            throw ImageError.decodeFailed("libheif: \(message)")
        }
    }
}
