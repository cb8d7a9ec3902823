/*
 * The resampler's inner loops; see include/resample_kernels.h. The portable versions work on
 * blocks of 32 values with the block's sums in a local array, a shape the compiler turns into
 * SIMD for any target; the AVX2 ones say the same with intrinsics, eight floats a register.
 */
#include "resample_kernels.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#define GD_AVX2 __attribute__((target("avx2,fma")))
#endif

enum { BLOCK = 32 };

/* Round-to-nearest-even by adding 1.5 * 2^23: the integer lands in the low mantissa bits. */
static inline uint8_t round_to_byte(float v)
{
    float clamped = v < 0 ? 0 : (v > 255 ? 255 : v);
    union { float f; uint32_t u; } bits = { clamped + 12582912.0f };
    return (uint8_t)bits.u;
}

/* One vertical pass over `taps` rows of type T (bytes from the decoder, or floats), defined once
   for each row type. */
#define GD_COMBINE_PORTABLE(name, T)                                                              \
    static void name(const T *const *rows, const float *w, int taps, size_t n, float *out)        \
    {                                                                                             \
        size_t x = 0;                                                                             \
        for (; x + BLOCK <= n; x += BLOCK) {                                                      \
            float sum[BLOCK] = { 0 };                                                             \
            for (int k = 0; k < taps; k++) {                                                      \
                const T *row = rows[k] + x;                                                       \
                float weight = w[k];                                                              \
                for (int j = 0; j < BLOCK; j++) sum[j] += weight * (float)row[j];                 \
            }                                                                                     \
            for (int j = 0; j < BLOCK; j++) out[x + j] = sum[j];                                  \
        }                                                                                         \
        for (; x < n; x++) {                                                                      \
            float sum = 0;                                                                        \
            for (int k = 0; k < taps; k++) sum += w[k] * (float)rows[k][x];                       \
            out[x] = sum;                                                                         \
        }                                                                                         \
    }
GD_COMBINE_PORTABLE(combine_u8_portable, uint8_t)
GD_COMBINE_PORTABLE(combine_f32_portable, float)

static void row4_portable(const float *source, const intptr_t *starts, const float *w, int taps, size_t width,
                          float *target)
{
    for (size_t i = 0; i < width; i++, w += taps) {
        const float *s = source + 4 * starts[i];
        float sum[4] = { 0 };
        for (int k = 0; k < taps; k++)
            for (int c = 0; c < 4; c++) sum[c] += w[k] * s[4 * k + c];
        for (int c = 0; c < 4; c++) target[4 * i + c] = sum[c];
    }
}

static void row1_portable(const float *source, const intptr_t *starts, const float *w, int taps, size_t width,
                          float *target)
{
    for (size_t i = 0; i < width; i++, w += taps) {
        const float *s = source + starts[i];
        float sum = 0;
        for (int k = 0; k < taps; k++) sum += w[k] * s[k];
        target[i] = sum;
    }
}

static void quantize_portable(const float *source, size_t count, uint8_t *target)
{
    for (size_t i = 0; i < count; i++) target[i] = round_to_byte(source[i]);
}

static void rgb_to_rgbx_portable(const uint8_t *source, size_t pixels, uint8_t *target)
{
    for (size_t i = 0; i < pixels; i++) {
        target[4 * i] = source[3 * i];
        target[4 * i + 1] = source[3 * i + 1];
        target[4 * i + 2] = source[3 * i + 2];
        target[4 * i + 3] = 255;
    }
}

static void widen_portable(const uint8_t *source, size_t count, float *target)
{
    for (size_t i = 0; i < count; i++) target[i] = (float)source[i];
}

/* One RGBX row's luma and its worst |R - G| or |B - G| (gd_gray_row), defined once for each target: plain
   loops the compiler vectorises. */
#define GD_GRAY_ROW(name, attributes)                                                              \
    attributes static int name(const uint8_t *source, size_t pixels, uint8_t *luma)               \
    {                                                                                              \
        int worst = 0;                                                                             \
        for (size_t i = 0; i < pixels; i++) {                                                      \
            int r = source[4 * i], g = source[4 * i + 1], b = source[4 * i + 2];                   \
            int red = r > g ? r - g : g - r, blue = b > g ? b - g : g - b;                         \
            int d = red > blue ? red : blue;                                                       \
            worst = d > worst ? d : worst;                                                         \
            luma[i] = (uint8_t)((19595u * (unsigned)r + 38470u * (unsigned)g + 7471u * (unsigned)b \
                                 + 32768u) >> 16);                                                 \
        }                                                                                          \
        return worst;                                                                              \
    }
