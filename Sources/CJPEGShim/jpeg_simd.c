/*
 * The coefficient path's sample loops (jpeg_coefficients.c): RGB->YCbCr and 2x2 chroma
 * downsampling, each in a portable form and an AVX2 form chosen at run time (as
 * CResampleKernels chooses). Both forms do libjpeg's integer arithmetic exactly, so they write the
 * same samples; ImagingTests compare them on random and extreme rows of every edge width.
 *
 * RGB->YCbCr is jccolor.c's: rgb_ycc_start's tables hold FIX(c) * i (plus the rounding and the
 * Cb/Cr offset in one table each), and the sum of three entries shifted right by 16 is the
 * sample. The products are exact 32-bit integers, so multiplying here gives the tables' sums.
 * The downsample is jcsample.c h2v2_downsample: (a + b + c + d + bias) >> 2, bias 1, 2, 1, 2, ...
 * The chroma sharpening after it (jpeg_coefficients.c) is one portable loop the compiler vectorizes.
 */
#include "jpeg_coefficients.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#define GD_AVX2 __attribute__((target("avx2")))
#endif

#define GD_YCC_SCALEBITS 16
#define GD_YCC_FIX(x) ((int32_t)((x) * (1L << GD_YCC_SCALEBITS) + 0.5))
#define GD_YCC_HALF ((int32_t)1 << (GD_YCC_SCALEBITS - 1))
#define GD_YCC_OFFSET (((int32_t)128 << GD_YCC_SCALEBITS) + GD_YCC_HALF - 1)

enum {
    Y_R = GD_YCC_FIX(0.29900),
    Y_G = GD_YCC_FIX(0.58700),
    Y_B = GD_YCC_FIX(0.11400),
    CB_R = -GD_YCC_FIX(0.16874),
    CB_G = -GD_YCC_FIX(0.33126),
    CB_B = GD_YCC_FIX(0.50000),
    CR_R = GD_YCC_FIX(0.50000),
    CR_G = -GD_YCC_FIX(0.41869),
    CR_B = -GD_YCC_FIX(0.08131),
};

static void ycc_portable(const unsigned char *pixels, int pixel_bytes, unsigned int from, unsigned int width,
                         JSAMPLE *y, JSAMPLE *cb, JSAMPLE *cr) {
    pixels += (size_t)from * (size_t)pixel_bytes;
    for (unsigned int x = from; x < width; x++, pixels += pixel_bytes) {
        int32_t r = pixels[0], g = pixels[1], b = pixels[2];
        y[x] = (JSAMPLE)((Y_R * r + Y_G * g + Y_B * b + GD_YCC_HALF) >> GD_YCC_SCALEBITS);
        cb[x] = (JSAMPLE)((CB_R * r + CB_G * g + CB_B * b + GD_YCC_OFFSET) >> GD_YCC_SCALEBITS);
        cr[x] = (JSAMPLE)((CR_R * r + CR_G * g + CR_B * b + GD_YCC_OFFSET) >> GD_YCC_SCALEBITS);
    }
}

static void downsample_portable(const JSAMPLE *in0, const JSAMPLE *in1, size_t from, size_t count, JSAMPLE *out) {
    for (size_t x = from; x < count; x++) {
        int bias = (x & 1) ? 2 : 1;
        out[x] = (JSAMPLE)((in0[2 * x] + in0[2 * x + 1] + in1[2 * x] + in1[2 * x + 1] + bias) >> 2);
    }
}

#if defined(__x86_64__)
int gd_coefficients_has_avx2(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    int osxsave = (c >> 27) & 1, avx = (c >> 28) & 1;
    if (!(osxsave && avx)) return 0;
    unsigned lo, hi;
    __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if ((lo & 6) != 6) return 0; /* the OS saves the XMM and YMM registers */
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    return (b >> 5) & 1;
}

/* The low byte of each of eight 32-bit lanes (each 0...255), stored as eight bytes. */
GD_AVX2 static inline void store8_low_bytes(__m256i v, JSAMPLE *target) {
    const __m256i pick = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12,
                                          -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    v = _mm256_shuffle_epi8(v, pick);
    v = _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(0, 4, 0, 0, 0, 0, 0, 0));
    _mm_storel_epi64((__m128i *)target, _mm256_castsi256_si128(v));
}

/* Eight pixels as 32-bit lanes 0x00BBGGRR (any fourth byte cleared). */
GD_AVX2 static inline __m256i load8_pixels(const unsigned char *p, int pixel_bytes) {
    if (pixel_bytes == 4) return _mm256_loadu_si256((const __m256i *)p);
    /* Three bytes a pixel: pixels 0-3 and 4-7 from two 16-byte loads, spread to four bytes each. */
    __m256i v = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)p)),
                                        _mm_loadu_si128((const __m128i *)(p + 12)), 1);
    const __m256i spread = _mm256_setr_epi8(0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1, 0, 1, 2, -1, 3, 4,
                                            5, -1, 6, 7, 8, -1, 9, 10, 11, -1);
    return _mm256_shuffle_epi8(v, spread);
}

