/* Op table rows: reduce ops. (See ops/optable.h for the columns.) */
#ifndef FBX_OPS_LIST_REDUCE_H
#define FBX_OPS_LIST_REDUCE_H

#define FBX_OPS_REDUCE(X)

#endif
