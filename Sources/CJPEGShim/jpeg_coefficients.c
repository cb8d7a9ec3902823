/*
 * The coefficient path: pixels -> quantized DCT coefficients in this shim, then libjpeg's
 * transcoder (jpeg_write_coefficients) for the markers, Huffman optimization and progressive scans.
 *
 * Everything before quantization reproduces libjpeg-turbo's compressor exactly, so that the
 * quantizer is the only difference: RGB->YCbCr with jccolor.c's 16-bit fixed-point tables;
 * the right edge replicated out to whole MCUs (jcsample.c expand_right_edge); at the bottom, the
 * last row repeated to a whole row group, then each component's last output row repeated to a
 * whole iMCU row (jcprepct.c); 2x2 chroma averaged with jcsample.c's alternating 1,2 bias; blocks
 * past the image's blocks left to the transcoder's dummy blocks as libjpeg's coefficient
 * controller makes them; jpeg_fdct_islow; and libjpeg-turbo's reciprocal rounding. The
 * ImagingTests check the identity byte for byte against libjpeg's own output.
 *
 * Rows arrive one at a time (the streamed preview), one iMCU row (16 rows at 4:2:0) is kept at
 * full resolution, and each finished iMCU row is transformed and quantized into libjpeg's
 * whole-image coefficient arrays, which a progressive encode needs anyway.
 *
 * With chroma sharpening (gd_encode_request.chroma_sharpening) each downsampled sample h becomes
 * h + k (4h - its four neighbours) / 8 before its DCT. Its neighbours below the strip's last row are
 * the next strip's, so a downsampled component's strip is held (unsharpened) and coded when the next
 * one has been downsampled, or at the last; the image's edges are replicated, as the padding is.
 */
#include "jpeg_coefficients.h"

#include <stdlib.h>
#include <string.h>
#include <jerror.h>

#define GD_MAX_COMPONENTS 4

enum { GD_CONVERT_YCC, GD_CONVERT_COPY };

struct gd_coefficients {
    int components;
    int h[GD_MAX_COMPONENTS], v[GD_MAX_COMPONENTS];
    int max_h, max_v;
    JDIMENSION blocks_wide[GD_MAX_COMPONENTS], blocks_high[GD_MAX_COMPONENTS];
    jvirt_barray_ptr arrays[GD_MAX_COMPONENTS];
    JSAMPLE *planes[GD_MAX_COMPONENTS]; /* strip_rows rows of plane_width samples per component */
    JSAMPLE *downsampled;               /* one component's downsampled rows */
    size_t plane_width;
    int strip_rows;
    int rows_in_strip;
    unsigned int rows_received;
    unsigned int width, height;
    JDIMENSION imcu_row;
    int convert;
    int pixel_bytes;
    int avx2;
    gd_quantizer quantizer;
    gd_divisors divisors[GD_MAX_COMPONENTS];
    gd_trellis trellis[GD_MAX_COMPONENTS];
    /* GD_QUANTIZER_ZERO_BIAS: the dead zones, one block row's DCTs, the first component's block
     * activities (this block row's and the one above) and its blocks' masking in this iMCU row. */
    gd_zero_bias zero_bias[GD_MAX_COMPONENTS];
    float masking_scale;
    int16_t *dct_row;
    float *activity, *activity_above, *masking;
    int has_above;
    /* Chroma sharpening (k x 256; 0: none): each downsampled component's held strip, its newest one,
     * the row above the held one (unsharpened), and the held strip's rows and iMCU row. */
    int sharpen;
    JSAMPLE *held[GD_MAX_COMPONENTS], *newest[GD_MAX_COMPONENTS], *above_held[GD_MAX_COMPONENTS];
    int held_rows, has_held, has_above_held;
    JDIMENSION held_imcu_row;
};

/* RGB->YCbCr, the downsample and the DCT: jpeg_simd.c and jpeg_fdct_simd.c, AVX2 where the CPU has it. */

