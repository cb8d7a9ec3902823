/*
 * A progressive colour JPEG decoded on two threads. jpeg_start_decompress of a multi-scan file
 * absorbs every scan before the first output row, on one core; the scans are separate entropy-
 * coded segments, and after the DC scans each carries one component. So the file is split
 * (jpeg_scan_split.c): this thread decodes the DC scans and component 0's AC scans with
 * buffered_image on the decoder's own object, a second thread absorbs the other components' AC
 * scans with jpeg_read_coefficients (never touching its component 0 arrays, so they cost no
 * memory); their AC coefficients are copied into this object's whole-image arrays and the output pass runs as usual, giving the rows of the one-thread decode bit for bit.
 * Anything unusual, or any error in either half, goes back to the one-thread decode, which then
 * reports exactly what it always has.
 */
#include "jpeg_decoder.h"
#include "jpeg_scan_split.h"

#include <jerror.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/*
 * libjpeg's coefficient controller, declared as jpegint.h (not installed) has had it since 6b,
 * in libjpeg-turbo too: four function pointers, then the whole-image coefficient arrays (NULL
 * when the image is decoded in one pass). Only coef_arrays is read; gd_split_merge checks that
 * they are there and that every component's size agrees with the other half's.
 */
struct jpeg_d_coef_controller {
    void (*start_input_pass)(j_decompress_ptr cinfo);
    int (*consume_data)(j_decompress_ptr cinfo);
    void (*start_output_pass)(j_decompress_ptr cinfo);
    int (*decompress_data)(j_decompress_ptr cinfo, JSAMPIMAGE output_buf);
    jvirt_barray_ptr *coef_arrays;
};

/* The second thread's half: its own decompressor, fed the chroma stream. */
typedef struct {
    struct jpeg_decompress_struct cinfo;
    gd_error_mgr err;
    const unsigned char *bytes;
    size_t length;
    jvirt_barray_ptr *arrays;
    gd_status status;
} gd_chroma_half;

/*
 * The chroma stream has no DC scans, so libjpeg warns that an AC scan came before any DC scan
 * (JWRN_BOGUS_PROGRESSION for coefficient 0): expected here, since the splitter checked that the
 * file itself sends each component's DC first. Every other message is handled as usual.
 */
static void gd_chroma_emit_message(j_common_ptr cinfo, int level) {
    if (level < 0 && cinfo->err->msg_code == JWRN_BOGUS_PROGRESSION && cinfo->err->msg_parm.i[1] == 0) return;
    gd_emit_message(cinfo, level);
}

static gd_status gd_chroma_decode(gd_chroma_half *half) {
    gd_error_init(&half->err);
    half->err.pub.emit_message = gd_chroma_emit_message;
    half->cinfo.err = &half->err.pub;
    if (setjmp(half->err.jump)) return half->err.status;
    jpeg_create_decompress(&half->cinfo);
    jpeg_mem_src(&half->cinfo, half->bytes, (unsigned long)half->length);
    jpeg_read_header(&half->cinfo, TRUE);
    half->arrays = jpeg_read_coefficients(&half->cinfo);
    return GD_OK;
}

static void *gd_chroma_thread(void *argument) {
    gd_chroma_half *half = argument;
    half->status = gd_chroma_decode(half);
    return NULL;
}

/* The decompression parameters the caller set after reading the header (JPEGDecoder.start). */
typedef struct {
    J_COLOR_SPACE out_color_space;
    unsigned int scale_num, scale_denom;
    J_DCT_METHOD dct_method;
    boolean do_fancy_upsampling, do_block_smoothing;
} gd_output_settings;

static gd_output_settings gd_settings_of(const struct jpeg_decompress_struct *cinfo) {
    gd_output_settings settings = {cinfo->out_color_space, cinfo->scale_num,         cinfo->scale_denom,
                                   cinfo->dct_method,      cinfo->do_fancy_upsampling, cinfo->do_block_smoothing};
    return settings;
}

/* Points the decoder's object at `bytes` and reads the header again with the caller's settings. */
static void gd_reopen(gd_decoder *decoder, const unsigned char *bytes, size_t length,
                      const gd_output_settings *settings) {
    struct jpeg_decompress_struct *cinfo = &decoder->cinfo;
    jpeg_abort_decompress(cinfo);
    cinfo->src = NULL; /* jpeg_mem_src refuses to reuse another kind of source */
    if (bytes != NULL) {
        jpeg_mem_src(cinfo, bytes, (unsigned long)length);
    } else {
        rewind(decoder->file);
        jpeg_stdio_src(cinfo, decoder->file);
    }
    jpeg_read_header(cinfo, TRUE);
    cinfo->out_color_space = settings->out_color_space;
    cinfo->scale_num = settings->scale_num;
    cinfo->scale_denom = settings->scale_denom;
    cinfo->dct_method = settings->dct_method;
    cinfo->do_fancy_upsampling = settings->do_fancy_upsampling;
    cinfo->do_block_smoothing = settings->do_block_smoothing;
}

/* This thread's half: component 0's scans into the whole-image arrays, without an output pass. */
static gd_status gd_luma_consume(gd_decoder *decoder, const gd_scan_split *split, const gd_output_settings *settings) {
    GD_GUARD(decoder);
    gd_reopen(decoder, split->luma, split->luma_length, settings);
    decoder->cinfo.buffered_image = TRUE;
    /* Smoothing would fill in the AC coefficients each half lacks: never with split scans. */
    decoder->cinfo.do_block_smoothing = FALSE;
    jpeg_start_decompress(&decoder->cinfo);
    while (jpeg_consume_input(&decoder->cinfo) != JPEG_REACHED_EOI) {
    }
    return GD_OK;
}

