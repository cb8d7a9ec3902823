/*
 * Scan optimization in the manner of mozjpeg's optimize_scans: the same quantized coefficients
 * written with several progressive scan scripts, keeping for each group of scans the cheapest.
 *
 * A progressive file's scans fall into independent groups: the DC scans (Ss = 0) and, for each
 * component, its AC scans. With optimized Huffman coding libjpeg gives every scan its own tables,
 * emitted in DHT markers right before its SOS, so a scan's bytes (DHTs, SOS and entropy-coded data)
 * depend on that scan alone and not on the scans around it. The other probes are written
 * (jpeg_write_coefficients) from the coefficients of the file written with probe 0: the arrays of
 * the compressor that wrote it, kept (gd_choose_scans_from, gd_encoder_finish_choosing; on a second
 * thread beside its finish, jpeg_scan_job.c), or the file read back (jpeg_read_coefficients: entropy
 * decoding only, as jpegtran does; gd_choose_scans). The result
 * is the first file's headers, then for each group the segments of the probe whose group is the
 * smallest: DC, then component 0's AC scans, then component 1's, and so on, then EOI. Every
 * chosen group sends all bits of its coefficients, so the decoded pixels are those of the input.
 * When probe 0 is the smallest in every group the input is kept as it is.
 */
#include "jpeg_scan_choice.h"

#include <stdlib.h>
#include <string.h>
#include <jerror.h>

/* Finds the scans of a file libjpeg wrote (no fill bytes, nothing but DHTs between scans);
 * 0 on success, -1 when the bytes are not laid out so. */
static int gd_find_scans(const unsigned char *data, size_t length, gd_scan_layout *layout) {
    memset(layout, 0, sizeof *layout);
    if (length < 4 || data[0] != 0xFF || data[1] != 0xD8) return -1;
    size_t i = 2, pending = 0;
    int pending_set = 0;
    while (i + 2 <= length) {
        if (data[i] != 0xFF) return -1;
        int marker = data[i + 1];
        if (marker == 0xD9) return (layout->count > 0 && !pending_set && i + 2 == length) ? 0 : -1;
        if (i + 4 > length) return -1;
        size_t segment = ((size_t)data[i + 2] << 8) | data[i + 3];
        if (segment < 2 || i + 2 + segment > length) return -1;
        if (marker == 0xC4 || marker == 0xDA) {
            if (!pending_set) {
                pending = i;
                pending_set = 1;
                if (layout->count == 0) layout->header_end = i;
            }
        } else if (layout->count > 0 || pending_set) {
            return -1; /* only DHTs and SOSs after the first scan */
        }
        if (marker != 0xDA) {
            i += 2 + segment;
            continue;
        }
        int n = layout->count;
        if (n == GD_MAX_PROBE_SCANS || segment < 6) return -1;
        int ns = data[i + 4];
        if (segment != (size_t)(6 + 2 * ns)) return -1;
        size_t p = i + 5 + 2 * (size_t)ns;
        layout->ns[n] = ns;
        layout->ss[n] = data[p];
        layout->se[n] = data[p + 1];
        layout->ah[n] = data[p + 2] >> 4;
        layout->al[n] = data[p + 2] & 15;
        size_t j = i + 2 + segment;
        while (j + 1 < length && !(data[j] == 0xFF && data[j + 1] != 0 && (data[j + 1] < 0xD0 || data[j + 1] > 0xD7)))
            j++;
        if (j + 1 >= length) return -1;
        layout->start[n] = pending;
        layout->end[n] = j;
        layout->count = n + 1;
        pending_set = 0;
        i = j;
    }
    return -1;
}

/* The group of a script's scan: 0 for DC, 1 + component for an AC scan (of one component). */
static int gd_scan_group(const jpeg_scan_info *scan) {
    return scan->Ss == 0 ? 0 : 1 + scan->component_index[0];
}

/* Checks a probe against the components: every scan well formed, DC sent whole for every
 * component, and each component's AC scans, if any, send every bit of coefficients 1...63. */
