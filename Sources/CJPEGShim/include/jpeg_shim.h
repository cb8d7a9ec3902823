#ifndef GALLERYD_JPEG_SHIM_H
#define GALLERYD_JPEG_SHIM_H
#include <stdio.h>
#include <jpeglib.h>
/* Placeholder: the Imaging layer adds the setjmp-guarded calls here. */
int galleryd_jpeg_shim_version(void);
#endif