gd_coefficients *gd_coefficients_create(j_compress_ptr cinfo, const gd_encode_request *request,
                                        const char **message) {
    int convert, pixel_bytes;
    J_COLOR_SPACE in = request->input_color_space, out = cinfo->jpeg_color_space;
    if ((in == JCS_EXT_RGBX || in == JCS_EXT_RGBA) && out == JCS_YCbCr) {
        convert = GD_CONVERT_YCC;
        pixel_bytes = 4;
    } else if ((in == JCS_RGB || in == JCS_EXT_RGB) && out == JCS_YCbCr) {
        convert = GD_CONVERT_YCC;
        pixel_bytes = 3;
    } else if ((in == JCS_GRAYSCALE && out == JCS_GRAYSCALE) || (in == JCS_CMYK && out == JCS_CMYK) ||
               (in == JCS_YCbCr && out == JCS_YCbCr)) {
        convert = GD_CONVERT_COPY;
        pixel_bytes = cinfo->num_components;
    } else {
        *message = "the coefficient path converts RGB to YCbCr or keeps gray, YCbCr and CMYK as they are";
        return NULL;
    }
    if (request->input_components != pixel_bytes || cinfo->num_components > GD_MAX_COMPONENTS) {
        *message = "the coefficient path got an unexpected number of input components";
        return NULL;
    }
    int max_h = 1, max_v = 1;
    for (int c = 0; c < cinfo->num_components; c++) {
        if (cinfo->comp_info[c].h_samp_factor > max_h) max_h = cinfo->comp_info[c].h_samp_factor;
        if (cinfo->comp_info[c].v_samp_factor > max_v) max_v = cinfo->comp_info[c].v_samp_factor;
    }
    for (int c = 0; c < cinfo->num_components; c++) {
        int h = cinfo->comp_info[c].h_samp_factor, v = cinfo->comp_info[c].v_samp_factor;
        if (!((h == max_h && v == max_v) || (2 * h == max_h && 2 * v == max_v))) {
            *message = "the coefficient path samples every component fully or at half size both ways";
            return NULL;
        }
    }

    gd_coefficients *state = calloc(1, sizeof(gd_coefficients));
    if (state == NULL) {
        *message = "out of memory";
        return NULL;
    }
    state->components = cinfo->num_components;
    state->max_h = max_h;
    state->max_v = max_v;
    state->width = request->width;
    state->height = request->height;
    state->convert = convert;
    state->pixel_bytes = pixel_bytes;
    state->quantizer = request->quantizer;
    state->strip_rows = max_v * DCTSIZE;
    state->plane_width = (size_t)((request->width + max_h * DCTSIZE - 1) / (max_h * DCTSIZE)) * max_h * DCTSIZE;
    state->avx2 = gd_coefficients_has_avx2();
    float sharpening = request->chroma_sharpening;
    if (sharpening != 0 && (request->quantizer == GD_QUANTIZER_ZERO_BIAS || !(sharpening > -4 && sharpening < 4))) {
        *message = "chroma sharpening takes a strength in (-4, 4) and no zero-bias quantizer";
        gd_coefficients_free(state);
        return NULL;
    }
    state->sharpen = (int)(sharpening * 256 + (sharpening < 0 ? -0.5f : 0.5f));
    float scale1 = request->trellis_lambda_log_scale1 > 0 ? request->trellis_lambda_log_scale1 : 14.75f;
    float scale2 = request->trellis_lambda_log_scale2 > 0 ? request->trellis_lambda_log_scale2 : 16.5f;
    for (int c = 0; c < state->components; c++) {
        jpeg_component_info *component = &cinfo->comp_info[c];
        state->h[c] = component->h_samp_factor;
        state->v[c] = component->v_samp_factor;
        state->blocks_wide[c] =
            (JDIMENSION)(((unsigned long)request->width * state->h[c] + max_h * DCTSIZE - 1) / (max_h * DCTSIZE));
        state->blocks_high[c] =
            (JDIMENSION)(((unsigned long)request->height * state->v[c] + max_v * DCTSIZE - 1) / (max_v * DCTSIZE));
        JQUANT_TBL *table = cinfo->quant_tbl_ptrs[component->quant_tbl_no];
        if (table == NULL) {
            *message = "no quantization table";
            gd_coefficients_free(state);
            return NULL;
        }
        uint16_t quantval[64];
        for (int i = 0; i < 64; i++) quantval[i] = table->quantval[i];
        gd_divisors_init(&state->divisors[c], quantval);
        unsigned char lengths[256];
        gd_huffman_lengths(cinfo->ac_huff_tbl_ptrs[component->ac_tbl_no], lengths);
        gd_trellis_init(&state->trellis[c], quantval, lengths, scale1, scale2);
        state->planes[c] = malloc((size_t)state->strip_rows * state->plane_width);
        if (state->planes[c] == NULL) {
            *message = "out of memory";
            gd_coefficients_free(state);
            return NULL;
        }
    }
    state->downsampled = malloc((size_t)state->strip_rows * state->plane_width);
    int failed = state->downsampled == NULL;
    for (int c = 0; c < state->components && state->sharpen != 0; c++) {
        if (state->h[c] == max_h) continue;
        state->held[c] = malloc((size_t)state->strip_rows * state->plane_width);
        state->newest[c] = malloc((size_t)state->strip_rows * state->plane_width);
        state->above_held[c] = malloc(state->plane_width);
        failed |= !state->held[c] || !state->newest[c] || !state->above_held[c];
    }
    if (state->quantizer == GD_QUANTIZER_ZERO_BIAS) {
        size_t wide = state->blocks_wide[0];
        for (int c = 0; c < state->components; c++) {
            if (state->blocks_wide[c] > wide) wide = state->blocks_wide[c];
            gd_zero_bias_init(&state->zero_bias[c], &state->divisors[c],
                              c == 0 ? request->zero_bias_luma : request->zero_bias_chroma);
        }
        state->masking_scale = request->zero_bias_masking != 0 ? request->zero_bias_masking : 1.0f;
        state->dct_row = malloc(wide * 64 * sizeof(int16_t));
        state->activity = malloc(wide * sizeof(float));
        state->activity_above = malloc(wide * sizeof(float));
        state->masking = malloc(wide * (size_t)state->v[0] * sizeof(float));
        failed |= !state->dct_row || !state->activity || !state->activity_above || !state->masking;
    }
    if (failed) {
        *message = "out of memory";
        gd_coefficients_free(state);
        return NULL;
    }
    return state;
}