int gd_probe_valid(const gd_scan_script *probe, int components) {
    if (probe->scan_count < 1 || probe->scan_count > GD_MAX_PROBE_SCANS) return 0;
    signed char bits[MAX_COMPONENTS][64];
    memset(bits, -1, sizeof bits);
    int has_ac[MAX_COMPONENTS] = {0};
    for (int k = 0; k < probe->scan_count; k++) {
        const jpeg_scan_info *scan = &probe->scans[k];
        if (scan->comps_in_scan < 1 || scan->comps_in_scan > components) return 0;
        if (scan->Ss < 0 || scan->Se > 63 || scan->Ss > scan->Se || (scan->Ss == 0) != (scan->Se == 0)) return 0;
        if (scan->Ss > 0 && scan->comps_in_scan != 1) return 0;
        if (scan->Al < 0 || scan->Al > 13 || (scan->Ah != 0 && scan->Ah != scan->Al + 1)) return 0;
        for (int c = 0; c < scan->comps_in_scan; c++) {
            int component = scan->component_index[c];
            if (component < 0 || component >= components) return 0;
            if (scan->Ss > 0) has_ac[component] = 1;
            for (int k2 = scan->Ss; k2 <= scan->Se; k2++) {
                int expected = scan->Ah == 0 ? -1 : scan->Ah;
                if (bits[component][k2] != expected) return 0;
                bits[component][k2] = (signed char)scan->Al;
            }
        }
    }
    for (int c = 0; c < components; c++) {
        if (bits[c][0] != 0) return 0;
        for (int k = 1; k < 64 && has_ac[c]; k++)
            if (bits[c][k] != 0) return 0;
    }
    return 1;
}

void gd_choice_free(gd_choice *choice) {
    if (choice->target_created) jpeg_destroy_compress(&choice->target);
    if (choice->source_created) jpeg_destroy_decompress(&choice->source);
    free(choice->dest.buffer);
    for (int p = 1; p < GD_MAX_PROBES; p++) free(choice->outputs[p]);
    free(choice->result);
    free(choice);
}

/* What jpeg_copy_critical_parameters takes from a file read back, from the compressor that wrote
 * it: the same dimensions, colour space, quantization tables and components (ids, sampling, table
 * numbers), so the probes' scans are the bytes they are when written from the file's coefficients.
 * Taken once, before the compressor finishes (on another thread, when the probes run beside it). */
void gd_take_encoder_parameters(j_compress_ptr source, gd_encoder_parameters *params) {
    memset(params, 0, sizeof *params);
    params->width = source->image_width;
    params->height = source->image_height;
    params->components = source->num_components;
    params->color_space = source->jpeg_color_space;
    params->precision = source->data_precision;
    for (int t = 0; t < NUM_QUANT_TBLS; t++) {
        if (source->quant_tbl_ptrs[t] == NULL) continue;
        params->has_table[t] = 1;
        memcpy(params->tables[t], source->quant_tbl_ptrs[t]->quantval, sizeof params->tables[t]);
    }
    for (int c = 0; c < source->num_components && c < MAX_COMPONENTS; c++) {
        params->ids[c] = source->comp_info[c].component_id;
        params->h[c] = source->comp_info[c].h_samp_factor;
        params->v[c] = source->comp_info[c].v_samp_factor;
        params->table[c] = source->comp_info[c].quant_tbl_no;
    }
}

static void gd_copy_encoder_parameters(const gd_encoder_parameters *params, j_compress_ptr target) {
    target->image_width = params->width;
    target->image_height = params->height;
    target->input_components = params->components;
    target->in_color_space = params->color_space;
    jpeg_set_defaults(target);
    jpeg_set_colorspace(target, params->color_space);
    target->data_precision = params->precision;
    for (int t = 0; t < NUM_QUANT_TBLS; t++) {
        if (!params->has_table[t]) continue;
        if (target->quant_tbl_ptrs[t] == NULL) target->quant_tbl_ptrs[t] = jpeg_alloc_quant_table((j_common_ptr)target);
        memcpy(target->quant_tbl_ptrs[t]->quantval, params->tables[t], sizeof params->tables[t]);
        target->quant_tbl_ptrs[t]->sent_table = FALSE;
    }
    target->num_components = params->components;
    for (int c = 0; c < params->components; c++) {
        target->comp_info[c].component_id = params->ids[c];
        target->comp_info[c].h_samp_factor = params->h[c];
        target->comp_info[c].v_samp_factor = params->v[c];
        target->comp_info[c].quant_tbl_no = params->table[c];
    }
}

/* Writes probe p from the source's coefficients into choice->outputs[p] (may longjmp). */
static void gd_write_probe(gd_choice *choice, jvirt_barray_ptr *coefficients, const gd_scan_script *probe,
                           int p, size_t capacity) {
    j_compress_ptr target = &choice->target;
    if (choice->from_encoder)
        gd_copy_encoder_parameters(&choice->encoder, target);
    else
        jpeg_copy_critical_parameters(&choice->source, target);
    target->optimize_coding = TRUE;
    target->write_JFIF_header = FALSE;
    target->write_Adobe_marker = FALSE;
    target->scan_info = probe->scans;
    target->num_scans = probe->scan_count;
    choice->dest.capacity = capacity;
    choice->dest.buffer = malloc(capacity);
    if (choice->dest.buffer == NULL) ERREXIT1(target, JERR_OUT_OF_MEMORY, 13);
    gd_memory_destination_use(target, &choice->dest);
    jpeg_write_coefficients(target, coefficients);
    jpeg_finish_compress(target);
    choice->outputs[p] = choice->dest.buffer;
    choice->lengths[p] = (unsigned long)(choice->dest.capacity - choice->dest.pub.free_in_buffer);
    choice->dest.buffer = NULL;
}

