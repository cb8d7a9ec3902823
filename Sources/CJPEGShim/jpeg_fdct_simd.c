/*
 * gd_fdct_islow (jpeg_quantize.c: libjpeg's jpeg_fdct_islow) with AVX2, the same integer results:
 * eight 1-D passes at once, one 32-bit lane each, with the scalar pass's very operations
 * (32-bit products and sums, the same descaling, the int16 store between the passes). The block
 * is transposed before the row pass and again before the column pass. gd_fdct_islow_samples
 * takes the block straight from 8-bit sample rows (centring them as jcdctmgr.c does). ImagingTests
 * compare both with the scalar form on random and extreme blocks.
 */
#include "jpeg_coefficients.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define GD_AVX2 __attribute__((target("avx2")))

#define C_BITS 13
#define P1_BITS 2

/* 8x8 transpose of 32-bit lanes: v[i] lane j -> v[j] lane i. */
GD_AVX2 static inline void transpose8(__m256i v[8]) {
    __m256i t0 = _mm256_unpacklo_epi32(v[0], v[1]), t1 = _mm256_unpackhi_epi32(v[0], v[1]);
    __m256i t2 = _mm256_unpacklo_epi32(v[2], v[3]), t3 = _mm256_unpackhi_epi32(v[2], v[3]);
    __m256i t4 = _mm256_unpacklo_epi32(v[4], v[5]), t5 = _mm256_unpackhi_epi32(v[4], v[5]);
    __m256i t6 = _mm256_unpacklo_epi32(v[6], v[7]), t7 = _mm256_unpackhi_epi32(v[6], v[7]);
    __m256i u0 = _mm256_unpacklo_epi64(t0, t2), u1 = _mm256_unpackhi_epi64(t0, t2);
    __m256i u2 = _mm256_unpacklo_epi64(t1, t3), u3 = _mm256_unpackhi_epi64(t1, t3);
    __m256i u4 = _mm256_unpacklo_epi64(t4, t6), u5 = _mm256_unpackhi_epi64(t4, t6);
    __m256i u6 = _mm256_unpacklo_epi64(t5, t7), u7 = _mm256_unpackhi_epi64(t5, t7);
    v[0] = _mm256_permute2x128_si256(u0, u4, 0x20);
    v[1] = _mm256_permute2x128_si256(u1, u5, 0x20);
    v[2] = _mm256_permute2x128_si256(u2, u6, 0x20);
    v[3] = _mm256_permute2x128_si256(u3, u7, 0x20);
    v[4] = _mm256_permute2x128_si256(u0, u4, 0x31);
    v[5] = _mm256_permute2x128_si256(u1, u5, 0x31);
    v[6] = _mm256_permute2x128_si256(u2, u6, 0x31);
    v[7] = _mm256_permute2x128_si256(u3, u7, 0x31);
}

GD_AVX2 static inline __m256i mul(__m256i a, int32_t c) { return _mm256_mullo_epi32(a, _mm256_set1_epi32(c)); }

/* (x + 2^(n-1)) >> n, arithmetic, as GD_DESCALE. */
GD_AVX2 static inline __m256i descale(__m256i x, int n) {
    return _mm256_srai_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(1 << (n - 1))), n);
}

/* What the scalar pass's (int16_t) store keeps: the low 16 bits, sign-extended. */
GD_AVX2 static inline __m256i wrap16(__m256i x) { return _mm256_srai_epi32(_mm256_slli_epi32(x, 16), 16); }

