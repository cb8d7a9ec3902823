#include "jpeg_shim.h"
#include "jpeg_coefficients.h"
#include "jpeg_decoder.h"

#include <errno.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <jerror.h>

static void gd_error_exit(j_common_ptr cinfo) {
    gd_error_mgr *err = (gd_error_mgr *)cinfo->err;
    if (err->status == GD_OK) {
        err->status = GD_ERROR;
        (*cinfo->err->format_message)(cinfo, err->message);
    }
    longjmp(err->jump, 1);
}

/* Warnings mean damaged data; a few harmless ones are ignored, the rest are errors. */
void gd_emit_message(j_common_ptr cinfo, int level) {
    if (level >= 0) return; /* trace messages */
    int code = cinfo->err->msg_code;
    if (code == JWRN_JFIF_MAJOR || code == JWRN_ADOBE_XFORM || code == JWRN_BOGUS_ICC) return;
    gd_error_mgr *err = (gd_error_mgr *)cinfo->err;
    err->status = (code == JWRN_JPEG_EOF) ? GD_TRUNCATED : GD_CORRUPT;
    (*cinfo->err->format_message)(cinfo, err->message);
    longjmp(err->jump, 1);
}

static void gd_output_message(j_common_ptr cinfo) { (void)cinfo; }

void gd_error_init(gd_error_mgr *err) {
    jpeg_std_error(&err->pub);
    err->pub.error_exit = gd_error_exit;
    err->pub.emit_message = gd_emit_message;
    err->pub.output_message = gd_output_message;
    err->status = GD_OK;
    err->message[0] = 0;
}

/* Called once per iMCU row of input; stops files with an absurd number of scans early. */
static void gd_progress(j_common_ptr cinfo) {
    gd_decoder *decoder = (gd_decoder *)cinfo->client_data;
    if (decoder->cinfo.input_scan_number > decoder->max_scans) {
        decoder->err.status = GD_TOO_MANY_SCANS;
        snprintf(decoder->err.message, sizeof decoder->err.message, "%d", decoder->cinfo.input_scan_number);
        longjmp(decoder->err.jump, 1);
    }
}

gd_decoder *gd_decoder_create(int max_scans) {
    gd_decoder *decoder = calloc(1, sizeof(gd_decoder));
    if (decoder == NULL) return NULL;
    gd_error_init(&decoder->err);
    decoder->cinfo.err = &decoder->err.pub;
    if (setjmp(decoder->err.jump)) {
        free(decoder);
        return NULL;
    }
    jpeg_create_decompress(&decoder->cinfo);
    decoder->cinfo.client_data = decoder;
    decoder->max_scans = max_scans;
    decoder->progress.progress_monitor = gd_progress;
    decoder->cinfo.progress = &decoder->progress;
    decoder->split_min_bytes = GD_SPLIT_MIN_BYTES;
    return decoder;
}

void gd_decoder_destroy(gd_decoder *decoder) {
    if (decoder == NULL) return;
    jpeg_destroy_decompress(&decoder->cinfo);
    if (decoder->file != NULL) fclose(decoder->file);
    free(decoder->file_buffer);
    free(decoder);
}

struct jpeg_decompress_struct *gd_decoder_cinfo(gd_decoder *decoder) { return &decoder->cinfo; }

const char *gd_decoder_message(const gd_decoder *decoder) { return decoder->err.message; }

gd_status gd_decoder_open_file(gd_decoder *decoder, const char *path) {
    decoder->file = fopen(path, "rb");
    if (decoder->file == NULL) {
        snprintf(decoder->err.message, sizeof decoder->err.message, "%s: %s", path, strerror(errno));
        return GD_IO;
    }
    /* A larger stdio buffer: libjpeg asks for 4 KB at a time. */
    decoder->file_buffer = malloc(1 << 16);
    if (decoder->file_buffer != NULL) setvbuf(decoder->file, decoder->file_buffer, _IOFBF, 1 << 16);
    GD_GUARD(decoder);
    jpeg_stdio_src(&decoder->cinfo, decoder->file);
    return GD_OK;
}

gd_status gd_decoder_open_memory(gd_decoder *decoder, const unsigned char *bytes, unsigned long length) {
    decoder->memory = bytes;
    decoder->memory_length = length;
    GD_GUARD(decoder);
    jpeg_mem_src(&decoder->cinfo, bytes, length);
    return GD_OK;
}

gd_status gd_decoder_read_header(gd_decoder *decoder) {
    GD_GUARD(decoder);
    int result = jpeg_read_header(&decoder->cinfo, TRUE);
    if (result != JPEG_HEADER_OK) {
        snprintf(decoder->err.message, sizeof decoder->err.message, "no image in the JPEG data");
        return GD_CORRUPT;
    }
    return GD_OK;
}

