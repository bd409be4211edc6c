// SPDX-License-Identifier: MIT OR Apache-2.0
// Running one case: its launch on any backend, the emulator's expected bytes, and their comparison.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "w8a16/device/backend.hpp"
#include "w8a16/device/plan.hpp"
#include "w8a16/properties/contract_choice.hpp"
#include "w8a16/golden/case.hpp"
#include "w8a16/golden/case_inputs.hpp"

namespace w8a16::props {

device::Entry to_device_entry(golden::EntryPoint e);

// The registry a case is planned with: the backend's, with the kernels the case's `without=`
// names (golden::kKernelSymbols, in device::KernelId order) resolved to the zero handle, as a
// module without them resolves them.
class CaseRegistry final : public device::KernelRegistry {
 public:
  CaseRegistry(const device::KernelRegistry& inner, std::uint32_t without) : inner_(inner), without_(without) {}
  device::KernelHandle resolve(device::KernelId id) const override {
    return (without_ >> static_cast<unsigned>(id)) & 1u ? device::KernelHandle{} : inner_.resolve(id);
  }

 private:
  const device::KernelRegistry& inner_;
  std::uint32_t without_;
};

// The call a case makes: the entry's own kernel handle from the backend's registry (by_m: the
// 128-row tile's, plus the twins'), the case's shape and pitches, and the given buffers.
device::Call case_call(const golden::Case& c, const device::KernelRegistry& registry, device::DevPtr a,
                       device::DevPtr w, device::DevPtr s, device::DevPtr out);

struct Launched {
  device::Status status;  // of allocation, upload, planning, launch, synchronize or download
  bool planned = false;   // plan_launch accepted the call (then `plan` is what ran)
  device::Plan plan;
  // C after the launch: [m + golden::kOutputGuardRows][c_row_stride], the sentinel before it
  // (golden::guarded_sentinel_output): the pitch padding and the guard rows must come back as it.
  std::vector<std::uint16_t> c_bits;
};

// A case's operands wherever they live: golden::CaseInputs, or the launch worker's mapping of the
// inputs its launcher wrote (launcher.hpp). Counts are elements.
struct OperandView {
  const std::uint16_t* a = nullptr;
  std::size_t a_count = 0;
  const std::uint8_t* w = nullptr;
  std::size_t w_count = 0;
  const float* s = nullptr;
  std::size_t s_count = 0;
};
OperandView operand_view(const golden::CaseInputs& in);

// The one launch path of the campaign, the replays, repro and the GPU tests: allocates A, W and S
// at their exact sizes (a read past an operand leaves its allocation) and C with its guard rows,
// uploads the inputs, fills C with the sentinel (case_inputs.hpp), plans the case's entry point
// over CaseRegistry(backend.registry(), c.without) as Launcher::launch plans (validation, dispatch,
// sizing), executes the plan, synchronizes and downloads all of C. A refused call launches
// nothing and C comes back as the sentinel.
// before_execute, when given, is called with the plan right before it executes (the launchers
// start a launch's deadline there).
// With offsets, A and C are views that start `offsets` elements into their allocations (A's
// front holds padding bits, C's the sentinel, which must be left as it is); C comes back from its
// view's start. A's offset keeps 16-byte rows (a multiple of 8); C's may be any (kernels store C
// one BF16 at a time, docs/KERNEL_ABI.md 3).
struct ViewOffsets {
  std::uint32_t a = 0, c = 0;
  bool none() const { return a == 0 && c == 0; }
};
Launched launch_case(device::Backend& backend, const golden::Case& c, const OperandView& in,
                     const std::function<void(const device::Plan&)>& before_execute = {},
                     const ViewOffsets& offsets = {});
inline Launched launch_case(device::Backend& backend, const golden::Case& c, const golden::CaseInputs& in,
                            const std::function<void(const device::Plan&)>& before_execute = {},
                            const ViewOffsets& offsets = {}) {
  return launch_case(backend, c, operand_view(in), before_execute, offsets);
}

// The plan launch_case would make for c on a backend with this registry and these limits
// (planning validates and sizes; it reads no memory, so the addresses are placeholders).
device::Planned plan_case(const golden::Case& c, const device::KernelRegistry& registry,
                          const device::DeviceLimits& limits);

// What all of C must hold afterwards, guard rows and pitch padding included: the emulator's
// contract for the entry point (by default NUMERICS.md 2.1 on sm_90 for every tensor-core entry,
// 2.2 for the GEMVs; any other under `contract`, 2.4) in rows [0, m), columns [0, n), the sentinel
// everywhere else. The one source of expected bytes for every comparison with a launch. threads =
// 0 uses every core. The contract must define the case (contract_case_problem is "").
std::vector<std::uint16_t> expected_output(const golden::Case& c, const golden::CaseInputs& in, unsigned threads = 0,
                                           const ContractChoice& contract = {});

struct Comparison {
  std::uint64_t bytes_compared = 0;  // all of C, padding included
  std::uint64_t mismatches = 0;      // elements whose bits differ
  std::vector<std::string> details;  // the first few: position, expected and produced bits
  bool equal() const { return mismatches == 0; }
};
// Raw bits, element by element over all of C; no tolerance anywhere. Details name the region of
// each: the output, the pitch padding, or a guard row past M.
Comparison compare_output(const golden::Case& c, const std::vector<std::uint16_t>& expected,
                          const std::vector<std::uint16_t>& produced, std::size_t max_details = 4);

}  // namespace w8a16::props