void gd_coefficients_begin(gd_coefficients *state, j_compress_ptr cinfo) {
    for (int c = 0; c < state->components; c++) {
        JDIMENSION wide = (state->blocks_wide[c] + state->h[c] - 1) / state->h[c] * state->h[c];
        JDIMENSION high = (state->blocks_high[c] + state->v[c] - 1) / state->v[c] * state->v[c];
        state->arrays[c] = (*cinfo->mem->request_virt_barray)((j_common_ptr)cinfo, JPOOL_IMAGE, FALSE, wide, high,
                                                               (JDIMENSION)state->v[c]);
    }
    jpeg_write_coefficients(cinfo, state->arrays);
    for (int c = 0; c < state->components; c++) {
        if (cinfo->comp_info[c].width_in_blocks != state->blocks_wide[c] ||
            cinfo->comp_info[c].height_in_blocks != state->blocks_high[c])
            ERREXIT(cinfo, JERR_BAD_DCTSIZE);
    }
}

unsigned int gd_coefficients_rows(const gd_coefficients *state) { return state->rows_received; }

void gd_coefficients_free(gd_coefficients *state) {
    if (state == NULL) return;
    for (int c = 0; c < GD_MAX_COMPONENTS; c++) {
        free(state->planes[c]);
        free(state->held[c]);
        free(state->newest[c]);
        free(state->above_held[c]);
    }
    free(state->downsampled);
    free(state->dct_row);
    free(state->activity);
    free(state->activity_above);
    free(state->masking);
    free(state);
}

/* Converts one input row into row `y` of each component's plane, the right edge replicated. */
static void gd_convert_row(gd_coefficients *state, const unsigned char *pixels, int y) {
    size_t offset = (size_t)y * state->plane_width;
    unsigned int width = state->width;
    if (state->convert == GD_CONVERT_YCC) {
        gd_rgb_ycc_row(pixels, state->pixel_bytes, width, state->planes[0] + offset, state->planes[1] + offset,
                       state->planes[2] + offset, state->avx2);
    } else {
        for (int c = 0; c < state->components; c++) {
            JSAMPLE *plane = state->planes[c] + offset;
            for (unsigned int x = 0; x < width; x++) plane[x] = pixels[(size_t)x * state->pixel_bytes + c];
        }
    }
    for (int c = 0; c < state->components; c++) {
        JSAMPLE *plane = state->planes[c] + offset;
        memset(plane + width, plane[width - 1], state->plane_width - width);
    }
}

