/* Running one op the way the interpreter does, for the op-kernel tests
 * (test_ops_reduce, test_ops_linalg, test_ops_linalg_par): resolve the row
 * of `kind` that TorchScript would call with these positional values
 * (fbx_op_resolve, so the overload order of the rows is exercised),
 * normalize the arguments, and call the reference kernel.
 *
 *   fbx_ivalue args[2] = {fbx_iv_tensor(a), fbx_iv_tensor(b)}, outs[FBX_SCHEMA_MAX_RETS];
 *   fbx_status *st = oprun("aten::mm", args, 2, outs, NULL, NULL);
 *
 * outs (the row's return count) are set to None, then receive the kernel's
 * results; *op_out (may be NULL) the resolved row, set as soon as it is
 * known (also when the kernel then fails); rng (may be NULL) seeds random
 * ops. A kind that is not a valid symbol fails the test. */
#ifndef FBX_TEST_OPRUN_H
#define FBX_TEST_OPRUN_H
#include <stdint.h>

#include "ops/optable.h"

fbx_status *oprun(const char *kind, fbx_ivalue *args, int nargs, fbx_ivalue *outs, const fbx_op **op_out,
                  uint64_t *rng);

#endif
