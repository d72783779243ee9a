#include "base/workcount.h"

_Thread_local uint64_t fbx_work_counts[FBX_WORK_NKINDS];
