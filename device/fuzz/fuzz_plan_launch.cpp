// SPDX-License-Identifier: MIT OR Apache-2.0
// libFuzzer target for the launch layer's validate_args and plan_launch over arbitrary calls:
// never a crash, every refusal the first rule the call really breaks, every plan sound.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "w8a16/device/api.hpp"
#include "w8a16/device/bodies.hpp"
#include "w8a16/device/recording_backend.hpp"

namespace {

using namespace w8a16::device;

[[noreturn]] void finding(const std::string& what, const Call& c, const Status& st) {
  const Args a = effective_args(c.entry, c.args);  // what the rules see (contiguous: lda = k, ldc = n)
  std::fprintf(stderr,
               "fuzz_plan_launch: invariant broken: %s\n  entry=%s m=%u n=%u k=%u lda=%u ldc=%u A=0x%llx W=0x%llx "
               "S=0x%llx C=0x%llx\n  status=%s: %s\n",
               what.c_str(), entry_name(c.entry), a.m, a.n, a.k, a.a_row_stride, a.c_row_stride,
               static_cast<unsigned long long>(a.input), static_cast<unsigned long long>(a.weight),
               static_cast<unsigned long long>(a.block_scale), static_cast<unsigned long long>(a.output),
               errc_name(st.code), st.message.c_str());
  std::abort();
}

// Sizes that sit on every rule's edge, so the fuzzer reaches them without guessing 32-bit values.
std::uint32_t pick_u32(FuzzedDataProvider& in) {
  static constexpr std::uint32_t kEdges[] = {
      0,   1,   4,   5,   8,    15,   16,    17,    31,      32,      33,       63,       64,       65,         127,
      128, 129, 136, 256, 5120, 5248, 65535, 65536, 2097120, 2097121, 1u << 24, 1u << 30, 1u << 31, 0xFFFFFFFFu};
  switch (in.ConsumeIntegralInRange<int>(0, 3)) {
    case 0: return in.PickValueInArray(kEdges);
    case 1: return in.ConsumeIntegralInRange<std::uint32_t>(0, 300);
    case 2: return 128 * in.ConsumeIntegralInRange<std::uint32_t>(0, 600);
    default: return in.ConsumeIntegral<std::uint32_t>();
  }
}

// Fake addresses below 2^48 (the virtual address space CUDA and x86-64 hand out): the validator
// computes byte spans in 64 bits, which cannot wrap there (a span is at most ~2^34 bytes).
DevPtr pick_ptr(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange<int>(0, 3)) {
    case 0: return 0;
    case 1: return in.ConsumeIntegralInRange<DevPtr>(0, 1u << 20);                 // small: operands collide often
    case 2: return DevPtr{in.ConsumeIntegralInRange<std::uint32_t>(1, 64)} << 36;  // far apart, aligned
    default: return in.ConsumeIntegralInRange<DevPtr>(0, (DevPtr{1} << 48) - 1);
  }
}

// W's used bytes: [n][k], or the packed layout's tiles of 128 x 128 and one NaN table byte each
// (NUMERICS.md 2.3).
unsigned __int128 w_bytes(Entry e, std::uint32_t n, std::uint32_t k) {
  if (e == Entry::gemm_packed_strided) return (unsigned __int128)((n + 127ull) / 128) * (k / 128) * 16385;
  return (unsigned __int128)n * k;
}

