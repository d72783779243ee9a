/* Op table rows: scalar ops. (See ops/optable.h for the columns.) */
#ifndef FBX_OPS_LIST_SCALAR_H
#define FBX_OPS_LIST_SCALAR_H

#define FBX_OPS_SCALAR(X)

#endif
