/* Op table rows: linalg ops. (See ops/optable.h for the columns.) */
#ifndef FBX_OPS_LIST_LINALG_H
#define FBX_OPS_LIST_LINALG_H

#define FBX_OPS_LINALG(X)

#endif
