#ifndef GALLERYD_PNG_SHIM_H
#define GALLERYD_PNG_SHIM_H
/*
 * libpng's row-by-row reader behind setjmp/longjmp, which Swift cannot express: a PNG is read a
 * band of rows at a time into the caller's buffer, as 8-bit sRGB-encoded RGB or straight RGBA
 * (palettes and tRNS expanded, grey widened, 16-bit samples scaled, gAMA honoured unless an
 * sRGB or iCCP chunk describes the colour). Every call that may fail returns a gp_status; the
 * libpng message is then in gp_reader_message(). An interlaced (Adam7) file is read whole with
 * gp_reader_read_image, through the same transforms: its rows are not final until the last pass.
 */
#include <stddef.h>
#include <stdint.h>

/* Outcome of a guarded libpng call. */
typedef enum {
    GP_OK = 0,
    GP_ERROR = 1,      /* libpng reported an error (message set) */
    GP_TRUNCATED = 2,  /* the data ended before the image did */
    GP_IO = 3          /* the file could not be opened (errno in the message) */
} gp_status;

/* A libpng read struct with its info struct, input and last message. */
typedef struct gp_reader gp_reader;

/* A reader of `size` bytes at `data`, which must outlive it; NULL when out of memory. */
gp_reader *gp_reader_create_memory(const unsigned char *data, size_t size);
/* A reader of the file at `path` (opened by gp_reader_start); NULL when out of memory. */
gp_reader *gp_reader_create_file(const char *path);
void gp_reader_destroy(gp_reader *reader);

/* Reads the chunks up to the image data and sets the transforms; the size, whether rows carry
 * alpha (4 bytes a pixel, else 3) and whether the file is interlaced come back, with its cICP
 * chunk (cicp[0] = -1 when none, or when it is not full-range RGB). A cICP whose transfer's bit is
 * set in `keep16_transfers` (the ones the caller converts: an HDR PNG, decision 074) turns gAMA
 * off, and an opaque 16-bit such file is read as 16-bit little-endian RGB (`bits` 16, 6 bytes a
 * pixel); any other cICP leaves the file read as before. */
gp_status gp_reader_start(
    gp_reader *reader, uint32_t *width, uint32_t *height, int *has_alpha, int *interlaced, int *is_gray,
    uint32_t keep16_transfers, int cicp[4], int *bits);
/* Reads the next `count` rows into `rows`, `stride` bytes apart (a non-interlaced file). */
gp_status gp_reader_read_rows(gp_reader *reader, unsigned char *rows, size_t stride, uint32_t count);
/* Reads every pass of an interlaced file into the `height` rows at `rows`, `stride` bytes apart. */
gp_status gp_reader_read_image(gp_reader *reader, unsigned char *rows, size_t stride, uint32_t height);
/* Reads the chunks after the image data (their CRCs checked) up to IEND. */
gp_status gp_reader_finish(gp_reader *reader);
/* The last libpng error message ("" when none). */
const char *gp_reader_message(const gp_reader *reader);

#endif