// Independent statement of the validation rules (device/README.md, "Reading a validation error"),
// in the documented order: the first rule the effective arguments break, or ok.
Errc first_broken_rule(Entry e, const Args& a) {
  if (a.m < 1) return Errc::m_zero;
  if (a.k == 0 || a.k % 128 != 0) return Errc::k_not_block_multiple;
  if (a.a_row_stride < a.k) return Errc::a_pitch_short;
  if (a.c_row_stride < a.n) return Errc::c_pitch_short;
  if (a.a_row_stride % 8 != 0) return Errc::a_pitch_misaligned;
  if (a.n == 0) return Errc::n_zero;
  if ((e == Entry::gemv_batch4_strided && a.m > 4) || (e == Entry::gemv_batch16_strided && a.m > 16))
    return Errc::gemv_too_many_rows;
  if (!a.input || !a.weight || !a.block_scale || !a.output) return Errc::null_pointer;
  if (a.input % 16 || a.weight % 16 || a.block_scale % 4 || a.output % 2) return Errc::misaligned_pointer;
  const unsigned __int128 lim = 0xFFFFFFFFu;
  const unsigned __int128 scales = (unsigned __int128)((a.n + 127ull) / 128) * (a.k / 128);
  if ((unsigned __int128)a.m * a.a_row_stride > lim || (unsigned __int128)a.n * a.k > lim ||
      (unsigned __int128)a.m * a.c_row_stride > lim || scales > lim)
    return Errc::index_overflow;
  // Byte spans in 128-bit arithmetic: [lo, hi) of what each operand's used extent covers.
  using U = unsigned __int128;
  const U c_lo = a.output, c_hi = c_lo + 2 * ((U)(a.m - 1) * a.c_row_stride + a.n);
  const U spans[3][2] = {{a.input, a.input + 2 * ((U)(a.m - 1) * a.a_row_stride + a.k)},
                         {a.weight, a.weight + w_bytes(e, a.n, a.k)},
                         {a.block_scale, a.block_scale + 4 * scales}};
  for (const auto& s : spans)
    if (c_lo < s[1] && s[0] < c_hi) return Errc::output_overlaps_input;
  return Errc::ok;
}

// What a refusal's message must contain besides "w8a16_<entry>: ": the argument it names.
const char* named_argument(Errc c) {
  switch (c) {
    case Errc::m_zero: return "m=0";
    case Errc::k_not_block_multiple: return "k=";
    case Errc::a_pitch_short:
    case Errc::a_pitch_misaligned: return "a_row_stride=";
    case Errc::c_pitch_short: return "c_row_stride=";
    case Errc::n_zero: return "n=0";
    case Errc::gemv_too_many_rows: return "m=";
    case Errc::null_pointer: return "=null";
    case Errc::misaligned_pointer: return "-byte aligned";
    case Errc::index_overflow: return "below 2^32";
    case Errc::output_overlaps_input: return "output=0x";
    case Errc::kernel_missing: return "zero handle";
    case Errc::grid_too_large: return "grid.";
    case Errc::smem_too_large: return "dynamic_smem=";
    default: return nullptr;  // ok, backend_error, simulation_finding: never the planner's
  }
}

