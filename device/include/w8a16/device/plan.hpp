// SPDX-License-Identifier: MIT OR Apache-2.0
// Entry points, dispatch predicates, argument validation and launch plans: a pure function from
// (entry point, arguments, kernel registry, device limits) to a Plan or an error. Backends only
// execute plans. The rules are the seed's (docs/KERNEL_ABI.md 2 and 6).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

#include "w8a16/device/geometry.hpp"
#include "w8a16/device/kernels.hpp"
#include "w8a16/device/limits.hpp"
#include "w8a16/device/status.hpp"

namespace w8a16::device {

// A device address (a host address on the simulation and recording backends).
using DevPtr = std::uint64_t;
// A CUstream on the CUDA backend; 0 is the default stream.
using Stream = std::uint64_t;

enum class Entry : std::uint8_t {
  gemm_pipelined,              // the 128-row tile; contiguous (pitches k and n)
  gemm_pipelined_m32,          // contiguous launch of the 32-row twin (seed line 173)
  gemm_pipelined_m32_strided,  // seed line 91
  gemm_pipelined_m64,          // seed line 283
  gemm_pipelined_m64_strided,  // seed line 222
  gemm_pipelined_by_m,         // seed line 318: m32, else m64, else the 128-row tile
  gemv_batch4_strided,         // scalar GEMV, M <= 4
  gemv_batch16_strided,        // scalar GEMV, M <= 16
  gemm_packed_strided,         // W in the packed layout (NUMERICS.md 2.3): the Hopper tier's packed symbols
};
const char* entry_name(Entry e);  // "gemm_pipelined_m32_strided", ...
// Every entry point, in enumerator order: what tools that list them all (the Python bindings, a
// replay that spans every entry) iterate.
inline constexpr Entry kAllEntries[] = {
    Entry::gemm_pipelined,      Entry::gemm_pipelined_m32,         Entry::gemm_pipelined_m32_strided,
    Entry::gemm_pipelined_m64,  Entry::gemm_pipelined_m64_strided, Entry::gemm_pipelined_by_m,
    Entry::gemv_batch4_strided, Entry::gemv_batch16_strided,       Entry::gemm_packed_strided};
static_assert(static_cast<std::size_t>(Entry::gemm_packed_strided) + 1 == std::size(kAllEntries),
              "kAllEntries lists every entry point");

// The arguments of every entry point, in the seed's order. Contiguous entry points ignore the
// given pitches and use a_row_stride = k, c_row_stride = n (seed lines 185-198).
struct Args {
  DevPtr input = 0;        // A: BF16 [m][a_row_stride], the first k of each row read
  DevPtr weight = 0;       // W: E4M3 [n][k] (gemm_packed_strided: packed, packed_weight_bytes(n, k))
  DevPtr block_scale = 0;  // S: FP32 [ceil(n/128)][k/128]
  DevPtr output = 0;       // C: BF16 [m][c_row_stride], the first n of each row written
  std::uint32_t m = 0, n = 0, k = 0;
  std::uint32_t a_row_stride = 0, c_row_stride = 0;  // in elements
  Stream stream = 0;
};

// One call: the entry point, the handles its caller passes (as in the seed, the caller resolves
// them), and the arguments. `kernel` is the entry's own kernel; by_m reads `kernel` as the
// 128-row tile's handle (seed full_kernel) plus m32_kernel and m64_kernel. The row-tile kernel is
// resolved from the registry, as the seed's w8a16_tc_rows_launch does for itself.
struct Call {
  Entry entry = Entry::gemm_pipelined;
  KernelHandle kernel;
  KernelHandle m32_kernel;  // by_m only
  KernelHandle m64_kernel;  // by_m only
  Args args;
};

// ---- dispatch predicates (pure) ---------------------------------------------------------
// seed line 68: the 32-row twin takes 1..=32 rows when its handle is nonzero and K is a positive
// multiple of 128.
constexpr bool prefers_m32(std::uint32_t m, std::uint32_t k, KernelHandle m32_kernel) {
  return m >= 1 && m <= kM32TileRows && k >= kKBlock && k % kKBlock == 0 && m32_kernel.value != 0;
}
// seed line 210: 33..=64 rows take the 64-row twin under the same conditions.
constexpr bool prefers_m64(std::uint32_t m, std::uint32_t k, KernelHandle m64_kernel) {
  return m >= kM32TileRows + 1 && m <= kM64TileRows && k >= kKBlock && k % kKBlock == 0 && m64_kernel.value != 0;
}
// Which shapes the row-tile kernel takes when a twin tries it first (it declines every other
// shape, and a zero handle for the kernel symbol its rows need, tc_rows_kernel(m), declines it).
// The rule: 1..16 rows, every shape but K <= 5120 with fewer than 32 strips of 128 columns (where
// the skinny body keeps more SMs busy); 17..32 rows, every shape; 33..64 rows, at least 32 strips.
// The measurements behind each edge: device/kernels/PERF_NOTES.md, "Dispatch rules and the
// measurements behind them".
constexpr bool tc_rows_takes(std::uint32_t m, std::uint32_t n, std::uint32_t k) {
  const std::uint32_t wide_ctas = tc_rows_wide_strips(n);
  if (m >= 1 && m <= kTcRowsNarrowMaxRows) return !(k <= kSkinnyMaxK && wide_ctas < 32);
  if (m > kTcRowsNarrowMaxRows && m <= kTcRowsSmallMaxRows) return true;
  return m > kTcRowsSmallMaxRows && m <= kTcRowsMaxRows && wide_ctas >= 32;
}
// Whether the Hopper tier takes a shape when an entry point tries it first (every tensor-core entry
// does, before its own rules), and with which of its symbols (geometry.hpp); `present` says which
// the module has (all zero, as in every module without an sm_90a cubin: it declines everything).
// The rule: up to 16 rows only the two-CTA symbol, and only with two CTAs' worth of 128-column
// units per SM; 17..32 rows, wherever the 128-column units fill more than half the SMs; from 33
// rows every shape. Of its symbols, the 128-column units where they fill more than half the SMs,
// else the 64-column units (twice as many CTAs). The measurements behind each edge:
// device/kernels/PERF_NOTES.md, "The table", and docs/JOURNAL.md, "The Hopper tier: what was measured".
struct WgChoice {
  bool takes = false;
  WgVariant variant = WgVariant::k64;
};
struct WgPresent {
  bool k64 = false, n128 = false, n128_x2 = false;
};
constexpr WgChoice wgmma_choice(std::uint32_t m, std::uint32_t n, std::uint32_t k, std::uint32_t sms,
                                WgPresent present) {
  if (m < 1 || n < 1 || k < kKBlock || k % kKBlock != 0) return {};
  const std::uint64_t units128 = wgmma_units(m, n, WgVariant::n128);
  if (m <= kWgX2MaxRows) {
    if (present.n128_x2 && units128 >= 2ull * sms) return {true, WgVariant::n128_x2};
    return {};
  }
  if (m <= 32 && 2 * units128 <= sms) return {};
  const bool wide = 2 * units128 > sms;
  if (present.n128 && (wide || !present.k64)) return {true, WgVariant::n128};
  if (present.k64) return {true, WgVariant::k64};
  return {};
}
// The kernel symbol that runs the row-tile body at m rows (geometry.hpp: split by registers).
constexpr KernelId tc_rows_kernel(std::uint32_t m) {
  return m > kTcRowsSmallMaxRows ? KernelId::tc_rows_m64 : KernelId::tc_rows;
}

// ---- plans ------------------------------------------------------------------------------
struct Dim3 {
  std::uint32_t x = 1, y = 1, z = 1;
  friend bool operator==(Dim3 a, Dim3 b) { return a.x == b.x && a.y == b.y && a.z == b.z; }
};

// Which outputs a CTA owns (geometry.hpp documents each kernel's map):
//   tile:          CTA (x, y) owns rows [row_origin + rows*y, +rows), cols [cols*x, +cols)
//   column_strip:  CTA x owns cols [cols*x, +cols) of every row [row_origin, m); grid.y must be 1
//   stream_units:  units of `rows` rows x `cols` columns (row tiles of one column unit adjacent),
//                  their 128-K steps cut into one equal range per CTA (geometry.hpp,
//                  wgmma_cta_pieces); the CTA that folds a unit's last step writes it
// All clipped to the kernel's m and n parameters, as the kernels clip. row_origin is 0 in every
// real map; it exists so tests can plant an off-by-one map and watch the simulation catch it.
enum class TileKind : std::uint8_t { tile, column_strip, stream_units };
// The body a kernel runs; each has its own tile map, shared memory need and row limits. One
// enumerator per W8A16_BODY row of bodies.def, in its order; bodies.hpp holds the rest of each row:
//   gemm128_tile   w8a16_gemm_pipelined: 128 x 64 tiles
//   m32_tile       w8a16_gemm_pipelined_m32: 32 x 32 tiles
//   m32_skinny     w8a16_gemm_pipelined_m32's skinny body: 8-column strips, M <= 16, K <= 5120
//   m64_tile       w8a16_gemm_pipelined_m64: 64 x 32 tiles
//   tc_rows_strip  w8a16_tc_rows(_m64): 16-, 32-, 64- or 128-column strips (geometry.hpp tc_rows_cols), M <= 64
//   gemv_strip     w8a16_gemv_batch{4,16}_strided: 8-column strips (one warp per column)
//   wgmma_units    w8a16_wgmma_rows: persistent CTAs over 64-column units (geometry.hpp), any M
//   wgmma_units128 w8a16_wgmma_rows_n128: the same over 128-column units
//   wgmma_units128_x2  w8a16_wgmma_rows_n128_x2: 128-column units, two CTAs per SM, M <= 16
//   wgmma_packed128, wgmma_packed128_x2  their twins over the packed W (gemm_packed_strided's bodies)
//   tc_rows_packed w8a16_tc_rows_packed: the row-tile kernel's strips over the packed W, M <= 16
enum class Body : std::uint8_t {
#define W8A16_BODY(id, tier, contract, kernels, entries, probes) id,
#include "w8a16/device/bodies.def"
};
// The columns of a kernel row of bodies.def that the predicates over bodies read: whether it is a
// symbol of the Hopper tier (params tma), its unit geometry (variant; k64 for a row of none, which
// no caller reads) and whether it reads W in the packed layout (NUMERICS.md 2.3).
namespace detail {
struct KernelColumns {
  bool wgmma;
  WgVariant variant;
  bool packed;
};
#define W8A16_COLUMN_tma true
#define W8A16_COLUMN_plain false
#define W8A16_COLUMN_none WgVariant::k64
#define W8A16_COLUMN_k64 WgVariant::k64
#define W8A16_COLUMN_n128 WgVariant::n128
#define W8A16_COLUMN_n128_x2 WgVariant::n128_x2
#define W8A16_COLUMN_row_major false
#define W8A16_COLUMN_packed true
inline constexpr KernelColumns kKernelColumns[] = {
#define W8A16_KERNEL(id, file, arch, params, variant, layout) \
  {W8A16_COLUMN_##params, W8A16_COLUMN_##variant, W8A16_COLUMN_##layout},
#include "w8a16/device/bodies.def"
};
#undef W8A16_COLUMN_tma
#undef W8A16_COLUMN_plain
#undef W8A16_COLUMN_none
#undef W8A16_COLUMN_k64
#undef W8A16_COLUMN_n128
#undef W8A16_COLUMN_n128_x2
#undef W8A16_COLUMN_row_major
#undef W8A16_COLUMN_packed
// Each body's first symbol (the lowest KernelId of its kernels column): the row its predicates read.
#define K(id) (1u << static_cast<unsigned>(KernelId::id))
inline constexpr KernelId kBodyKernel[] = {
#define W8A16_BODY(id, tier, contract, kernels, entries, probes) static_cast<KernelId>(__builtin_ctz(kernels)),
#include "w8a16/device/bodies.def"
};
#undef K
constexpr const KernelColumns& body_columns(Body b) {
  return kKernelColumns[static_cast<std::size_t>(kBodyKernel[static_cast<std::size_t>(b)])];
}
}  // namespace detail
// The symbols that read W in the packed layout (the layout column), as kernel_bit()s: the only ones
// gemm_packed_strided may run (it picks one by shape, packed_body).
constexpr std::uint32_t packed_layout_kernels() {
  std::uint32_t bits = 0;
  for (std::size_t i = 0; i < sizeof detail::kKernelColumns / sizeof detail::kKernelColumns[0]; ++i)
    if (detail::kKernelColumns[i].packed) bits |= 1u << i;
  return bits;
}
// The Hopper tier's bodies, and the geometry variant of each.
constexpr bool is_wgmma_body(Body b) { return detail::body_columns(b).wgmma; }
constexpr WgVariant wgmma_variant(Body b) { return detail::body_columns(b).variant; }
// The bodies that read W in the packed layout (NUMERICS.md 2.3).
constexpr bool reads_packed_weight(Body b) { return detail::body_columns(b).packed; }
static_assert(is_wgmma_body(Body::wgmma_packed128_x2) && !is_wgmma_body(Body::tc_rows_packed) &&
                  wgmma_variant(Body::wgmma_units128_x2) == WgVariant::n128_x2 &&
                  reads_packed_weight(Body::tc_rows_packed) && !reads_packed_weight(Body::wgmma_units128),
              "the predicates over bodies read bodies.def's kernel columns");
// gemm_packed_strided's body at (m, n) on `sms` SMs; only these three read its W, so it has no other
// tier to fall back to. From 17 rows the one-CTA Hopper symbol. Up to 16 rows the two-CTA one
// where its 128-column units fill the SMs: at 1..8 rows two CTAs on each (units >= 2 sms, as the
// dispatched entry's rule, wgmma_choice), at 9..16 rows more than half of one each (2 units >
// sms); elsewhere the row-tile kernel's packed strips, which split N 4 or 8 times finer. Measured
// on the H200 (device/kernels/PERF_NOTES.md, "Dispatch rules"): the strips 1.09-2.54x the two-CTA
// symbol at 1..8 rows on (10240, 5120), (12288, 2048), (5120, 25600), (2048, 4096) but 0.95x at 8
// rows of (12288, 2048); the two-CTA symbol ahead at 16 rows on the first two.
constexpr Body packed_body(std::uint32_t m, std::uint32_t n, std::uint32_t sms) {
  if (m > kWgX2MaxRows) return Body::wgmma_packed128;
  const std::uint64_t units = wgmma_col_units(n, WgVariant::n128_x2);
  const bool x2 = m <= 8 ? units >= 2ull * sms : 2 * units > sms;
  return x2 ? Body::wgmma_packed128_x2 : Body::tc_rows_packed;
}
// The bodies gemm_packed_strided may run at (m, n): packed_body's first, then the other that the
// rule weighs against it (up to 16 rows the two-CTA symbol and the strips each take every shape; the
// one-CTA symbol runs from 17 rows alone). The plan runs the first whose symbol the registry
// resolves: a module lacks none of them (module_abi.cpp requires all three), so the second runs only
// where a registry takes the first away, as the bench does to time what the rule weighed.
struct PackedBodies {
  Body body[2] = {};
  int count = 0;
};
constexpr PackedBodies packed_bodies(std::uint32_t m, std::uint32_t n, std::uint32_t sms) {
  const Body first = packed_body(m, n, sms);
  if (first == Body::wgmma_packed128) return {{first}, 1};
  return {{first, first == Body::tc_rows_packed ? Body::wgmma_packed128_x2 : Body::tc_rows_packed}, 2};
}
// Every body, in enumerator order: what tools that list the tiers (the Python audit through
// _core.bodies) iterate.
inline constexpr std::size_t kBodyCount = 0
#define W8A16_BODY(id, tier, contract, kernels, entries, probes) +1
#include "w8a16/device/bodies.def"
    ;
inline constexpr std::array<Body, kBodyCount> kAllBodies = {
#define W8A16_BODY(id, tier, contract, kernels, entries, probes) Body::id,
#include "w8a16/device/bodies.def"
};
const char* body_name(Body b);  // "unknown" for a value that is no body

enum class Contract : std::uint8_t { canonical, gemv };  // NUMERICS.md 2.1 / 2.2
// The contract a body's output bytes must meet: the GEMV order for the scalar GEMV strip, the
// canonical fold for every tensor-core body (NUMERICS.md 2: every tensor-core tier).
Contract body_contract(Body b);

struct TileMap {
  TileKind kind = TileKind::tile;
  std::uint32_t rows = 0;  // tile only
  std::uint32_t cols = 0;
  std::uint32_t row_origin = 0;
};
// The documented map of a body (geometry.hpp); (m, n) matter for the row-tile kernel's strip width.
TileMap documented_tile_map(Body b, std::uint32_t m, std::uint32_t n);
// Dynamic shared memory a body declares it needs (geometry.hpp); k matters for the skinny body,
// (m, n) for the row-tile kernel, m for the Hopper tier.
std::uint32_t body_smem_bytes(Body b, std::uint32_t m, std::uint32_t n, std::uint32_t k);
// Threads per CTA of a body: 256, or 384 for the Hopper tier's three warpgroups.
std::uint32_t body_threads(Body b);

// The parameters passed to the kernel, in its parameter order.
struct KernelParams {
  DevPtr input = 0, weight = 0, block_scale = 0, output = 0;
  std::uint32_t m = 0, n = 0, k = 0, a_row_stride = 0, c_row_stride = 0;
};

// The output region the validated call may write: rows [0, m), columns [0, n) of C with pitch
// c_row_stride. The simulation checks every write of a plan against it.
struct OutputExtent {
  DevPtr output = 0;
  std::uint32_t m = 0, n = 0, c_row_stride = 0;
};

struct Plan {
  Entry entry = Entry::gemm_pipelined;
  KernelId kernel = KernelId::gemm_pipelined;
  const char* kernel_name = "";
  KernelHandle handle;
  Body body = Body::gemm128_tile;
  TileMap tile;
  Contract contract = Contract::canonical;
  Dim3 grid, block;
  std::uint32_t dynamic_smem = 0;
  // Bytes of device workspace the launch needs (the backend provides it, flags zeroed; 0: none).
  std::uint64_t workspace_bytes = 0;
  KernelParams params;
  OutputExtent extent;
  Stream stream = 0;
};

struct Planned {
  Status status;
  Plan plan;  // meaningful only when status.ok()
  bool ok() const { return status.ok(); }
};

// N rows of W sharing one row of block scales (NUMERICS.md 2: S is [ceil(N/128)][K/128]).
inline constexpr std::uint32_t kScaleRowsPerBlock = 128;

// The kernel whose handle an entry point is called with (the seed's `kernel` argument; by_m's
// fallback is the 128-row tile). The strided twins may still launch tc_rows instead.
KernelId entry_own_kernel(Entry e);

// Contiguous entry points (seed lines 170-198): their pitches are k and n whatever Args holds.
bool entry_is_contiguous(Entry e);
// The arguments the entry really uses: for a contiguous entry, a_row_stride = k, c_row_stride = n.
Args effective_args(Entry e, Args a);

// The seed's checks and the rest (README.md, "Validation"), without looking at kernels or limits.
// `entry` names the entry in messages and selects the GEMV row limits.
Status validate_args(Entry entry, const Args& args);

// Validate, dispatch and size the launch. Never touches memory behind the pointers.
Planned plan_launch(const Call& call, const KernelRegistry& registry, const DeviceLimits& limits);

// The bound on 32-bit element offsets: every extent product a kernel forms (m * a_row_stride,
// n * k, m * c_row_stride, the scale count) must be at most this, so that row * pitch + col never
// wraps in the kernels' uint32_t index arithmetic.
inline constexpr std::uint64_t kMaxElementOffsets = 0xFFFFFFFFull;

}  // namespace w8a16::device
