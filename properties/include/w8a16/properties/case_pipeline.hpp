// SPDX-License-Identifier: MIT OR Apache-2.0
// Many cases through one launcher with every host core busy. A pool of threads regenerates each
// case's operands and emulates its expected bytes, several cases ahead; the calling thread
// launches the cases one at a time in index order, while the pool works on the cases after it,
// and hands each result back in index order. What a run reports is therefore the same for any
// thread count, and a launch that hangs is still the last one started.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "w8a16/golden/case.hpp"
#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/properties/case_runner.hpp"
#include "w8a16/properties/launcher.hpp"

namespace w8a16::props {

struct PipelineOptions {
  unsigned threads = 0;               // pool threads; 0: every core
  std::uint64_t max_bytes_ahead = 0;  // operands and outputs held for cases not yet handed back;
                                      // 0: a quarter of the memory, at most 8 GiB. The case being
                                      // launched is always admitted, so one case larger than this
                                      // still runs, alone.
  ContractChoice contract;            // what the expected bytes are (NUMERICS.md 2.4): canonical by default
  // Also the canonical bytes of each case whose entry point the contract holds to another value
  // (CaseWork::canonical_expected): what a recording of this project's kernels holds.
  bool also_canonical = false;
};

// One case's result.
struct CaseWork {
  golden::Case c;
  std::string input_error;              // not empty: its operands could not be regenerated;
                                        // nothing was emulated or launched
  std::uint32_t specials = 0;           // golden::special_classes of its operands
  golden::LoneSpecial lone;             // golden::find_lone_special of its operands
  std::string contract_problem;         // not empty: the contract does not define this case's outputs
                                        // (contract_case_problem): nothing was emulated or launched
  std::vector<std::uint16_t> expected;  // expected_output: all of C, guard rows included
  // With PipelineOptions::also_canonical, where the contract is not canonical for the case's entry
  // point: expected_output under canonical (also when the contract leaves the case undefined).
  std::vector<std::uint16_t> canonical_expected;
  bool launched = false;  // a launcher was given and the case went to it
  Launched got;           // what it returned
};

enum class PipelineEnd {
  all,      // every case was handed back
  stopped,  // `before` or `done` said stop
  hang,     // a launch ended with Errc::launch_timeout: it was handed back, and no case after it
            // was launched (each further launch could hang as long)
};

struct PipelineResult {
  std::size_t handed = 0;  // cases handed to `done`: cases [0, handed)
  PipelineEnd end = PipelineEnd::all;
};

struct PipelineSteps {
  // On the calling thread before case i is launched (or, without a launcher, handed back);
  // false stops the run there: case i and the later ones are not handed back.
  std::function<bool(std::size_t i)> before;
  // Case i's result, on the calling thread, in index order; false stops the run after it.
  std::function<bool(std::size_t i, CaseWork& work)> done;
};

// Runs cases [0, count): case_at(i) is case i (called on the pool's threads: it must be safe to
// call concurrently, as a lookup or a seeded draw is). `launcher` may be null: the cases are
// then only regenerated and emulated. An exception thrown while preparing a case reaches the
// caller when that case's turn comes.
PipelineResult run_case_pipeline(std::size_t count, const std::function<golden::Case(std::size_t)>& case_at,
                                 CaseLauncher* launcher, const PipelineSteps& steps, const PipelineOptions& opt = {});

}  // namespace w8a16::props
