#ifndef GALLERYD_JPEG_SHIM_H
#define GALLERYD_JPEG_SHIM_H
/*
 * setjmp/longjmp error handling around the libjpeg API, which Swift cannot express.
 * Every call that may fail returns a gd_status; on failure the libjpeg message is in
 * gd_decoder_message()/the encoder's error buffer. libjpeg warnings (corrupt or truncated
 * data) are turned into errors so that a damaged file never passes for a good image.
 */
#include <stddef.h>
#include <stdio.h>
#include <jpeglib.h>

/* Outcome of a guarded libjpeg call. */
typedef enum {
    GD_OK = 0,
    GD_ERROR = 1,          /* libjpeg fatal error (message set) */
    GD_TRUNCATED = 2,      /* premature end of JPEG data */
    GD_CORRUPT = 3,        /* corrupt entropy-coded data or markers (a libjpeg warning) */
    GD_TOO_MANY_SCANS = 4, /* more scans than the configured limit */
    GD_IO = 5              /* the file could not be opened (errno in the message) */
} gd_status;

/* A decompressor with its error manager, progress monitor and input file. */
typedef struct gd_decoder gd_decoder;

gd_decoder *gd_decoder_create(int max_scans);
void gd_decoder_destroy(gd_decoder *decoder);
/* The libjpeg object, to read header fields and set decompression parameters. */
struct jpeg_decompress_struct *gd_decoder_cinfo(gd_decoder *decoder);
gd_status gd_decoder_open_file(gd_decoder *decoder, const char *path);
gd_status gd_decoder_open_memory(gd_decoder *decoder, const unsigned char *bytes, unsigned long length);
gd_status gd_decoder_read_header(gd_decoder *decoder);
/*
 * Starts decompression. A progressive colour file of at least the split threshold's bytes is
 * decoded on two threads (component 0's scans here, the others' on a second thread) before the
 * first row is returned; the rows and every error are those of the one-thread decode.
 */
gd_status gd_decoder_start(gd_decoder *decoder);
/* The smallest file decoded on two threads; < 0: never. Set before gd_decoder_start. */
#define GD_SPLIT_MIN_BYTES 262144L
void gd_decoder_set_split_min_bytes(gd_decoder *decoder, long bytes);
/* 1 when the last gd_decoder_start decoded on two threads. */
int gd_decoder_split_used(const gd_decoder *decoder);
/* Reads up to max_lines scanlines into rows; *lines_read receives how many were read. */
gd_status gd_decoder_read_scanlines(gd_decoder *decoder, unsigned char **rows, unsigned int max_lines,
                                    unsigned int *lines_read);
gd_status gd_decoder_finish(gd_decoder *decoder);
const char *gd_decoder_message(const gd_decoder *decoder);

/*
 * Who turns pixels into quantized DCT coefficients. GD_QUANTIZER_LIBJPEG: libjpeg's compressor
 * (jpeg_write_scanlines). The others convert colour, downsample and transform in this shim
 * exactly as libjpeg does (jpeg_coefficients.c) and hand the coefficients to libjpeg with
 * jpeg_write_coefficients, which still writes the markers, optimizes the Huffman tables and
 * writes the progressive scans: GD_QUANTIZER_ROUND rounds like libjpeg (the same bytes as
 * GD_QUANTIZER_LIBJPEG), GD_QUANTIZER_TRELLIS chooses the AC coefficients of each block by rate
 * and distortion, GD_QUANTIZER_ZERO_BIAS rounds with a dead zone widened in busy blocks
 * (jpeg_quantize.c).
 */
typedef enum {
    GD_QUANTIZER_LIBJPEG = 0,
    GD_QUANTIZER_ROUND = 1,
    GD_QUANTIZER_TRELLIS = 2,
    GD_QUANTIZER_ZERO_BIAS = 3
} gd_quantizer;

/* One progressive scan script. */
typedef struct {
    const jpeg_scan_info *scans;
    int scan_count;
} gd_scan_script;

