// SPDX-License-Identifier: MIT OR Apache-2.0
// Whether a row's bytes depend on anything but the row (`w8a16check invariance`; the batch and
// tier rows of `verify`). NUMERICS.md 2.1 defines C[m][n] from row m of A, W and S alone, and every
// tensor-core tier must give the same bytes (2.1, "so every tier gives the bytes of every other");
// the GEMVs keep their own order (2.2), the same for both. So a needle row, copied into calls of
// every row count M among filler rows, must come back as its M = 1 bytes wherever it sits, on every
// body an entry point can dispatch, through the strided and contiguous entry points and the packed
// W (2.3), every run; and those bytes must be the contract's (2.4). Four verdicts, each its own:
//
//   run-to-run  the same call repeated gives the same bytes, all of C
//   batch       per entry point, the needle at the front, the back and seeded positions of every
//               M, in reversed and interleaved row orders, with padded pitches and A/C views at
//               other aligned base offsets, against the entry's own M = 1 bytes (device against
//               device)
//   tier        per M, the needle at the front on every body each entry point can dispatch
//               (forced with `without=`, as coverage forces them) and on every entry point of the
//               same contract (strided, contiguous, packed W), against the plurality of them
//   contract    each entry point's M = 1 bytes against the emulator's row under the chosen
//               contract: "invariant but wrong" and "right but not invariant" are told apart
//
// The core launches through InvarianceLauncher, so that another caller (Python) can run the same
// sweep over its own kernels.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "w8a16/device/backend.hpp"
#include "w8a16/device/plan.hpp"
#include "w8a16/golden/case.hpp"
#include "w8a16/golden/case_inputs.hpp"
#include "w8a16/properties/case_runner.hpp"
#include "w8a16/properties/contract_choice.hpp"

namespace w8a16::props {

class CaseLauncher;

// What the sweep launches through. C comes back as launch_case gives it: [m + guard rows]
// [c_row_stride], the sentinel wherever no output belongs, starting at C's view.
class InvarianceLauncher {
 public:
  virtual ~InvarianceLauncher() = default;
  virtual Launched launch(const golden::Case& c, const golden::CaseInputs& in, const ViewOffsets& offsets) = 0;
  // The same call while another stream keeps the GPU busy (run-to-run's second repeat). Only where
  // busy_stream_text() is not empty.
  virtual Launched launch_beside_load(const golden::Case& c, const golden::CaseInputs& in) {
    Launched l;
    l.status = device::Status::error(device::Errc::backend_error, "this launcher has no second stream");
    (void)c, (void)in;
    return l;
  }
  // What launch_beside_load runs beside the call, for the report; "" when it cannot.
  virtual std::string busy_stream_text() const { return ""; }
  // True once a failed launch means the sweep cannot go on (a callable that raised): it stops.
  virtual bool stopped() const { return false; }
};

// The CLI's launcher: views at offset 0 through a CaseLauncher (a worker process per GPU, so a
// hang or fault is that launch's failure), other views and the calls beside a load in this process
// on the backend under the launch deadline (a hang there ends the process through the hang handler,
// never as a PASS).
class BackendInvarianceLauncher final : public InvarianceLauncher {
 public:
  BackendInvarianceLauncher(CaseLauncher& cases, device::Backend& backend);
  ~BackendInvarianceLauncher() override;
  Launched launch(const golden::Case& c, const golden::CaseInputs& in, const ViewOffsets& offsets) override;
  // The load: the call's entry point and M over N = K = kLoadExtent (its own operands, uninitialised,
  // its own output), kLoadLaunches times on the backend's concurrent stream, queued right before the
  // call on stream 0: the kernel under test starts on a GPU that is busy, and its CTAs land on SMs as
  // the load's free them, a schedule that atomics or any order set by arrival shows.
  Launched launch_beside_load(const golden::Case& c, const golden::CaseInputs& in) override;
  std::string busy_stream_text() const override;
  static constexpr std::uint32_t kLoadExtent = 16384;
  static constexpr int kLoadLaunches = 4;

