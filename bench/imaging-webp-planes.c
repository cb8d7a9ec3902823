/*
 * A lossy WebP's own Y'CbCr 4:2:0 planes into libjpeg (decision 062; measured, not in the server).
 *
 * libwebp decodes to MODE_YUV (no chroma upsampling); each plane is mapped from limited to full range
 * by a lookup (Y' (v - 16) * 255 / 219, Cb and Cr (v - 128) * 255 / 224 + 128, rounded half up and
 * clamped) and written with jpeg_write_raw_data in 16-row strips at 4:2:0, rows padded to whole
 * blocks by repeating the last column and the last row, as libjpeg pads its own input. Klein's table
 * at a quarter quality for luma and chroma (QuantizationTables(kleinQuality:)), progressive
 * (jpeg_simple_progression), optimized Huffman tables, accurate integer DCT.
 *
 * It checks bench/imaging-webp-planes.py's PIL model (a YCbCr image with the chroma repeated 2x2):
 * both decode to the same pixels. With "rgb" it writes today's path instead (MODE_RGB, fancy
 * upsampling, into jpeg_write_scanlines: libjpeg's colour conversion and 2x2 means), to count
 * instructions against.
 *
 *   cc -O2 -o planes bench/imaging-webp-planes.c -ljpeg -lwebp -lm
 *   planes IN.webp QUALITY OUT.jpg [rgb]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <webp/decode.h>

static const unsigned klein[64] = {
    10, 12, 14, 19, 26, 38, 57, 86,     12, 18, 21, 28, 35, 41, 54, 76,     14, 21, 25, 32,  44,  63,
    92, 136, 19, 28, 32, 41, 54, 75,    107, 157, 26, 35, 44, 54, 70, 95,   132, 190, 38, 41, 63,  75,
    95, 125, 170, 239, 57, 54, 92, 107, 132, 170, 227, 312, 86, 76, 136, 157, 190, 239, 312, 419,
};

static unsigned char *read_file(const char *path, size_t *length) {
    FILE *file = fopen(path, "rb");
    if (!file) return NULL;
    unsigned char *bytes = NULL;
    if (fseek(file, 0, SEEK_END) == 0) {
        long size = ftell(file);
        if (size > 0 && fseek(file, 0, SEEK_SET) == 0 && (bytes = malloc((size_t)size))) {
            if (fread(bytes, 1, (size_t)size, file) != (size_t)size) {
                free(bytes);
                bytes = NULL;
            }
            *length = (size_t)size;
        }
    }
    fclose(file);
    return bytes;
}

static unsigned char clamp8(double v) { return v < 0 ? 0 : v > 255 ? 255 : (unsigned char)v; }

int main(int argc, char **argv) {
    int rgb = argc == 5 && strcmp(argv[4], "rgb") == 0;
    double quality = argc >= 4 ? atof(argv[2]) : 0;
    if ((argc != 4 && !rgb) || quality < 50 || quality > 100) {
        fprintf(stderr, "usage: %s IN.webp QUALITY(50-100) OUT.jpg [rgb]\n", argv[0]);
        return 2;
    }
    size_t length = 0;
    unsigned char *input = read_file(argv[1], &length);
    if (!input) {
        fprintf(stderr, "%s: cannot read\n", argv[1]);
        return 1;
    }
    WebPDecoderConfig config;
    if (!WebPInitDecoderConfig(&config) || WebPGetFeatures(input, length, &config.input) != VP8_STATUS_OK) {
        fprintf(stderr, "%s: not a WebP libwebp can read\n", argv[1]);
        return 1;
    }
    if (config.input.format != 1 || config.input.has_alpha || config.input.has_animation) {
        fprintf(stderr, "%s: only lossy still WebPs without alpha have planes to hand over\n", argv[1]);
        return 1;
    }
    config.output.colorspace = rgb ? MODE_RGB : MODE_YUV;
    if (WebPDecode(input, length, &config) != VP8_STATUS_OK) {
        fprintf(stderr, "%s: cannot decode\n", argv[1]);
        return 1;
    }
    free(input);
    const int width = config.output.width, height = config.output.height;

    FILE *out = fopen(argv[3], "wb");
    if (!out) {
        fprintf(stderr, "%s: cannot write\n", argv[3]);
        return 1;
    }
    struct jpeg_compress_struct jpeg;
    struct jpeg_error_mgr errors;
    jpeg.err = jpeg_std_error(&errors); /* libjpeg exits on error: enough for a bench tool */
    jpeg_create_compress(&jpeg);
    jpeg_stdio_dest(&jpeg, out);
    jpeg.image_width = (JDIMENSION)width;
    jpeg.image_height = (JDIMENSION)height;
    jpeg.input_components = 3;
    jpeg.in_color_space = rgb ? JCS_RGB : JCS_YCbCr;
    jpeg_set_defaults(&jpeg);
    /* libjpeg's scaling at a quarter quality, in hundredths of a percent (QuantizationTables.scaled). */
    unsigned scale = (unsigned)lround((200 - 2 * quality) * 100), table[64];
    for (int i = 0; i < 64; i++) {
        unsigned step = (klein[i] * scale + 5000) / 10000;
        table[i] = step < 1 ? 1 : step > 255 ? 255 : step;
    }
    jpeg_add_quant_table(&jpeg, 0, table, 100, TRUE);
    jpeg_add_quant_table(&jpeg, 1, table, 100, TRUE);
    jpeg.comp_info[0].h_samp_factor = jpeg.comp_info[0].v_samp_factor = 2;
    for (int c = 1; c < 3; c++) jpeg.comp_info[c].h_samp_factor = jpeg.comp_info[c].v_samp_factor = 1;
    jpeg.raw_data_in = !rgb;
    jpeg.optimize_coding = TRUE;
    jpeg.dct_method = JDCT_ISLOW;
    jpeg_simple_progression(&jpeg);
    jpeg_start_compress(&jpeg, TRUE);

    if (rgb) {
        while (jpeg.next_scanline < jpeg.image_height) {
            JSAMPROW row = config.output.u.RGBA.rgba + (size_t)jpeg.next_scanline * config.output.u.RGBA.stride;
            jpeg_write_scanlines(&jpeg, &row, 1);
        }
    } else {
        unsigned char luma[256], chroma[256];
        for (int v = 0; v < 256; v++) {
            luma[v] = clamp8(floor((v - 16) * 255.0 / 219 + 0.5));
            chroma[v] = clamp8(floor((v - 128) * 255.0 / 224 + 128.5));
        }
        const WebPYUVABuffer *yuv = &config.output.u.YUVA;
        const int chromaWidth = (width + 1) / 2, chromaHeight = (height + 1) / 2;
        const int lumaPadded = (width + 15) & ~15, chromaPadded = (chromaWidth + 7) & ~7;
        unsigned char *strip = malloc((size_t)16 * lumaPadded + (size_t)16 * chromaPadded);
        if (!strip) {
            fprintf(stderr, "out of memory\n");
            return 1;
        }
        JSAMPROW y[16], cb[8], cr[8];
        JSAMPARRAY planes[3] = {y, cb, cr};
        for (int r = 0; r < 16; r++) y[r] = strip + (size_t)r * lumaPadded;
        for (int r = 0; r < 8; r++) {
            cb[r] = strip + (size_t)16 * lumaPadded + (size_t)r * chromaPadded;
            cr[r] = cb[r] + (size_t)8 * chromaPadded;
        }
        while (jpeg.next_scanline < jpeg.image_height) {
            const int top = (int)jpeg.next_scanline;
            for (int r = 0; r < 16; r++) {
                const unsigned char *source = yuv->y + (size_t)(top + r < height ? top + r : height - 1) * yuv->y_stride;
                for (int x = 0; x < lumaPadded; x++) y[r][x] = luma[source[x < width ? x : width - 1]];
            }
            for (int r = 0; r < 8; r++) {
                const int row = top / 2 + r < chromaHeight ? top / 2 + r : chromaHeight - 1;
                const unsigned char *u = yuv->u + (size_t)row * yuv->u_stride, *v = yuv->v + (size_t)row * yuv->v_stride;
                for (int x = 0; x < chromaPadded; x++) {
                    const int sx = x < chromaWidth ? x : chromaWidth - 1;
                    cb[r][x] = chroma[u[sx]];
                    cr[r][x] = chroma[v[sx]];
                }
            }
            jpeg_write_raw_data(&jpeg, planes, 16);
        }
        free(strip);
    }
    jpeg_finish_compress(&jpeg);
    jpeg_destroy_compress(&jpeg);
    WebPFreeDecBuffer(&config.output);
    return fclose(out) == 0 ? 0 : 1;
}
