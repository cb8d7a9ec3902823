#include "jpeg_scan_split.h"

#include <stdlib.h>
#include <string.h>

/* One output stream being written (its buffer holds the whole file plus an EOI at most). */
typedef struct {
    unsigned char *bytes;
    size_t length;
} gd_stream;

static void gd_stream_put(gd_stream *stream, const unsigned char *bytes, size_t length) {
    memcpy(stream->bytes + stream->length, bytes, length);
    stream->length += length;
}

/* Writes marker `code` and its segment (the 2 length bytes and the payload). */
static void gd_stream_put_segment(gd_stream *stream, unsigned char code, const unsigned char *segment,
                                  size_t length) {
    const unsigned char marker[2] = {0xFF, code};
    gd_stream_put(stream, marker, 2);
    gd_stream_put(stream, segment, length);
}

/*
 * The end of a scan's entropy-coded data from `start` (T.81 B.1.1.5, F.1.2.3): the first 0xFF
 * followed, after any fill 0xFF bytes, by a byte that is neither 0x00 (a stuffed 0xFF) nor RST0-7.
 * Returns the offset of that 0xFF, or `length` when the data ends first.
 */
static size_t gd_entropy_end(const unsigned char *bytes, size_t length, size_t start) {
    size_t at = start;
    while (at < length) {
        const unsigned char *found = memchr(bytes + at, 0xFF, length - at);
        if (found == NULL) return length;
        size_t next = (size_t)(found - bytes) + 1;
        while (next < length && bytes[next] == 0xFF) next++;
        if (next >= length) return length;
        unsigned char code = bytes[next];
        if (code != 0x00 && (code < 0xD0 || code > 0xD7)) return (size_t)(found - bytes);
        at = next + 1;
    }
    return length;
}

/* What the splitter knows of the frame: component ids and, per coefficient, the last Al seen. */
typedef struct {
    int frames;
    int ids[3];
    int dc_seen[3];             /* a DC scan of the component came already */
    signed char low_bit[3][64]; /* -1: never sent; else the successive-approximation bit Al */
} gd_frame;

/* Reads an SOF2 segment; 0 unless it is the first frame and has three distinct components. */
static int gd_read_frame(gd_frame *frame, const unsigned char *segment, size_t length) {
    /* Lf(2) P(1) Y(2) X(2) Nf(1), then C, H/V, Tq for each component (T.81 B.2.2). */
    if (frame->frames++ > 0 || length != 8 + 3 * 3 || segment[7] != 3) return 0;
    for (int c = 0; c < 3; c++) {
        frame->ids[c] = segment[8 + 3 * c];
        for (int other = 0; other < c; other++)
            if (frame->ids[other] == frame->ids[c]) return 0;
    }
    return 1;
}

/* Reads an SOS segment: which stream gets the scan (1 luma, 2 chroma), 0 if unusable. */
static int gd_read_scan(gd_frame *frame, const unsigned char *segment, size_t length) {
    /* Ls(2) Ns(1), then Cs, Td/Ta for each component, then Ss, Se, Ah/Al (T.81 B.2.3). */
    if (frame->frames != 1 || length < 3) return 0;
    size_t count = segment[2];
    if (count < 1 || count > 3 || length != 6 + 2 * count) return 0;
    int start = segment[3 + 2 * count], end = segment[4 + 2 * count];
    int low_bit = segment[5 + 2 * count] & 0x0F;
    if (start > end || end > 63) return 0;
    int luma = 0, chroma = 0;
    for (size_t i = 0; i < count; i++) {
        int index = -1;
        for (int c = 0; c < 3; c++)
            if (frame->ids[c] == segment[3 + 2 * i]) index = c;
        if (index < 0) return 0;
        if (index == 0) luma = 1; else chroma = 1;
        if (start == 0) frame->dc_seen[index] = 1;
        else if (!frame->dc_seen[index]) return 0; /* AC before DC: the one-thread decode objects */
        for (int k = start; k <= end; k++) frame->low_bit[index][k] = (signed char)low_bit;
    }
    /* DC scans go to the luma stream only: it latches every component's table where the file
     * does, and the chroma half needs no DC (gd_split_merge keeps the luma half's). */
    if (start == 0) return 1;
    if (luma && chroma) return 0;        /* an AC scan of two components is not progressive JPEG */
    return luma ? 1 : 2;
}

