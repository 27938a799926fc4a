/// @file SampleInput.cpp
/// @brief Sample emitter inputs shared by the codegen tests.
#include "SampleInput.h"

#include "ir/Printer.h"

#include <catch2/catch.hpp>

#include <memory>
#include <regex>
#include <sstream>

#include "codegen/FromIR.h"

namespace purlin::codegen::test {

Policy samplePolicy(const std::string &name) {
  Policy p;
  p.name = name;
  p.stagingBytes = 64ull << 20;
  p.atom.pipelineStages = 6;
  p.atom.stageBytes = 8192;
  for (int n = kMinWorld; n <= kMaxWorld; ++n) {
    WorldPolicy &w = p.world[n];
    w.latency.maxBytes = uint64_t(n) * 1000;
    w.latency.ctas = n + 10;
    w.latency.threads = 256 + n;
    w.throughput.stageCtas = n + 20;
    w.throughput.consumeCtas = n + 30;
    w.throughput.gatherCtas = n + 40;
    w.throughput.threads = 512 + n;
    w.throughput.chunkBytes = uint64_t(n) * 4096;
    w.throughput.transfer = n == 8 ? Transfer::Push : Transfer::Pull;
    w.direct = {n != 5, uint64_t(n) * 65536, n + 50, 64 * n};
  }
  return p;
}

std::shared_ptr<Collective> leaf(const std::string &name, ConsumeOp op, Layout in, Layout out, Root root) {
  auto c = std::make_shared<Collective>();
  c->name = name;
  c->loc = Location{"x.pl", 1, 1};
  c->op = op;
  c->in = in;
  c->out = out;
  c->root = root;
  return c;
}

std::vector<std::shared_ptr<const Collective>> runnable() {
  Module m = sampleModule();
  auto a2a = leaf("allToAll", ConsumeOp::Copy, Layout::Scattered, Layout::Transposed);
  return {m.collectives[0], m.collectives[1], m.collectives[2], a2a};
}

std::vector<std::shared_ptr<const Collective>> rooted() {
  auto sc = leaf("scatter", ConsumeOp::Copy, Layout::Scattered, Layout::Packed, Root::Producer);
  auto ga = leaf("gather", ConsumeOp::Copy, Layout::Packed, Layout::Scattered, Root::Consumer);
  auto ag = leaf("allGather", ConsumeOp::Copy, Layout::Packed, Layout::Scattered);
  auto rs = leaf("reduceScatter", ConsumeOp::Reduce, Layout::Scattered, Layout::Packed);
  auto compose = [](const std::string &name, std::shared_ptr<Collective> f, std::shared_ptr<Collective> g) {
    auto c = leaf(name, f->op, f->in, g->out);
    c->isCompose = true;
    c->children = {std::move(f), std::move(g)};
    return c;
  };
  return {sc, ga, compose("broadcast", sc, ag), compose("reduce", rs, ga)};
}

std::map<int, std::string> opsOf(const ir::Program &p) {
  std::map<int, std::string> ops;
  for (const ir::Role &r : p.roles) ir::forEachOp(r.body, [&](const ir::Op &o) { ops[o.id] = ir::opLine(o); });
  return ops;
}

void checkCitations(const std::string &text, const std::map<int, std::string> &ops, bool variants) {
  std::map<int, int> full;
  std::regex cite(R"(^\s*// %(\d+)( \[[^\]]+\])?(.*)$)");
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_match(line, m, cite)) continue;
    const int id = std::stoi(m[1]);
    REQUIRE(ops.count(id) == 1); // names an existing op
    if (m[2].matched) {
      REQUIRE(variants);
      continue;
    }
    ++full[id];
    REQUIRE("%" + std::to_string(id) + m[3].str() == ops.at(id)); // the IR's own line
  }
  for (const auto &[id, line] : ops) {
    INFO(line);
    CHECK(full[id] == 1);
  }
}

PolicySet samplePolicySet() {
  PolicySet s;
  s.arch = Arch::Sm90;
  s.policies["Policy"] = samplePolicy();
  return s;
}

namespace {
std::shared_ptr<Collective> leaf(const std::string &name, unsigned line, ConsumeOp op, Layout in,
                                 Layout out, Root root = Root::None) {
  auto c = std::make_shared<Collective>();
  c->name = name;
  c->loc = Location{"/some/abs/dir/allreduce.pl", line, 7};
  c->op = op;
  c->in = in;
  c->out = out;
  c->root = root;
  return c;
}
} // namespace

Module sampleModule() {
  Module m;
  m.file = "/some/abs/dir/allreduce.pl";
  auto rs = leaf("reduceScatter", 4, ConsumeOp::Reduce, Layout::Scattered, Layout::Packed);
  auto ag = leaf("allGather", 5, ConsumeOp::Copy, Layout::Packed, Layout::Scattered);
  auto ar = leaf("allReduce", 6, ConsumeOp::Reduce, Layout::Scattered, Layout::Scattered);
  ar->isCompose = true;
  ar->children = {rs, ag};
  m.collectives = {rs, ag, ar};
  return m;
}

EmitInput sampleAllReduceInput() {
  EmitInput in;
  in.sourceName = "allreduce.pl";
  in.cuName = "allreduce.cu";
  in.headerName = "allreduce.h";
  in.programsName = "allreduce.programs.h";
  in.deviceName = "allreduce.device.cuh";
  in.unitNames = {"allreduce.latency.cu", "allreduce.throughput.cu", "allreduce.direct.cu", "allreduce.pairs.cu"};
  in.arch = Arch::Sm90;
  EmitCollective c;
  c.name = "allReduce";
  c.kind = CollectiveKind::AllReduce;
  c.line = 6;
  c.stages = {StageSpec{ConsumeOp::Reduce, Layout::Scattered, Layout::Packed, Root::None},
              StageSpec{ConsumeOp::Copy, Layout::Packed, Layout::Scattered, Root::None}};
  c.stageNames = {"reduceScatter", "allGather"};
  c.policy = samplePolicy();
  c.programs = {
      ProgramNote{"latency", "bytes <= world[n].latencyMaxBytes",
                  {RoleNote{"latency", "world[n].latencyCtas", "%0..%3", "put packets to every peer; poll; reduce"}}},
      ProgramNote{"throughput", "otherwise",
                  {RoleNote{"stage", "world[n].stageCtas", "%4..%6", "copy input chunks to staging; notifyOne"},
                   RoleNote{"consume", "world[n].consumeCtas", "%7..%9", "wait STAGED; reduce; notify REDUCED"},
                   RoleNote{"gather", "world[n].gatherCtas", "%10..%11", "wait REDUCED; copy"}}}};
  // The verified IR of the allReduce of sampleModule() and the device code
  // printed from it (as runCudaEmit adds them).
  Module m = sampleModule();
  c.ir = ir::lowerVerified(*m.collectives[2], c.policy, kMinWorld);
  c.pullIR = c.ir;                                                 // the sample policy pulls for n < 8
  c.pushIR = ir::lowerVerified(*m.collectives[2], c.policy, kMaxWorld); // and pushes for n = 8
  c.pushLanes = {{c.pushIR->ir().bound.stageLanes, c.pushIR->ir().bound.consumeLanes}};  // its only push world
  c.directIR = c.ir;                                               // AllReduce's direct program: n = 2
  printPrograms(c);
  in.collectives.push_back(c);
  return in;
}

} // namespace purlin::codegen::test
