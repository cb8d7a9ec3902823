/*
 * A progressive colour JPEG decoded on two threads. jpeg_start_decompress of a multi-scan file
 * absorbs every scan before the first output row, on one core; the scans are separate entropy-
 * coded segments, and after the DC scans each carries one component. So the file is split
 * (jpeg_scan_split.c): this thread decodes the DC scans and component 0's AC scans with
 * buffered_image on the decoder's own object, a second thread absorbs the other components' AC
 * scans with jpeg_read_coefficients straight into this object's whole-image arrays (its own are
 * never touched, so they cost no memory), and the output pass runs as usual, giving the rows of the
 * one-thread decode bit for bit.
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
 * when the image is decoded in one pass), which is the controller's own array of them (jdcoefct.c:
 * `coef->pub.coef_arrays = coef->whole_image`), the one its consume_data reads. gd_chroma_adopt
 * checks that they are there and that every component's size agrees with the other half's.
 */
struct jpeg_d_coef_controller {
    void (*start_input_pass)(j_decompress_ptr cinfo);
    int (*consume_data)(j_decompress_ptr cinfo);
    void (*start_output_pass)(j_decompress_ptr cinfo);
    int (*decompress_data)(j_decompress_ptr cinfo, JSAMPIMAGE output_buf);
    jvirt_barray_ptr *coef_arrays;
};

/* The second thread's half: its own decompressor, fed the chroma stream, writing into the arrays
 * of `target` (the luma half). `cinfo` comes first: the progress hook finds the half from it. */
typedef struct {
    struct jpeg_decompress_struct cinfo;
    gd_error_mgr err;
    struct jpeg_progress_mgr progress;
    const unsigned char *bytes;
    size_t length;
    j_decompress_ptr target;
    int adopted;
    gd_status status;
} gd_chroma_half;

/* Whether component c has the same block layout in both halves (they read the same SOF). */
static int gd_same_layout(j_decompress_ptr a, j_decompress_ptr b, int c) {
    const jpeg_component_info *x = &a->comp_info[c], *y = &b->comp_info[c];
    return x->width_in_blocks == y->width_in_blocks && x->height_in_blocks == y->height_in_blocks &&
           x->h_samp_factor == y->h_samp_factor && x->v_samp_factor == y->v_samp_factor;
}

/*
 * jpeg_read_coefficients calls its progress hook after it has made its arrays and before it reads
 * the first scan: there components 1.. are pointed at the luma half's arrays, so the chroma AC
 * coefficients land where the output pass reads them, beside the DC ones the luma half writes
 * (other coefficients of the same blocks: no byte is written by both threads). The luma half
 * defined every row of those arrays before this thread started (gd_luma_start), so access_virt_barray
 * never pre-zeroes a row under the other thread; all it writes to the shared array headers is their
 * `dirty` flag, set to the same value by both.
 */
static void gd_chroma_adopt(j_common_ptr common) {
    j_decompress_ptr cinfo = (j_decompress_ptr)common;
    gd_chroma_half *half = (gd_chroma_half *)cinfo;
    if (half->adopted) return;
    half->adopted = 1;
    j_decompress_ptr target = half->target;
    if (cinfo->coef == NULL || cinfo->coef->coef_arrays == NULL || target->coef == NULL ||
        target->coef->coef_arrays == NULL || cinfo->num_components != target->num_components)
        ERREXIT(cinfo, JERR_NOT_COMPILED);
    for (int c = 1; c < cinfo->num_components; c++) {
        if (!gd_same_layout(cinfo, target, c)) ERREXIT(cinfo, JERR_NOT_COMPILED);
        cinfo->coef->coef_arrays[c] = target->coef->coef_arrays[c];
    }
}

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
    half->progress.progress_monitor = gd_chroma_adopt;
    half->cinfo.progress = &half->progress;
    jpeg_mem_src(&half->cinfo, half->bytes, (unsigned long)half->length);
    jpeg_read_header(&half->cinfo, TRUE);
    jpeg_read_coefficients(&half->cinfo);
    if (!half->adopted) ERREXIT(&half->cinfo, JERR_NOT_COMPILED);
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

/* This thread's half, first step: the luma stream opened with its whole-image arrays made, and
 * every row of components 1.. defined (zeroed) before the chroma thread writes into them. */
static gd_status gd_luma_start(gd_decoder *decoder, const gd_scan_split *split, const gd_output_settings *settings) {
    GD_GUARD(decoder);
    j_decompress_ptr cinfo = &decoder->cinfo;
    gd_reopen(decoder, split->luma, split->luma_length, settings);
    cinfo->buffered_image = TRUE;
    /* Smoothing would fill in the AC coefficients each half lacks: never with split scans. */
    cinfo->do_block_smoothing = FALSE;
    jpeg_start_decompress(cinfo); /* buffered: makes the arrays, reads no scan yet */
    if (cinfo->coef == NULL || cinfo->coef->coef_arrays == NULL) ERREXIT(cinfo, JERR_NOT_COMPILED);
    for (int c = 1; c < cinfo->num_components; c++) {
        const jpeg_component_info *component = &cinfo->comp_info[c];
        /* The arrays' padded height (jdcoefct.c); access_virt_barray checks the rows against it. */
        JDIMENSION step = (JDIMENSION)component->v_samp_factor;
        JDIMENSION rows = (component->height_in_blocks + step - 1) / step * step;
        for (JDIMENSION row = 0; row < rows; row += step)
            (*cinfo->mem->access_virt_barray)((j_common_ptr)cinfo, cinfo->coef->coef_arrays[c], row, step, TRUE);
    }
    return GD_OK;
}

/* Second step: the DC scans and component 0's AC scans, without an output pass. */
static gd_status gd_luma_consume(gd_decoder *decoder) {
    GD_GUARD(decoder);
    while (jpeg_consume_input(&decoder->cinfo) != JPEG_REACHED_EOI) {
    }
    return GD_OK;
}

/* After both halves: the output pass over the arrays they filled. */
static gd_status gd_split_output(gd_decoder *decoder) {
    GD_GUARD(decoder);
    jpeg_start_output(&decoder->cinfo, decoder->cinfo.input_scan_number);
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
    half->target = cinfo;
    *status = gd_luma_start(decoder, &split, &settings);
    if (*status == GD_OK && pthread_create(&thread, NULL, gd_chroma_thread, half) == 0) {
        gd_status luma = gd_luma_consume(decoder);
        pthread_join(thread, NULL); /* before anything frees the arrays the other thread writes */
        jpeg_destroy_decompress(&half->cinfo); /* its own arrays were never touched */
        *status = (luma == GD_OK && half->status == GD_OK) ? gd_split_output(decoder) : GD_ERROR;
    } else {
        *status = GD_ERROR;
    }
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
