/* A table whose struct_size does not even cover the required functions. */
#include "pointwise.h"

static const fbxp_plugin_api API = {
    .struct_size = FBXP_SIZE_UPTO(fbxp_plugin_api, flags),
    .abi_major = FBXP_ABI_MAJOR,
    .abi_minor = FBXP_ABI_MINOR,
    .name = "undersized",
    .version = "0.1",
    .vendor = "fusebox tests",
    .flags = FBXP_GUARDS_OUTSIDE,
};

PW_ENTRY(API)
