import Testing

@testable import Imaging

@Suite struct DerivativePlanTests {
    @Test(arguments: [
        // width, height, edge, longer?, expected
        (6028, 3391, 2048, true, 2048, 1152),
        (3391, 6028, 2048, true, 1152, 2048),
        (4096, 1025, 2048, true, 2048, 513),  // 512.5 rounds away from zero
        (6028, 3391, 400, false, 711, 400),
        (1, 8000, 2048, true, 1, 2048),
        (1, 8000, 400, false, 1, 8000),  // never enlarged
        (1000, 800, 2048, true, 1000, 800),
        (2048, 2048, 2048, true, 2048, 2048),
    ])
    func fit_ScalesTheChosenEdgeExactly_AndRoundsTheOther(
        width: Int, height: Int, edge: Int, longer: Bool, expectedWidth: Int, expectedHeight: Int
    ) {
        let size = DerivativeSpec.fit(width: width, height: height, edge: edge, longer: longer)
        #expect(size.width == expectedWidth && size.height == expectedHeight)
    }

    @Test func plan_DecodesAtSmallestScaleKeepingThreeTimesThePreview() {
        let info = ImageInfo(width: 9000, height: 6000, components: 3, colorSpace: .ycbcr, isProgressive: false)
        let plan = DerivativePlan(info: info, spec: DerivativeSpec())
        #expect(plan.preview == (2048, 1365))
        #expect(plan.scale == 6)  // 6750×4500 ≥ 3 × 2048×1365; 5/8 gives 5625 < 6144
        #expect(plan.thumbnailSource == .preview)
        let huge = ImageInfo(width: 16000, height: 9000, components: 3, colorSpace: .ycbcr, isProgressive: false)
        #expect(DerivativePlan(info: huge, spec: DerivativeSpec()).scale == 4)  // 3/8 gives 6000 < 6144
    }

    @Test func plan_UsesFullScale_WhenTargetIsMoreThanAThirdOfTheImage() {
        let info = ImageInfo(width: 4000, height: 3000, components: 3, colorSpace: .ycbcr, isProgressive: false)
        #expect(DerivativePlan(info: info, spec: DerivativeSpec()).scale == 8)
        // 6/8 (4521 wide) would keep twice the 2048 preview, but not three times.
        let wide = ImageInfo(width: 6028, height: 3391, components: 3, colorSpace: .ycbcr, isProgressive: false)
        #expect(DerivativePlan(info: wide, spec: DerivativeSpec()).scale == 8)
    }

    @Test func plan_FeedsThumbnailFromDecode_WhenPreviewIsTooSmall() {
        let small = ImageInfo(width: 640, height: 427, components: 3, colorSpace: .ycbcr, isProgressive: false)
        let plan = DerivativePlan(info: small, spec: DerivativeSpec())
        #expect(plan.thumbnailSource == .decode)
        #expect(plan.scale == 8)
        let tiny = ImageInfo(width: 300, height: 200, components: 3, colorSpace: .ycbcr, isProgressive: false)
        #expect(DerivativePlan(info: tiny, spec: DerivativeSpec()).thumbnailSource == .samePixels)
    }

    @Test func plan_SwapsTargets_WhenOrientationTurnsTheImage() {
        let info = ImageInfo(
            width: 6028, height: 3391, orientation: 6, components: 3, colorSpace: .ycbcr, isProgressive: false)
        let plan = DerivativePlan(info: info, spec: DerivativeSpec())
        // Displayed 3391×6028: preview 1152×2048, stored as 2048×1152.
        #expect(plan.preview == (2048, 1152))
        #expect(plan.thumbnail == (711, 400))
    }

    @Test func freelyScaledSize_WithAMarginOfOne_IsThePreviewItself() {
        // WebP's margin: a 4000×3000 file decodes straight to its 2048×1536 preview.
        #expect(
            DerivativePlan.freelyScaledSize(width: 4000, height: 3000, covering: [(2048, 1536)], margin: 1)
                == (2048, 1536))
        // Never larger than the image.
        #expect(
            DerivativePlan.freelyScaledSize(width: 1000, height: 800, covering: [(1000, 800)], margin: 1) == (1000, 800)
        )
    }

    @Test func freelyScaledSize_KeepsThreeTimesEveryTarget_OrTheFullImage() {
        // 4000×3000 with a 2048×1536 preview: three times is more than the image.
        #expect(DerivativePlan.freelyScaledSize(width: 4000, height: 3000, covering: [(2048, 1536)]) == (4000, 3000))
        // 8000×6000: 6144×4608, the aspect ratio kept.
        #expect(DerivativePlan.freelyScaledSize(width: 8000, height: 6000, covering: [(2048, 1536)]) == (6144, 4608))
        // The binding axis rules; the other side is rounded up.
        #expect(DerivativePlan.freelyScaledSize(width: 960, height: 640, covering: [(64, 43)]) == (194, 129))
        // Every target is covered: a thin thumbnail needs more height than the preview.
        #expect(
            DerivativePlan.freelyScaledSize(width: 9000, height: 1000, covering: [(1000, 111), (300, 300)])
                == (8100, 900))
    }
}
