/*
 * The encoder's own forward DCT and quantizers (the coefficient path of jpeg_coefficients.c).
 *
 * gd_fdct_islow is libjpeg's jpeg_fdct_islow (jfdctint.c: Loeffler-Ligtenberg-Moschytz with
 * 13-bit fixed-point constants, outputs scaled up by 8), and gd_quantize_round is
 * libjpeg-turbo's reciprocal quantizer (jcdctmgr.c compute_reciprocal/quantize with 16-bit
 * DCTELEMs, as its SIMD builds use), so that with rounding the coefficient path writes the very
 * bytes libjpeg's own compressor writes. gd_quantize_trellis is a rate-distortion quantizer in
 * the manner of mozjpeg's quantize_trellis: per 8x8 block, a shortest path over the zig-zag
 * positions where each AC coefficient is coded as its rounded value, a smaller magnitude (the
 * value rounded toward zero, or the largest value of a lower magnitude category) or zero (part
 * of a run), costed as Huffman bits of the run/size symbol plus the magnitude bits, plus lambda
 * times the squared error in units of the quantization step.
 */
#include "jpeg_coefficients.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Zig-zag position -> natural (row-major) index. */
const int gd_natural_order[64] = {
    0,  1,  8,  16, 9,  2,  3,  10, 17, 24, 32, 25, 18, 11, 4,  5,  12, 19, 26, 33, 40, 48,
    41, 34, 27, 20, 13, 6,  7,  14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23,
    30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
};

#define GD_CONST_BITS 13
#define GD_PASS1_BITS 2
#define GD_FIX_0_298631336 ((int32_t)2446)
#define GD_FIX_0_390180644 ((int32_t)3196)
#define GD_FIX_0_541196100 ((int32_t)4433)
#define GD_FIX_0_765366865 ((int32_t)6270)
#define GD_FIX_0_899976223 ((int32_t)7373)
#define GD_FIX_1_175875602 ((int32_t)9633)
#define GD_FIX_1_501321110 ((int32_t)12299)
#define GD_FIX_1_847759065 ((int32_t)15137)
#define GD_FIX_1_961570560 ((int32_t)16069)
#define GD_FIX_2_053119869 ((int32_t)16819)
#define GD_FIX_2_562915447 ((int32_t)20995)
#define GD_FIX_3_072711026 ((int32_t)25172)
#define GD_DESCALE(x, n) (((x) + ((int32_t)1 << ((n)-1))) >> (n))

/* One 1-D pass over 8 values spaced `step` apart; `even_shift`/`odd_shift` as in jfdctint.c. */
static inline void gd_fdct_pass(int16_t *d, int step, int first_pass) {
    int32_t tmp0 = d[0 * step] + d[7 * step];
    int32_t tmp7 = d[0 * step] - d[7 * step];
    int32_t tmp1 = d[1 * step] + d[6 * step];
    int32_t tmp6 = d[1 * step] - d[6 * step];
    int32_t tmp2 = d[2 * step] + d[5 * step];
    int32_t tmp5 = d[2 * step] - d[5 * step];
    int32_t tmp3 = d[3 * step] + d[4 * step];
    int32_t tmp4 = d[3 * step] - d[4 * step];

    int32_t tmp10 = tmp0 + tmp3;
    int32_t tmp13 = tmp0 - tmp3;
    int32_t tmp11 = tmp1 + tmp2;
    int32_t tmp12 = tmp1 - tmp2;
    int shift = first_pass ? GD_CONST_BITS - GD_PASS1_BITS : GD_CONST_BITS + GD_PASS1_BITS;

    if (first_pass) {
        d[0 * step] = (int16_t)((tmp10 + tmp11) * (1 << GD_PASS1_BITS));
        d[4 * step] = (int16_t)((tmp10 - tmp11) * (1 << GD_PASS1_BITS));
    } else {
        d[0 * step] = (int16_t)GD_DESCALE(tmp10 + tmp11, GD_PASS1_BITS);
        d[4 * step] = (int16_t)GD_DESCALE(tmp10 - tmp11, GD_PASS1_BITS);
    }
    int32_t z1 = (tmp12 + tmp13) * GD_FIX_0_541196100;
    d[2 * step] = (int16_t)GD_DESCALE(z1 + tmp13 * GD_FIX_0_765366865, shift);
    d[6 * step] = (int16_t)GD_DESCALE(z1 + tmp12 * -GD_FIX_1_847759065, shift);

    z1 = tmp4 + tmp7;
    int32_t z2 = tmp5 + tmp6;
    int32_t z3 = tmp4 + tmp6;
    int32_t z4 = tmp5 + tmp7;
    int32_t z5 = (z3 + z4) * GD_FIX_1_175875602;
    tmp4 *= GD_FIX_0_298631336;
    tmp5 *= GD_FIX_2_053119869;
    tmp6 *= GD_FIX_3_072711026;
    tmp7 *= GD_FIX_1_501321110;
    z1 *= -GD_FIX_0_899976223;
    z2 *= -GD_FIX_2_562915447;
    z3 *= -GD_FIX_1_961570560;
    z4 *= -GD_FIX_0_390180644;
    z3 += z5;
    z4 += z5;
    d[7 * step] = (int16_t)GD_DESCALE(tmp4 + z1 + z3, shift);
    d[5 * step] = (int16_t)GD_DESCALE(tmp5 + z2 + z4, shift);
    d[3 * step] = (int16_t)GD_DESCALE(tmp6 + z2 + z3, shift);
    d[1 * step] = (int16_t)GD_DESCALE(tmp7 + z1 + z4, shift);
}

