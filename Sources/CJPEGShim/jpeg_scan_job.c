/*
 * The scan choice's probes (jpeg_scan_choice.c) written on a second thread from the compressor's own
 * coefficient arrays while the compressor finishes its file on the calling one: both only read the
 * arrays, which gd_encoder_finish_choosing keeps allocated until the job has ended. The probes are
 * written exactly as gd_choose_scans_from writes them, so the chosen file is the same bytes.
 */
#include "jpeg_scan_choice.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* The probes written on a thread of their own while the compressor finishes its file. */
struct gd_scan_job {
    gd_choice *choice;
    const gd_scan_script *probes;
    int probe_count;
    jvirt_barray_ptr *arrays;
    size_t capacity;
    gd_status status;
    int cancelled; /* set (atomically) when the file will not be probed: the thread stops at its next row */
    struct jpeg_progress_mgr progress;
    pthread_t thread;
};

/* The probes' compressor checks, once per row of blocks of every pass, whether to stop. */
static void gd_job_progress(j_common_ptr cinfo) {
    gd_scan_job *job = (gd_scan_job *)cinfo->client_data;
    if (!__atomic_load_n(&job->cancelled, __ATOMIC_RELAXED)) return;
    gd_error_mgr *err = (gd_error_mgr *)cinfo->err;
    err->status = GD_ERROR;
    snprintf(err->message, sizeof err->message, "the probes were cancelled");
    longjmp(err->jump, 1);
}

static void *gd_job_run(void *argument) {
    gd_scan_job *job = argument;
    gd_choice *choice = job->choice;
    if (setjmp(choice->err.jump)) {
        job->status = choice->err.status == GD_OK ? GD_ERROR : choice->err.status;
        return NULL;
    }
    gd_write_probes(choice, job->arrays, job->probes, job->probe_count, job->capacity);
    job->status = GD_OK;
    return NULL;
}

gd_scan_job *gd_choose_scans_begin(j_compress_ptr encoder, jvirt_barray_ptr *arrays, const gd_scan_script *probes,
                                   int probe_count) {
    if (probe_count < 2 || probe_count > GD_MAX_PROBES || !encoder->progressive_mode || encoder->arith_code ||
        encoder->restart_interval != 0)
        return NULL;
    for (int p = 0; p < probe_count; p++)
        if (!gd_probe_valid(&probes[p], encoder->num_components)) return NULL;
    gd_scan_job *job = calloc(1, sizeof(gd_scan_job));
    gd_choice *choice = gd_choice_new(NULL, 0);
    if (job == NULL || choice == NULL) {
        free(job);
        free(choice);
        return NULL;
    }
    job->choice = choice;
    job->probes = probes;
    job->probe_count = probe_count;
    job->arrays = arrays;
    job->capacity = 16384 + (size_t)encoder->image_width * encoder->image_height / 4;
    choice->from_encoder = 1;
    gd_take_encoder_parameters(encoder, &choice->encoder);
    if (setjmp(choice->err.jump)) {
        gd_choice_free(choice);
        free(job);
        return NULL;
    }
    jpeg_create_compress(&choice->target);
    choice->target_created = 1;
    choice->target.client_data = job;
    job->progress.progress_monitor = gd_job_progress;
    choice->target.progress = &job->progress;
    if (pthread_create(&job->thread, NULL, gd_job_run, job) != 0) {
        gd_choice_free(choice);
        free(job);
        return NULL;
    }
    return job;
}

void gd_choose_scans_cancel(gd_scan_job *job) { __atomic_store_n(&job->cancelled, 1, __ATOMIC_RELAXED); }

gd_status gd_choose_scans_end(gd_scan_job *job, const unsigned char *jpeg, unsigned long length, int probe,
                              unsigned char **output, unsigned long *output_length, char *message,
                              size_t message_capacity) {
    *output = NULL;
    *output_length = 0;
    if (!probe) gd_choose_scans_cancel(job);
    pthread_join(job->thread, NULL);
    gd_choice *choice = job->choice;
    gd_status status = job->status;
    const gd_scan_script *probes = job->probes;
    int probe_count = job->probe_count;
    free(job);
    if (!probe) {
        gd_choice_free(choice);
        return GD_OK;
    }
    if (status != GD_OK) {
        if (message != NULL && message_capacity > 0) snprintf(message, message_capacity, "%s", choice->err.message);
        gd_choice_free(choice);
        return status;
    }
    long best[GD_GROUPS];
    const char *problem = gd_check_first(choice, jpeg, length, probes, choice->encoder.components, best);
    if (problem != NULL) return gd_fail(choice, problem, message, message_capacity);
    if (gd_splice(choice, probes, probe_count, best, output, output_length) != GD_OK)
        return gd_fail(choice, "out of memory", message, message_capacity);
    gd_choice_free(choice);
    return GD_OK;
}
