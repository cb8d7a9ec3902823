#include "jpeg_shim.h"
int galleryd_jpeg_shim_version(void) { return JPEG_LIB_VERSION; }
