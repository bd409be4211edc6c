// SPDX-License-Identifier: MIT OR Apache-2.0
// The simulation backend: runs a plan on the CPU CTA by CTA. Each CTA writes the outputs its tile
// owns under the plan's tile map, with values from the emulator's contract for the kernel
// (reference/, NUMERICS.md 2.1 canonical or 2.2 GEMV order), and every rule the geometry must keep
// is checked. This is how CI, without a GPU, checks every launch's geometry (README.md).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "w8a16/device/backend.hpp"
#include "w8a16/device/plan.hpp"
#include "w8a16/reference/conventions.hpp"

namespace w8a16::device {

enum class FindingKind : std::uint8_t {
  written_twice,          // an output two CTAs (or one CTA twice) write
  never_written,          // an output in [M, N) no CTA writes
  write_outside,          // a write at row >= M (or past the C allocation)
  write_into_padding,     // a write at column >= N of a row < M: the pitch padding
  read_outside,           // A, W or S as the parameters describe them leave their allocation
  misaligned_row,         // a row start of A or W off 16 bytes, or of C off 2 bytes
  smem_mismatch,          // dynamic shared memory other than the body's declared need
  smem_over_limit,        // dynamic shared memory above the device limit
  grid_over_limit,        // a grid dimension above the device limit
  block_mismatch,         // a block other than the body's (256, 1, 1), or (384, 1, 1) for the Hopper tier
  body_mismatch,          // the plan's body is not the one the kernel picks for (m, k), or breaks its limits
  tile_map_mismatch,      // the plan's tile map is not the body's documented map
  unknown_pointer,        // a pointer that is no simulation buffer
  step_coverage,          // stream_units: a unit's 128-K step folded twice, never, or out of order
  workspace_chain,        // stream_units: a tail whose head slot holds another unit or step, or a head no tail reads
  workspace_mismatch,     // a workspace other than the body's declared need (geometry.hpp)
  packed_weight_invalid,  // a packed W the emulator refuses (NUMERICS.md 2.3: its NaN table misses a NaN code)
};
const char* finding_kind_name(FindingKind k);

struct Finding {
  FindingKind kind;
  std::string message;  // names the CTA, the element or the value, and the rule
};

// Fault injection, so that what the gate does when a kernel hangs or faults is tested on every
// CPU run (device/README.md, "When a kernel hangs or faults"). A plan whose kernel symbol is named
// (and, when m is not 0, whose m is m) behaves as a kernel that
//   hang:  never completes (execute does not return),
//   fault: raises a sticky error: execute returns, and from then on every call of the backend and
//          of its buffers fails with Errc::context_lost, as every call on a poisoned CUDA context does,
//   crash: takes the process down with SIGSEGV, as a driver that reads a broken module may.
enum class InjectedFault : std::uint8_t { hang, fault, crash };
struct Injection {
  InjectedFault kind = InjectedFault::fault;
  std::string kernel;   // the symbol, e.g. "w8a16_gemv_batch4_strided"
  std::uint32_t m = 0;  // 0: any m
};
// "KIND:SYMBOL[:m=N],..." (W8A16_SIM_INJECT's format) -> the injections; false with *error, also for
// a SYMBOL that is not one of the family's kernel symbols (kernels.hpp): it would inject nothing.
bool parse_injections(const std::string& text, std::vector<Injection>* out, std::string* error);

// Stand-ins for `w8a16check identify` (properties/README.md, "identify"): a simulated body whose
// values follow other conventions than its contract's (NUMERICS.md 2.4), or carry a planted bug,
// so that identify can be shown to name each convention and to refuse a body that keeps none. The
// geometry is checked as for every plan; only the values the CTAs copy change.
enum class PlantedBug : std::uint8_t {
  none,
  flip,    // bit 0 of one output element (row, column) is flipped after the emulation
  swap_k,  // the body reads A's K positions i and j swapped (a wrong load index)
  // A NaN scan over K by L lanes that keeps only each lane's last pass (an `=` for an `|=`): the NaN
  // codes at K-steps s with s + L < steps go unseen, and a column whose every NaN code is among
  // them is computed with NaN codes decoded as +-480, the fast integer decode's value (NUMERICS.md
  // 2.4 tc.nan / gemv.nan = finite). Visible only with a NaN code early in a range of more than L
  // steps: what the coverage plan's lone specials are for (properties/coverage.hpp).
  early_nan,
};
// Stand-ins that break invariance on purpose (`w8a16check invariance`'s controls): values that
// depend on the call's row count, on a row's position, or on the run. Each is emulated as a change
// of the body's conventions (NUMERICS.md 2.4) applied where the real defect would apply it, so the
// bytes are exact emulations, never noise.
enum class StandInVariation : std::uint8_t {
  none,
  // A K split whose part count depends on M: ceil(m / 8) parts whose FP32 partials are added. The
  // extra additions round the scaled partials before they meet the accumulator, which is fold =
  // mul-add (GEMV: mac = mul-add) wherever there are two parts or more (m > 8, two steps or more).
  split_k_by_m,
  // A reduction whose order depends on the row's position: odd rows of the call take each step's
  // first two k16 windows in swapped order (GEMV: chunk 8 instead of its own).
  row_order,
  // Atomics across CTAs: each execute folds some outputs' partials in the other order (the two
  // windows swapped as above), chosen per element from a hash of the execute's count, so repeats of
  // one call differ.
  nondeterministic,
  // A kernel that computes row 0 and writes its bytes into every row of the call: every call's
  // front row is right, so a check that compares needle rows alone, with the needle at the front,
  // passes it; the other rows' own M = 1 bytes do not.
  row_copy,
};
struct BodyStandIn {
  Body body = Body::gemm128_tile;
  ref::Conventions conventions = ref::canonical_conventions();  // tc for a tensor-core body, gemv for the GEMV
  PlantedBug bug = PlantedBug::none;
  std::uint32_t x = 0, y = 0;  // flip: row, column; swap_k: the two K positions; early_nan: x = L
  StandInVariation variation = StandInVariation::none;
  std::string text;  // the item as given, for the backend's note
};
// "BODY=SPEC,..." (W8A16_SIM_CONVENTIONS' format): BODY a body name (bodies.def, e.g. m32_skinny),
// SPEC one of
//   NAME or FILE          a library value (canonical, seed-tile, seed-skinny, seed-rows) or a file in
//                         the text form (ref::parse_conventions); a name is looked up first
//   bug:flip[@R:C]        the canonical values with bit 0 of C[R][C] flipped (default C[0][0])
//   bug:swap-k@I:J        the canonical values computed with A's K positions I and J swapped
//   bug:early-nan@L       the NaN codes a scan of L lanes reads before its last pass lost
//                         (PlantedBug::early_nan)
//   NAME+bug:...          the bug on top of the named (or file's) conventions
//   split-k-by-m, row-order, nondeterministic, row-copy
//                         the canonical values varied as StandInVariation says (the controls that
//                         `w8a16check invariance` must fail)
// A body named twice, an unknown body, name, file or bug is an error; false with *error.
bool parse_stand_ins(const std::string& text, std::vector<BodyStandIn>* out, std::string* error);

class SimBackend final : public Backend {
 public:
  explicit SimBackend(StaticRegistry registry = StaticRegistry::all_present(),
                      DeviceLimits limits = DeviceLimits::h200());
  ~SimBackend() override;

