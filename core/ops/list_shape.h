/* Op table rows: shape ops. (See ops/optable.h for the columns.) */
#ifndef FBX_OPS_LIST_SHAPE_H
#define FBX_OPS_LIST_SHAPE_H

#define FBX_OPS_SHAPE(X)

#endif
