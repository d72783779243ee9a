/* Internals shared by the files of core/tensor (not for other modules). */
#ifndef FBX_TENSOR_INTERNAL_H
#define FBX_TENSOR_INTERNAL_H
#include <fusebox/tensor.h>

/* Set the deleter of a storage made by fbx_storage_wrap; only while the
 * caller holds the sole reference. */
void fbx_storage_set_deleter_(fbx_storage *s, fbx_storage_deleter deleter, void *ctx);

#endif