void gd_fdct_islow(int16_t data[64]) {
    for (int row = 0; row < 8; row++) gd_fdct_pass(data + row * 8, 1, 1);
    for (int column = 0; column < 8; column++) gd_fdct_pass(data + column, 8, 0);
}

void gd_divisors_init(gd_divisors *divisors, const uint16_t quantval[64]) {
    for (int i = 0; i < 64; i++) {
        uint32_t divisor = (uint32_t)quantval[i] << 3;
        divisors->step[i] = (int32_t)divisor;
        if (divisor == 1) {
            divisors->reciprocal[i] = 1;
            divisors->correction[i] = 0;
            divisors->shift[i] = 0;
            continue;
        }
        int b = 31 - __builtin_clz(divisor); /* flss(divisor) - 1 */
        int r = 16 + b;
        uint32_t fq = (uint32_t)(((uint64_t)1 << r) / divisor);
        uint32_t fr = (uint32_t)(((uint64_t)1 << r) % divisor);
        uint32_t c = divisor / 2;
        if (fr == 0) {
            fq >>= 1;
            r--;
        } else if (fr <= divisor / 2U) {
            c++;
        } else {
            fq++;
        }
        divisors->reciprocal[i] = fq & 0xffff;
        divisors->correction[i] = c & 0xffff;
        divisors->shift[i] = r; /* the product is shifted right by r in all */
    }
}

void gd_quantize_round(const int16_t workspace[64], const gd_divisors *divisors, JCOEF output[64]) {
    for (int i = 0; i < 64; i++) {
        int32_t temp = workspace[i];
        int negative = temp < 0;
        if (negative) temp = -temp;
        uint32_t product = (uint32_t)(uint16_t)(temp + divisors->correction[i]) * divisors->reciprocal[i];
        temp = (int32_t)(uint16_t)(product >> divisors->shift[i]);
        output[i] = (JCOEF)(negative ? -temp : temp);
    }
}

void gd_huffman_lengths(const JHUFF_TBL *table, unsigned char lengths[256]) {
    for (int i = 0; i < 256; i++) lengths[i] = 0;
    if (table == NULL) return;
    int k = 0;
    for (int length = 1; length <= 16; length++)
        for (int i = 0; i < table->bits[length] && k < 256; i++) lengths[table->huffval[k++]] = (unsigned char)length;
}

/* Magnitude category: bits needed for |value| (0 for 0). */
static inline int gd_nbits(int value) { return value == 0 ? 0 : 32 - __builtin_clz((unsigned)value); }

void gd_trellis_init(gd_trellis *trellis, const uint16_t quantval[64], const unsigned char ac_lengths[256],
                     float log_scale1, float log_scale2) {
    for (int i = 0; i < 64; i++) trellis->weight[i] = 1.0f / ((float)quantval[i] * (float)quantval[i]);
    for (int i = 0; i < 256; i++) trellis->ac_bits[i] = ac_lengths[i];
    trellis->lambda_numerator = powf(2.0f, log_scale1);
    trellis->lambda_offset = powf(2.0f, log_scale2);
}