void gd_decoder_set_split_min_bytes(gd_decoder *decoder, long bytes) { decoder->split_min_bytes = bytes; }

int gd_decoder_split_used(const gd_decoder *decoder) { return decoder->split_used; }

gd_status gd_decoder_start(gd_decoder *decoder) {
    gd_status status;
    if (gd_split_start(decoder, &status)) return status;
    GD_GUARD(decoder);
    jpeg_start_decompress(&decoder->cinfo);
    return GD_OK;
}

gd_status gd_decoder_read_scanlines(gd_decoder *decoder, unsigned char **rows, unsigned int max_lines,
                                    unsigned int *lines_read) {
    *lines_read = 0;
    GD_GUARD(decoder);
    unsigned int total = 0;
    while (total < max_lines && decoder->cinfo.output_scanline < decoder->cinfo.output_height) {
        total += jpeg_read_scanlines(&decoder->cinfo, rows + total, max_lines - total);
        *lines_read = total;
    }
    return GD_OK;
}

gd_status gd_decoder_finish(gd_decoder *decoder) {
    GD_GUARD(decoder);
    if (decoder->split) {
        /* What jpeg_finish_decompress says of an unfinished one-pass decode, then the buffered close. */
        if (decoder->cinfo.output_scanline < decoder->cinfo.output_height)
            ERREXIT(&decoder->cinfo, JERR_TOO_LITTLE_DATA);
        decoder->split = 0;
        jpeg_finish_output(&decoder->cinfo);
    }
    jpeg_finish_decompress(&decoder->cinfo);
    return GD_OK;
}

void gd_free(void *pointer) { free(pointer); }

/* Destination manager that grows one malloc'd buffer we own, so an error path can free it. */
typedef struct {
    struct jpeg_destination_mgr pub;
    unsigned char *buffer;
    size_t capacity;
} gd_destination;

static void gd_dest_init(j_compress_ptr cinfo) {
    gd_destination *dest = (gd_destination *)cinfo->dest;
    dest->pub.next_output_byte = dest->buffer;
    dest->pub.free_in_buffer = dest->capacity;
}

static boolean gd_dest_empty(j_compress_ptr cinfo) {
    gd_destination *dest = (gd_destination *)cinfo->dest;
    size_t used = dest->capacity;
    size_t capacity = dest->capacity * 2;
    unsigned char *grown = realloc(dest->buffer, capacity);
    if (grown == NULL) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 10);
    dest->buffer = grown;
    dest->capacity = capacity;
    dest->pub.next_output_byte = grown + used;
    dest->pub.free_in_buffer = capacity - used;
    return TRUE;
}

static void gd_dest_term(j_compress_ptr cinfo) { (void)cinfo; }

/* Applies a request's parameters to a fresh compressor (may longjmp on bad parameters). */
static void gd_configure(j_compress_ptr cinfo, const gd_encode_request *request) {
    cinfo->image_width = request->width;
    cinfo->image_height = request->height;
    cinfo->input_components = request->input_components;
    cinfo->in_color_space = request->input_color_space;
    jpeg_set_defaults(cinfo);
    jpeg_set_colorspace(cinfo, request->jpeg_color_space);
    cinfo->dct_method = JDCT_ISLOW;
    cinfo->optimize_coding = request->optimize_coding ? TRUE : FALSE;
    cinfo->write_JFIF_header = request->write_jfif ? TRUE : FALSE;
    cinfo->write_Adobe_marker = request->write_adobe ? TRUE : FALSE;

    if (request->quant_table != NULL) {
        int chroma = request->chroma_quality > 0 ? request->chroma_quality : request->quality;
        jpeg_add_quant_table(cinfo, 0, request->quant_table, jpeg_quality_scaling(request->quality), TRUE);
        jpeg_add_quant_table(cinfo, 1, request->quant_table, jpeg_quality_scaling(chroma), TRUE);
    } else {
        jpeg_set_quality(cinfo, request->quality, TRUE);
    }
    /* Final steps given by the caller: scale factor 100 keeps them (clamped to 1...255). */
    if (request->luma_table != NULL) jpeg_add_quant_table(cinfo, 0, request->luma_table, 100, TRUE);
    if (request->chroma_table != NULL) jpeg_add_quant_table(cinfo, 1, request->chroma_table, 100, TRUE);

    for (int c = 0; c < cinfo->num_components; c++) {
        cinfo->comp_info[c].h_samp_factor = 1;
        cinfo->comp_info[c].v_samp_factor = 1;
    }
    if (request->chroma_subsampling && cinfo->jpeg_color_space == JCS_YCbCr) {
        cinfo->comp_info[0].h_samp_factor = 2;
        cinfo->comp_info[0].v_samp_factor = 2;
    }

    if (request->scans != NULL && request->scan_count > 0) {
        cinfo->scan_info = request->scans;
        cinfo->num_scans = request->scan_count;
    }
}