/* Transforms and quantizes one block whose top-left sample is rows[0][column]. */
static void gd_code_block(gd_coefficients *state, int c, JSAMPLE **rows, size_t column, JCOEF *block) {
    int16_t workspace[64];
    gd_fdct_islow_samples((const JSAMPLE *const *)rows, column, workspace, state->avx2);
    if (state->quantizer == GD_QUANTIZER_TRELLIS)
        gd_quantize_trellis(workspace, &state->divisors[c], &state->trellis[c], block);
    else
        gd_quantize_round(workspace, &state->divisors[c], block);
}

/* Codes one block row of component `c` (`rows`: its 8 sample rows) with the zero-bias quantizer. A
 * first-component block's masking is its activity a eroded (the least of its own, its left and right
 * neighbours' and the block above's: a busy block beside a flat one hides little), a / (a + scale),
 * or with a negative scale |scale| / (a + |scale|) (the dead zone widest in smooth blocks); a
 * downsampled component's block takes the mean of the masking of the blocks it covers
 * (docs/decisions/070-adaptive-zero-bias-quantization.md). */
static void gd_code_row_zero_bias(gd_coefficients *state, int c, JSAMPLE **rows, int block_row, JBLOCKROW out) {
    JDIMENSION wide = state->blocks_wide[c], luma_wide = state->blocks_wide[0];
    int16_t *dct = state->dct_row;
    for (JDIMENSION b = 0; b < wide; b++)
        gd_fdct_islow_samples((const JSAMPLE *const *)rows, (size_t)b * DCTSIZE, dct + (size_t)b * 64, state->avx2);
    if (c == 0) {
        float *activity = state->activity, *above = state->activity_above;
        float *masking = state->masking + (size_t)block_row * luma_wide;
        for (JDIMENSION b = 0; b < wide; b++) activity[b] = gd_block_activity(dct + (size_t)b * 64);
        for (JDIMENSION b = 0; b < wide; b++) {
            float a = activity[b];
            if (b > 0 && activity[b - 1] < a) a = activity[b - 1];
            if (b + 1 < wide && activity[b + 1] < a) a = activity[b + 1];
            if (state->has_above && above[b] < a) a = above[b];
            float scale = state->masking_scale; /* negative: the curve inverted, smooth blocks masked */
            masking[b] = scale < 0 ? -scale / (a - scale) : a / (a + scale);
        }
        memcpy(above, activity, wide * sizeof(float));
        state->has_above = 1;
    }
    int scale_h = state->max_h / state->h[c], scale_v = state->max_v / state->v[c];
    for (JDIMENSION b = 0; b < wide; b++) {
        float sum = 0.0f;
        int count = 0;
        for (int y = block_row * scale_v; y < (block_row + 1) * scale_v && y < state->v[0]; y++)
            for (JDIMENSION x = b * scale_h; x < (b + 1) * scale_h && x < luma_wide; x++, count++)
                sum += state->masking[(size_t)y * luma_wide + x];
        gd_quantize_zero_bias(dct + (size_t)b * 64, &state->divisors[c], &state->zero_bias[c],
                              count ? sum / (float)count : 0.0f, out[b]);
    }
}

/* Codes component c's iMCU row `imcu_row` from `output_rows` rows of `source` (its samples). */
static void gd_code_component(gd_coefficients *state, j_compress_ptr cinfo, int c, JSAMPLE *source, int output_rows,
                              JDIMENSION imcu_row) {
    int v = state->v[c];
    /* jcprepct.c: the last output row fills out the iMCU row. */
    JSAMPLE *rows_of[GD_MAX_COMPONENTS * DCTSIZE];
    for (int y = 0; y < v * DCTSIZE; y++)
        rows_of[y] = source + (size_t)(y < output_rows ? y : output_rows - 1) * state->plane_width;

    JBLOCKARRAY buffer = (*cinfo->mem->access_virt_barray)((j_common_ptr)cinfo, state->arrays[c],
                                                           imcu_row * (JDIMENSION)v, (JDIMENSION)v, TRUE);
    for (int block_row = 0; block_row < v; block_row++) {
        if (state->quantizer == GD_QUANTIZER_ZERO_BIAS) {
            gd_code_row_zero_bias(state, c, rows_of + block_row * DCTSIZE, block_row, buffer[block_row]);
            continue;
        }
        for (JDIMENSION block = 0; block < state->blocks_wide[c]; block++)
            gd_code_block(state, c, rows_of + block_row * DCTSIZE, (size_t)block * DCTSIZE, buffer[block_row][block]);
    }
}