 private:
  Launched in_process(const golden::Case& c, const golden::CaseInputs& in, const ViewOffsets& offsets,
                      const std::string& what, const std::function<void(const device::Plan&)>& before = {});
  device::Status queue_load(const golden::Case& c);
  CaseLauncher& cases_;
  device::Backend& backend_;
  bool has_stream_ = false;
  std::string no_stream_;  // why not, when the backend has none
  device::Stream stream_ = 0;
  std::unique_ptr<device::Buffer> load_[4];  // A, W, S, C of the load, grown as M needs
};

// ---- dispatch ----------------------------------------------------------------------------------
// Which body (and configuration, bodies.hpp `config`) an entry point's call of shape (m, n, k)
// plans on, with kernels taken away (`without`, golden::Case). "" when the call is refused.
struct Dispatched {
  bool ok = false;
  device::Body body = device::Body::gemm128_tile;
  std::string config;
  std::string kernel;
  std::string label() const;  // "m32_skinny (8-column strips)"
};
Dispatched dispatch_of(golden::EntryPoint e, std::uint32_t m, std::uint32_t n, std::uint32_t k, std::uint32_t without,
                       const device::KernelRegistry& registry, const device::DeviceLimits& limits);

// The `without=` masks that can force an entry point past its tiers (bodies.hpp kernels_before),
// and for gemm_pipelined_by_m also past its twins (by_m falls back past a zero handle, KERNEL_ABI
// 2.2): least first; 0 first. None takes the entry point's own symbols.
std::vector<std::uint32_t> forcing_masks(golden::EntryPoint e);

// Every body an entry point dispatches at m with some forcing mask: each with the least mask that
// reaches it, the default dispatch (mask 0) first.
struct ForcedBody {
  device::Body body = device::Body::gemm128_tile;
  std::uint32_t without = 0;
  std::string label;
};
std::vector<ForcedBody> bodies_at(golden::EntryPoint e, std::uint32_t m, std::uint32_t n, std::uint32_t k,
                                  const device::KernelRegistry& registry, const device::DeviceLimits& limits);

// The default dispatch over m = 1 .. m_max as runs of equal labels, and the edges: each m whose
// label differs from m - 1's.
struct DispatchSpan {
  std::uint32_t first = 0, last = 0;
  std::string label;
};
struct DispatchMap {
  std::vector<DispatchSpan> spans;
  std::vector<std::uint32_t> edges;         // default dispatch
  std::vector<std::uint32_t> forced_edges;  // where the set of forceable bodies changes
  std::vector<DispatchSpan> forced_spans;   // the other bodies forced at each M, with their without=
};
DispatchMap dispatch_map(golden::EntryPoint e, std::uint32_t n, std::uint32_t k, std::uint32_t m_max,
                         const device::KernelRegistry& registry, const device::DeviceLimits& limits);

// How far dispatch_map looks for edges, and the default range's least bound: past the 128-row tile
// (its second row of CTAs starts at 129).
inline constexpr std::uint32_t kEdgeScanMax = 1024;
inline constexpr std::uint32_t kDefaultMBound = 130;

// The default M list of a shape: every M from 1 to the bound past the largest tile and every edge
// below kDefaultMBound's reach (max(130, largest edge + 1)), then each farther edge -1, 0, +1. Per
// entry point, capped at its row limit (the GEMVs).
std::vector<std::uint32_t> default_ms(const std::vector<DispatchMap>& maps);
// Only the edges, each -1, 0, +1, and M = 1 (what verify's rows sweep).
std::vector<std::uint32_t> edge_ms(const std::vector<DispatchMap>& maps);

// ---- the sweep ---------------------------------------------------------------------------------
enum class InvarianceKind : std::uint8_t { run_to_run, batch, tier, contract };
inline constexpr InvarianceKind kAllInvarianceKinds[] = {InvarianceKind::run_to_run, InvarianceKind::batch,
                                                         InvarianceKind::tier, InvarianceKind::contract};
const char* invariance_kind_name(InvarianceKind k);  // "run-to-run", "batch", "tier", "contract"

// The batch verdict's positions of the needle: the main call's front, back and seeded rows; every
// row in turn at M <= kEveryRowMaxM (a call per row); the main rows reversed and interleaved; and
// other pitches and view offsets. Every filler row of every call is compared whatever is asked.
enum class BatchPosition : std::uint8_t { front, back, seeded, every_row, reversed, interleaved, views };
inline constexpr BatchPosition kAllBatchPositions[] = {
    BatchPosition::front,    BatchPosition::back,        BatchPosition::seeded, BatchPosition::every_row,
    BatchPosition::reversed, BatchPosition::interleaved, BatchPosition::views};
// "front", "back", "seeded", "every-row", "reversed", "interleaved", "views"
const char* batch_position_name(BatchPosition p);
bool parse_batch_position(const std::string& name, BatchPosition* out);
constexpr std::uint32_t position_bit(BatchPosition p) { return 1u << static_cast<unsigned>(p); }
inline constexpr std::uint32_t kAllPositionBits = 0x7f;
// The positions of one call of M rows (front, back, seeded, every row): no other order or view.
inline constexpr std::uint32_t kFixedPositionBits = position_bit(BatchPosition::front) |
                                                    position_bit(BatchPosition::back) |
                                                    position_bit(BatchPosition::seeded) |
                                                    position_bit(BatchPosition::every_row);
inline constexpr std::uint32_t kEveryRowMaxM = 8;
// Filler rows are drawn from a pool of this many rows per needle, each launched alone once (M = 1)
// so that every filler row of every call is compared with its own M = 1 bytes: a kernel that copies
// one row into the others, or reads a neighbour's, fails on the filler rows as on the needle.
inline constexpr std::uint32_t kFillerPool = 8;

struct InvarianceShape {
  std::uint32_t n = 0, k = 0;
};

struct InvarianceOptions {
  std::vector<InvarianceShape> shapes;
  std::vector<golden::EntryPoint> entries;
  // The M list; empty: default_ms (edges_only: edge_ms) of each shape.
  std::vector<std::uint32_t> ms;
  bool edges_only = false;
  // The needles' data: golden distributions that expose order (fold_ties, cancelling_steps,
  // wide_exponents) and NaN codes in some W rows (nan_codes). One sweep each.
  std::vector<golden::Distribution> needles;
  // Also, where a shape has a GEMV entry point, the GEMV order needle: identify's split operands
  // (gemv_split_inputs), on which another lane partition, chunk, scale placement or multiply-add
  // shows in BF16 where the distributions round alike. Its replays are operand bundles.
  bool gemv_order_needle = true;  // at K = max(the shape's K, kGemvNeedleMinK)
  // Also the pair-order needle (pair_order_inputs) on every entry point, at the shape's K.
  bool pair_order_needle = true;
  std::uint64_t seed = 0x1a7a;
  bool kinds[4] = {true, true, true, true};  // by InvarianceKind
  // The batch verdict's positions (position_bit): kFixedPositionBits for one call per M and its
  // every-row calls (verify's rows), kAllPositionBits for the other orders and views too.
  std::uint32_t positions = kAllPositionBits;
  // Runs of each call for run-to-run: the first and repeats - 1 more (and, where the launcher has
  // a second stream, one more beside a load).
  unsigned repeats = 2;
  ContractChoice contract;
  std::string save_dir;              // where failing launches are saved; "" saves nothing
  std::string backend_name = "sim";  // the --backend of the replay commands the report prints
  unsigned threads = 0;              // emulation threads (contract verdict)
  bool asked(InvarianceKind k) const { return kinds[static_cast<int>(k)]; }
  bool has(BatchPosition p) const { return (positions & position_bit(p)) != 0; }
};

inline constexpr std::uint32_t kGemvNeedleMinK = 2048;

// The pair-order needle's operands on a shape (row 0 of A; W and S): a quarter of K are pairs of
// large products (about 2^8..2^16 times W's value) that cancel exactly, half are small ones (about
// 1), and every product is exact in FP32 (BF16 A of 8 significant bits, E4M3 W, scales powers of two
// of rank one in the exponent, so a pair spanning two K blocks cancels in every column block). The
// exact sum is the small products' alone, so any association of the K reduction that adds small
// products between a pair's two halves loses their bits: another K order, a split, a rotation or a
// tree shows far above BF16's rounding, as FPRev's probes make an order show. The golden
// distributions are built for the family's per-step fold and can round alike under a flat
// reordering; this needle is the sweep's order witness for any kernel.
golden::CaseInputs pair_order_inputs(const golden::Case& shape, std::uint64_t seed);

// The default needles: fold_ties, cancelling_steps, wide_exponents, nan_codes.
const std::vector<golden::Distribution>& default_needles();

// The call of a failure as it ran, kept where the caller replays it itself (the Python sweep):
// the case (shape, pitches; `without` the body or, in a callable sweep, the tier), A as called
// ([m][a_row_stride] at the view offset), W, S, and for the contract verdict the row it was held to.
struct FailingCall {
  golden::Case c;
  golden::CaseInputs in;
  ViewOffsets offsets;
  std::vector<std::uint16_t> want;
};

// The first failure of a verdict, and what replays it.
struct InvarianceFailure {
  std::uint32_t m = 0;
  std::string position;  // "front", "back", "seeded", "reversed", "interleaved", "pitch ... offsets ...", ...
  std::uint32_t row = 0, column = 0;
  std::uint16_t got = 0, want = 0;
  std::string against;      // what `want` is: "its M = 1 bytes", "body X of entry Y", "the emulator under ..."
  std::string what;         // the call: entry, body, without, needle
  std::string error;        // a launch that did not give bytes (refused, HANG, FAULT): no comparison
  std::string replay_kind;  // "case" (a case line: w8a16check repro) or "bundle" (run-operands)
  std::string replay;       // the case line, or the bundle's path and the command
  std::shared_ptr<const FailingCall> call;  // set in callable sweeps (CallableInvarianceOptions)
};

struct InvarianceVerdict {
  InvarianceKind kind = InvarianceKind::batch;
  bool asked = true;
  std::uint64_t comparisons = 0;          // rows (run-to-run: whole outputs) compared
  std::uint64_t failures = 0;             // comparisons that differed or launches that failed
  std::vector<std::uint32_t> failing_ms;  // in order, each once
  bool has_failure = false;
  InvarianceFailure first;
  // Tier: the M values at which this entry point's row met another body or entry point. None means
  // the entry point has one body and no twin in the sweep at every M: nothing to compare, the
  // verdict does not apply (n/a), which is not a failure to compare.
  std::uint64_t alternatives = 0;
  bool applicable() const { return kind != InvarianceKind::tier || alternatives > 0 || failures > 0; }
  // Not asked or not applicable: no verdict. Asked: PASS when something was compared and nothing differed.
  bool pass() const { return !asked || !applicable() || (comparisons > 0 && failures == 0); }
};

struct EntryInvariance {
  golden::EntryPoint entry = golden::EntryPoint::gemm_pipelined;
  std::string subject;  // a callable sweep's name for what it holds ("fn"); "" for an entry point
  DispatchMap map;
  std::vector<std::uint32_t> ms;             // the M values swept (capped at the entry's row limit)
  std::vector<std::uint32_t> edges_crossed;  // edges inside the swept M values (both sides swept)
  InvarianceVerdict verdicts[4];
};
struct ShapeInvariance {
  InvarianceShape shape;
  std::vector<EntryInvariance> entries;
};
struct InvarianceReport {
  std::vector<ShapeInvariance> shapes;
  std::uint64_t launches = 0;
  // How run-to-run repeated each call: alone only, or also beside a load on a second stream.
  std::string run_to_run_how;
  bool hung = false;  // a launch passed its deadline: the sweep stopped there
  std::string hang;
  bool pass() const;
  // The verdict of one kind over every shape and entry point.
  bool pass(InvarianceKind k) const;
};

// The sweep. `progress` (when given) hears each (shape, needle, M) before it runs.
InvarianceReport run_invariance(InvarianceLauncher& launcher, const InvarianceOptions& options,
                                const device::KernelRegistry& registry, const device::DeviceLimits& limits,
                                const std::function<void(const std::string&)>& progress = {});

// The text report: per shape and entry point the bodies per M range, the edges crossed, one line
// per verdict; then one line per verdict over everything.
std::string invariance_text(const InvarianceReport& r, const InvarianceOptions& options);

// ---- a kernel no module holds ------------------------------------------------------------------
// The same sweep over a callable (Python's `w8a16check.invariance`): one subject of one part (the
// tensor-core contract or the GEMV's) and its tiers, launched through `run` with `which` 0 for the
// subject and i for the i-th tier. C comes back as launch_case gives it ([m + guard rows]
// [c_row_stride], the sentinel outside [M, N]). The needles, filler rows, positions, repeats and
// verdicts are the module sweep's; the tier verdict holds every call's C of each tier to the
// plurality of the subject and its tiers at that M; the contract verdict holds the needle's M = 1
// row to the emulator under `sweep.contract`, or to `reference` where one is given.
using CallableLaunch = std::function<bool(const golden::Case& c, const golden::CaseInputs& in,
                                          const ViewOffsets& offsets, std::size_t which,
                                          std::vector<std::uint16_t>* c_bits, std::string* why)>;
using ReferenceRow = std::function<bool(const golden::Case& c, const golden::CaseInputs& in,
                                        std::vector<std::uint16_t>* row, std::string* why)>;
struct CallableInvarianceOptions {
  bool gemv = false;
  std::uint32_t n = 0, k = 0;
  std::vector<std::uint32_t> ms;  // empty: 1 .. kDefaultMBound
  std::string label = "fn";
  std::vector<std::string> tiers;  // the tiers' names, in `which` order from 1
  ReferenceRow reference;          // set: the contract verdict's row instead of the emulator's
  // needles, seed, kinds, positions, repeats, contract, threads; its shapes, entries, ms and
  // save_dir are the callable sweep's own.
  InvarianceOptions sweep;
};
// The entry point a callable's cases are named by: strided (pitches and views apply), of its part.
golden::EntryPoint callable_entry(bool gemv);
// "" when the options are a sweep (a shape of the family, K a multiple of 128, M values >= 1,
// names unique and not empty) within the default work limits; else why not, before anything runs.
std::string callable_invariance_problem(const CallableInvarianceOptions& options);
InvarianceReport run_invariance_callable(const CallableLaunch& run, const CallableInvarianceOptions& options,
                                         const std::function<void(const std::string&)>& progress = {});

}  // namespace w8a16::props