/* One JPEG encoding request: pixels in, options, and the scan script and quantization table. */
typedef struct {
    const unsigned char *pixels;
    unsigned int width;
    unsigned int height;
    size_t stride;                    /* bytes per row */
    int input_components;             /* 1, 3 or 4 */
    J_COLOR_SPACE input_color_space;  /* e.g. JCS_EXT_RGBX, JCS_GRAYSCALE, JCS_CMYK */
    J_COLOR_SPACE jpeg_color_space;   /* e.g. JCS_YCbCr, JCS_GRAYSCALE, JCS_CMYK */
    int quality;                      /* 1...100, libjpeg scaling */
    const unsigned int *quant_table;  /* 64 entries, natural order, for luma and chroma; NULL = libjpeg's */
    const jpeg_scan_info *scans;      /* progressive scan script; NULL = sequential */
    int scan_count;
    int chroma_subsampling;           /* 1: 4:2:0, 0: 4:4:4 */
    int chroma_quality;               /* 1...100 for the chroma table; 0 = quality */
    const unsigned int *luma_table;   /* 64 final steps, natural order, used as they are (no quality
                                         scaling); NULL = quant_table scaled by quality */
    const unsigned int *chroma_table; /* the same for chroma; NULL = quant_table at chroma_quality */
    const unsigned int *cr_table;     /* 64 final steps for Cr alone (a third table, component 2 on it);
                                         NULL = Cr on chroma_table's, with Cb */
    int optimize_coding;
    int write_jfif;
    int write_adobe;
    const unsigned char *icc;         /* ICC profile to embed, or NULL */
    unsigned int icc_length;
    gd_quantizer quantizer;           /* who makes the coefficients (GD_QUANTIZER_LIBJPEG: libjpeg) */
    float trellis_lambda_log_scale1;  /* GD_QUANTIZER_TRELLIS: lambda = 2^s1 / (2^s2 + block AC energy); */
    float trellis_lambda_log_scale2;  /* 0 = mozjpeg's 14.75 and 16.5 */
    float zero_bias_luma;             /* GD_QUANTIZER_ZERO_BIAS: an AC coefficient under (0.5 + bias x the */
    float zero_bias_chroma;           /* coefficient's weight x the block's masking) steps is sent as 0; */
    float zero_bias_masking;          /* masking = a / (a + this), a the block's eroded activity; negative:
                                         |this| / (a + |this|), the dead zone widest in smooth blocks */
    float chroma_sharpening;          /* k: each downsampled chroma sample h becomes h + k (4h - its four
                                         neighbours) / 8 before its DCT, against the decoders' triangle
                                         upsampling; 0: libjpeg's box average as it is. Not with
                                         GD_QUANTIZER_ZERO_BIAS; with GD_QUANTIZER_LIBJPEG the path rounds */
    const gd_scan_script *probes;       /* gd_encode: scan scripts to choose from after the file is
                                            written with probes[0] = scans (gd_encoder_finish_choosing);
                                            NULL: the file as written */
    int probe_count;
    unsigned long probed_max_bytes;   /* probes[1...] are tried only on files of at most so many bytes */
} gd_encode_request;

/* Encodes into a malloc'd buffer (*output, free with gd_free); message receives an error text. */
gd_status gd_encode(const gd_encode_request *request, unsigned char **output, unsigned long *output_length,
                    char *message, size_t message_capacity);
void gd_free(void *pointer);

#define GD_MAX_PROBES 8

/*
 * Scan optimization (jpeg_scan_choice.c): `jpeg` is a progressive, Huffman-optimized file written
 * with probes[0]; its coefficients are written again with each of the other probes, and the
 * result takes, for the DC scans and for each component's AC scans, the probe whose scans are
 * the smallest. A probe must send every component's DC and may leave a component's AC out
 * (probes[0] sends all). The decoded pixels are the input's. *output is NULL when the input is
 * already the smallest (keep it); otherwise a malloc'd file (free with gd_free).
 */