struct gd_encoder {
    struct jpeg_compress_struct cinfo;
    gd_error_mgr err;
    gd_destination dest;
    int created;
    gd_coefficients *coefficients; /* the coefficient path's state (NULL: libjpeg quantizes) */
    /* The whole-image coefficient arrays, one a component, as the compressor asked for them, and
     * whether jpeg_finish_compress leaves them allocated for the scan choice. */
    jvirt_barray_ptr arrays[MAX_COMPONENTS];
    int array_count;
    int keep_image_pool;
    int chose_from_arrays; /* 1 once gd_encoder_finish_choosing has written probes from them */
    jvirt_barray_ptr (*request_virt_barray)(j_common_ptr, int, boolean, JDIMENSION, JDIMENSION, JDIMENSION);
    void (*free_pool)(j_common_ptr, int);
};

/* The memory manager's request_virt_barray, remembering each whole-image array. */
static jvirt_barray_ptr gd_request_virt_barray(j_common_ptr cinfo, int pool_id, boolean pre_zero,
                                               JDIMENSION blocksperrow, JDIMENSION numrows, JDIMENSION maxaccess) {
    gd_encoder *encoder = (gd_encoder *)cinfo->client_data;
    jvirt_barray_ptr array = encoder->request_virt_barray(cinfo, pool_id, pre_zero, blocksperrow, numrows, maxaccess);
    if (pool_id == JPOOL_IMAGE) {
        if (encoder->array_count < MAX_COMPONENTS) encoder->arrays[encoder->array_count] = array;
        encoder->array_count++;
    }
    return array;
}

/* The memory manager's free_pool, leaving the image pool (the coefficient arrays) to the scan choice. */
static void gd_free_pool(j_common_ptr cinfo, int pool_id) {
    gd_encoder *encoder = (gd_encoder *)cinfo->client_data;
    if (pool_id == JPOOL_IMAGE && encoder->keep_image_pool) return;
    encoder->free_pool(cinfo, pool_id);
}

gd_encoder *gd_encoder_create(void) {
    gd_encoder *encoder = calloc(1, sizeof(gd_encoder));
    if (encoder == NULL) return NULL;
    gd_error_init(&encoder->err);
    encoder->cinfo.err = &encoder->err.pub;
    if (setjmp(encoder->err.jump)) {
        free(encoder);
        return NULL;
    }
    jpeg_create_compress(&encoder->cinfo);
    encoder->created = 1;
    encoder->cinfo.client_data = encoder;
    encoder->request_virt_barray = encoder->cinfo.mem->request_virt_barray;
    encoder->cinfo.mem->request_virt_barray = gd_request_virt_barray;
    encoder->free_pool = encoder->cinfo.mem->free_pool;
    encoder->cinfo.mem->free_pool = gd_free_pool;
    return encoder;
}

void gd_encoder_destroy(gd_encoder *encoder) {
    if (encoder == NULL) return;
    if (encoder->created) jpeg_destroy_compress(&encoder->cinfo);
    gd_coefficients_free(encoder->coefficients);
    free(encoder->dest.buffer);
    free(encoder);
}

const char *gd_encoder_message(const gd_encoder *encoder) { return encoder->err.message; }

int gd_encoder_chose_from_coefficients(const gd_encoder *encoder) { return encoder->chose_from_arrays; }

gd_status gd_encoder_start(gd_encoder *encoder, const gd_encode_request *request) {
    GD_GUARD(encoder);
    encoder->dest.capacity = 16384 + (size_t)request->width * request->height / 4;
    encoder->dest.buffer = malloc(encoder->dest.capacity);
    if (encoder->dest.buffer == NULL) ERREXIT1(&encoder->cinfo, JERR_OUT_OF_MEMORY, 11);
    encoder->dest.pub.init_destination = gd_dest_init;
    encoder->dest.pub.empty_output_buffer = gd_dest_empty;
    encoder->dest.pub.term_destination = gd_dest_term;
    encoder->cinfo.dest = &encoder->dest.pub;
    gd_configure(&encoder->cinfo, request);
    if (request->quantizer != GD_QUANTIZER_LIBJPEG) {
        const char *message = "";
        encoder->coefficients = gd_coefficients_create(&encoder->cinfo, request, &message);
        if (encoder->coefficients == NULL) {
            snprintf(encoder->err.message, sizeof encoder->err.message, "%s", message);
            return GD_ERROR;
        }
        gd_coefficients_begin(encoder->coefficients, &encoder->cinfo);
    } else {
        jpeg_start_compress(&encoder->cinfo, TRUE);
    }
    if (request->icc != NULL && request->icc_length > 0)
        jpeg_write_icc_profile(&encoder->cinfo, request->icc, request->icc_length);
    return GD_OK;
}