std::uint64_t div_ceil(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

// The packed entry's body: the first of packed_bodies whose symbol the registry holds
// (gemm128_tile, which it never runs, where none is).
Body packed_choice(const Args& a, const DeviceLimits& lim, const StaticRegistry& reg) {
  const PackedBodies c = packed_bodies(a.m, a.n, lim.multiprocessors);
  for (int i = 0; i < c.count; ++i)
    if (reg.resolve(body_launch(c.body[i], a.m, a.n, a.k, lim.multiprocessors).kernel)) return c.body[i];
  return Body::gemm128_tile;
}

// Every accepted plan: sound geometry, within the limits, the body its entry may dispatch to.
void check_plan(const Call& call, const Args& a, const Plan& p, const StaticRegistry& reg, const DeviceLimits& lim,
                const Status& st) {
  auto need = [&](bool ok, const char* what) {
    if (!ok) finding(what, call, st);
  };
  need(p.entry == call.entry && p.handle.value != 0, "plan for another entry, or a zero handle");
  need(p.block == (Dim3{body_threads(p.body), 1, 1}), "block is not the body's");
  need(p.grid.x >= 1 && p.grid.y >= 1 && p.grid.z == 1, "empty grid or grid.z != 1");
  need(p.grid.x <= lim.max_grid_x && p.grid.y <= lim.max_grid_y && p.grid.z <= lim.max_grid_z,
       "grid over the device limits");
  need(p.dynamic_smem <= lim.max_dynamic_smem_per_block, "dynamic smem over the device limit");
  need(p.dynamic_smem == body_smem_bytes(p.body, a.m, a.n, a.k), "dynamic smem is not the body's declared need");
  const TileMap t = documented_tile_map(p.body, a.m, a.n);
  need(p.tile.kind == t.kind && p.tile.rows == t.rows && p.tile.cols == t.cols && p.tile.row_origin == 0,
       "tile map is not the body's documented map");
  // The grid covers [M, N] and has no CTA wholly outside it; the persistent tier has one CTA per
  // SM, at most one per unit, and the workspace of that grid.
  const bool hopper = is_wgmma_body(p.body), packed = call.entry == Entry::gemm_packed_strided;
  const WgVariant wv = wgmma_variant(p.body);
  const WgChoice choice = wgmma_choice(a.m, a.n, a.k, lim.multiprocessors,
                                       WgPresent{static_cast<bool>(reg.resolve(KernelId::wgmma_rows)),
                                                 static_cast<bool>(reg.resolve(KernelId::wgmma_rows_n128)),
                                                 static_cast<bool>(reg.resolve(KernelId::wgmma_rows_n128_x2))});
  if (hopper) {
    need(p.grid.x == wgmma_ctas(a.m, a.n, lim.multiprocessors, wv) && p.grid.y == 1,
         "Hopper tier grid is not min(SMs x CTAs per SM, units)");
    need(p.workspace_bytes == wgmma_workspace_bytes(a.m, p.grid.x, wv), "Hopper tier workspace is not its need");
    if (!packed)
      need(choice.takes && choice.variant == wv && reg.resolve(p.kernel) && !reads_packed_weight(p.body),
           "Hopper tier off its rule or without its symbol");
  } else {
    need(p.workspace_bytes == 0, "a workspace for a body that needs none");
    need(p.grid.x == div_ceil(a.n, t.cols), "grid.x does not cover N exactly");
    if (t.kind == TileKind::tile) need(p.grid.y == div_ceil(a.m, t.rows), "grid.y does not cover M exactly");
    else need(p.grid.y == 1, "a column-strip body with grid.y != 1");
  }
  // Every tensor-core entry tries the Hopper tier first.
  const bool gemv_entry = call.entry == Entry::gemv_batch4_strided || call.entry == Entry::gemv_batch16_strided;
  need(hopper == (packed ? p.body != Body::tc_rows_packed : !gemv_entry && choice.takes),
       "the Hopper tier taken by a GEMV, or passed over where it is present");
  // The packed entry point has no other tier: the first of packed_bodies (by shape, Hopper or
  // strips) whose symbol the registry holds.
  if (packed)
    need(p.body == packed_choice(a, lim, reg) && reads_packed_weight(p.body) && reg.resolve(p.kernel) &&
             p.handle == reg.resolve(p.kernel),
         "packed entry off its body by shape");
  const KernelParams& q = p.params;
  need(q.input == a.input && q.weight == a.weight && q.block_scale == a.block_scale && q.output == a.output &&
           q.m == a.m && q.n == a.n && q.k == a.k && q.a_row_stride == a.a_row_stride &&
           q.c_row_stride == a.c_row_stride,
       "kernel parameters differ from the effective arguments");
  need(p.extent.output == a.output && p.extent.m == a.m && p.extent.n == a.n && p.extent.c_row_stride == a.c_row_stride,
       "output extent differs from the call");
  need((p.contract == Contract::gemv) == (p.body == Body::gemv_strip), "contract does not match the body");
  // Bodies and their row/K limits (geometry.hpp).
  const bool tc = p.body == Body::tc_rows_strip;
  if (tc) {
    // Two symbols share the body, split by rows (plan.hpp tc_rows_kernel); the one for m must be present.
    need(tc_rows_takes(a.m, a.n, a.k) && reg.resolve(tc_rows_kernel(a.m)), "row-tile kernel outside its rule");
    need(p.kernel == tc_rows_kernel(a.m) && p.handle == reg.resolve(p.kernel), "row-tile body in the wrong symbol");
  }
  if (p.body == Body::m32_skinny || p.body == Body::m32_tile)
    need((p.body == Body::m32_skinny) == skinny_body_runs(a.m, a.k), "m32 body disagrees with skinny_body_runs");
  if (hopper) return;
  switch (call.entry) {
    case Entry::gemm_pipelined: need(p.body == Body::gemm128_tile, "gemm_pipelined off the 128-row tile"); break;
    case Entry::gemm_pipelined_m32:
    case Entry::gemm_pipelined_m32_strided:
      need(tc || p.body == Body::m32_skinny || p.body == Body::m32_tile, "m32 entry off its bodies");
      break;
    case Entry::gemm_pipelined_m64:
    case Entry::gemm_pipelined_m64_strided: need(tc || p.body == Body::m64_tile, "m64 entry off its bodies"); break;
    case Entry::gemm_pipelined_by_m:
      if (prefers_m32(a.m, a.k, call.m32_kernel))
        need(tc || p.body == Body::m32_skinny || p.body == Body::m32_tile, "by_m: m32 preferred but not taken");
      else if (prefers_m64(a.m, a.k, call.m64_kernel))
        need(tc || p.body == Body::m64_tile, "by_m: m64 preferred but not taken");
      else need(p.body == Body::gemm128_tile, "by_m: fell back past the 128-row tile");
      break;
    case Entry::gemv_batch4_strided:
    case Entry::gemv_batch16_strided: need(p.body == Body::gemv_strip, "GEMV entry off the GEMV strip"); break;
    case Entry::gemm_packed_strided: break;  // packed_body's body, checked above
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  Call call;
  call.entry = static_cast<Entry>(in.ConsumeIntegralInRange<int>(0, static_cast<int>(Entry::gemm_packed_strided)));
  StaticRegistry reg = StaticRegistry::all_present();
  for (KernelId id : kAllKernels) reg.set_present(id, in.ConsumeIntegralInRange<int>(0, 7) != 0);
  // Handles as a caller passes them: the registry's, or zero, or any value.
  auto handle = [&](KernelId id) {
    switch (in.ConsumeIntegralInRange<int>(0, 3)) {
      case 0: return KernelHandle{};
      case 1: return KernelHandle{in.ConsumeIntegral<std::uint64_t>()};
      default: return reg.resolve(id);
    }
  };
  call.kernel = handle(KernelId::gemm_pipelined);
  call.m32_kernel = handle(KernelId::gemm_pipelined_m32);
  call.m64_kernel = handle(KernelId::gemm_pipelined_m64);
  DeviceLimits lim = DeviceLimits::h200();
  if (in.ConsumeBool()) {
    lim.max_grid_x = pick_u32(in);
    lim.max_grid_y = pick_u32(in);
    lim.max_grid_z = pick_u32(in);
    lim.max_dynamic_smem_per_block = pick_u32(in);
    lim.multiprocessors = in.ConsumeIntegralInRange<std::uint32_t>(1, 1024);
  }
  Args& a = call.args;
  a.m = pick_u32(in);
  a.n = pick_u32(in);
  a.k = pick_u32(in);
  a.a_row_stride = in.ConsumeBool() ? a.k + 8 * in.ConsumeIntegralInRange<std::uint32_t>(0, 4) : pick_u32(in);
  a.c_row_stride = in.ConsumeBool() ? a.n + in.ConsumeIntegralInRange<std::uint32_t>(0, 9) : pick_u32(in);
  a.input = pick_ptr(in);
  a.weight = pick_ptr(in);
  a.block_scale = pick_ptr(in);
  a.output = pick_ptr(in);
  // Half the time, C is placed against one operand's used bytes, just before or after, within a
  // few elements: the overlap rule's edges, which independent addresses almost never hit. (C may
  // then pass 2^48 by wrapping below 0; it lands near 2^64 while every operand stays low, where
  // 64-bit spans and the oracle's 128-bit spans agree.)
  if (in.ConsumeBool()) {
    const Args e = effective_args(call.entry, a);
    using U = std::uint64_t;
    const U c_len = e.m == 0 ? 0 : 2 * (U{e.m - 1} * e.c_row_stride + e.n);
    const U spans[3][2] = {{e.input, e.input + (e.m == 0 ? 0 : 2 * (U{e.m - 1} * e.a_row_stride + e.k))},
                           {e.weight, e.weight + static_cast<U>(w_bytes(call.entry, e.n, e.k))},
                           {e.block_scale, e.block_scale + 4 * (U{(e.n + 127) / 128} * (e.k / 128))}};
    const auto& s = spans[in.ConsumeIntegralInRange<int>(0, 2)];
    const std::int64_t delta = 2 * in.ConsumeIntegralInRange<std::int64_t>(-3, 3);
    a.output = (in.ConsumeBool() ? s[1] : s[0] - c_len) + static_cast<U>(delta);
  }
  a.stream = in.ConsumeIntegral<std::uint64_t>();

  const Args eff = effective_args(call.entry, a);
  const Status v = validate_args(call.entry, a);
  const Planned planned = plan_launch(call, reg, lim);
  const Status& st = planned.status;
  const std::string prefix = std::string("w8a16_") + entry_name(call.entry) + ": ";

  // Validation agrees with the independent statement of the rules, and names the rule it applies.
  const Errc want = first_broken_rule(call.entry, eff);
  if (v.code != want)
    finding(std::string("validate_args gave ") + errc_name(v.code) + ", the rules say " + errc_name(want), call, v);
  if (!v.ok()) {
    if (st.code != v.code || st.message != v.message)
      finding("plan_launch refused differently from validate_args", call, st);
  }
  if (!st.ok()) {
    const char* arg = named_argument(st.code);
    if (!arg) finding("a refusal with a code that is not a planner rule", call, st);
    if (st.message.rfind(prefix, 0) != 0 || st.message.find(arg) == std::string::npos)
      finding(std::string("the message does not name the entry and '") + arg + "'", call, st);
  }
  // Past validation, the planner's own rules, each witnessed: a zero handle among those the call
  // passed or the row-tile kernel's; a grid or smem the same call exceeds the limits with.
  if (v.ok() && !st.ok()) {
    // The same device with no grid or smem limit: the SM count stays, since the persistent tier's
    // grid is sized by it (geometry.hpp wgmma_ctas).
    DeviceLimits unlimited = lim;
    unlimited.max_dynamic_smem_per_block = unlimited.max_grid_x = unlimited.max_grid_y = unlimited
                                                                                             .max_grid_z = 0xFFFFFFFFu;
    const Planned free = plan_launch(call, reg, unlimited);
    switch (st.code) {
      case Errc::kernel_missing:
        if (call.entry == Entry::gemm_packed_strided) {  // its symbol by shape, from the registry
          if (packed_choice(a, lim, reg) != Body::gemm128_tile)
            finding("kernel_missing for the packed entry with one of its symbols present", call, st);
        } else if (call.kernel && call.m32_kernel && call.m64_kernel) {
          finding("kernel_missing with every handle nonzero", call, st);
        }
        if (free.status.code != Errc::kernel_missing) finding("kernel_missing depends on the limits", call, st);
        break;
      case Errc::grid_too_large:
        if (!free.ok() || (free.plan.grid.x <= lim.max_grid_x && free.plan.grid.y <= lim.max_grid_y &&
                           free.plan.grid.z <= lim.max_grid_z))
          finding("grid_too_large, but the unlimited plan's grid fits the limits", call, st);
        break;
      case Errc::smem_too_large:
        if (!free.ok() || free.plan.dynamic_smem <= lim.max_dynamic_smem_per_block)
          finding("smem_too_large, but the unlimited plan's smem fits the limit", call, st);
        if (free.plan.grid.x > lim.max_grid_x || free.plan.grid.y > lim.max_grid_y)
          finding("smem_too_large reported before grid_too_large", call, st);
        break;
      default: finding("a refusal after validation that is not kernel_missing, grid or smem", call, st);
    }
  }
  if (st.ok()) check_plan(call, eff, planned.plan, reg, lim, st);

  // The Launcher hands exactly the accepted plans to the backend, and refuses as the planner does.
  RecordingBackend rec(reg, lim);
  Launcher api(rec);
  const Status ls = api.launch(call);
  if (ls.code != st.code || ls.message != st.message) finding("Launcher::launch disagrees with plan_launch", call, ls);
  if (rec.plans().size() != (st.ok() ? 1u : 0u))
    finding("the backend saw a refused call, or missed an accepted one", call, ls);
  return 0;
}