void gd_quantize_trellis(const int16_t workspace[64], const gd_divisors *divisors, const gd_trellis *trellis,
                         JCOEF output[64]) {
    /* DC as libjpeg rounds it (gd_quantize_round's arithmetic on coefficient 0 alone); the AC
     * decisions below. */
    JCOEF dc;
    {
        int32_t temp = workspace[0];
        int negative = temp < 0;
        if (negative) temp = -temp;
        uint32_t product = (uint32_t)(uint16_t)(temp + divisors->correction[0]) * divisors->reciprocal[0];
        temp = (int32_t)(uint16_t)(product >> divisors->shift[0]);
        dc = (JCOEF)(negative ? -temp : temp);
    }

    /* Lambda falls as the block's AC energy rises: errors hide in texture (mozjpeg's
     * lambda_log_scale1/2). The distortion of each coefficient is weighted by 1/step².
     * The energy is a float sum of squares in natural order; while it stays under 2^24 every
     * partial sum is an exact integer, so the integer sum converted once is the same float. */
    int64_t integer_energy = 0;
    for (int i = 1; i < 64; i++) integer_energy += (int32_t)workspace[i] * (int32_t)workspace[i];
    float energy;
    if (integer_energy < ((int64_t)1 << 24)) {
        energy = (float)integer_energy;
    } else {
        energy = 0.0f;
        for (int i = 1; i < 64; i++) energy += (float)workspace[i] * (float)workspace[i];
    }
    energy /= 63.0f;
    float lambda = trellis->lambda_numerator / (trellis->lambda_offset + energy);

    /* Per coefficient, in natural order (a loop the compiler vectorizes): the weighted squared
     * error of coding it as zero, the very float operations of the search's running sum, and
     * whether it rounds to something other than zero (q = quantval << 3 is even). */
    float zero_term[64];
    unsigned char significant[64];
    for (int z = 0; z < 64; z++) {
        int32_t value = workspace[z];
        int32_t x = value < 0 ? -value : value;
        float weight = lambda * trellis->weight[z];
        zero_term[z] = (float)x * (float)x * weight;
        significant[z] = (unsigned char)(x >= (divisors->step[z] >> 1));
    }

    float zero_distortion[64]; /* cost of coding positions 1...i all as zero */
    float best_cost[64];       /* cheapest coding of 1...i that ends with a nonzero at i */
    int run_start[64];         /* the previous nonzero position on that path (0: none) */
    JCOEF chosen[64];          /* the value chosen at i on that path (set where significant) */
    const unsigned char *bits = trellis->ac_bits;
    int zrl_bits = bits[0xf0];

    int nonzero[64];           /* 0, then the positions whose path ends with a nonzero, in order */
    int nonzero_count = 1;
    nonzero[0] = 0;

    zero_distortion[0] = 0.0f;
    best_cost[0] = 0.0f;
    float running = 0.0f;
    for (int i = 1; i < 64; i++) {
        int z = gd_natural_order[i];
        running += zero_term[z];
        zero_distortion[i] = running;
        /* Rounds to zero: no division for the many that do. */
        if (!significant[z]) continue;
        int32_t value = workspace[z];
        int32_t x = value < 0 ? -value : value;
        int32_t q = divisors->step[z];
        float weight = lambda * trellis->weight[z];
        chosen[i] = 0;
        best_cost[i] = 1e38f;

        /* (x + q/2) / q with one division: q is even, so the remainder decides. */
        int32_t truncated = x / q;
        int32_t rounded_value = truncated + (x - truncated * q >= (q >> 1));
        if (rounded_value > 1023) rounded_value = 1023; /* 10 bits: an 8-bit baseline AC limit */

        /* Candidates: the rounded value, the value rounded toward zero, and the largest value of
         * each smaller magnitude category (1, 3, 7, ...). */
        int32_t candidate[16];
        int candidate_bits[16];
        float candidate_distortion[16];
        int count = 0;
        int category = gd_nbits(rounded_value);
        for (int k = 1; k < category; k++) {
            candidate[count] = (1 << k) - 1;
            candidate_bits[count++] = k;
        }
        if (truncated > 0 && truncated != rounded_value && truncated != (1 << gd_nbits(truncated)) - 1) {
            candidate[count] = truncated;
            candidate_bits[count++] = gd_nbits(truncated);
        }
        candidate[count] = rounded_value;
        candidate_bits[count++] = category;
        for (int k = 0; k < count; k++) {
            float delta = (float)(candidate[k] * q - x);
            candidate_distortion[k] = delta * delta * weight;
        }

        /* Predecessor j: the last nonzero before i (0 = none); positions j+1...i-1 are zero. Only
         * positions that can end a path with a nonzero are tried (the others cannot precede one).
         * A predecessor whose base already reaches the best cost cannot win: every candidate adds
         * a positive number of bits and a distortion >= 0, and float addition never decreases. */
        for (int n = 0; n < nonzero_count; n++) {
            int j = nonzero[n];
            int run = i - 1 - j;
            if (run >= 16 && zrl_bits == 0) continue;
            int run_bits = (run >> 4) * zrl_bits;
            run &= 15;
            float base = best_cost[j] + zero_distortion[i - 1] - zero_distortion[j] + (float)run_bits;
            if (!(base < best_cost[i])) continue;
            const unsigned char *run_symbols = bits + 16 * run;
            for (int k = 0; k < count; k++) {
                int symbol_bits = run_symbols[candidate_bits[k]];
                if (symbol_bits == 0) continue;
                float cost = base + (float)(symbol_bits + candidate_bits[k]) + candidate_distortion[k];
                if (cost < best_cost[i]) {
                    best_cost[i] = cost;
                    chosen[i] = (JCOEF)candidate[k];
                    run_start[i] = j;
                }
            }
        }
        if (chosen[i] != 0) nonzero[nonzero_count++] = i;
    }

    /* Where the block ends: after the nonzero whose path plus the zeros after it (and an EOB,
     * unless it is the last position) costs least, or an EOB right away. */
    int last = 0;
    float best = zero_distortion[63] + (float)bits[0x00];
    for (int n = 1; n < nonzero_count; n++) {
        int i = nonzero[n];
        float cost = best_cost[i] + zero_distortion[63] - zero_distortion[i];
        if (i < 63) cost += (float)bits[0x00];
        if (cost < best) {
            best = cost;
            last = i;
        }
    }
    memset(output, 0, 64 * sizeof(JCOEF));
    output[0] = dc;
    for (int i = last; i > 0; i = run_start[i]) {
        int z = gd_natural_order[i];
        output[z] = workspace[z] < 0 ? (JCOEF)-chosen[i] : chosen[i];
    }
}

