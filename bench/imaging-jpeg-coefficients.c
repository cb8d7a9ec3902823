/*
 * A JPEG's quantized coefficients out and back in (decision 076; a bench helper, not in the server).
 *
 *   cc -O2 -o jcoef bench/imaging-jpeg-coefficients.c -ljpeg
 *   jcoef dump IN.jpg OUT.bin            every component: its height and width in blocks (2 int32), its
 *                                        quantization table (64 uint16, natural order), then its blocks
 *                                        (int16 × 64, natural order) row by row, as jpeg_read_coefficients has them
 *   jcoef write IN.jpg IN.bin OUT.jpg    IN.jpg's parameters and tables with IN.bin's coefficients (the layout
 *                                        above), written progressive (jpeg_simple_progression) with optimized
 *                                        Huffman tables: a standard file whatever the blocks hold
 *
 * bench/imaging-block-levers.py quantizes blocks its own way and writes them with this.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
int main(int argc, char **argv) {
    struct jpeg_decompress_struct d; struct jpeg_error_mgr e1, e2;
    d.err = jpeg_std_error(&e1); jpeg_create_decompress(&d);
    FILE *f = fopen(argv[2], "rb"); jpeg_stdio_src(&d, f); jpeg_read_header(&d, TRUE);
    jvirt_barray_ptr *arr = jpeg_read_coefficients(&d);
    int dump = !strcmp(argv[1], "dump");
    FILE *b = fopen(argv[3], dump ? "wb" : "rb");
    for (int c = 0; c < d.num_components; c++) {
        jpeg_component_info *ci = &d.comp_info[c];
        if (dump) { int hw[2] = {ci->height_in_blocks, ci->width_in_blocks}; fwrite(hw, 4, 2, b); fwrite(ci->quant_table->quantval, 2, 64, b); }
        else { int hw[2]; fread(hw, 4, 2, b); UINT16 q[64]; fread(q, 2, 64, b); }
        for (JDIMENSION r = 0; r < ci->height_in_blocks; r++) {
            JBLOCKARRAY row = (*d.mem->access_virt_barray)((j_common_ptr)&d, arr[c], r, 1, TRUE);
            for (JDIMENSION x = 0; x < ci->width_in_blocks; x++) {
                if (dump) fwrite(row[0][x], 2, 64, b); else fread(row[0][x], 2, 64, b);
            }
        }
    }
    fclose(b);
    if (!dump) {
        struct jpeg_compress_struct c; c.err = jpeg_std_error(&e2); jpeg_create_compress(&c);
        FILE *o = fopen(argv[4], "wb"); jpeg_stdio_dest(&c, o);
        jpeg_copy_critical_parameters(&d, &c); c.optimize_coding = TRUE; jpeg_simple_progression(&c);
        jpeg_write_coefficients(&c, arr); jpeg_finish_compress(&c); jpeg_destroy_compress(&c); fclose(o);
    }
    jpeg_finish_decompress(&d); jpeg_destroy_decompress(&d); fclose(f); return 0;
}