gd_status gd_encoder_write_rows(gd_encoder *encoder, unsigned char **rows, unsigned int count) {
    GD_GUARD(encoder);
    if (encoder->coefficients != NULL) {
        gd_coefficients_write_rows(encoder->coefficients, &encoder->cinfo, rows, count);
        return GD_OK;
    }
    unsigned int written = 0;
    while (written < count) written += jpeg_write_scanlines(&encoder->cinfo, rows + written, count - written);
    return GD_OK;
}

gd_status gd_encoder_finish(gd_encoder *encoder, unsigned char **output, unsigned long *output_length) {
    *output = NULL;
    *output_length = 0;
    GD_GUARD(encoder);
    if (encoder->coefficients != NULL && gd_coefficients_rows(encoder->coefficients) != encoder->cinfo.image_height) {
        snprintf(encoder->err.message, sizeof encoder->err.message, "%u of %u rows written",
                 gd_coefficients_rows(encoder->coefficients), encoder->cinfo.image_height);
        return GD_ERROR;
    }
    jpeg_finish_compress(&encoder->cinfo);
    *output = encoder->dest.buffer;
    *output_length = (unsigned long)(encoder->dest.capacity - encoder->dest.pub.free_in_buffer);
    encoder->dest.buffer = NULL;
    return GD_OK;
}

gd_status gd_encoder_finish_choosing(gd_encoder *encoder, const gd_scan_script *probes, int probe_count,
                                     unsigned long probed_max_bytes, unsigned char **output,
                                     unsigned long *output_length) {
    unsigned char *fixed = NULL, *chosen = NULL;
    unsigned long length = 0, chosen_length = 0;
    encoder->keep_image_pool = probe_count > 1; /* the arrays outlive jpeg_finish_compress's jpeg_abort */
    gd_status status = gd_encoder_finish(encoder, &fixed, &length);
    encoder->keep_image_pool = 0;
    if (status == GD_OK && probe_count > 1 && length <= probed_max_bytes) {
        /* Read back when the arrays are not one a component (no compressor here asks otherwise). */
        int kept = encoder->array_count == encoder->cinfo.num_components;
        status = gd_choose_scans_from(fixed, length, probes, probe_count, kept ? &encoder->cinfo : NULL,
                                      kept ? encoder->arrays : NULL, &chosen, &chosen_length, encoder->err.message,
                                      sizeof encoder->err.message);
        encoder->chose_from_arrays = kept && status == GD_OK;
        if (chosen != NULL) {
            free(fixed);
            fixed = chosen;
            length = chosen_length;
        }
    }
    encoder->free_pool((j_common_ptr)&encoder->cinfo, JPOOL_IMAGE);
    if (status != GD_OK) {
        free(fixed);
        return status;
    }
    *output = fixed;
    *output_length = length;
    return GD_OK;
}

gd_status gd_encode(const gd_encode_request *request, unsigned char **output, unsigned long *output_length,
                    char *message, size_t message_capacity) {
    *output = NULL;
    *output_length = 0;
    gd_encoder *encoder = gd_encoder_create();
    if (encoder == NULL) {
        if (message != NULL && message_capacity > 0) snprintf(message, message_capacity, "out of memory");
        return GD_ERROR;
    }
    gd_status status = gd_encoder_start(encoder, request);
    JSAMPROW rows[16];
    unsigned int y = 0;
    while (status == GD_OK && y < request->height) {
        unsigned int count = 0;
        while (count < 16 && y + count < request->height) {
            rows[count] = (JSAMPROW)(request->pixels + (size_t)(y + count) * request->stride);
            count++;
        }
        status = gd_encoder_write_rows(encoder, rows, count);
        y += count;
    }
    if (status == GD_OK)
        status = request->probes != NULL ? gd_encoder_finish_choosing(encoder, request->probes, request->probe_count,
                                                                      request->probed_max_bytes, output, output_length)
                                         : gd_encoder_finish(encoder, output, output_length);
    if (status != GD_OK && message != NULL && message_capacity > 0)
        snprintf(message, message_capacity, "%s", gd_encoder_message(encoder));
    gd_encoder_destroy(encoder);
    return status;
}