  const char* name() const override { return "simulation"; }
  BackendKind kind() const override { return BackendKind::simulation; }
  DeviceLimits limits() const override { return limits_; }
  const KernelRegistry& registry() const override { return registry_; }
  std::unique_ptr<Buffer> allocate(std::size_t bytes, Status* status = nullptr) override;
  // Simulates the plan. Any finding makes the status Errc::simulation_finding (message: the
  // first findings); findings() lists them all.
  Status execute(const Plan& plan) override;
  Status synchronize() override;
  void inject(std::vector<Injection> faults) { injections_ = std::move(faults); }
  void stand_in(std::vector<BodyStandIn> stand_ins) { stand_ins_ = std::move(stand_ins); }

  // Findings of the last execute().
  const std::vector<Finding>& findings() const { return findings_; }
  bool has_finding(FindingKind k) const;
  // Every plan executed, in order.
  const std::vector<Plan>& plans() const { return plans_; }

 private:
  // Live allocations by address, shared with the buffers (a buffer may outlive the backend).
  struct Memory;

  StaticRegistry registry_;
  DeviceLimits limits_;
  std::shared_ptr<Memory> memory_;
  std::vector<Finding> findings_;
  std::vector<Plan> plans_;
  std::vector<Injection> injections_;
  std::vector<BodyStandIn> stand_ins_;
};

}  // namespace w8a16::device
