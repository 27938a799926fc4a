/// @file PolicyLoader.h
/// @brief Codesign policies: built-in defaults per architecture, the JSON
/// loader (schema: docs/policy.md) and the writer the tuner uses.
///
/// Error convention: loadPolicies/parsePolicies return an empty PolicySet
/// (no "Policy" entry) and set `error` to one line,
/// `SOURCE: JSON.PATH: expected WHAT, got VALUE`, e.g.
/// `h200.json: policies.decode.world.4.latency.threads: expected an integer
/// multiple of 32 in [32, 1024], got 100`. `error` is empty on success.
#pragma once

#include "purlin/Policy.h"
#include "purlin/limits.h"

#include <optional>
#include <string>
#include <string_view>

namespace purlin {

/// Most CTAs of any program's kernel, the direct program's included: one
/// epoch slot per CTA index (purlin/limits.h, shared with the runtime).
constexpr int kMaxDirectCtas = limits::kMaxEpochSlots;
/// Most threads per direct CTA (the kernel's launch bound; purlin/limits.h).
constexpr int kMaxDirectThreads = limits::kMaxDirectThreads;

/// "sm_80" -> Arch::Sm80, ...; nullopt for anything else.
std::optional<Arch> parseArch(std::string_view name);

/// The built-in policy set for `arch`: one policy named "Policy" with
/// numbers for every world size 2..8 (docs/policy.md lists them).
PolicySet defaultPolicies(Arch arch);

/// Loads the policy file at `path` for `arch`. Every policy in the file
/// starts from the built-in "Policy" of `arch`, then takes the file's base
/// fields (for all world sizes), then its per-world overrides. "Policy"
/// itself is always present (the built-in one unless the file redefines it).
PolicySet loadPolicies(const std::string &path, Arch arch, std::string &error);

/// Same, from JSON text; `source` names it in error messages.
PolicySet parsePolicies(const std::string &jsonText, const std::string &source, Arch arch,
                        std::string &error);

/// Checks ranges and cross-field rules of one policy (what the loader checks
/// after merging); returns "" or `policies.NAME.PATH: expected ...`.
std::string validatePolicy(const Policy &p);

/// The whole set as JSON text that parsePolicies accepts and that reproduces
/// `set` exactly (every world size written out explicitly).
std::string policyToJson(const PolicySet &set);

/// The per-world knobs of purlin/policy_knobs.def as a Markdown table (key,
/// accepted values, what 0 means, what it sets): docs/policy.md holds it
/// verbatim (PolicyTest checks).
std::string policyKnobsTable();

} // namespace purlin