gd_status gd_fail(gd_choice *choice, const char *text, char *message, size_t capacity) {
    if (message != NULL && capacity > 0) snprintf(message, capacity, "%s", text);
    gd_choice_free(choice);
    return GD_ERROR;
}

/* Checks the file against probes[0] and sets each group's bytes in it (best[], winner 0);
 * NULL, or the reason it cannot be rewritten. */
const char *gd_check_first(gd_choice *choice, const unsigned char *jpeg, unsigned long length,
                                  const gd_scan_script *probes, int components, long best[GD_GROUPS]) {
    choice->outputs[0] = (unsigned char *)jpeg;
    choice->lengths[0] = length;
    const gd_scan_layout *first = &choice->layouts[0];
    if (gd_find_scans(jpeg, length, &choice->layouts[0]) != 0) return "not a progressive JPEG as libjpeg writes one";
    if (first->count != probes[0].scan_count) return "the file's scans are not the first script's";
    for (int k = 0; k < first->count; k++) {
        const jpeg_scan_info *scan = &probes[0].scans[k];
        if (first->ns[k] != scan->comps_in_scan || first->ss[k] != scan->Ss || first->se[k] != scan->Se ||
            first->ah[k] != scan->Ah || first->al[k] != scan->Al)
            return "the file's scans are not the first script's";
    }
    for (int g = 0; g < GD_GROUPS; g++) best[g] = -1;
    for (int k = 0; k < first->count; k++) {
        int g = gd_scan_group(&probes[0].scans[k]);
        best[g] = (best[g] < 0 ? 0 : best[g]) + (long)(first->end[k] - first->start[k]);
    }
    for (int c = 0; c < components; c++)
        if (best[1 + c] < 0) return "the first script does not send every group";
    return NULL;
}

/* Writes probes[1...] from the coefficients and finds their scans (may longjmp). */
void gd_write_probes(gd_choice *choice, jvirt_barray_ptr *coefficients, const gd_scan_script *probes,
                            int probe_count, size_t capacity) {
    for (int p = 1; p < probe_count; p++) {
        gd_write_probe(choice, coefficients, &probes[p], p, capacity);
        gd_scan_layout *layout = &choice->layouts[p];
        if (gd_find_scans(choice->outputs[p], choice->lengths[p], layout) != 0 || layout->count != probes[p].scan_count)
            ERREXIT(&choice->target, JERR_BAD_SCAN_SCRIPT);
    }
}

/* Takes, for each group, the smallest of the file's scans (best[]) and every probe's, and splices
 * them after the file's headers; *output stays NULL when the file wins every group. */
gd_status gd_splice(gd_choice *choice, const gd_scan_script *probes, int probe_count, long best[GD_GROUPS],
                           unsigned char **output, unsigned long *output_length) {
    int winner[GD_GROUPS] = {0};
    for (int p = 1; p < probe_count; p++) {
        const gd_scan_layout *layout = &choice->layouts[p];
        long size[GD_GROUPS] = {0};
        int present[GD_GROUPS] = {0};
        for (int k = 0; k < layout->count; k++) {
            int g = gd_scan_group(&probes[p].scans[k]);
            size[g] += (long)(layout->end[k] - layout->start[k]);
            present[g] = 1;
        }
        for (int g = 0; g < GD_GROUPS; g++)
            if (present[g] && size[g] < best[g]) {
                best[g] = size[g];
                winner[g] = p;
            }
    }
    int changed = 0;
    for (int g = 0; g < GD_GROUPS; g++) changed |= winner[g] != 0;
    if (!changed) return GD_OK;
    const gd_scan_layout *first = &choice->layouts[0];
    size_t total = first->header_end + 2;
    for (int g = 0; g < GD_GROUPS; g++)
        if (best[g] > 0) total += (size_t)best[g];
    choice->result = malloc(total);
    if (choice->result == NULL) return GD_ERROR;
    memcpy(choice->result, choice->outputs[0], first->header_end);
    size_t at = first->header_end;
    for (int g = 0; g < GD_GROUPS; g++) {
        if (best[g] < 0) continue;
        int p = winner[g];
        const gd_scan_layout *layout = &choice->layouts[p];
        for (int k = 0; k < layout->count; k++) {
            if (gd_scan_group(&probes[p].scans[k]) != g) continue;
            size_t bytes = layout->end[k] - layout->start[k];
            memcpy(choice->result + at, choice->outputs[p] + layout->start[k], bytes);
            at += bytes;
        }
    }
    choice->result[at++] = 0xFF;
    choice->result[at++] = 0xD9;
    *output = choice->result;
    *output_length = (unsigned long)at;
    choice->result = NULL;
    return GD_OK;
}