/* Sharpens component c's held strip into `downsampled` and codes it; `below`: the next strip's first row,
 * NULL at the image's bottom (its last row replicated, as the top's first). */
static void gd_code_held(gd_coefficients *state, j_compress_ptr cinfo, int c, const JSAMPLE *below) {
    size_t stride = state->plane_width, width = (size_t)state->blocks_wide[c] * DCTSIZE;
    int rows = state->held_rows;
    JSAMPLE *held = state->held[c];
    for (int y = 0; y < rows; y++) {
        const JSAMPLE *row = held + (size_t)y * stride;
        const JSAMPLE *up = y > 0 ? row - stride : state->has_above_held ? state->above_held[c] : row;
        const JSAMPLE *down = y + 1 < rows ? row + stride : below != NULL ? below : row;
        gd_sharpen_chroma_row(up, row, down, width, state->sharpen, state->downsampled + (size_t)y * stride);
    }
    memcpy(state->above_held[c], held + (size_t)(rows - 1) * stride, width);
    gd_code_component(state, cinfo, c, state->downsampled, rows, state->held_imcu_row);
}

/* Codes the iMCU row held in the planes (rows_in_strip of them are image rows); with chroma
 * sharpening, the held strip of each downsampled component, this one's held in its place. */
static void gd_code_strip(gd_coefficients *state, j_compress_ptr cinfo) {
    int rows = state->rows_in_strip;
    int groups = (rows + state->max_v - 1) / state->max_v;
    /* jcprepct.c: the last row fills out its row group. */
    for (int c = 0; c < state->components; c++)
        for (int y = rows; y < groups * state->max_v; y++)
            memcpy(state->planes[c] + (size_t)y * state->plane_width,
                   state->planes[c] + (size_t)(rows - 1) * state->plane_width, state->plane_width);

    int last = state->rows_received == state->height;
    for (int c = 0; c < state->components; c++) {
        int output_rows = groups * state->v[c];
        size_t output_width = (size_t)state->blocks_wide[c] * DCTSIZE;
        if (state->h[c] == state->max_h) {
            gd_code_component(state, cinfo, c, state->planes[c], output_rows, state->imcu_row);
            continue;
        }
        /* jcsample.c h2v2_downsample: bias 1, 2, 1, 2, ... along the row. */
        JSAMPLE *target = state->sharpen ? state->newest[c] : state->downsampled;
        for (int y = 0; y < output_rows; y++) {
            const JSAMPLE *in0 = state->planes[c] + (size_t)(2 * y) * state->plane_width;
            gd_downsample_h2v2_row(in0, in0 + state->plane_width, output_width, target + (size_t)y * state->plane_width,
                                   state->avx2);
        }
        if (!state->sharpen) {
            gd_code_component(state, cinfo, c, target, output_rows, state->imcu_row);
            continue;
        }
        if (state->has_held) gd_code_held(state, cinfo, c, target);
        state->newest[c] = state->held[c];
        state->held[c] = target;
    }
    if (state->sharpen) {
        state->has_above_held = state->has_held;
        state->has_held = 1;
        state->held_rows = groups * state->v[state->components - 1];
        state->held_imcu_row = state->imcu_row;
        for (int c = 0; c < state->components && last; c++)
            if (state->h[c] != state->max_h) gd_code_held(state, cinfo, c, NULL);
    }
    state->imcu_row++;
    state->rows_in_strip = 0;
}

void gd_coefficients_write_rows(gd_coefficients *state, j_compress_ptr cinfo, unsigned char **rows,
                                unsigned int count) {
    for (unsigned int i = 0; i < count && state->rows_received < state->height; i++) {
        gd_convert_row(state, rows[i], state->rows_in_strip);
        state->rows_in_strip++;
        state->rows_received++;
        if (state->rows_in_strip == state->strip_rows || state->rows_received == state->height)
            gd_code_strip(state, cinfo);
    }
}