/* Copies components 1 and 2's AC coefficients from the second half's arrays (their DC came
 * with the luma stream), then opens the output pass. */
static gd_status gd_split_merge(gd_decoder *decoder, gd_chroma_half *half) {
    GD_GUARD(decoder);
    j_decompress_ptr cinfo = &decoder->cinfo;
    if (cinfo->coef == NULL || cinfo->coef->coef_arrays == NULL || half->arrays == NULL ||
        half->cinfo.num_components != cinfo->num_components)
        ERREXIT(cinfo, JERR_NOT_COMPILED);
    for (int c = 1; c < cinfo->num_components; c++) {
        const jpeg_component_info *mine = &cinfo->comp_info[c], *theirs = &half->cinfo.comp_info[c];
        if (mine->width_in_blocks != theirs->width_in_blocks || mine->height_in_blocks != theirs->height_in_blocks ||
            mine->h_samp_factor != theirs->h_samp_factor || mine->v_samp_factor != theirs->v_samp_factor)
            ERREXIT(cinfo, JERR_NOT_COMPILED);
        /* The arrays' padded size (jdcoefct.c); access_virt_barray checks the rows against it. */
        JDIMENSION columns = (mine->width_in_blocks + mine->h_samp_factor - 1) / mine->h_samp_factor *
                             mine->h_samp_factor;
        JDIMENSION rows = (mine->height_in_blocks + mine->v_samp_factor - 1) / mine->v_samp_factor *
                          mine->v_samp_factor;
        JDIMENSION step = (JDIMENSION)mine->v_samp_factor;
        for (JDIMENSION row = 0; row < rows; row += step) {
            JBLOCKARRAY to = (*cinfo->mem->access_virt_barray)((j_common_ptr)cinfo, cinfo->coef->coef_arrays[c],
                                                                row, step, TRUE);
            JBLOCKARRAY from = (*half->cinfo.mem->access_virt_barray)((j_common_ptr)&half->cinfo, half->arrays[c],
                                                                      row, step, FALSE);
            for (JDIMENSION r = 0; r < step; r++)
                for (JDIMENSION b = 0; b < columns; b++) {
                    JCOEF dc = to[r][b][0];
                    memcpy(to[r][b], from[r][b], sizeof(JBLOCK));
                    to[r][b][0] = dc;
                }
        }
    }
    jpeg_destroy_decompress(&half->cinfo); /* its arrays are as large as ours: free them now */
    jpeg_start_output(cinfo, cinfo->input_scan_number);
    return GD_OK;
}

/* The file's bytes: the caller's memory, or the whole file read in (NULL when too small). */
static unsigned char *gd_whole_file(gd_decoder *decoder, size_t *length) {
    struct stat info;
    if (decoder->file == NULL || fstat(fileno(decoder->file), &info) != 0 || info.st_size < decoder->split_min_bytes)
        return NULL;
    long position = ftell(decoder->file);
    unsigned char *bytes = malloc((size_t)info.st_size + 1);
    if (bytes != NULL && position >= 0 && fseek(decoder->file, 0, SEEK_SET) == 0 &&
        fread(bytes, 1, (size_t)info.st_size + 1, decoder->file) == (size_t)info.st_size) {
        *length = (size_t)info.st_size;
    } else {
        free(bytes);
        bytes = NULL;
    }
    if (position >= 0) fseek(decoder->file, position, SEEK_SET);
    return bytes;
}

int gd_split_start(gd_decoder *decoder, gd_status *status) {
    j_decompress_ptr cinfo = &decoder->cinfo;
    decoder->split = 0;
    decoder->split_used = 0;
    if (decoder->split_min_bytes < 0 || !cinfo->progressive_mode || cinfo->arith_code ||
        cinfo->num_components != 3 || cinfo->quantize_colors || cinfo->raw_data_out)
        return 0;
    const unsigned char *bytes = decoder->memory;
    size_t length = decoder->memory_length;
    unsigned char *read = NULL;
    if (bytes == NULL) {
        bytes = read = gd_whole_file(decoder, &length);
        if (bytes == NULL) return 0;
    } else if (length < (unsigned long)decoder->split_min_bytes) {
        return 0;
    }
    gd_scan_split split;
    int made = gd_scan_split_make(bytes, length, decoder->max_scans, &split);
    free(read);
    if (!made) return 0;

    gd_output_settings settings = gd_settings_of(cinfo);
    gd_chroma_half *half = calloc(1, sizeof(gd_chroma_half));
    pthread_t thread;
    if (half == NULL) {
        gd_scan_split_free(&split);
        return 0;
    }
    half->bytes = split.chroma;
    half->length = split.chroma_length;
    if (pthread_create(&thread, NULL, gd_chroma_thread, half) != 0) {
        free(half);
        gd_scan_split_free(&split);
        return 0;
    }
    gd_status luma = gd_luma_consume(decoder, &split, &settings);
    pthread_join(thread, NULL);
    *status = (luma == GD_OK && half->status == GD_OK) ? gd_split_merge(decoder, half) : GD_ERROR;
    jpeg_destroy_decompress(&half->cinfo);
    free(half);
    gd_scan_split_free(&split);
    if (*status == GD_OK) {
        decoder->split = 1;
        decoder->split_used = 1;
        return 1;
    }
    /* Either half failed: the one-thread decode of the original bytes says how, as it always has. */
    decoder->err.status = GD_OK;
    decoder->err.message[0] = 0;
    if (setjmp(decoder->err.jump)) {
        *status = decoder->err.status;
        return 1;
    }
    gd_reopen(decoder, decoder->memory, decoder->memory_length, &settings);
    jpeg_start_decompress(cinfo);
    *status = GD_OK;
    return 1;
}
