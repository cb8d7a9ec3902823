#include "png_shim.h"

#include <errno.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gp_reader {
    png_structp png;
    png_infop info;
    const unsigned char *data; /* memory input, or NULL */
    size_t size;
    size_t offset;
    char *path; /* file input, or NULL */
    FILE *file;
    int truncated;
    int passes; /* 1, or 7 for an Adam7 file */
    int cicp[4]; /* the first usable cICP chunk's codes; cicp[0] = -1 when none */
    char message[200];
};

static void on_error(png_structp png, png_const_charp text) {
    gp_reader *reader = png_get_error_ptr(png);
    snprintf(reader->message, sizeof reader->message, "%s", text);
    png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp text) {
    (void)png;
    (void)text;
}

/* Memory input: an error, never a short read, when the data ends early. */
static void read_memory(png_structp png, png_bytep out, size_t length) {
    gp_reader *reader = png_get_io_ptr(png);
    if (length > reader->size - reader->offset) {
        reader->truncated = 1;
        png_error(png, "PNG data ends early");
    }
    memcpy(out, reader->data + reader->offset, length);
    reader->offset += length;
}

/* File input: the same for a file that ends early. */
static void read_file(png_structp png, png_bytep out, size_t length) {
    gp_reader *reader = png_get_io_ptr(png);
    if (fread(out, 1, length, reader->file) != length) {
        reader->truncated = !ferror(reader->file);
        png_error(png, reader->truncated ? "PNG file ends early" : "PNG file read error");
    }
}

/* libpng 1.6.39 does not know cICP (PNG 3rd edition §11.3.2.6), so it reaches this callback as an
 * unknown chunk. The first cICP of 4 bytes describing full-range RGB (matrix 0, full range 1: a
 * narrow-range one is read as before) is copied; every ancillary unknown chunk is then dropped
 * (1: handled), so none is stored in `info` until the reader is destroyed, as none was before. A
 * critical one is left to libpng (0), which refuses it as before. */
static int on_unknown_chunk(png_structp png, png_unknown_chunkp chunk) {
    gp_reader *reader = png_get_user_chunk_ptr(png);
    if (memcmp(chunk->name, "cICP", 4) == 0 && chunk->size == 4 && reader->cicp[0] < 0 && chunk->data[2] == 0
        && chunk->data[3] == 1) {
        for (int k = 0; k < 4; k++) reader->cicp[k] = chunk->data[k];
    }
    return (chunk->name[0] & 0x20) ? 1 : 0;
}

static gp_reader *create(void) {
    gp_reader *reader = calloc(1, sizeof *reader);
    if (!reader) return NULL;
    reader->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, reader, on_error, on_warning);
    if (reader->png) reader->info = png_create_info_struct(reader->png);
    if (!reader->info) {
        gp_reader_destroy(reader);
        return NULL;
    }
    reader->cicp[0] = -1;
    png_set_read_user_chunk_fn(reader->png, reader, on_unknown_chunk);
    return reader;
}

gp_reader *gp_reader_create_memory(const unsigned char *data, size_t size) {
    gp_reader *reader = create();
    if (!reader) return NULL;
    reader->data = data;
    reader->size = size;
    png_set_read_fn(reader->png, reader, read_memory);
    return reader;
}

gp_reader *gp_reader_create_file(const char *path) {
    gp_reader *reader = create();
    if (!reader) return NULL;
    reader->path = strdup(path);
    if (!reader->path) {
        gp_reader_destroy(reader);
        return NULL;
    }
    return reader;
}

void gp_reader_destroy(gp_reader *reader) {
    if (!reader) return;
    if (reader->png) png_destroy_read_struct(&reader->png, reader->info ? &reader->info : NULL, NULL);
    if (reader->file) fclose(reader->file);
    free(reader->path);
    free(reader);
}

static gp_status failure(gp_reader *reader) { return reader->truncated ? GP_TRUNCATED : GP_ERROR; }

