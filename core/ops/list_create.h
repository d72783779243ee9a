/* Op table rows: create ops. (See ops/optable.h for the columns.) */
#ifndef FBX_OPS_LIST_CREATE_H
#define FBX_OPS_LIST_CREATE_H

#define FBX_OPS_CREATE(X)

#endif