/* A new choice with its error manager, or NULL. */
gd_choice *gd_choice_new(char *message, size_t message_capacity) {
    gd_choice *choice = calloc(1, sizeof(gd_choice));
    if (choice == NULL && message != NULL && message_capacity > 0) snprintf(message, message_capacity, "out of memory");
    if (choice != NULL) {
        gd_error_init(&choice->err);
        choice->source.err = &choice->err.pub;
        choice->target.err = &choice->err.pub;
    }
    return choice;
}

gd_status gd_choose_scans(const unsigned char *jpeg, unsigned long length, const gd_scan_script *probes,
                          int probe_count, unsigned char **output, unsigned long *output_length, char *message,
                          size_t message_capacity) {
    return gd_choose_scans_from(jpeg, length, probes, probe_count, NULL, NULL, output, output_length, message,
                                message_capacity);
}

gd_status gd_choose_scans_from(const unsigned char *jpeg, unsigned long length, const gd_scan_script *probes,
                               int probe_count, j_compress_ptr encoder, jvirt_barray_ptr *arrays,
                               unsigned char **output, unsigned long *output_length, char *message,
                               size_t message_capacity) {
    *output = NULL;
    *output_length = 0;
    gd_choice *choice = gd_choice_new(message, message_capacity);
    if (choice == NULL) return GD_ERROR;
    if (probe_count < 1 || probe_count > GD_MAX_PROBES)
        return gd_fail(choice, "between 1 and GD_MAX_PROBES scan scripts", message, message_capacity);
    if (setjmp(choice->err.jump)) {
        gd_status status = choice->err.status == GD_OK ? GD_ERROR : choice->err.status;
        if (message != NULL && message_capacity > 0) snprintf(message, message_capacity, "%s", choice->err.message);
        gd_choice_free(choice);
        return status;
    }
    jpeg_create_compress(&choice->target);
    choice->target_created = 1;
    int components;
    if (encoder != NULL) {
        choice->from_encoder = 1;
        gd_take_encoder_parameters(encoder, &choice->encoder);
        components = encoder->num_components;
        if (!encoder->progressive_mode || encoder->arith_code || encoder->restart_interval != 0)
            return gd_fail(choice, "not a progressive Huffman JPEG without restarts", message, message_capacity);
    } else {
        if (gd_find_scans(jpeg, length, &choice->layouts[0]) != 0)
            return gd_fail(choice, "not a progressive JPEG as libjpeg writes one", message, message_capacity);
        jpeg_create_decompress(&choice->source);
        choice->source_created = 1;
        jpeg_mem_src(&choice->source, jpeg, length);
        jpeg_read_header(&choice->source, TRUE);
        components = choice->source.num_components;
        if (!choice->source.progressive_mode || choice->source.arith_code || choice->source.restart_interval != 0)
            return gd_fail(choice, "not a progressive Huffman JPEG without restarts", message, message_capacity);
    }
    for (int p = 0; p < probe_count; p++)
        if (!gd_probe_valid(&probes[p], components))
            return gd_fail(choice, "a scan script that does not send whole groups", message, message_capacity);
    /* The input must have been written with probe 0, which must send every group. */
    long best[GD_GROUPS];
    const char *problem = gd_check_first(choice, jpeg, length, probes, components, best);
    if (problem != NULL) return gd_fail(choice, problem, message, message_capacity);
    if (probe_count == 1) {
        gd_choice_free(choice);
        return GD_OK;
    }
    /* The compressor's own arrays, or the file's read back (entropy decoding only). */
    jvirt_barray_ptr *coefficients = encoder != NULL ? arrays : jpeg_read_coefficients(&choice->source);
    gd_write_probes(choice, coefficients, probes, probe_count, 16384 + (size_t)length);
    if (encoder == NULL) jpeg_finish_decompress(&choice->source);
    if (gd_splice(choice, probes, probe_count, best, output, output_length) != GD_OK)
        return gd_fail(choice, "out of memory", message, message_capacity);
    gd_choice_free(choice);
    return GD_OK;
}