gp_status gp_reader_start(
    gp_reader *reader, uint32_t *width, uint32_t *height, int *has_alpha, int *interlaced, int *is_gray,
    uint32_t keep16_transfers, int cicp[4], int *bits) {
    if (reader->path) {
        reader->file = fopen(reader->path, "rb");
        if (!reader->file) {
            snprintf(reader->message, sizeof reader->message, "%s: %s", reader->path, strerror(errno));
            return GP_IO;
        }
        png_set_read_fn(reader->png, reader, read_file);
    }
    png_structp png = reader->png;
    png_infop info = reader->info;
    if (setjmp(png_jmpbuf(png))) return failure(reader);
    png_read_info(png, info);
    int color = png_get_color_type(png, info);
    int alpha = (color & PNG_COLOR_MASK_ALPHA) || png_get_valid(png, info, PNG_INFO_tRNS);
    png_set_expand(png);       /* palette to RGB, tRNS to alpha, 1/2/4-bit grey to 8 */
    png_set_gray_to_rgb(png);  /* grey (and grey+alpha) to RGB(A) */
    memcpy(cicp, reader->cicp, sizeof reader->cicp);
    /* A cICP naming a transfer the caller converts (an HDR PNG): the caller converts its light, so
     * gAMA does not apply, and an opaque 16-bit file keeps its 16 bits, little-endian. */
    int converts = cicp[0] >= 0 && cicp[1] < 32 && (keep16_transfers >> cicp[1] & 1);
    int keep16 = converts && !alpha && png_get_bit_depth(png, info) == 16;
    if (keep16) {
        png_set_swap(png);
    } else {
        png_set_scale_16(png); /* 16-bit samples, taken as encoded by their transfer, to 8 */
    }
    /* gAMA says how samples encode light unless sRGB, iCCP or a converted cICP says so; the output is sRGB. */
    double gamma;
    if (!png_get_valid(png, info, PNG_INFO_sRGB) && !png_get_valid(png, info, PNG_INFO_iCCP) && !converts
        && png_get_gAMA(png, info, &gamma) && gamma > 0) {
        png_set_gamma(png, PNG_DEFAULT_sRGB, gamma);
    }
    /* Adam7: libpng puts each pass's pixels in place (gp_reader_read_image), with the same transforms. */
    reader->passes = png_set_interlace_handling(png);
    png_read_update_info(png, info);
    size_t channels = alpha ? 4 : 3;
    int depth = keep16 ? 16 : 8;
    if (png_get_rowbytes(png, info) != (size_t)png_get_image_width(png, info) * channels * (depth / 8)
        || png_get_bit_depth(png, info) != depth) {
        snprintf(reader->message, sizeof reader->message, "unexpected row format after transforms");
        return GP_ERROR;
    }
    *width = png_get_image_width(png, info);
    *height = png_get_image_height(png, info);
    *has_alpha = alpha;
    *interlaced = reader->passes > 1;
    *bits = depth;
    /* Grey or grey+alpha (alpha is flattened onto white, which keeps it grey); a palette is colour. */
    *is_gray = !(color & PNG_COLOR_MASK_COLOR);
    return GP_OK;
}

gp_status gp_reader_read_rows(gp_reader *reader, unsigned char *rows, size_t stride, uint32_t count) {
    if (setjmp(png_jmpbuf(reader->png))) return failure(reader);
    for (uint32_t row = 0; row < count; row++) png_read_row(reader->png, rows + row * stride, NULL);
    return GP_OK;
}

gp_status gp_reader_read_image(gp_reader *reader, unsigned char *rows, size_t stride, uint32_t height) {
    if (setjmp(png_jmpbuf(reader->png))) return failure(reader);
    for (int pass = 0; pass < reader->passes; pass++) {
        for (uint32_t row = 0; row < height; row++) png_read_row(reader->png, rows + row * stride, NULL);
    }
    return GP_OK;
}

gp_status gp_reader_finish(gp_reader *reader) {
    if (setjmp(png_jmpbuf(reader->png))) return failure(reader);
    png_read_end(reader->png, NULL);
    return GP_OK;
}

const char *gp_reader_message(const gp_reader *reader) { return reader->message; }
