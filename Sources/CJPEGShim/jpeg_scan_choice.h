#ifndef GALLERYD_JPEG_SCAN_CHOICE_H
#define GALLERYD_JPEG_SCAN_CHOICE_H
/* The scan choice's internals (jpeg_scan_choice.c), shared with the probes' thread (jpeg_scan_job.c). */
#include "jpeg_decoder.h"

#define GD_MAX_PROBE_SCANS 64
#define GD_GROUPS (1 + MAX_COMPONENTS)

/* Where a file's scans are: [start, end) of each scan's DHTs + SOS + entropy-coded data. */
typedef struct {
    int count;
    size_t header_end; /* the first scan's first byte: everything before it is the header */
    size_t start[GD_MAX_PROBE_SCANS], end[GD_MAX_PROBE_SCANS];
    int ns[GD_MAX_PROBE_SCANS], ss[GD_MAX_PROBE_SCANS], se[GD_MAX_PROBE_SCANS];
    int ah[GD_MAX_PROBE_SCANS], al[GD_MAX_PROBE_SCANS];
} gd_scan_layout;

/* The parameters of the compressor that wrote the file, for its probes (gd_copy_encoder_parameters). */
typedef struct {
    JDIMENSION width, height;
    int components, precision;
    J_COLOR_SPACE color_space;
    int has_table[NUM_QUANT_TBLS];
    UINT16 tables[NUM_QUANT_TBLS][DCTSIZE2];
    int ids[MAX_COMPONENTS], h[MAX_COMPONENTS], v[MAX_COMPONENTS], table[MAX_COMPONENTS];
} gd_encoder_parameters;

typedef struct {
    gd_error_mgr err;
    int from_encoder; /* 1: the coefficients are the compressor's (`encoder`), not the file's read back */
    gd_encoder_parameters encoder;
    struct jpeg_decompress_struct source;
    struct jpeg_compress_struct target;
    int source_created, target_created;
    gd_memory_destination dest;
    unsigned char *outputs[GD_MAX_PROBES];
    unsigned long lengths[GD_MAX_PROBES];
    gd_scan_layout layouts[GD_MAX_PROBES];
    unsigned char *result;
} gd_choice;

/* A new choice with its error manager, or NULL (message says why). */
gd_choice *gd_choice_new(char *message, size_t message_capacity);
void gd_choice_free(gd_choice *choice);
/* Frees the choice and returns GD_ERROR with `text` as the message. */
gd_status gd_fail(gd_choice *choice, const char *text, char *message, size_t capacity);
/* 1 when the probe's scans are well formed and send whole groups of `components` components. */
int gd_probe_valid(const gd_scan_script *probe, int components);
/* The compressor's parameters that its probes copy (gd_copy_encoder_parameters). */
void gd_take_encoder_parameters(j_compress_ptr source, gd_encoder_parameters *params);
/* Checks the file against probes[0] and sets each group's bytes in it (best[]); NULL, or the reason
 * it cannot be rewritten. */
const char *gd_check_first(gd_choice *choice, const unsigned char *jpeg, unsigned long length,
                           const gd_scan_script *probes, int components, long best[GD_GROUPS]);
/* Writes probes[1...] from the coefficients and finds their scans (may longjmp). */
void gd_write_probes(gd_choice *choice, jvirt_barray_ptr *coefficients, const gd_scan_script *probes, int probe_count,
                     size_t capacity);
/* The smallest scans of each group spliced after the file's headers (*output NULL: the file wins). */
gd_status gd_splice(gd_choice *choice, const gd_scan_script *probes, int probe_count, long best[GD_GROUPS],
                    unsigned char **output, unsigned long *output_length);

#endif
