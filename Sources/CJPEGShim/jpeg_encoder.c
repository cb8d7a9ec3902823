/*
 * The compressor: a request's parameters (gd_configure), rows written as they come (gd_encoder_*, the
 * streaming encoder's and gd_encode's), and the scan choice made as the file is finished from the
 * compressor's own coefficient arrays, its probes on a second thread (gd_encoder_finish_choosing).
 */
#include "jpeg_shim.h"
#include "jpeg_coefficients.h"
#include "jpeg_decoder.h"

#include <limits.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <jerror.h>

static void gd_dest_init(j_compress_ptr cinfo) {
    gd_memory_destination *dest = (gd_memory_destination *)cinfo->dest;
    dest->pub.next_output_byte = dest->buffer;
    dest->pub.free_in_buffer = dest->capacity;
}

static boolean gd_dest_empty(j_compress_ptr cinfo) {
    gd_memory_destination *dest = (gd_memory_destination *)cinfo->dest;
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

void gd_memory_destination_use(j_compress_ptr cinfo, gd_memory_destination *dest) {
    dest->pub.init_destination = gd_dest_init;
    dest->pub.empty_output_buffer = gd_dest_empty;
    dest->pub.term_destination = gd_dest_term;
    cinfo->dest = &dest->pub;
}

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
    if (request->cr_table != NULL && cinfo->jpeg_color_space == JCS_YCbCr && cinfo->num_components == 3) {
        jpeg_add_quant_table(cinfo, 2, request->cr_table, 100, TRUE);
        cinfo->comp_info[2].quant_tbl_no = 2;
    }

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

/* The probes are written beside the finish only for a file likely to be probed: one whose arrays hold
 * at most its byte limit times this (in tenths) nonzero AC coefficients. The bench's 50 previews of
 * over 1 MP have 0.65-1.34 bytes a nonzero AC coefficient; this starts the probes beside the finish
 * for every preview under 160 kB but one (probed after it) and for none over (decision 065, s20). */
#define GD_SPECULATE_TENTHS 11

struct gd_encoder {
    struct jpeg_compress_struct cinfo;
    gd_error_mgr err;
    gd_memory_destination dest;
    int created;
    gd_coefficients *coefficients; /* the coefficient path's state (NULL: libjpeg quantizes) */
    /* The whole-image coefficient arrays, one a component, as the compressor asked for them (libjpeg's
     * multi-scan coefficient controller, or the coefficient path), and whether jpeg_finish_compress is
     * to leave them allocated for the scan choice (gd_encoder_finish_choosing). */
    jvirt_barray_ptr arrays[MAX_COMPONENTS];
    int array_count;
    int keep_image_pool;
    int chose_from_arrays; /* probes written from them: 1 after the finish, 2 beside it */
    gd_scan_job *job;                /* the probes' thread while the file is finished, or NULL */
    int speculate_tenths;            /* GD_SPECULATE_TENTHS, or what gd_encoder_set_speculation set */
    unsigned long probed_max_bytes;  /* the job is cancelled once the file is larger */
    struct jpeg_progress_mgr progress;
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
    encoder->speculate_tenths = GD_SPECULATE_TENTHS;
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

void gd_encoder_set_speculation(gd_encoder *encoder, int tenths) { encoder->speculate_tenths = tenths > 0 ? tenths : 1; }

gd_status gd_encoder_start(gd_encoder *encoder, const gd_encode_request *request) {
    GD_GUARD(encoder);
    encoder->dest.capacity = 16384 + (size_t)request->width * request->height / 4;
    encoder->dest.buffer = malloc(encoder->dest.capacity);
    if (encoder->dest.buffer == NULL) ERREXIT1(&encoder->cinfo, JERR_OUT_OF_MEMORY, 11);
    gd_memory_destination_use(&encoder->cinfo, &encoder->dest);
    gd_configure(&encoder->cinfo, request);
    if (request->quantizer != GD_QUANTIZER_LIBJPEG || request->chroma_sharpening != 0) {
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

/* While the file is finished: cancels the probes' thread once the file is too large to be probed. */
static void gd_finish_progress(j_common_ptr cinfo) {
    gd_encoder *encoder = (gd_encoder *)cinfo->client_data;
    size_t written = encoder->dest.capacity - encoder->dest.pub.free_in_buffer;
    if (encoder->job != NULL && written > encoder->probed_max_bytes) gd_choose_scans_cancel(encoder->job);
}

/* About how many nonzero quantized AC coefficients the whole-image arrays hold: those of every
 * fourth row of blocks, times 4 (a pass over a quarter of the arrays, before the finish). */
static unsigned long gd_nonzero_ac(gd_encoder *encoder) {
    j_compress_ptr cinfo = &encoder->cinfo;
    unsigned long count = 0;
    for (int c = 0; c < cinfo->num_components; c++) {
        jpeg_component_info *component = &cinfo->comp_info[c];
        for (JDIMENSION row = 0; row < component->height_in_blocks; row += 4) {
            JBLOCKARRAY rows = (*cinfo->mem->access_virt_barray)((j_common_ptr)cinfo, encoder->arrays[c], row, 1, FALSE);
            const JCOEF *coefficient = rows[0][0];
            uint32_t n = component->width_in_blocks * DCTSIZE2, nonzero = 0, dc = 0;
            for (uint32_t i = 0; i < n; i++) nonzero += coefficient[i] != 0;
            for (uint32_t i = 0; i < n; i += DCTSIZE2) dc += coefficient[i] != 0;
            count += 4 * (unsigned long)(nonzero - dc);
        }
    }
    return count;
}

gd_status gd_encoder_finish_choosing(gd_encoder *encoder, const gd_scan_script *probes, int probe_count,
                                     unsigned long probed_max_bytes, unsigned char **output,
                                     unsigned long *output_length) {
    unsigned char *fixed = NULL;
    unsigned long length = 0;
    /* The arrays stay allocated through jpeg_finish_compress's jpeg_abort, until the choice is made. */
    encoder->keep_image_pool = probe_count > 1;
    /* The arrays are whole once every row is written: the probes are written from them on a second
     * thread while this one finishes the file (read back instead when they are not one a component,
     * which no compressor here does). */
    int kept = probe_count > 1 && encoder->array_count == encoder->cinfo.num_components;
    int complete = encoder->coefficients != NULL ? gd_coefficients_rows(encoder->coefficients) == encoder->cinfo.image_height
                                                 : encoder->cinfo.next_scanline == encoder->cinfo.image_height;
    int likely = probed_max_bytes == ULONG_MAX ||
                 (kept && complete &&
                  gd_nonzero_ac(encoder) / encoder->speculate_tenths <= probed_max_bytes / 10);
    if (kept && complete && likely)
        encoder->job = gd_choose_scans_begin(&encoder->cinfo, encoder->arrays, probes, probe_count);
    if (encoder->job != NULL) {
        encoder->probed_max_bytes = probed_max_bytes;
        encoder->progress.progress_monitor = gd_finish_progress;
        encoder->cinfo.progress = &encoder->progress;
    }
    gd_status status = gd_encoder_finish(encoder, &fixed, &length);
    encoder->cinfo.progress = NULL;
    encoder->keep_image_pool = 0;
    int probe = status == GD_OK && probe_count > 1 && length <= probed_max_bytes;
    unsigned char *chosen = NULL;
    unsigned long chosen_length = 0;
    if (encoder->job != NULL) {
        gd_status ended = gd_choose_scans_end(encoder->job, fixed, length, probe, &chosen, &chosen_length,
                                              encoder->err.message, sizeof encoder->err.message);
        encoder->job = NULL;
        if (status == GD_OK) status = ended;
        encoder->chose_from_arrays = probe && ended == GD_OK ? 2 : 0;
    } else if (probe) {
        status = gd_choose_scans_from(fixed, length, probes, probe_count, kept ? &encoder->cinfo : NULL,
                                      kept ? encoder->arrays : NULL, &chosen, &chosen_length, encoder->err.message,
                                      sizeof encoder->err.message);
        encoder->chose_from_arrays = kept && status == GD_OK;
    }
    if (chosen != NULL) {
        free(fixed);
        fixed = chosen;
        length = chosen_length;
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
