/* libFuzzer target for the .npy reader (fbx_npy_read_mem).
 *
 * Any input either fails with a message that starts with the file's name, or
 * gives a tensor whose bytes all lie inside its storage; every element is
 * then read (fbx_tensor_summary computes min/max/mean over all of them) and
 * the tensor is made contiguous, so a shape, stride or byte count the reader
 * got wrong shows up as an ASan report. UBSan and LeakSanitizer catch the
 * rest. Run with tests/fuzz/run_fuzz.sh SECONDS.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/status.h"
#include <fusebox/tensor.h>

static void die(const char *what, const char *detail) {
  fprintf(stderr, "fuzz_npy: %s\n", what);
  if (detail) fprintf(stderr, "%s\n", detail);
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fbx_tensor *t = NULL;
  fbx_status *st = fbx_npy_read_mem(&t, data, size, "fuzz.npy");
  if (st) {
    const char *m = fbx_status_message(st);
    if (t) die("a failed read returned a tensor", m);
    if (fbx_status_code(st) != FBX_ERR_NOMEM && strncmp(m, "fuzz.npy: ", 10))
      die("error message does not start with the file name", m);
    fbx_status_free(st);
    return 0;
  }
  if (!t) die("a successful read returned no tensor", NULL);
  if (t->dtype == FBX_DTYPE_BFLOAT16) die("read produced bfloat16", NULL);
  int64_t numel = 1;
  for (int i = 0; i < t->ndim; i++) {
    if (t->sizes[i] < 0) die("negative size", NULL);
    numel *= t->sizes[i];
  }
  if (numel != t->numel) die("numel disagrees with the sizes", NULL);
  if (numel > 0) {
    int64_t last = t->offset;
    for (int i = 0; i < t->ndim; i++) last += (t->sizes[i] - 1) * t->strides[i];
    if ((size_t)(last + 1) * fbx_tensor_elem_size(t) > fbx_storage_nbytes(t->storage))
      die("the tensor's elements reach past its storage", NULL);
  }
  char line[512];
  fbx_tensor_summary(line, sizeof line, t);
  fbx_tensor *c = NULL;
  st = fbx_tensor_contiguous(&c, t);
  if (st) {
    if (fbx_status_code(st) != FBX_ERR_NOMEM) die("contiguous copy failed", fbx_status_message(st));
    fbx_status_free(st);
  } else {
    if (!fbx_tensor_is_contiguous(c)) die("contiguous() is not contiguous", NULL);
    for (int64_t i = 0; i < c->numel && i < 64; i++)
      if (t->dtype != FBX_DTYPE_BOOL && fbx_tensor_get_f64(c, i) != fbx_tensor_get_f64(t, i) &&
          fbx_tensor_get_f64(t, i) == fbx_tensor_get_f64(t, i))
        die("contiguous copy differs from the tensor read", NULL);
    fbx_tensor_release(c);
  }
  fbx_tensor_release(t);
  return 0;
}