/* The dead zone's weight of each coefficient (natural order) by its frequency u + v: none at the
 * DC, a quarter at the two lowest AC, 0.6 at the next three, whole above (error in the lowest
 * frequencies shows as banding and shifted edges, which texture does not hide). */
static float gd_zero_bias_weight(int k) {
    int frequency = k / 8 + k % 8;
    return frequency == 0 ? 0.0f : frequency == 1 ? 0.25f : frequency == 2 ? 0.6f : 1.0f;
}

void gd_zero_bias_init(gd_zero_bias *zero_bias, const gd_divisors *divisors, float strength) {
    for (int k = 0; k < 64; k++) {
        zero_bias->bias[k] = strength * gd_zero_bias_weight(k) * (float)divisors->step[k];
        zero_bias->half_step[k] = 0.5f * (float)divisors->step[k];
    }
}

float gd_block_activity(const int16_t workspace[64]) {
    int32_t sum = 0;
    for (int k = 1; k < 64; k++) sum += workspace[k] < 0 ? -workspace[k] : workspace[k];
    return (float)sum * (1.0f / 512.0f); /* the DCT's x8 scale and 64 coefficients: about a sample's */
}

void gd_quantize_zero_bias(const int16_t workspace[64], const gd_divisors *divisors, const gd_zero_bias *zero_bias,
                           float masking, JCOEF output[64]) {
    gd_quantize_round(workspace, divisors, output);
    if (!(masking > 0.0f)) return;
    for (int k = 1; k < 64; k++) {
        if (output[k] == 0 || zero_bias->bias[k] == 0.0f) continue;
        float x = (float)(workspace[k] < 0 ? -workspace[k] : workspace[k]);
        if (x < zero_bias->half_step[k] + zero_bias->bias[k] * masking) output[k] = 0;
    }
}
