#ifndef GALLERYD_JPEG_COEFFICIENTS_H
#define GALLERYD_JPEG_COEFFICIENTS_H
/* The coefficient path's internals, shared by jpeg_shim.c, jpeg_coefficients.c and jpeg_quantize.c. */
#include <stdint.h>

#include "jpeg_shim.h"

/* Zig-zag position -> natural index. */
extern const int gd_natural_order[64];

/* libjpeg-turbo's reciprocal divisors of one quantization table (quantval << 3 each). */
typedef struct {
    int32_t step[64];        /* quantval << 3: the step in the DCT's (x8) scale */
    uint32_t reciprocal[64];
    uint32_t correction[64];
    int shift[64];
} gd_divisors;

/* What the trellis quantizer needs of one component: weights and the AC code lengths. */
typedef struct {
    float weight[64];             /* 1 / quantval² */
    unsigned char ac_bits[256];   /* Huffman code length of each run/size symbol (0: none) */
    float lambda_numerator;       /* 2^lambda_log_scale1 */
    float lambda_offset;          /* 2^lambda_log_scale2 */
} gd_trellis;

/* The zero-bias quantizer's dead zone of one component, in the DCT's (x8) scale: an AC coefficient
 * rounding to nonzero is sent as 0 while |x| < half_step + bias x the block's masking (0...1). */
typedef struct {
    float bias[64];      /* strength x the coefficient's weight x its step */
    float half_step[64];
} gd_zero_bias;

void gd_divisors_init(gd_divisors *divisors, const uint16_t quantval[64]);
void gd_quantize_round(const int16_t workspace[64], const gd_divisors *divisors, JCOEF output[64]);
void gd_huffman_lengths(const JHUFF_TBL *table, unsigned char lengths[256]);
void gd_trellis_init(gd_trellis *trellis, const uint16_t quantval[64], const unsigned char ac_lengths[256],
                     float log_scale1, float log_scale2);
void gd_quantize_trellis(const int16_t workspace[64], const gd_divisors *divisors, const gd_trellis *trellis,
                         JCOEF output[64]);

void gd_zero_bias_init(gd_zero_bias *zero_bias, const gd_divisors *divisors, float strength);
/* A block's activity: its mean absolute AC coefficient, in samples' units. */
float gd_block_activity(const int16_t workspace[64]);
void gd_quantize_zero_bias(const int16_t workspace[64], const gd_divisors *divisors, const gd_zero_bias *zero_bias,
                           float masking, JCOEF output[64]);

/* The coefficient path's state for one image (see jpeg_coefficients.c). */
typedef struct gd_coefficients gd_coefficients;

/* Checks the configured layout and allocates (no libjpeg call: never longjmps); NULL with
 * *message set for a layout the path does not support. */
gd_coefficients *gd_coefficients_create(j_compress_ptr cinfo, const gd_encode_request *request,
                                        const char **message);
/* Requests the coefficient arrays and calls jpeg_write_coefficients (may longjmp). */
void gd_coefficients_begin(gd_coefficients *state, j_compress_ptr cinfo);
/* Takes `count` rows of input pixels (may longjmp). */
void gd_coefficients_write_rows(gd_coefficients *state, j_compress_ptr cinfo, unsigned char **rows,
                                unsigned int count);
/* Rows received so far. */
unsigned int gd_coefficients_rows(const gd_coefficients *state);
void gd_coefficients_free(gd_coefficients *state);

#endif