/* Every coefficient of every component sent down to bit 0: no block smoothing applies. */
static int gd_frame_complete(const gd_frame *frame) {
    for (int c = 0; c < 3; c++)
        for (int k = 0; k < 64; k++)
            if (frame->low_bit[c][k] != 0) return 0;
    return 1;
}

static int gd_split_bytes(const unsigned char *bytes, size_t length, int max_scans, gd_scan_split *split,
                          gd_stream *luma, gd_stream *chroma) {
    gd_frame frame;
    memset(&frame, 0, sizeof frame);
    memset(frame.low_bit, -1, sizeof frame.low_bit);
    if (length < 4 || bytes[0] != 0xFF || bytes[1] != 0xD8) return 0;
    gd_stream_put(luma, bytes, 2);
    gd_stream_put(chroma, bytes, 2);
    size_t at = 2;
    for (;;) {
        if (at >= length || bytes[at] != 0xFF) return 0; /* missing EOI, or bytes between segments */
        while (at < length && bytes[at] == 0xFF) at++;
        if (at >= length) return 0;
        unsigned char code = bytes[at++];
        if (code == 0xD9) break;
        if (code == 0x00 || code == 0x01 || code == 0xD8 || (code >= 0xD0 && code <= 0xD7)) return 0;
        if (at + 2 > length) return 0;
        size_t segment_length = ((size_t)bytes[at] << 8) | bytes[at + 1];
        if (segment_length < 2 || at + segment_length > length) return 0;
        const unsigned char *segment = bytes + at;
        if (code >= 0xC0 && code <= 0xCF && code != 0xC4 && code != 0xC8) {
            /* Frames: progressive Huffman (SOF2) only; DAC (0xCC) means arithmetic coding. */
            if (code != 0xC2 || !gd_read_frame(&frame, segment, segment_length)) return 0;
        }
        if (code != 0xDA) {
            gd_stream_put_segment(luma, code, segment, segment_length);
            gd_stream_put_segment(chroma, code, segment, segment_length);
            at += segment_length;
            continue;
        }
        int streams = gd_read_scan(&frame, segment, segment_length);
        if (streams == 0 || ++split->scans > max_scans) return 0;
        size_t end = gd_entropy_end(bytes, length, at + segment_length);
        if (end >= length) return 0;
        if (streams & 1) gd_stream_put_segment(luma, code, segment, end - at);
        if (streams & 2) gd_stream_put_segment(chroma, code, segment, end - at);
        at = end;
    }
    if (!gd_frame_complete(&frame)) return 0;
    const unsigned char eoi[2] = {0xFF, 0xD9};
    gd_stream_put(luma, eoi, 2);
    gd_stream_put(chroma, eoi, 2);
    return 1;
}

int gd_scan_split_make(const unsigned char *bytes, size_t length, int max_scans, gd_scan_split *split) {
    memset(split, 0, sizeof *split);
    gd_stream luma = {malloc(length + 2), 0};
    gd_stream chroma = {malloc(length + 2), 0};
    if (luma.bytes == NULL || chroma.bytes == NULL ||
        !gd_split_bytes(bytes, length, max_scans, split, &luma, &chroma)) {
        free(luma.bytes);
        free(chroma.bytes);
        memset(split, 0, sizeof *split);
        return 0;
    }
    split->luma = luma.bytes;
    split->luma_length = luma.length;
    split->chroma = chroma.bytes;
    split->chroma_length = chroma.length;
    return 1;
}

void gd_scan_split_free(gd_scan_split *split) {
    free(split->luma);
    free(split->chroma);
    memset(split, 0, sizeof *split);
}