/* One pass over d[0..7] (eight passes, one a lane), as gd_fdct_pass. */
GD_AVX2 static inline void pass(__m256i d[8], int first_pass) {
    __m256i tmp0 = _mm256_add_epi32(d[0], d[7]), tmp7 = _mm256_sub_epi32(d[0], d[7]);
    __m256i tmp1 = _mm256_add_epi32(d[1], d[6]), tmp6 = _mm256_sub_epi32(d[1], d[6]);
    __m256i tmp2 = _mm256_add_epi32(d[2], d[5]), tmp5 = _mm256_sub_epi32(d[2], d[5]);
    __m256i tmp3 = _mm256_add_epi32(d[3], d[4]), tmp4 = _mm256_sub_epi32(d[3], d[4]);
    __m256i tmp10 = _mm256_add_epi32(tmp0, tmp3), tmp13 = _mm256_sub_epi32(tmp0, tmp3);
    __m256i tmp11 = _mm256_add_epi32(tmp1, tmp2), tmp12 = _mm256_sub_epi32(tmp1, tmp2);
    int shift = first_pass ? C_BITS - P1_BITS : C_BITS + P1_BITS;

    if (first_pass) {
        d[0] = _mm256_slli_epi32(_mm256_add_epi32(tmp10, tmp11), P1_BITS);
        d[4] = _mm256_slli_epi32(_mm256_sub_epi32(tmp10, tmp11), P1_BITS);
    } else {
        d[0] = descale(_mm256_add_epi32(tmp10, tmp11), P1_BITS);
        d[4] = descale(_mm256_sub_epi32(tmp10, tmp11), P1_BITS);
    }
    __m256i z1 = mul(_mm256_add_epi32(tmp12, tmp13), 4433);
    d[2] = descale(_mm256_add_epi32(z1, mul(tmp13, 6270)), shift);
    d[6] = descale(_mm256_add_epi32(z1, mul(tmp12, -15137)), shift);

    z1 = _mm256_add_epi32(tmp4, tmp7);
    __m256i z2 = _mm256_add_epi32(tmp5, tmp6);
    __m256i z3 = _mm256_add_epi32(tmp4, tmp6);
    __m256i z4 = _mm256_add_epi32(tmp5, tmp7);
    __m256i z5 = mul(_mm256_add_epi32(z3, z4), 9633);
    tmp4 = mul(tmp4, 2446);
    tmp5 = mul(tmp5, 16819);
    tmp6 = mul(tmp6, 25172);
    tmp7 = mul(tmp7, 12299);
    z1 = mul(z1, -7373);
    z2 = mul(z2, -20995);
    z3 = _mm256_add_epi32(mul(z3, -16069), z5);
    z4 = _mm256_add_epi32(mul(z4, -3196), z5);
    d[7] = descale(_mm256_add_epi32(_mm256_add_epi32(tmp4, z1), z3), shift);
    d[5] = descale(_mm256_add_epi32(_mm256_add_epi32(tmp5, z2), z4), shift);
    d[3] = descale(_mm256_add_epi32(_mm256_add_epi32(tmp6, z2), z3), shift);
    d[1] = descale(_mm256_add_epi32(_mm256_add_epi32(tmp7, z1), z4), shift);
    for (int k = 0; k < 8; k++) d[k] = wrap16(d[k]);
}

/* The transform of v[k] = row k's eight samples (centred, 32-bit lanes) into data. */
GD_AVX2 static inline void fdct_rows(__m256i v[8], int16_t data[64]) {
    transpose8(v); /* v[j] lane r: row r's sample j */
    pass(v, 1);    /* v[j] lane r: row r's output j */
    transpose8(v); /* v[r] lane c: row r, column c */
    pass(v, 0);    /* v[k] lane c: column c's output k */
    for (int k = 0; k < 8; k += 2) {
        /* Both already wrapped to 16 bits: packs keeps them. Lanes come out 0-3, 8-11 | 4-7, 12-15. */
        __m256i packed = _mm256_permute4x64_epi64(_mm256_packs_epi32(v[k], v[k + 1]), 0xd8);
        _mm256_storeu_si256((__m256i *)(data + 8 * k), packed);
    }
}

GD_AVX2 static void fdct_avx2(int16_t data[64]) {
    __m256i v[8];
    for (int k = 0; k < 8; k++) v[k] = _mm256_cvtepi16_epi32(_mm_loadu_si128((const __m128i *)(data + 8 * k)));
    fdct_rows(v, data);
}

GD_AVX2 static void fdct_samples_avx2(const unsigned char *const *rows, size_t column, int16_t data[64]) {
    const __m256i center = _mm256_set1_epi32(CENTERJSAMPLE);
    __m256i v[8];
    for (int k = 0; k < 8; k++)
        v[k] = _mm256_sub_epi32(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(rows[k] + column))), center);
    fdct_rows(v, data);
}
#endif

void gd_fdct_islow_dispatch(short data[64], int avx2) {
#if defined(__x86_64__)
    if (avx2) {
        fdct_avx2(data);
        return;
    }
#else
    (void)avx2;
#endif
    gd_fdct_islow(data);
}

void gd_fdct_islow_samples(const unsigned char *const *rows, size_t column, short data[64], int avx2) {
#if defined(__x86_64__)
    if (avx2) {
        fdct_samples_avx2(rows, column, data);
        return;
    }
#else
    (void)avx2;
#endif
    for (int y = 0; y < DCTSIZE; y++) {
        const unsigned char *row = rows[y] + column;
        for (int x = 0; x < DCTSIZE; x++) data[y * DCTSIZE + x] = (short)(row[x] - CENTERJSAMPLE);
    }
    gd_fdct_islow(data);
}
