/// @file EmitDeviceEntry.h
/// @brief The device API's entry NAME_device (docs/device-api.md): the
/// collective run by a user's kernel, through the same CTA bodies as the
/// printed latency and throughput kernels (NAME_latencyCta,
/// NAME_throughputCta), printed after both in NAME.device.cuh.
#pragma once

#include <string>

namespace purlin::codegen {

/// NAME_device<Pair>(call, sync) of the collective whose flat C++
/// identifier is `id`; `reduces`: a reduction (its latency body takes the
/// rank form and the pair, and the entry asserts the pair is in the
/// instantiation table).
std::string printDeviceEntry(const std::string &id, bool reduces);

} // namespace purlin::codegen
