/// @file MutationTest.cpp
/// @brief Deleting any single notify or wait of any collective's programs
/// is reported by the verifier or the simulator, naming a related op.
#include <catch2/catch.hpp>

#include "Fixtures.h"
#include "ir/Mutation.h"
#include "ir/Pipeline.h"

using namespace purlin;
using namespace purlin::ir;

TEST_CASE("every single notify/wait deletion is caught", "[mutation]") {
  for (Kind k : allKinds())
    for (int n : {3, 8}) {
      CollectiveIR ir = lower(*test::collectiveOf(k), test::testPolicy(), n);
      auto ms = mutate(ir, 2);
      CHECK(!ms.empty());
      for (auto &m : ms) {
        INFO(toString(k) << " n=" << n << " " << m.program << ": deleted %" << m.opId << " '" << m.opText << "'\n"
                         << m.by << ": " << m.message);
        CHECK(m.caught);
        CHECK(m.namesOp);
      }
    }
}
