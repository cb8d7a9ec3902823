#include "jpeg_shim.h"
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
