// SPDX-License-Identifier: MIT OR Apache-2.0
// One row per kernel body (bodies.def) with its functions: what the registry, the dispatch lookups,
// the plan's sizing, the simulation's checks, the coverage cells, the GPU cases' `without=` and the
// body listings of the CLI and the audit read, so that a body is described once.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "w8a16/device/kernels.hpp"
#include "w8a16/device/plan.hpp"

namespace w8a16::device {

// In the order plan_launch tries them: the tier every tensor-core entry point tries first (the
// Hopper tier), the one the twins try first (the row-tile kernel), then the entry point's own body.
enum class Tier : std::uint8_t { first, twin_first, own };
const char* tier_name(Tier t);  // "first", "twin_first", "own"

constexpr std::uint32_t kernel_bit(KernelId id) { return 1u << static_cast<unsigned>(id); }
constexpr std::uint32_t entry_bit(Entry e) { return 1u << static_cast<unsigned>(e); }

// The shape a body is planned for; sms sizes the persistent tier's grid.
struct BodyShape {
  Entry entry = Entry::gemm_pipelined;
  std::uint32_t m = 0, n = 0, k = 0, sms = 1;
};
// What a body's plan function gives for a shape (geometry.hpp): the symbol that runs it there, its
// tile map, grid, threads, dynamic shared memory and device workspace.
struct BodyLaunch {
  KernelId kernel = KernelId::gemm_pipelined;
  TileMap tile;
  Dim3 grid;
  std::uint32_t threads = kThreadsPerCta;
  std::uint32_t smem = 0;
  std::uint64_t workspace = 0;
};
// One configuration of a body: a coverage cell for every entry point that reaches it. `m` is a row
// count it runs at (which symbol runs it, and which twin an entry point reaches it through);
// `shapes` are aimed at it, cheapest first; the plan decides which of them land there.
struct BodyShapeMNK {
  std::uint32_t m, n, k;
};
struct BodyConfig {
  std::string name;
  std::uint32_t m = 1;
  std::vector<BodyShapeMNK> shapes;
};
// Where a body walks a long K range. `stride_steps` is the longest period, in 128-K steps, with
// which it goes through K: a lane's or a warp's stride (the packed NaN table's scan: 32 lanes each
// reading every 32nd tile of a CTA's range), a pass of its staging threads, a ring of stages, a
// round of steps split among warps. A range of more steps is read in several passes, so a special
// at its first step is in the first pass and one at its last step in the last: where the coverage
// plan puts its lone specials (properties/coverage.hpp), at `shapes` (cheapest first, each of more
// than stride_steps steps, the fewest rows and columns that reach the body there; longer where
// that costs little). Each body's function says which stride it is.
struct LongRange {
  std::uint32_t stride_steps = 0;
  std::vector<BodyShapeMNK> shapes;
};

// A body's functions, defined in device/src/bodies.cpp in the namespace bodies::<id>:
//   plan    its launch for a shape (called once the dispatch chose it; also for its tile map and
//           shared memory alone)
//   takes   for a tier that goes first (Tier::first, twin_first): the handle it runs on if it takes
//           the shape on this registry, else the zero handle; never called for Tier::own
//   cells   its configurations, in the order the coverage table lists them
//   config  the configuration a plan of it runs (one of cells' names)
//   long_range  its longest stride over K and the shapes at which it reads more steps than that
struct BodyInfo {
  Body body;
  const char* name;
  Tier tier;
  Contract contract;
  std::uint32_t kernels;     // kernel_bit of every symbol that runs it
  std::uint32_t entries;     // entry_bit of every entry point that can reach it
  const char* order_probes;  // space-separated PROBE_PLAN names (reports/python/w8a16check/order.py)
  BodyLaunch (*plan)(const BodyShape&);
  KernelHandle (*takes)(const BodyShape&, const KernelRegistry&);
  const std::vector<BodyConfig>& (*cells)();
  std::string (*config)(const Plan&);
  const LongRange& (*long_range)();
};

#define W8A16_BODY(id, tier, contract, kernels, entries, probes)          \
  namespace bodies::id {                                                  \
  BodyLaunch plan(const BodyShape& s);                                    \
  KernelHandle takes(const BodyShape& s, const KernelRegistry& registry); \
  const std::vector<BodyConfig>& cells();                                 \
  std::string config(const Plan& p);                                      \
  const LongRange& long_range();                                          \
  }
#include "w8a16/device/bodies.def"

namespace detail {
#define K(id) kernel_bit(KernelId::id)
#define E(id) entry_bit(Entry::id)
#define E_TWIN32 (E(gemm_pipelined_m32) | E(gemm_pipelined_m32_strided) | E(gemm_pipelined_by_m))
#define E_TWIN64 (E(gemm_pipelined_m64) | E(gemm_pipelined_m64_strided) | E(gemm_pipelined_by_m))
#define E_TC (E_TWIN32 | E_TWIN64 | E(gemm_pipelined))
inline constexpr BodyInfo kBodies[] = {
#define W8A16_BODY(id, tier, contract, kernels, entries, probes) \
  {Body::id,                                                     \
   #id,                                                          \
   Tier::tier,                                                   \
   Contract::contract,                                           \
   kernels,                                                      \
   entries,                                                      \
   probes,                                                       \
   &bodies::id::plan,                                            \
   &bodies::id::takes,                                           \
   &bodies::id::cells,                                           \
   &bodies::id::config,                                          \
   &bodies::id::long_range},
#include "w8a16/device/bodies.def"
};
#undef K
#undef E
#undef E_TWIN32
#undef E_TWIN64
#undef E_TC
}  // namespace detail

// The row of a body; nullptr for a value that is no body.
constexpr const BodyInfo* find_body(Body b) {
  return static_cast<std::size_t>(b) < kBodyCount ? &detail::kBodies[static_cast<std::size_t>(b)] : nullptr;
}
constexpr const BodyInfo& body_info(Body b) { return detail::kBodies[static_cast<std::size_t>(b)]; }
// The symbols of every body of a tier (Tier::first: the Hopper tier, what a module without an
// sm_90a cubin lacks and what `--without-hopper-tier` takes away).
constexpr std::uint32_t tier_kernels(Tier t) {
  std::uint32_t bits = 0;
  for (const BodyInfo& row : detail::kBodies)
    if (row.tier == t) bits |= row.kernels;
  return bits;
}
// A body's launch at a shape through the first entry point that reaches it, dispatch aside: its
// tile map, grid, threads and shared memory (what a bench that times one body plans with).
BodyLaunch body_launch(Body b, std::uint32_t m, std::uint32_t n, std::uint32_t k, std::uint32_t sms);
// The symbols to take away so that the dispatch goes past every tier tried before a body's own
// (for a body of the first tier: its siblings there), the least first; element 0 takes none.
std::vector<std::uint32_t> kernels_before(Body b);

}  // namespace w8a16::device