GD_GRAY_ROW(gray_row_portable, )

#if defined(__x86_64__)
int gd_resample_has_avx2(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    int fma = (c >> 12) & 1, osxsave = (c >> 27) & 1, avx = (c >> 28) & 1;
    if (!(fma && osxsave && avx)) return 0;
    unsigned lo, hi;
    __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if ((lo & 6) != 6) return 0; /* the OS saves the XMM and YMM registers */
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    return (b >> 5) & 1;
}

/* Eight bytes at p as eight floats. */
GD_AVX2 static inline __m256 load8_u8(const uint8_t *p)
{
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)p)));
}

GD_AVX2 static inline __m256 load8_f32(const float *p) { return _mm256_loadu_ps(p); }

/* The vertical pass with intrinsics: four registers of eight sums a block; `load8` widens eight
   values of the row type to floats. */
#define GD_COMBINE_AVX2(name, T, load8)                                                           \
    GD_AVX2 static void name(const T *const *rows, const float *w, int taps, size_t n, float *out) \
    {                                                                                             \
        size_t x = 0;                                                                             \
        for (; x + BLOCK <= n; x += BLOCK) {                                                      \
            __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;                           \
            for (int k = 0; k < taps; k++) {                                                      \
                const T *row = rows[k] + x;                                                       \
                __m256 weight = _mm256_broadcast_ss(w + k);                                       \
                a0 = _mm256_fmadd_ps(weight, load8(row), a0);                                     \
                a1 = _mm256_fmadd_ps(weight, load8(row + 8), a1);                                 \
                a2 = _mm256_fmadd_ps(weight, load8(row + 16), a2);                                \
                a3 = _mm256_fmadd_ps(weight, load8(row + 24), a3);                                \
            }                                                                                     \
            _mm256_storeu_ps(out + x, a0);                                                        \
            _mm256_storeu_ps(out + x + 8, a1);                                                    \
            _mm256_storeu_ps(out + x + 16, a2);                                                   \
            _mm256_storeu_ps(out + x + 24, a3);                                                   \
        }                                                                                         \
        for (; x < n; x++) {                                                                      \
            float sum = 0;                                                                        \
            for (int k = 0; k < taps; k++) sum = __builtin_fmaf(w[k], (float)rows[k][x], sum);    \
            out[x] = sum;                                                                         \
        }                                                                                         \
    }
GD_COMBINE_AVX2(combine_u8_avx2, uint8_t, load8_u8)
GD_COMBINE_AVX2(combine_f32_avx2, float, load8_f32)

/* Weights k and k + 1, each repeated four times: one for each half of a register. */
GD_AVX2 static inline __m256 tap_pair(const float *w)
{
    __m128 two = _mm_castpd_ps(_mm_load_sd((const double *)w));
    return _mm256_permutevar8x32_ps(_mm256_castps128_ps256(two), _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1));
}

/* Two taps a register (source pixels k and k + 1 are adjacent), in two independent sums so that
   the fused multiply-adds do not wait on each other; the halves are added at the end. */
GD_AVX2 static void row4_avx2(const float *source, const intptr_t *starts, const float *w, int taps, size_t width,
                              float *target)
{
    for (size_t i = 0; i < width; i++, w += taps) {
        const float *s = source + 4 * starts[i];
        __m256 a0 = _mm256_setzero_ps(), a1 = a0;
        int k = 0;
        for (; k + 4 <= taps; k += 4) {
            a0 = _mm256_fmadd_ps(tap_pair(w + k), _mm256_loadu_ps(s + 4 * k), a0);
            a1 = _mm256_fmadd_ps(tap_pair(w + k + 2), _mm256_loadu_ps(s + 4 * k + 8), a1);
        }
        if (k + 2 <= taps) {
            a0 = _mm256_fmadd_ps(tap_pair(w + k), _mm256_loadu_ps(s + 4 * k), a0);
            k += 2;
        }
        __m256 a = _mm256_add_ps(a0, a1);
        __m128 sum = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
        if (k < taps) sum = _mm_fmadd_ps(_mm_broadcast_ss(w + k), _mm_loadu_ps(s + 4 * k), sum);
        _mm_storeu_ps(target + 4 * i, sum);
    }
}

GD_AVX2 static void row1_avx2(const float *source, const intptr_t *starts, const float *w, int taps, size_t width,
                              float *target)
{
    for (size_t i = 0; i < width; i++, w += taps) {
        const float *s = source + starts[i];
        float sum = 0;
        for (int k = 0; k < taps; k++) sum = __builtin_fmaf(w[k], s[k], sum);
        target[i] = sum;
    }
}

