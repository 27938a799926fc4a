/// @file shared_library.cpp
/// @brief The one source of libpurlin.so (generated/CMakeLists.txt, target
/// purlin_shared), which is otherwise the runtime's and the generated
/// collectives' static libraries linked whole: the C ABI of purlin.h and
/// generated/*.h in one shared object, what the Python package loads
/// (docs/python.md). Checks at build time that the two C ABIs it joins
/// agree on the enums they share.
#include "purlin/purlin.h"
#include "purlin/types.h"

static_assert(PURLIN_NUM_DTYPES == purlin::kNumDTypes && PURLIN_NUM_REDOPS == purlin::kNumRedOps,
              "purlin.h and types.h list the same dtypes and ops (both from purlin/types.def)");
