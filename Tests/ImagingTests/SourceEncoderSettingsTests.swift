import Testing

@testable import Imaging

/// Each source format's derivatives are quantized at its own qualities, read back from the
/// output's DQT segments; JPEG originals keep the spec's.
@Suite struct SourceEncoderSettingsTests {
    /// Quality 90: a downscaled preview at 90, the thumbnail at 92 (chroma 4 above), before each format's steps.
    static let spec = PNGTests.spec

    /// The luma and chroma steps a JPEG was written with.
    static func tables(_ jpeg: [UInt8]) throws -> QuantizationTables {
        let components = try ImageProbe.probe(bytes: jpeg).componentQuantization
        try #require(components.count == 3)
        let cr = components[2].steps.map { UInt32($0) }
        return QuantizationTables(
            luma: components[0].steps.map { UInt32($0) }, chroma: components[1].steps.map { UInt32($0) },
            cr: components[2].steps == components[1].steps ? nil : cr)
    }

    /// PNGTests' quadrants as a PNG, a WebP (`cwebp -q 95`) or a HEIC (`heif-enc -q 90`).
    static func quadrants(as format: ImageFormat) throws -> [UInt8] {
        let png = PNGTests.quadrantsPNG()
        return switch format {
        case .webp: try FixtureTools.webp(png, options: ["-q", "95"])
        case .heif: try FixtureTools.heic(png, options: ["-q", "90"])
        default: png
        }
    }

    /// A one-pixel gray checkerboard of 40 and 215, as an RGBX image: the most detail there is.
    static func checkerboard(width: Int, height: Int) -> PixelBuffer {
        // Both colours 20 bluer than gray, so it stays on the colour path (decision 069) whatever the chroma
        // subsampling averages.
        var image = TestImages.solid(width: width, height: height, (40, 40, 60))
        for y in 0..<height {
            for x in 0..<width where (x + y) % 2 == 1 {
                image.bytes.replaceSubrange((y * width + x) * 4..<(y * width + x) * 4 + 3, with: [215, 215, 235])
            }
        }
        return image
    }

    /// `checkerboard` as a PNG, a WebP (`cwebp -q 95`) or a HEIC (`heif-enc -q 90`).
    static func detailed(as format: ImageFormat) throws -> [UInt8] {
        let image = checkerboard(width: 96, height: 64)
        let png = PNGWriter(width: 96, height: 64, colorType: .rgb) { x, y in
            let rgb = image.rgb(x: x, y: y)
            return [Int(rgb.r), Int(rgb.g), Int(rgb.b)]
        }.encode()
        return switch format {
        case .webp: try FixtureTools.webp(png, options: ["-q", "95"])
        case .heif: try FixtureTools.heic(png, options: ["-q", "90"])
        default: png
        }
    }

    /// The thumbnail's tables at the quality in force: PNG's, WebP's, HEIC's and AVIF's are Klein's table
    /// one quality below it, JPEG's ours with the chroma boost (decision 060); WebP's, HEIC's and AVIF's
    /// chroma is Klein's table 12 below it with the DC and two lowest AC steps the luma's, unless the
    /// thumbnail is near-size: a WebP's then one table, a flat HEIC's or AVIF's Klein 2 below with a
    /// preview's chroma (decisions 064 and its validation, 067). `trellis`: a HEIC's or AVIF's flat thumbnail,
    /// which trellis quantizes on Klein's table half a quality above it (near-size: at it) with the same chroma
    /// (decision 063, session 22).
    static func thumbnailTables(_ format: ImageFormat, quality: Int, nearSize: Bool = false, trellis: Bool = false)
        -> QuantizationTables
    {
        switch format {
        case .heif where trellis && nearSize, .avif where trellis && nearSize: webpOriginalSizePreview(Double(quality))
        case .heif where trellis, .avif where trellis:
            coarseChroma(luma: Double(quality) + 0.5, chroma: Double(quality) - 10.5, held: [0, 1, 8])
        case .png: QuantizationTables(kleinQuality: quality - 1)
        case .webp where nearSize: QuantizationTables(kleinQuality: quality - 1)
        case .heif where nearSize, .avif where nearSize: webpOriginalSizePreview(Double(quality - 2))
        case .webp, .heif, .avif:
            coarseChroma(luma: Double(quality - 1), chroma: Double(quality - 12), held: [0, 1, 8])
        default: QuantizationTables(quality: quality, chromaBoost: DerivativeSpec.thumbnailChromaQualityBoost)
        }
    }