gd_status gd_choose_scans(const unsigned char *jpeg, unsigned long length, const gd_scan_script *probes,
                          int probe_count, unsigned char **output, unsigned long *output_length, char *message,
                          size_t message_capacity);

/* An incremental compressor: rows are written as they are produced (request->pixels unused). */
typedef struct gd_encoder gd_encoder;

gd_encoder *gd_encoder_create(void);
void gd_encoder_destroy(gd_encoder *encoder);
/* Sets up and starts compression, writing the ICC profile; the request must outlive the encoder. */
gd_status gd_encoder_start(gd_encoder *encoder, const gd_encode_request *request);
gd_status gd_encoder_write_rows(gd_encoder *encoder, unsigned char **rows, unsigned int count);
/* Finishes and hands over the JPEG (free with gd_free). */
gd_status gd_encoder_finish(gd_encoder *encoder, unsigned char **output, unsigned long *output_length);
/* Finishes the JPEG, written with probes[0] (the request's scans), and chooses its scans as
 * gd_choose_scans does, from the compressor's own coefficients instead of the file read back: the
 * same bytes without the entropy decode. probes[1...] are tried only when the file has at most
 * probed_max_bytes bytes. Hands over the chosen JPEG (free with gd_free). */
gd_status gd_encoder_finish_choosing(gd_encoder *encoder, const gd_scan_script *probes, int probe_count,
                                     unsigned long probed_max_bytes, unsigned char **output,
                                     unsigned long *output_length);
const char *gd_encoder_message(const gd_encoder *encoder);
/* How gd_encoder_finish_choosing wrote its probes (for tests): 0 none or from the file read back,
 * 1 from the compressor's coefficients after the finish, 2 from them on a second thread beside it. */
int gd_encoder_chose_from_coefficients(const gd_encoder *encoder);
/* Probes a preview beside its finish when its nonzero AC coefficients are at most its byte limit times
 * tenths / 10 (11 unless set; for tests: a large value starts them for every preview, cancelled when
 * the file outgrows the limit). */
void gd_encoder_set_speculation(gd_encoder *encoder, int tenths);

/* libjpeg's accurate integer forward DCT (jfdctint.c) of 64 samples already centred on 0, in
 * place; outputs are scaled up by 8 like libjpeg's. Exposed for tests. */
void gd_fdct_islow(short data[64]);

/*
 * The coefficient path's loops in a portable form and an AVX2 form (jpeg_simd.c,
 * jpeg_fdct_simd.c), the same results; `avx2`: pass gd_coefficients_has_avx2(), never 1 on a CPU
 * without AVX2. Exposed so that tests compare the two.
 */
int gd_coefficients_has_avx2(void);
/* gd_fdct_islow, with AVX2 when `avx2`. */
void gd_fdct_islow_dispatch(short data[64], int avx2);
/* The samples rows[0...7][column...column + 7], centred on 0, transformed into data. */
void gd_fdct_islow_samples(const unsigned char *const *rows, size_t column, short data[64], int avx2);
/* jccolor.c's RGB->YCbCr of `width` pixels of `pixel_bytes` (3 or 4; R, G, B first) bytes each. */
void gd_rgb_ycc_row(const unsigned char *pixels, int pixel_bytes, unsigned int width, unsigned char *y,
                    unsigned char *cb, unsigned char *cr, int avx2);
/* jcsample.c's h2v2_downsample of two rows of 2 * count samples into `count` samples. */
void gd_downsample_h2v2_row(const unsigned char *in0, const unsigned char *in1, size_t count, unsigned char *out,
                            int avx2);
/* The chroma sharpening of one downsampled row: row[x] + (k256 (4 row[x] - up[x] - down[x] - row[x - 1] -
 * row[x + 1]) + 1024) >> 11, clamped to 0...255, the row's ends replicated (k256: k x 256). */
void gd_sharpen_chroma_row(const unsigned char *up, const unsigned char *row, const unsigned char *down,
                           size_t count, int k256, unsigned char *out);

#endif
