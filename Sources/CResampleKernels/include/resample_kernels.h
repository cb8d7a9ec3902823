#ifndef GALLERYD_RESAMPLE_KERNELS_H
#define GALLERYD_RESAMPLE_KERNELS_H
/*
 * The resampler's inner loops (StreamingResampler): the vertical pass over byte or float rows,
 * the horizontal pass over RGBX or gray float rows, widening and rounding. Each has a portable
 * version, written so the compiler vectorises it for the baseline x86-64 (SSE2) or arm64, and on
 * x86-64 an AVX2+FMA version (eight floats per instruction, fused multiply-adds), chosen by the
 * `avx2` argument: pass gd_resample_has_avx2() once read, never 1 on a CPU without AVX2 and FMA.
 * The vertical passes add the taps in the same order in both versions (they differ only in the
 * FMA's single rounding); the AVX2 horizontal pass adds them in two interleaved sums.
 */
#include <stddef.h>
#include <stdint.h>

/* 1 when this CPU (and its OS) runs AVX2 and FMA instructions. Runs CPUID: call it once. */
int gd_resample_has_avx2(void);

/* out[x] = sum over k < taps of weights[k] * rows[k][x], for x < count (byte rows). */
void gd_combine_u8(const uint8_t *const *rows, const float *weights, int taps, size_t count, float *out,
                   int avx2);

/* out[x] = sum over k < taps of weights[k] * rows[k][x], for x < count (float rows). */
void gd_combine_f32(const float *const *rows, const float *weights, int taps, size_t count, float *out,
                    int avx2);

/* Horizontal pass, 4 floats a pixel: pixel i of target is sum over k < taps of
   weights[i * taps + k] * source pixel (starts[i] + k), for i < width. */
void gd_resample_row4(const float *source, const intptr_t *starts, const float *weights, int taps, size_t width,
                      float *target, int avx2);

/* Horizontal pass, 1 float a pixel (gray), as gd_resample_row4. */
void gd_resample_row1(const float *source, const intptr_t *starts, const float *weights, int taps, size_t width,
                      float *target, int avx2);

/* target[i] = source[i] rounded to the nearest integer and clamped to 0...255. */
void gd_quantize(const float *source, size_t count, uint8_t *target, int avx2);

/* target[i] = (float)source[i]. */
void gd_widen(const uint8_t *source, size_t count, float *target, int avx2);

/* Packed RGB to RGBX: target pixel i is source pixel i's three bytes and 255. */
void gd_rgb_to_rgbx(const uint8_t *source, size_t pixels, uint8_t *target, int avx2);

/* An RGBX row's luma on libjpeg's weights, rounded as its RGB -> YCbCr conversion rounds (luma[i] of pixel i),
   and the row's largest |R - G| or |B - G| (returned): the gray check of a streamed preview (decision 069). */
int gd_gray_row(const uint8_t *source, size_t pixels, uint8_t *luma, int avx2);
#endif
