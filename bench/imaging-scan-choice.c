/*
 * A JPEG file's scans as the server chooses them (decision 061), for files written by other tools
 * (decision 062 uses it on PIL's files): the file's coefficients are written again with the fixed
 * script (JPEGEncoder.colorScans, optimized Huffman tables), then gd_choose_scans takes the smallest
 * DC and per-component AC scans among that script and the probes JPEGScanChoice.scripts allows
 * (every probe at most 1 MP, the first one for a larger image whose fixed-script file is at most
 * 160,000 bytes, none over). The pixels are the input's. Colour (3-component) files only.
 *
 *   cc -O2 -I Sources/CJPEGShim/include -I Sources/CJPEGShim -o scan-choice bench/imaging-scan-choice.c \
 *      Sources/CJPEGShim/jpeg_scan_choice.c Sources/CJPEGShim/jpeg_shim.c Sources/CJPEGShim/jpeg_split_decode.c \
 *      Sources/CJPEGShim/jpeg_scan_split.c -ljpeg -lpthread
 *   scan-choice IN.jpg OUT.jpg        prints: fixed-script bytes, chosen bytes
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jpeg_shim.h"

static jpeg_scan_info scan(int n, int c0, int ss, int se, int ah, int al) {
    jpeg_scan_info s;
    memset(&s, 0, sizeof s);
    s.comps_in_scan = n;
    for (int i = 0; i < n; i++) s.component_index[i] = c0 + i;
    s.Ss = ss, s.Se = se, s.Ah = ah, s.Al = al;
    return s;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s IN.jpg OUT.jpg\n", argv[0]);
        return 2;
    }
    FILE *in = fopen(argv[1], "rb");
    if (!in) {
        fprintf(stderr, "%s: cannot read\n", argv[1]);
        return 1;
    }
    struct jpeg_decompress_struct d;
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr de, ce; /* libjpeg exits on error: enough for a bench tool */
    d.err = jpeg_std_error(&de);
    jpeg_create_decompress(&d);
    jpeg_stdio_src(&d, in);
    jpeg_read_header(&d, TRUE);
    if (d.num_components != 3) {
        fprintf(stderr, "%s: colour files only\n", argv[1]);
        return 1;
    }
    jvirt_barray_ptr *coefficients = jpeg_read_coefficients(&d);
    c.err = jpeg_std_error(&ce);
    jpeg_create_compress(&c);
    unsigned char *fixed = NULL;
    unsigned long fixedLength = 0;
    jpeg_mem_dest(&c, &fixed, &fixedLength);
    jpeg_copy_critical_parameters(&d, &c);
    /* JPEGEncoder.colorScans */
    jpeg_scan_info script[] = {
        scan(3, 0, 0, 0, 0, 0), scan(1, 0, 1, 8, 0, 1), scan(1, 1, 1, 8, 0, 0), scan(1, 2, 1, 8, 0, 0),
        scan(1, 0, 9, 63, 0, 1), scan(1, 0, 1, 63, 1, 0), scan(1, 1, 9, 63, 0, 0), scan(1, 2, 9, 63, 0, 0),
    };
    c.scan_info = script;
    c.num_scans = 8;
    c.optimize_coding = TRUE;
    c.write_JFIF_header = TRUE;
    jpeg_write_coefficients(&c, coefficients);
    jpeg_finish_compress(&c);
    const long pixels = (long)d.image_width * d.image_height;
    jpeg_destroy_compress(&c);
    jpeg_finish_decompress(&d);
    jpeg_destroy_decompress(&d);
    fclose(in);

    /* JPEGScanChoice.colorProbes */
    jpeg_scan_info probe1[] = {
        scan(1, 0, 0, 0, 0, 0), scan(1, 1, 0, 0, 0, 0), scan(1, 2, 0, 0, 0, 0), scan(1, 0, 1, 2, 0, 0), scan(1, 0, 3, 63, 0, 0),
        scan(1, 1, 1, 2, 0, 0), scan(1, 1, 3, 63, 0, 0), scan(1, 2, 1, 2, 0, 0), scan(1, 2, 3, 63, 0, 0),
    };
    jpeg_scan_info probe2[] = {
        scan(1, 0, 0, 0, 0, 0), scan(1, 1, 0, 0, 0, 0), scan(1, 2, 0, 0, 0, 0), scan(1, 0, 1, 2, 0, 1),
        scan(1, 0, 3, 63, 0, 1), scan(1, 0, 1, 63, 1, 0), scan(1, 1, 1, 63, 0, 0), scan(1, 2, 1, 63, 0, 0),
    };
    gd_scan_script probes[] = {{script, 8}, {probe1, 9}, {probe2, 8}};
    /* JPEGScanChoice.scripts: allProbesMaxPixels 1 << 20, probedMaxBytes 160,000 */
    int count = 1 + (pixels <= (1L << 20) ? 2 : fixedLength > 160000 ? 0 : 1);
    unsigned char *chosen = NULL;
    unsigned long chosenLength = 0;
    char message[256] = "";
    if (count > 1 && gd_choose_scans(fixed, fixedLength, probes, count, &chosen, &chosenLength, message,
                                     sizeof message) != GD_OK) {
        fprintf(stderr, "%s: %s\n", argv[1], message);
        return 1;
    }
    FILE *out = fopen(argv[2], "wb");
    if (!out || fwrite(chosen ? chosen : fixed, 1, chosen ? chosenLength : fixedLength, out) == 0 || fclose(out)) {
        fprintf(stderr, "%s: cannot write\n", argv[2]);
        return 1;
    }
    printf("%lu %lu\n", fixedLength, chosen ? chosenLength : fixedLength);
    free(fixed);
    gd_free(chosen);
    return 0;
}
