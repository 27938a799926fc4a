// One reduction class's range loop (what Atom::reduce<Classes> dispatches to),
// alone in a kernel, so that its SASS size can be read per class:
//   measure.sh INCLUDE_DIR ELEM FAMILY   (e.g. measure.sh ../../../runtime/include __half Sum)
// The depth is a kernel parameter here, so both run-time pipeline forms
// (padded and once-dyn) are compiled; in the generated units the depth is a
// constant the compiler propagates, and only the padded one remains.
#include "purlin/atom/atom.cuh"
using namespace purlin;
using namespace purlin::atom;
#ifndef ELEM
#define ELEM float
#endif
#ifndef FAM
#define FAM Sum
#endif
__global__ void k(std::byte* dst, detail::Sources srcs, std::size_t count, int variant, int stages) {
  extern __shared__ std::byte ws[];
  detail::reduceRange<PipelineReduce<HopperTuning, 16384>, ELEM, OpFamily::FAM>(dst, srcs, count, ws, ctaSlice(),
                                                                                variant, stages);
}
