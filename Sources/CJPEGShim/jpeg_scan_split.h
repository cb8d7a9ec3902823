#ifndef GALLERYD_JPEG_SCAN_SPLIT_H
#define GALLERYD_JPEG_SCAN_SPLIT_H
/*
 * Splits a progressive JPEG's bytes into two JPEG streams that libjpeg can decode apart (ITU T.81
 * G.1: every AC scan of a progressive image has one component): `luma` holds every marker segment
 * in order plus every DC scan and the AC scans of component 0; `chroma` the same markers plus the
 * AC scans of the other components. Decoding `luma` gives every DC coefficient and component 0's
 * AC coefficients, `chroma` the others' AC coefficients, exactly as decoding the whole file does.
 */
#include <stddef.h>

typedef struct {
    unsigned char *luma;
    size_t luma_length;
    unsigned char *chroma;
    size_t chroma_length;
    int scans; /* SOS segments in the file */
} gd_scan_split;

/*
 * Splits `bytes`; returns 1 on success (free with gd_scan_split_free), 0 when the file is not a
 * plain progressive Huffman file with 3 components whose scans give every coefficient in full
 * (each component's DC before its AC),
 * or anything in its layout is unusual (extra bytes, a missing EOI, a second SOF, more than
 * max_scans scans): the caller then decodes it the usual way, which reports what is wrong.
 */
int gd_scan_split_make(const unsigned char *bytes, size_t length, int max_scans, gd_scan_split *split);
void gd_scan_split_free(gd_scan_split *split);

#endif