    /// Our preview tables at this quality (with `kleinPreview`, Klein's table at it instead; with
    /// `kleinStep`, Klein's table that many qualities from it) and the thumbnail's for a thumbnail
    /// quality in force of `thumbnail` (decision 060).
    static func expectTables(
        _ result: ProcessedImage, preview: Int, thumbnail: Int, kleinPreview: Bool = false, kleinStep: Double? = nil,
        previewTables expected: QuantizationTables? = nil, nearSize: Bool = false, trellisThumbnail: Bool = false,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(result.thumbnailSource != .samePixels, sourceLocation: sourceLocation)
        let previewTables =
            expected
            ?? kleinStep.map {
                result.info.format == .webp
                    ? webpOriginalSizePreview(Double(preview) + $0)
                    : QuantizationTables(kleinQuality: Double(preview) + $0)
            }
            ?? (kleinPreview ? QuantizationTables(kleinQuality: preview) : QuantizationTables(quality: preview))
        #expect(try tables(result.preview.jpeg) == previewTables, sourceLocation: sourceLocation)
        #expect(
            try tables(result.thumbnail.jpeg)
                == thumbnailTables(
                    result.info.format, quality: thumbnail, nearSize: nearSize, trellis: trellisThumbnail),
            sourceLocation: sourceLocation)
    }

    /// PNG's preview 2 lower, its thumbnail 1 lower (050's −2 left mate_Wood's at −0.15; decision 056),
    /// the downscaled preview on Klein's table at that quality (decision 060, session 18).
    @Test func png_PreviewIsTwoLower_ThumbnailOne() throws {
        let result = try ImagePipeline.process(bytes: PNGTests.quadrantsPNG(), spec: Self.spec)
        #expect(result.info.format == .png)
        try Self.expectTables(result, preview: 88, thumbnail: 91, kleinPreview: true)
    }

    /// WebP's downscaled preview stays at the column's quality, on Klein's table 3.25 below it with its
    /// lowest steps 2 below (the quadrants are a flat WebP: decision 060, session 18 u28z).
    @Test func webp_LowersOnlyTheThumbnail() throws {
        let result = try ImagePipeline.process(bytes: Self.quadrants(as: .webp), spec: Self.spec)
        #expect(result.info.format == .webp)
        try Self.expectTables(
            result, preview: 90, thumbnail: 90, previewTables: Self.heldFlatPreview(inForce: 90))
    }

    /// A preview that keeps the original's size (96×64 under a 128-pixel preview) gets the JPEG
    /// path's boost on top of each format's step; HEIC's stays at the downscale's quality. PNG's
    /// and WebP's is then Klein's table at that quality (a detailed image: decision 060), WebP's with
    /// its coarser chroma (decision 064), HEIC's 2 above it (decision 067).
    @Test(arguments: [(ImageFormat.png, 90), (.webp, 92), (.heif, 90)])
    func originalSizePreview_IsBoostedAsOnTheJPEGPath(format: ImageFormat, previewQuality: Int) throws {
        let bytes = try Self.detailed(as: format)
        let spec = DerivativeSpec(thumbnailShortEdge: 32, previewLongEdge: 128, quality: 90)
        let result = try ImagePipeline.process(bytes: bytes, spec: spec)
        #expect(result.info.format == format)
        #expect(result.preview.width == 96 && result.preview.height == 64)
        let expected =
            switch format {
            case .heif: QuantizationTables(kleinQuality: previewQuality + 2)
            case .webp: Self.webpOriginalSizePreview(Double(previewQuality))
            default: QuantizationTables(kleinQuality: previewQuality)
            }
        #expect(try Self.tables(result.preview.jpeg) == expected)
    }

    /// PNG's and WebP's previews at the original's size take Klein's table below the quality in
    /// force (90 for PNG, 92 for WebP, at spec 90), PNG's 3.25 qualities with its DC and two lowest
    /// AC steps 2 below (`heldFlatPreview`), WebP's 2.5, or at it when the preview is detailed (mean
    /// luma gradient ≥ 6): the flat quadrants against a one-pixel checkerboard. HEIC keeps our
    /// table either way (decision 060). WebP's chroma is 20 below its luma's either way, its five lowest
    /// steps held, and so is its thumbnail's 14 below, three held (decision 064).
    @Test(arguments: [
        (ImageFormat.png, false, 88.0), (.png, true, 90), (.webp, false, 89.5), (.webp, true, 92),
    ])
    func originalSizePreview_TakesKleinsTable_ByDetail(format: ImageFormat, detailed: Bool, quality: Double) throws {
        let bytes = try detailed ? Self.detailed(as: format) : Self.quadrants(as: format)
        let spec = DerivativeSpec(thumbnailShortEdge: 32, previewLongEdge: 128, quality: 90)
        let result = try ImagePipeline.process(bytes: bytes, spec: spec)
        #expect(result.info.format == format)
        #expect(result.preview.width == 96 && result.thumbnailSource == .preview)
        let expected =
            format == .webp
            ? Self.webpOriginalSizePreview(quality)
            : detailed ? QuantizationTables(kleinQuality: quality) : Self.heldFlatPreview(inForce: 90)
        #expect(try Self.tables(result.preview.jpeg) == expected)
        #expect(
            try Self.tables(result.thumbnail.jpeg) == Self.thumbnailTables(format, quality: format == .png ? 91 : 90))
    }

    /// The tables of a flat PNG preview at the original's size (u28x) and of a flat WebP's downscaled
    /// preview (u28z; decision 060, session 18): Klein's table 3.25 qualities below the quality in
    /// force, with the DC and the AC steps (0,1) and (1,0) of Klein's table 2 below it, luma and
    /// chroma; neither table alone.
    static func heldFlatPreview(inForce quality: Int) -> QuantizationTables {
        let coarse = QuantizationTables(kleinQuality: Double(quality) - 3.25)
        let fine = QuantizationTables(kleinQuality: quality - 2)
        var (luma, chroma) = (coarse.luma, coarse.chroma!)
        for k in [0, 1, 8] {
            luma[k] = fine.luma[k]
            chroma[k] = fine.chroma![k]
        }
        let tables = QuantizationTables(luma: luma, chroma: chroma)
        #expect(tables != coarse && tables != fine)
        return tables
    }

    /// A downscaled preview (64×43 under a 64-pixel preview) of a WebP of at least 1 bit per pixel
    /// (the checkerboard at `cwebp -q 95`, over 2) takes Klein's table at the column's quality (90);
    /// the quadrants (0.2) take it 3.25 below with its DC and two lowest AC steps 2 below
    /// (`heldFlatPreview`; since session 18 u28z, 2.5 below before), and PNG's takes it at its
    /// column's quality (88), whatever its file (decision 060, session 18).
    @Test(arguments: [
        (ImageFormat.webp, true, 0.0 as Double?), (.webp, false, -3.25), (.png, true, 0), (.png, false, 0),
    ])
    func downscaledPreview_TakesKleinsTable_ByTheFilesBitsPerPixel(format: ImageFormat, detailed: Bool, klein: Double?)
        throws
    {
        let bytes = try detailed ? Self.detailed(as: format) : Self.quadrants(as: format)
        if format == .webp { #expect((bytes.count * 8 >= 96 * 64) == detailed) }
        let result = try ImagePipeline.process(bytes: bytes, spec: Self.spec)
        #expect(result.info.format == format)
        #expect(result.preview.width == 64 && result.thumbnailSource != .samePixels)
        let quality = format == .png ? 88 : 90
        let preview = try Self.tables(result.preview.jpeg)
        if format == .webp && !detailed {
            #expect(preview == Self.heldFlatPreview(inForce: quality))
            #expect(preview != QuantizationTables(kleinQuality: 87.5))
        } else {
            #expect(
                preview
                    == (klein.map { QuantizationTables(kleinQuality: Double(quality) + $0) }
                        ?? QuantizationTables(quality: quality)))
        }
        #expect(preview != QuantizationTables(quality: quality))
    }

    /// The downscaled preview's choice by bits per pixel: WebP's Klein at the quality from 1, 3.25 below
    /// it under 1 with its lowest steps 2 below (and ours when the file's size is unknown); PNG's Klein at
    /// the quality whatever the file, known or not; JPEG ours (HEIC's and AVIF's go by the preview's detail
    /// instead: SourceEncoderSettingsTests+HEIF).
    @Test func downscaledPreviewTables_ByBitsPerPixel() {
        let webp = SourceEncoderSettings.forSource(.webp)
        #expect(webp.flatDownscaledPreviewKleinStep == -3.25 && webp.downscaledPreviewKleinStep == nil)
        #expect(webp.flatDownscaledPreviewLowFrequencyStep == -2)
        let png = SourceEncoderSettings.forSource(.png)
        #expect(png.downscaledPreviewKleinStep == 0)
        for bits in [0.2, 2.0, nil] {
            #expect(
                png.downscaledPreviewTables(quality: 78, bitsPerPixel: bits) == QuantizationTables(kleinQuality: 78))
        }
        #expect(png.downscaledPreviewTables(quality: 100, bitsPerPixel: nil) == QuantizationTables(kleinQuality: 100))
        #expect(webp.downscaledPreviewTables(quality: 80, bitsPerPixel: 1) == QuantizationTables(kleinQuality: 80))
        #expect(
            webp.downscaledPreviewTables(quality: 80, bitsPerPixel: 0.99) == Self.heldFlatPreview(inForce: 80)
        )
        #expect(webp.downscaledPreviewTables(quality: 1, bitsPerPixel: 0.5) == QuantizationTables(kleinQuality: 1))
        #expect(webp.downscaledPreviewTables(quality: 80, bitsPerPixel: nil) == QuantizationTables(quality: 80))
        for settings in [SourceEncoderSettings.forSource(.jpeg)] {
            #expect(settings.flatDownscaledPreviewKleinStep == nil && settings.downscaledPreviewKleinStep == nil)
            #expect(settings.flatDownscaledPreviewLowFrequencyStep == nil)
            for bits in [0.2, 2.0] {
                #expect(
                    settings.downscaledPreviewTables(quality: 80, bitsPerPixel: bits) == QuantizationTables(quality: 80)
                )
            }
        }
    }

    /// PNG's and WebP's thumbnails take Klein's table one quality below the one in force (91 and
    /// 90 at spec 90, so 90 and 89), the near-size row's too (PNG 86, so 85; WebP 86, so 85, one table for
    /// luma and chroma since 064's validation); HEIC's Klein 91 with its chroma, but the flat quadrants' is
    /// trellis-quantized on Klein 92.5 (decision 063, session 22); JPEG's keeps ours with the chroma boost
    /// (decision 060). Not our table at any quality: Klein's uses one table for luma and chroma.
    @Test(arguments: [
        (ImageFormat.png, 32, 90 as Int?), (.webp, 32, 89), (.png, 56, 85), (.webp, 56, 85), (.heif, 32, 91),
        (.jpeg, 32, nil),
    ])
    func thumbnail_TakesKleinsTableOneDown(format: ImageFormat, edge: Int, klein: Int?) throws {
        let bytes =
            format == .jpeg
            ? try TestImages.progressive(TestImages.noise(width: 96, height: 64), quality: 95)
            : try Self.quadrants(as: format)
        let spec = DerivativeSpec(thumbnailShortEdge: edge, previewLongEdge: 128, quality: 90)
        let result = try ImagePipeline.process(bytes: bytes, spec: spec)
        #expect(result.info.format == format && result.thumbnail.height == edge)
        let thumbnail = try Self.tables(result.thumbnail.jpeg)
        if format == .heif {
            // The flat quadrants' thumbnail is trellis-quantized half a quality above (decision 063, session 22).
            #expect(thumbnail == Self.thumbnailTables(format, quality: klein! + 1, trellis: true))
            #expect(thumbnail.luma == QuantizationTables(kleinQuality: Double(klein!) + 1.5).luma)
        } else if let klein, format != .png, edge == 32 {
            #expect(thumbnail == Self.thumbnailTables(format, quality: klein + 1))
            #expect(thumbnail.luma == QuantizationTables(kleinQuality: klein).luma)
        } else if let klein {
            #expect(thumbnail == QuantizationTables(kleinQuality: klein))
            #expect(thumbnail.luma == thumbnail.chroma)
        } else {
            #expect(
                thumbnail == QuantizationTables(quality: 92, chromaBoost: DerivativeSpec.thumbnailChromaQualityBoost))
        }
    }

    /// The step and its clamp to 1…100: PNG and WebP −1 (HEIC and AVIF too: SourceEncoderSettingsTests+HEIF), JPEG none; WebP's chroma 11
    /// below its luma's with three steps held, clamped too, and none for a near-size thumbnail (decision 064).
    @Test func thumbnailKleinStep_IsOneDownForPNGAndWebP() {
        for format in [ImageFormat.png, .webp] {
            let settings = SourceEncoderSettings.forSource(format)
            #expect(settings.thumbnailKleinStep == -1)
            #expect(settings.thumbnailTables(quality: 80) == Self.thumbnailTables(format, quality: 80))
            #expect(settings.thumbnailTables(quality: 80).luma == QuantizationTables(kleinQuality: 79).luma)
            #expect(settings.thumbnailTables(quality: 1) == QuantizationTables(kleinQuality: 1))
            #expect(settings.thumbnailTables(quality: 100) == Self.thumbnailTables(format, quality: 100))
        }
        #expect(SourceEncoderSettings.forSource(.png).thumbnailKleinChroma == nil)
        #expect(
            SourceEncoderSettings.forSource(.webp).thumbnailKleinChroma
                == SourceEncoderSettings.KleinChroma(step: -11, heldLowFrequencies: 3))
        #expect(
            SourceEncoderSettings.forSource(.webp).thumbnailTables(quality: 80) != QuantizationTables(kleinQuality: 79))
        #expect(
            SourceEncoderSettings.forSource(.webp).thumbnailTables(quality: 80, nearSize: true)
                == QuantizationTables(kleinQuality: 79))
        for format in [ImageFormat.jpeg] {
            let settings = SourceEncoderSettings.forSource(format)
            #expect(settings.thumbnailKleinStep == nil)
            #expect(
                settings.thumbnailTables(quality: 80)
                    == QuantizationTables(quality: 80, chromaBoost: DerivativeSpec.thumbnailChromaQualityBoost))
        }
    }

    /// The rule's choice: the step below the threshold, the detailed step from it, within 1…100.
    @Test func kleinRule_StepsByDetail() {
        let rule = SourceEncoderSettings.KleinRule.rasterPreviews
        #expect(
            rule
                == SourceEncoderSettings.KleinRule(
                    step: -3.25, detailedStep: 0, detailedGradient: 6, lowFrequencyStep: -2))
        #expect(rule.quality(80, gradient: 0) == 76.75)
        #expect(rule.quality(80, gradient: 5.99) == 76.75)
        #expect(rule.quality(80, gradient: 6) == 80)
        #expect(rule.tables(80, gradient: 5.99) == Self.heldFlatPreview(inForce: 80))
        #expect(rule.tables(80, gradient: 6) == QuantizationTables(kleinQuality: 80))
        #expect(rule.quality(1, gradient: 0) == 1)
        #expect(rule.quality(100, gradient: 14) == 100)
        #expect(SourceEncoderSettings.forSource(.png).originalSizePreviewKlein == rule)
        let webp = SourceEncoderSettings.KleinRule.webpPreviews
        #expect(
            webp
                == SourceEncoderSettings.KleinRule(
                    step: -2.5, detailedStep: 0, detailedGradient: 6,
                    chroma: SourceEncoderSettings.KleinChroma(step: -20, heldLowFrequencies: 5)))
        #expect(rule.chroma == nil)
        #expect(webp.quality(82, gradient: 5.99) == 79.5)
        #expect(webp.quality(82, gradient: 6) == 82)
        #expect(webp.quality(2, gradient: 0) == 1)
        #expect(webp.tables(82, gradient: 5.99) == Self.webpOriginalSizePreview(79.5))
        #expect(webp.tables(82, gradient: 6) == Self.webpOriginalSizePreview(82))
        #expect(webp.tables(2, gradient: 0) == QuantizationTables(kleinQuality: 1))
        #expect(SourceEncoderSettings.forSource(.webp).originalSizePreviewKlein == webp)
        #expect(SourceEncoderSettings.forSource(.webp).downscaledPreviewKleinBitsPerPixel == 1)
        #expect(SourceEncoderSettings.forSource(.png).downscaledPreviewKleinBitsPerPixel == nil)
        #expect(SourceEncoderSettings.forSource(.jpeg).originalSizePreviewKlein == nil)
    }

    /// A thumbnail nearly the preview's size (84×56 of a 96×64 preview, 77% of its pixels) has
    /// PNG's and WebP's own row: the thumbnail 6 lower (WebP's 8 in 064 until its validation), the preview 0 and +2 from the spec's
    /// original-size quality (92 at 90); HEIC's is SourceEncoderSettingsTests+HEIF's. At 72×48 (56%) the row is off.
    /// PNG's and WebP's previews, at the original's size, are then Klein's table 3.25 (PNG, its
    /// lowest steps 2) and 2.5 (WebP) lower (the quadrants are flat: decision 060); WebP's 3.5 lower
    /// with the near-size thumbnail, the quadrants being colourful (decision 064, session 20).
    @Test(arguments: [
        (ImageFormat.png, 56, 92, 86, -3.25 as Double?), (.webp, 56, 94, 86, -3.5),
        (.png, 48, 90, 91, -3.25), (.webp, 48, 92, 90, -2.5),
    ])
    func nearSizeThumbnail_HasItsOwnRow(format: ImageFormat, edge: Int, preview: Int, thumbnail: Int, klein: Double?)
        throws
    {
        let bytes = try Self.quadrants(as: format)
        let spec = DerivativeSpec(thumbnailShortEdge: edge, previewLongEdge: 128, quality: 90)
        let result = try ImagePipeline.process(bytes: bytes, spec: spec)
        #expect(result.info.format == format)
        #expect(result.preview.width == 96 && result.thumbnail.height == edge)
        try Self.expectTables(
            result, preview: preview, thumbnail: thumbnail, kleinStep: klein,
            previewTables: format == .png ? Self.heldFlatPreview(inForce: preview) : nil, nearSize: edge == 56)
    }

    /// Near size is a share of the preview's pixels: china's and flower's 600×400 of 640×427, not
    /// dune's 640×400 of 1680×1050, nor a thumbnail that is the preview.
    @Test func nearSize_IsThreeQuartersOfThePreviewsPixels() {
        #expect(SourceEncoderSettings.isNearSize(thumbnail: (600, 400), preview: (640, 427)))
        #expect(SourceEncoderSettings.isNearSize(thumbnail: (75, 64), preview: (100, 64)))
        #expect(!SourceEncoderSettings.isNearSize(thumbnail: (74, 64), preview: (100, 64)))
        #expect(!SourceEncoderSettings.isNearSize(thumbnail: (640, 400), preview: (1680, 1050)))
        #expect(!SourceEncoderSettings.isNearSize(thumbnail: (640, 427), preview: (640, 427)))
    }

    /// JPEG originals are not touched by the table: the same tables, so the same bytes as before it.
    @Test func jpeg_KeepsTheSpecsQualities() throws {
        let jpeg = try TestImages.progressive(TestImages.noise(width: 96, height: 64), quality: 95)
        let result = try ImagePipeline.process(bytes: jpeg, spec: Self.spec)
        #expect(result.info.format == .jpeg)
        try Self.expectTables(result, preview: 90, thumbnail: 92)
    }

    /// The steps never take a quality out of 1…100, whatever the configured one.
    @Test(arguments: ImageFormat.allCases)
    func qualities_StayWithinOneToOneHundred(format: ImageFormat) {
        let settings = SourceEncoderSettings.forSource(format)
        for quality in [1, 2, 99, 100] {
            let spec = DerivativeSpec(quality: quality, thumbnailQuality: quality)
            #expect((1...100).contains(settings.previewQuality(spec, keepsOriginalSize: false)))
            #expect((1...100).contains(settings.previewQuality(spec, keepsOriginalSize: true)))
            #expect((1...100).contains(settings.thumbnailQuality(spec)))
            #expect((1...100).contains(settings.previewQuality(spec, keepsOriginalSize: true, nearSize: true)))
            #expect((1...100).contains(settings.thumbnailQuality(spec, nearSize: true)))
        }
        #expect(
            SourceEncoderSettings.forSource(.png).previewQuality(DerivativeSpec(quality: 1), keepsOriginalSize: false)
                == 1)
        #expect(SourceEncoderSettings.forSource(.jpeg).thumbnailQuality(DerivativeSpec(quality: 100)) == 100)
    }
}
