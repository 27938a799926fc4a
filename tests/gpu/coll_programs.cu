/// @file coll_programs.cu
/// @brief The device programs of the four unrooted collectives, compiled
/// once for the harness's policies (coll_launch.cuh): the colltest_programs
/// library the GPU tests link.
#define COLLTEST_PROGRAMS
#include "coll_launch.cuh"

namespace colltest {
template Status launchColl<PAuto>(Coll, Communicator&, const sn::CallArgs&, cudaStream_t);
template Status launchColl<PTput>(Coll, Communicator&, const sn::CallArgs&, cudaStream_t);
} // namespace colltest