GD_AVX2 static void quantize_avx2(const float *source, size_t count, uint8_t *target)
{
    const __m256 low = _mm256_setzero_ps(), high = _mm256_set1_ps(255);
    size_t i = 0;
    for (; i + 32 <= count; i += 32) {
        __m256i v[4];
        for (int j = 0; j < 4; j++) {
            __m256 clamped = _mm256_min_ps(_mm256_max_ps(_mm256_loadu_ps(source + i + 8 * j), low), high);
            v[j] = _mm256_cvtps_epi32(clamped); /* rounds to nearest even, as round_to_byte */
        }
        __m256i words = _mm256_packus_epi32(v[0], v[1]), words2 = _mm256_packus_epi32(v[2], v[3]);
        __m256i bytes = _mm256_packus_epi16(words, words2);
        /* The packs work per 128-bit lane: put the dwords back in order. */
        bytes = _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
        _mm256_storeu_si256((__m256i *)(target + i), bytes);
    }
    for (; i < count; i++) target[i] = round_to_byte(source[i]);
}

GD_AVX2 static void widen_avx2(const uint8_t *source, size_t count, float *target)
{
    size_t i = 0;
    for (; i + 8 <= count; i += 8) _mm256_storeu_ps(target + i, load8_u8(source + i));
    for (; i < count; i++) target[i] = (float)source[i];
}

/* Four pixels a shuffle (SSSE3's pshufb); 16 bytes are read for 12, so the loop stops two pixels early. */
GD_AVX2 static void rgb_to_rgbx_avx2(const uint8_t *source, size_t pixels, uint8_t *target)
{
    const __m128i order = _mm_setr_epi8(0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1);
    const __m128i opaque = _mm_set1_epi32((int)0xff000000u);
    size_t i = 0;
    for (; i + 6 <= pixels; i += 4) {
        __m128i rgb = _mm_loadu_si128((const __m128i *)(source + 3 * i));
        _mm_storeu_si128((__m128i *)(target + 4 * i), _mm_or_si128(_mm_shuffle_epi8(rgb, order), opaque));
    }
    rgb_to_rgbx_portable(source + 3 * i, pixels - i, target + 4 * i);
}

GD_GRAY_ROW(gray_row_avx2, GD_AVX2)

#define GD_DISPATCH(avx2, name, ...) \
    do { \
        if (avx2) name##_avx2(__VA_ARGS__); \
        else name##_portable(__VA_ARGS__); \
    } while (0)
#else
int gd_resample_has_avx2(void) { return 0; }
#define GD_DISPATCH(avx2, name, ...) \
    do { \
        (void)(avx2); \
        name##_portable(__VA_ARGS__); \
    } while (0)
#endif

void gd_combine_u8(const uint8_t *const *rows, const float *weights, int taps, size_t count, float *out, int avx2)
{
    GD_DISPATCH(avx2, combine_u8, rows, weights, taps, count, out);
}

void gd_combine_f32(const float *const *rows, const float *weights, int taps, size_t count, float *out, int avx2)
{
    GD_DISPATCH(avx2, combine_f32, rows, weights, taps, count, out);
}

void gd_resample_row4(const float *source, const intptr_t *starts, const float *weights, int taps, size_t width,
                      float *target, int avx2)
{
    GD_DISPATCH(avx2, row4, source, starts, weights, taps, width, target);
}

void gd_resample_row1(const float *source, const intptr_t *starts, const float *weights, int taps, size_t width,
                      float *target, int avx2)
{
    GD_DISPATCH(avx2, row1, source, starts, weights, taps, width, target);
}

void gd_quantize(const float *source, size_t count, uint8_t *target, int avx2)
{
    GD_DISPATCH(avx2, quantize, source, count, target);
}

void gd_widen(const uint8_t *source, size_t count, float *target, int avx2)
{
    GD_DISPATCH(avx2, widen, source, count, target);
}

void gd_rgb_to_rgbx(const uint8_t *source, size_t pixels, uint8_t *target, int avx2)
{
    GD_DISPATCH(avx2, rgb_to_rgbx, source, pixels, target);
}

int gd_gray_row(const uint8_t *source, size_t pixels, uint8_t *luma, int avx2)
{
#if defined(__x86_64__)
    if (avx2) return gray_row_avx2(source, pixels, luma);
#endif
    (void)avx2;
    return gray_row_portable(source, pixels, luma);
}