GD_AVX2 static void ycc_avx2(const unsigned char *pixels, int pixel_bytes, unsigned int width, JSAMPLE *y,
                             JSAMPLE *cb, JSAMPLE *cr) {
    const __m256i mask = _mm256_set1_epi32(0xff);
    const __m256i half = _mm256_set1_epi32(GD_YCC_HALF), offset = _mm256_set1_epi32(GD_YCC_OFFSET);
    const __m256i yr = _mm256_set1_epi32(Y_R), yg = _mm256_set1_epi32(Y_G), yb = _mm256_set1_epi32(Y_B);
    const __m256i cbr = _mm256_set1_epi32(CB_R), cbg = _mm256_set1_epi32(CB_G), cbb = _mm256_set1_epi32(CB_B);
    const __m256i crr = _mm256_set1_epi32(CR_R), crg = _mm256_set1_epi32(CR_G), crb = _mm256_set1_epi32(CR_B);
    /* Three-byte pixels read 4 bytes past the eighth pixel: leave room for them. */
    unsigned int margin = pixel_bytes == 4 ? 8 : 10;
    unsigned int x = 0;
    for (; x + margin <= width; x += 8) {
        __m256i v = load8_pixels(pixels + (size_t)x * (size_t)pixel_bytes, pixel_bytes);
        __m256i r = _mm256_and_si256(v, mask);
        __m256i g = _mm256_and_si256(_mm256_srli_epi32(v, 8), mask);
        __m256i b = _mm256_and_si256(_mm256_srli_epi32(v, 16), mask);
        __m256i ys = _mm256_add_epi32(_mm256_add_epi32(_mm256_mullo_epi32(r, yr), _mm256_mullo_epi32(g, yg)),
                                      _mm256_add_epi32(_mm256_mullo_epi32(b, yb), half));
        __m256i cbs = _mm256_add_epi32(_mm256_add_epi32(_mm256_mullo_epi32(r, cbr), _mm256_mullo_epi32(g, cbg)),
                                       _mm256_add_epi32(_mm256_mullo_epi32(b, cbb), offset));
        __m256i crs = _mm256_add_epi32(_mm256_add_epi32(_mm256_mullo_epi32(r, crr), _mm256_mullo_epi32(g, crg)),
                                       _mm256_add_epi32(_mm256_mullo_epi32(b, crb), offset));
        store8_low_bytes(_mm256_srai_epi32(ys, GD_YCC_SCALEBITS), y + x);
        store8_low_bytes(_mm256_srai_epi32(cbs, GD_YCC_SCALEBITS), cb + x);
        store8_low_bytes(_mm256_srai_epi32(crs, GD_YCC_SCALEBITS), cr + x);
    }
    ycc_portable(pixels, pixel_bytes, x, width, y, cb, cr);
}

GD_AVX2 static void downsample_avx2(const JSAMPLE *in0, const JSAMPLE *in1, size_t count, JSAMPLE *out) {
    const __m256i ones = _mm256_set1_epi8(1);
    const __m256i bias = _mm256_set1_epi32(0x00020001); /* 1, 2, 1, 2, ... as 16-bit lanes */
    size_t x = 0;
    for (; x + 32 <= count; x += 32) {
        const __m256i *a = (const __m256i *)(in0 + 2 * x), *b = (const __m256i *)(in1 + 2 * x);
        __m256i lo = _mm256_add_epi16(_mm256_maddubs_epi16(_mm256_loadu_si256(a), ones),
                                      _mm256_maddubs_epi16(_mm256_loadu_si256(b), ones));
        __m256i hi = _mm256_add_epi16(_mm256_maddubs_epi16(_mm256_loadu_si256(a + 1), ones),
                                      _mm256_maddubs_epi16(_mm256_loadu_si256(b + 1), ones));
        lo = _mm256_srli_epi16(_mm256_add_epi16(lo, bias), 2);
        hi = _mm256_srli_epi16(_mm256_add_epi16(hi, bias), 2);
        /* packus interleaves the 128-bit lanes: outputs 0-7, 16-23 | 8-15, 24-31; put them back. */
        __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi16(lo, hi), 0xd8);
        _mm256_storeu_si256((__m256i *)(out + x), packed);
    }
    downsample_portable(in0, in1, x, count, out);
}
#else
int gd_coefficients_has_avx2(void) { return 0; }
#endif

void gd_rgb_ycc_row(const unsigned char *pixels, int pixel_bytes, unsigned int width, unsigned char *y,
                    unsigned char *cb, unsigned char *cr, int avx2) {
#if defined(__x86_64__)
    if (avx2) {
        ycc_avx2(pixels, pixel_bytes, width, y, cb, cr);
        return;
    }
#else
    (void)avx2;
#endif
    ycc_portable(pixels, pixel_bytes, 0, width, y, cb, cr);
}

void gd_downsample_h2v2_row(const unsigned char *in0, const unsigned char *in1, size_t count, unsigned char *out,
                            int avx2) {
#if defined(__x86_64__)
    if (avx2) {
        downsample_avx2(in0, in1, count, out);
        return;
    }
#else
    (void)avx2;
#endif
    downsample_portable(in0, in1, 0, count, out);
}

void gd_sharpen_chroma_row(const unsigned char *up, const unsigned char *row, const unsigned char *down,
                           size_t count, int k256, unsigned char *out) {
    if (count == 0) return;
    if (count == 1) {
        int v = row[0] + ((k256 * (2 * row[0] - up[0] - down[0]) + 1024) >> 11);
        out[0] = (unsigned char)(v < 0 ? 0 : v > 255 ? 255 : v);
        return;
    }
    /* The ends apart, a loop the compiler vectorizes. */
    int first = row[0] + ((k256 * (3 * row[0] - up[0] - down[0] - row[1]) + 1024) >> 11);
    size_t last = count - 1;
    int end = row[last] + ((k256 * (3 * row[last] - up[last] - down[last] - row[last - 1]) + 1024) >> 11);
    for (size_t x = 1; x < last; x++) {
        int v = row[x] + ((k256 * (4 * row[x] - up[x] - down[x] - row[x - 1] - row[x + 1]) + 1024) >> 11);
        out[x] = (unsigned char)(v < 0 ? 0 : v > 255 ? 255 : v);
    }
    out[0] = (unsigned char)(first < 0 ? 0 : first > 255 ? 255 : first);
    out[last] = (unsigned char)(end < 0 ? 0 : end > 255 ? 255 : end);
}
