/* Linear-algebra ops (ops/list_linalg.h) against PyTorch 1.13: the golden
 * runner of test_ops_reduce.c over the linalg rows (tests/data/reduce holds
 * both families' cases), plus blocked-kernel shapes against a naive loop
 * and allocation failures. */
#define FBX_REDUCE_TEST_LINALG 1
#include "test_ops_reduce.c"
