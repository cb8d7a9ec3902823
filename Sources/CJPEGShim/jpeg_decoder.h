#ifndef GALLERYD_JPEG_DECODER_H
#define GALLERYD_JPEG_DECODER_H
/* The decompressor's internals, shared by jpeg_shim.c and the two-thread progressive decode
 * (jpeg_split_decode.c). */
#include <setjmp.h>

#include "jpeg_shim.h"

/* A destination that grows one malloc'd buffer we own, so that an error path can free it: the
 * encoder's file and the scan choice's probes (jpeg_encoder.c). */
typedef struct {
    struct jpeg_destination_mgr pub;
    unsigned char *buffer;
    size_t capacity;
} gd_memory_destination;
/* Points the compressor at `dest`, whose buffer of `capacity` bytes the caller has allocated. */
void gd_memory_destination_use(j_compress_ptr cinfo, gd_memory_destination *dest);

/* Error manager: remembers the message and status, then jumps back to the guarded call. */
typedef struct {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
    gd_status status;
    char message[JMSG_LENGTH_MAX];
} gd_error_mgr;

/* Installs the shim's handlers: fatal errors and data warnings jump back with a status. */
void gd_error_init(gd_error_mgr *err);
/* The shim's emit_message: a data warning jumps back as GD_CORRUPT or GD_TRUNCATED. */
void gd_emit_message(j_common_ptr cinfo, int level);

struct gd_decoder {
    struct jpeg_decompress_struct cinfo;
    gd_error_mgr err;
    struct jpeg_progress_mgr progress;
    int max_scans;
    FILE *file;
    char *file_buffer;
    const unsigned char *memory;  /* the caller's bytes (gd_decoder_open_memory), or NULL */
    unsigned long memory_length;
    long split_min_bytes;         /* the two-thread decode's size threshold; < 0: never */
    int split;                    /* 1 while a two-thread decode's output pass runs */
    int split_used;               /* the last start decoded on two threads */
};

#define GD_GUARD(decoder)                                  \
    (decoder)->err.status = GD_OK;                         \
    (decoder)->err.message[0] = 0;                         \
    if (setjmp((decoder)->err.jump)) return (decoder)->err.status;

/* gd_choose_scans, with the coefficients taken from `encoder`, the compressor that has just written
 * `jpeg` and kept its whole-image arrays (`arrays`, one a component), instead of read back from the
 * file; NULL for both: read back (jpeg_scan_choice.c). */
gd_status gd_choose_scans_from(const unsigned char *jpeg, unsigned long length, const gd_scan_script *probes,
                               int probe_count, j_compress_ptr encoder, jvirt_barray_ptr *arrays,
                               unsigned char **output, unsigned long *output_length, char *message,
                               size_t message_capacity);

/* The probes of a scan choice written on a second thread while `encoder` finishes (jpeg_scan_job.c):
 * begun once every row is written (NULL when it cannot be: then choose after finishing), cancelled
 * when the file will not be probed, ended with the finished file (`probe` 0: discarded, *output NULL)
 * to splice it as gd_choose_scans_from does. `probes` and `arrays` must outlive the job. */
typedef struct gd_scan_job gd_scan_job;
gd_scan_job *gd_choose_scans_begin(j_compress_ptr encoder, jvirt_barray_ptr *arrays, const gd_scan_script *probes,
                                   int probe_count);
void gd_choose_scans_cancel(gd_scan_job *job);
gd_status gd_choose_scans_end(gd_scan_job *job, const unsigned char *jpeg, unsigned long length, int probe,
                              unsigned char **output, unsigned long *output_length, char *message,
                              size_t message_capacity);

/*
 * Starts a progressive colour decode on two threads when it applies (jpeg_split_decode.c):
 * returns 1 with *status set when it handled the start (on success the output pass is open),
 * 0 when the caller should start the usual way (the decoder is then as it was).
 */
int gd_split_start(gd_decoder *decoder, gd_status *status);

#endif
