// SPDX-License-Identifier: MIT OR Apache-2.0
// Two designs of the row-tile kernel measured against its product schedule on the same inputs
// (tools/gpu-rows-variants builds and runs it; the measurements are in docs/JOURNAL.md, "Round 3,
// seventh session"). Every variant's output is compared byte for byte with the product kernel's
// (RowsStream::run, the code w8a16_tc_rows runs), NaN codes planted, before it is timed.
//
// `packed`: RowsStream<..., kPacked = true> over W in the packed layout (NUMERICS.md 2.3), the body
// the product now runs as w8a16_tc_rows_packed; here against the unpacked strips on the same W.
//
// `streamk`, a measured design, not a product body: stream-K over the strips with the canonical
// fold kept (NUMERICS.md 2.1). Where a shape has fewer strips than the SMs hold CTAs (320 thin
// strips for 396 slots on (5120, 25600) at 1..8 rows; 160 for 396 at 9..16 rows), the row-tile
// kernel leaves slots empty. Here a persistent grid of one CTA a slot cuts the (strip, round)
// sequence into equal ranges, as geometry.hpp's wgmma_cta_pieces cuts (unit, step). A strip cut
// between CTAs keeps its fold:
//   - the piece holding round 0 folds its steps from +0 in registers, as the product does, and
//     stores its acc in the workspace;
//   - every other piece (a tail, or a whole range inside one strip) stores its steps' partial sums
//     p_s, real rows only, in the workspace instead of folding them;
//   - each piece then counts itself on the strip's counter (__threadfence, atomicAdd: the CUDA
//     programming guide's last-block pattern); the piece that arrives last zeroes the counter for
//     the next launch and, after its own range, folds the stored p_s onto the stored acc in step
//     order with fma.rn (a chunk of steps at a time through shared memory) and writes C.
// So every output is the same chain acc = fma(p_s, S, acc), s = 0, 1, ... as the product's.
// Nothing waits on another CTA, so no co-residency is assumed. The decode, staging and partial
// sums are RowsStream's own functions; its main loop is restated here with the pieces' cursors.
// Only the configurations whose warps share a tile (thin, narrow, mid: every one at 1..16 rows,
// and 17..32 rows below 80 wide strips) fold through shared memory and are built here.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "w8a16/device/geometry.hpp"
#include "w8a16_rows_stream.cuh"

namespace {

namespace dev = w8a16::device;
namespace kn = w8a16::kernels;

#define CHECK(x)                                                                               \
  do {                                                                                         \
    const cudaError_t e_ = (x);                                                                \
    if (e_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(2);                                                                            \
    }                                                                                          \
  } while (0)

struct Args {
  const uint16_t* input;
  const uint8_t* weight;
  const float* scale;
  uint16_t* output;
  uint32_t m, n, k, lda, ldc;
  float* ws;
};

// Workspace: a counter per strip (zero between launches), then per strip its head's acc
// (m * cols floats), then per strip and step the stored p_s (m * cols floats each).
__host__ __device__ constexpr uint32_t counter_words(uint32_t strips) { return (strips + 31) / 32 * 32; }
inline size_t workspace_floats(uint32_t m, uint32_t n, uint32_t k, uint32_t cols) {
  const size_t strips = (n + cols - 1) / cols, outs = size_t{m} * cols;
  return counter_words(static_cast<uint32_t>(strips)) + strips * outs + strips * (k / 128) * outs;
}

template <int kKG, int kNt, int kRound, int kStages, int kMb>
struct StreamK {
  using S = kn::RowsStream<kKG, kNt, kRound, kStages, kMb>;
  static_assert(kKG > 1, "the fold goes through shared memory");
  static constexpr int kMaxOwed = 4;  // strips whose last piece a CTA can be (tail, head; 2 suffice)

  __device__ static void run(unsigned char* smem, const Args& a) {
    __shared__ uint32_t s_last;
    const uint32_t m = a.m, n = a.n, k = a.k;
    const uint32_t steps = k / 128, R = (steps + kRound - 1) / kRound;
    const uint32_t strips = (n + S::kCols - 1) / S::kCols, outs = m * S::kCols;
    // Items (strip, round) in strip-major order, 32-bit (the launch keeps strips * rounds < 2^32);
    // the products of the range bounds in 64 bits.
    const uint32_t total = strips * R, ctas = gridDim.x;
    auto begin_of = [&](uint32_t c) { return static_cast<uint32_t>(uint64_t{total} * c / ctas); };
    auto cta_of = [&](uint32_t i) { return static_cast<uint32_t>((uint64_t{i + 1} * ctas - 1) / total); };
    const uint32_t b = begin_of(blockIdx.x), e = begin_of(blockIdx.x + 1);
    const uint32_t warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const uint32_t group = warp % S::kGroups, kg = warp / S::kGroups;
    float* partials = reinterpret_cast<float*>(smem + kStages * S::kStageBytes);
    uint32_t* count = reinterpret_cast<uint32_t*>(a.ws);
    float* acc_slot = a.ws + counter_words(strips);
    float* pst = acc_slot + size_t{strips} * outs;

    constexpr uint32_t kAChunksPerStage = S::kRows * (S::kAPitch / 16);
    for (uint32_t i = threadIdx.x; i < kStages * kAChunksPerStage; i += 256) {
      const uint32_t st = i / kAChunksPerStage, rem = i % kAChunksPerStage;
      const uint32_t row = rem / (S::kAPitch / 16), part = rem % (S::kAPitch / 16);
      if (row >= m)
        *reinterpret_cast<uint4*>(smem + st * S::kStageBytes + S::kWBytes + row * S::kAPitch +
                                  part * 16) = make_uint4(0, 0, 0, 0);
    }

    float acc[S::kOutPerThread];
#pragma unroll
    for (int x = 0; x < S::kOutPerThread; ++x) acc[x] = 0.0f;
    constexpr bool kEveryThreadFolds = S::kGroupOuts >= 32 * kKG;
    // Output o of the group ([u][mb][q][lane], as the partials) -> (row, column within the strip).
    auto out_rc = [&](uint32_t o, uint32_t& row, uint32_t& col) {
      const uint32_t u = o / (kMb * 128), mb = (o / 128) % kMb, q = (o / 32) % 4, ln = o % 32;
      col = (group * kNt + u) * 16 + (ln >> 2) + (q >> 1) * 8;
      row = mb * 8 + 2 * (ln & 3) + (q & 1);
    };
    uint32_t owed[kMaxOwed], n_owed = 0;  // strips this CTA folds last (after its loop)

    // The load cursor: item (strip, round) and the thread's Loader, advanced without division
    // (at 1..8 rows the kernel is issue-bound: a division per item costs measurable time).
    uint32_t l_strip = b / R, l_r = b % R, l_stage = 0;
    auto l = S::make_loader(a.input, a.weight, m, n, k, a.lda, l_strip * S::kCols);
    auto load_next = [&]() {
      S::load_round(smem + l_stage * S::kStageBytes, l, a.weight, a.input, k, a.lda, l_r,
                    min(static_cast<uint32_t>(kRound), steps - l_r * kRound));
      l_stage = l_stage + 1 == kStages ? 0 : l_stage + 1;
      if (++l_r == R) {
        l_r = 0;
        ++l_strip;
        l.w += static_cast<size_t>(S::kCols) * k;
        l.w_rows_in -= S::kCols;
      }
    };

    // Item (strip, r)'s partial sums (shared memory, buffer `buf`) folded or stored; at its
    // piece's end, C or the workspace hand-over.
    auto finish = [&](uint32_t strip, uint32_t r, uint32_t t, uint32_t buf) {
      const uint32_t here = min(static_cast<uint32_t>(kRound), steps - r * kRound);
      const uint32_t s0 = strip * R;
      const bool folds = s0 >= b;  // this CTA holds the strip's round 0
      const float* pr = partials + buf * S::kPartialFloats + group * S::kGroupOuts;
      const uint32_t n0 = strip * S::kCols;
      const float* scale_row = a.scale + static_cast<size_t>(n0 / 128) * steps + r * kRound;
      if (folds) {
#pragma unroll
        for (int sir = 0; sir < kRound; ++sir) {
          if (static_cast<uint32_t>(sir) >= here) break;
          const float sc = __ldg(scale_row + sir);
#pragma unroll
          for (int x = 0; x < S::kOutPerThread; ++x) {
            const uint32_t o = kg * 32 + lane + 32 * kKG * x;
            if (kEveryThreadFolds || o < S::kGroupOuts)
              acc[x] = kn::fma_rn(pr[sir * (S::kGroups * S::kGroupOuts) + o], sc, acc[x]);
          }
        }
      } else {
#pragma unroll
        for (int x = 0; x < S::kOutPerThread; ++x) {
          const uint32_t o = kg * 32 + lane + 32 * kKG * x;
          if (!kEveryThreadFolds && o >= S::kGroupOuts) continue;
          uint32_t row, col;
          out_rc(o, row, col);
          if (row >= m) continue;
          float* dst = pst + (size_t{strip} * steps + r * kRound) * outs + row * S::kCols + col;
#pragma unroll
          for (int sir = 0; sir < kRound; ++sir)
            if (static_cast<uint32_t>(sir) < here) dst[sir * outs] = pr[sir * (S::kGroups * S::kGroupOuts) + o];
        }
      }
      if (t + 1 != e && r + 1 != R) return;  // not the piece's last item
      if (folds && s0 + R <= e) {            // the whole strip: C, as the product
#pragma unroll
        for (int x = 0; x < S::kOutPerThread; ++x) {
          const uint32_t o = kg * 32 + lane + 32 * kKG * x;
          if (!kEveryThreadFolds && o >= S::kGroupOuts) continue;
          uint32_t row, col;
          out_rc(o, row, col);
          if (row < m && n0 + col < n)
            a.output[static_cast<size_t>(row) * a.ldc + n0 + col] = kn::f32_to_bf16_rne_bits(acc[x]);
        }
      } else {
        if (folds) {
#pragma unroll
          for (int x = 0; x < S::kOutPerThread; ++x) {
            const uint32_t o = kg * 32 + lane + 32 * kKG * x;
            if (!kEveryThreadFolds && o >= S::kGroupOuts) continue;
            uint32_t row, col;
            out_rc(o, row, col);
            if (row < m) acc_slot[size_t{strip} * outs + row * S::kCols + col] = acc[x];
          }
        }
        __threadfence();
        __syncthreads();
        if (threadIdx.x == 0) {
          const uint32_t pieces = cta_of(s0 + R - 1) - cta_of(s0) + 1;
          const uint32_t before = atomicAdd(count + strip, 1u);
          s_last = before + 1 == pieces;
          if (s_last) count[strip] = 0;  // for the next launch: every piece has counted
        }
        __syncthreads();
        if (s_last) owed[n_owed++] = strip;
      }
#pragma unroll
      for (int x = 0; x < S::kOutPerThread; ++x) acc[x] = 0.0f;
    };

#pragma unroll
    for (int st = 0; st < kStages - 1; ++st) {
      if (b + st < e) load_next();
      kn::cp_async_commit();
    }
    uint32_t c_strip = b / R, c_r = b % R, c_stage = 0;  // the compute cursor
    uint32_t f_strip = 0, f_r = 0;                       // the item finished next
    for (uint32_t t = b; t < e; ++t) {
      kn::cp_async_wait<kStages - 2>();
      __syncthreads();
      if (t > b) finish(f_strip, f_r, t - 1, (t - 1 - b) & 1);
      if (t + kStages - 1 < e) load_next();
      kn::cp_async_commit();
      const uint32_t here = min(static_cast<uint32_t>(kRound), steps - c_r * kRound);
      const unsigned char* stage = smem + c_stage * S::kStageBytes;
      float p[S::kChains][kNt][kMb][4];
      if (__any_sync(0xFFFFFFFFu, S::template round_partials<false>(p, stage, group, kg))) {
        float q[S::kChains][kNt][kMb][4];
        S::round_partials_exact(q, stage, group, kg);
        S::each_partial([&](int i, int u, int mb, int x) { p[i][u][mb][x] = q[i][u][mb][x]; });
      }
      float* pw = partials + ((t - b) & 1) * S::kPartialFloats + group * S::kGroupOuts;
#pragma unroll
      for (int i = 0; i < S::kChains; ++i) {
        const uint32_t sir = kg + kKG * i;
        if (sir >= here) continue;
#pragma unroll
        for (int u = 0; u < kNt; ++u)
#pragma unroll
          for (int mb = 0; mb < kMb; ++mb)
#pragma unroll
            for (int q = 0; q < 4; ++q)
              pw[sir * (S::kGroups * S::kGroupOuts) + ((u * kMb + mb) * 4 + q) * 32 + lane] = p[i][u][mb][q];
      }
      f_strip = c_strip;
      f_r = c_r;
      c_stage = c_stage + 1 == kStages ? 0 : c_stage + 1;
      if (++c_r == R) {
        c_r = 0;
        ++c_strip;
      }
    }
    kn::cp_async_wait<0>();
    __syncthreads();
    if (e > b) finish(f_strip, f_r, e - 1, (e - 1 - b) & 1);

    // The strips this CTA arrived last on: their stored p_s, in step order, onto the head's acc.
    // Every stage is free now; the CTA loads a chunk of steps into shared memory with 16-byte
    // loads, all in flight at once (one L2 round trip a chunk, not one a step), then folds it.
    float* buf = reinterpret_cast<float*>(smem);
    const uint32_t chunk = (kStages * S::kStageBytes / 4) / outs;  // steps a chunk holds
    for (uint32_t i = 0; i < n_owed; ++i) {
      const uint32_t strip = owed[i], s0 = strip * R, n0 = strip * S::kCols;
      const uint32_t first = (min(begin_of(cta_of(s0) + 1), s0 + R) - s0) * kRound;  // the head's steps
      const float* scale_row = a.scale + static_cast<size_t>(n0 / 128) * steps;
      float v[(S::kRows * S::kCols + 255) / 256];
#pragma unroll
      for (int j = 0; j < (S::kRows * S::kCols + 255) / 256; ++j) {
        const uint32_t o2 = threadIdx.x + 256 * j;
        v[j] = o2 < outs ? __ldcg(acc_slot + size_t{strip} * outs + o2) : 0.0f;
      }
      for (uint32_t c0 = first; c0 < steps; c0 += chunk) {
        const uint32_t here = min(chunk, steps - c0);
        const float4* src = reinterpret_cast<const float4*>(pst + (size_t{strip} * steps + c0) * outs);
        __syncthreads();  // the chunk before is folded
        for (uint32_t q = threadIdx.x; q < here * outs / 4; q += 256)
          reinterpret_cast<float4*>(buf)[q] = __ldcg(src + q);
        __syncthreads();
#pragma unroll
        for (int j = 0; j < (S::kRows * S::kCols + 255) / 256; ++j) {
          const uint32_t o2 = threadIdx.x + 256 * j;
          if (o2 >= outs) continue;
          for (uint32_t s = 0; s < here; ++s) v[j] = kn::fma_rn(buf[s * outs + o2], __ldg(scale_row + c0 + s), v[j]);
        }
      }
#pragma unroll
      for (int j = 0; j < (S::kRows * S::kCols + 255) / 256; ++j) {
        const uint32_t o2 = threadIdx.x + 256 * j, col = n0 + o2 % S::kCols;
        if (o2 < outs && col < n)
          a.output[static_cast<size_t>(o2 / S::kCols) * a.ldc + col] = kn::f32_to_bf16_rne_bits(v[j]);
      }
    }
  }
};

template <int kKG, int kNt, int kRound, int kStages, int kMb, bool kPacked>
__global__ void __launch_bounds__(256, 3) product_kernel(Args a) {
  extern __shared__ __align__(16) unsigned char smem[];
  kn::RowsStream<kKG, kNt, kRound, kStages, kMb, kPacked>::run(smem, a.input, a.weight, a.scale, a.output, a.m, a.n,
                                                               a.k, a.lda, a.ldc);
}
template <int kKG, int kNt, int kRound, int kStages, int kMb>
__global__ void __launch_bounds__(256, 3) streamk_kernel(Args a) {
  extern __shared__ __align__(16) unsigned char smem[];
  StreamK<kKG, kNt, kRound, kStages, kMb>::run(smem, a);
}

struct Config {
  const char* name;
  void (*product)(Args);
  void (*streamk)(Args);
  void (*packed)(Args);
  uint32_t smem, packed_smem, round;
};
template <int kKG, int kNt, int kRound, int kStages, int kMb>
Config config(const char* name) {
  return {name,
          product_kernel<kKG, kNt, kRound, kStages, kMb, false>,
          streamk_kernel<kKG, kNt, kRound, kStages, kMb>,
          product_kernel<kKG, kNt, kRound, kStages, kMb, true>,
          kn::RowsStream<kKG, kNt, kRound, kStages, kMb>::kSmemBytes,
          kn::RowsStream<kKG, kNt, kRound, kStages, kMb, true>::kSmemBytes,
          kRound};
}
// w8a16_tc_rows.cu's configurations whose warps share a tile, chosen as it chooses them.
bool config_for(uint32_t m, uint32_t n, Config* c) {
  const uint32_t cols = dev::tc_rows_cols(m, n), blocks = dev::tc_rows_row_blocks(m);
  if (cols == dev::kTcRowsThinCols) *c = config<8, 1, 8, 2, 1>("thin");
  else if (cols == dev::kTcRowsNarrowCols && blocks == 1) *c = config<4, 1, 4, 2, 1>("narrow, 1 row block");
  else if (cols == dev::kTcRowsNarrowCols && blocks == 2) *c = config<4, 1, 4, 2, 2>("narrow, 2 row blocks");
  else if (cols == dev::kTcRowsNarrowCols && blocks == 4) *c = config<4, 1, 4, 2, 4>("narrow, 4 row blocks");
  else if (cols == dev::kTcRowsMidCols && blocks == 2) *c = config<2, 1, 2, 2, 2>("mid, 2 row blocks");
  else if (cols == dev::kTcRowsMidCols && blocks == 4) *c = config<2, 1, 2, 2, 4>("mid, 4 row blocks");
  else return false;
  return c->smem == dev::tc_rows_smem_bytes(m, n);
}

uint16_t bf16_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

// W [n][k] in the packed layout (NUMERICS.md 2.3), with its NaN table, through geometry.hpp's
// offsets (the launch layer's pack_weights does the same; this program links nothing of it).
std::vector<uint8_t> pack(const uint8_t* w, uint32_t n, uint32_t k) {
  const uint32_t steps = k / 128;
  std::vector<uint8_t> out(dev::packed_weight_bytes(n, k), 0);
  uint8_t* table = out.data() + dev::packed_table_offset(n, k);
  for (uint32_t r = 0; r < n; ++r)
    for (uint32_t c = 0; c < k; ++c) {
      const uint8_t code = w[size_t{r} * k + c];
      out[dev::packed_tile_offset(r / 128, c / 128, steps) + dev::packed_code_offset(r % 128, c % 128)] = code;
      if ((code & 0x7F) == 0x7F) table[dev::packed_tile_index(r / 128, c / 128, steps)] = 1;
    }
  return out;
}

struct Shape {
  uint32_t n, k, m;
};

double copy_bandwidth() {  // bytes read + written per second, for the floor
  const size_t bytes = size_t{1} << 29;
  void *x, *y;
  CHECK(cudaMalloc(&x, bytes));
  CHECK(cudaMalloc(&y, bytes));
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  CHECK(cudaMemcpy(y, x, bytes, cudaMemcpyDeviceToDevice));
  float best = 1e30f;
  for (int i = 0; i < 5; ++i) {
    CHECK(cudaEventRecord(e0));
    CHECK(cudaMemcpy(y, x, bytes, cudaMemcpyDeviceToDevice));
    CHECK(cudaEventRecord(e1));
    CHECK(cudaEventSynchronize(e1));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, e0, e1));
    best = std::min(best, ms);
  }
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  return 2.0 * bytes / (best * 1e-3);
}

// One shape: the product schedule's output, the variant's outputs compared with it byte for byte,
// then both timed. Returns whether every output was equal.
bool run_shape(const Shape& sh, bool packed, bool quick, int sms, double copy_bw, std::mt19937& rng) {
  Config cfg;
  if (!config_for(sh.m, sh.n, &cfg)) {
    std::printf("%6u %6u %3u  (no shared-tile configuration: skipped)\n", sh.n, sh.k, sh.m);
    return true;
  }
  const uint32_t m = sh.m, n = sh.n, k = sh.k, steps = k / 128;
  const uint32_t cols = dev::tc_rows_cols(m, n), strips = (n + cols - 1) / cols;
  const size_t w_bytes = size_t{n} * k, s_count = size_t{(n + 127) / 128} * steps;
  // A packed copy's stride: its size (tiles of 16,385 bytes with the table) rounded up to 256, so
  // every copy starts as aligned as the buffer (the bulk and cp.async reads need 16 bytes).
  const size_t p_size = dev::packed_weight_bytes(n, k), p_bytes = (p_size + 255) / 256 * 256;
  const int copies = quick ? 1 : static_cast<int>(std::max<size_t>(2, (size_t{256} << 20) / w_bytes + 1));
  std::vector<uint8_t> w(w_bytes);
  std::vector<uint16_t> act(size_t{m} * k);
  std::vector<float> sc(s_count);
  uint64_t x64 = 0x9E3779B97F4A7C15ull ^ (uint64_t{n} << 32 | k);
  for (auto& c : w) {  // xorshift64: every code but 0x7F and 0xFF
    x64 ^= x64 << 13;
    x64 ^= x64 >> 7;
    x64 ^= x64 << 17;
    const uint32_t v = static_cast<uint32_t>(x64 >> 24) % 254;
    c = static_cast<uint8_t>(v < 127 ? v : v + 1);
  }
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (auto& x : act) x = bf16_of(nd(rng));
  std::uniform_real_distribution<float> ud(0.25f, 4.0f);
  for (auto& x : sc) x = ud(rng);
  // Copy 0 (the check's) holds NaN codes, so the exact-decode path runs in both forms too.
  std::vector<uint8_t> w0 = w;
  for (int i = 0; i < 16; ++i) w0[(size_t{rng()} * 7919u) % w_bytes] = (i & 1) ? 0x7F : 0xFF;

  uint8_t *dw, *dp = nullptr;
  uint16_t *da, *dc;
  float *ds, *dws = nullptr;
  CHECK(cudaMalloc(&dw, w_bytes * (copies + 1)));
  for (int c = 0; c <= copies; ++c)
    CHECK(cudaMemcpy(dw + c * w_bytes, c == 0 ? w0.data() : w.data(), w_bytes, cudaMemcpyHostToDevice));
  if (packed) {
    CHECK(cudaMalloc(&dp, p_bytes * (copies + 1)));
    const std::vector<uint8_t> p0 = pack(w0.data(), n, k), p1 = pack(w.data(), n, k);
    for (int c = 0; c <= copies; ++c)
      CHECK(cudaMemcpy(dp + c * p_bytes, c == 0 ? p0.data() : p1.data(), p_size, cudaMemcpyHostToDevice));
  }
  CHECK(cudaMalloc(&da, act.size() * 2));
  CHECK(cudaMalloc(&ds, sc.size() * 4));
  CHECK(cudaMalloc(&dc, size_t{m} * n * 2));
  const size_t ws_floats = workspace_floats(m, n, k, cols);
  if (!packed) {
    CHECK(cudaMalloc(&dws, ws_floats * 4));
    CHECK(cudaMemset(dws, 0, ws_floats * 4));
  }
  CHECK(cudaMemcpy(da, act.data(), act.size() * 2, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(ds, sc.data(), sc.size() * 4, cudaMemcpyHostToDevice));
  CHECK(cudaFuncSetAttribute(cfg.product, cudaFuncAttributeMaxDynamicSharedMemorySize, cfg.smem));
  CHECK(cudaFuncSetAttribute(cfg.streamk, cudaFuncAttributeMaxDynamicSharedMemorySize, cfg.smem));
  CHECK(cudaFuncSetAttribute(cfg.packed, cudaFuncAttributeMaxDynamicSharedMemorySize, cfg.packed_smem));
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, cfg.streamk, 256, cfg.smem));
  // A stream-K grid larger than the items would leave empty ranges between a strip's pieces,
  // which the piece count does not skip: it stays at most one CTA an item.
  const uint32_t total = strips * ((steps + cfg.round - 1) / cfg.round);
  const uint32_t slots = std::min(static_cast<uint32_t>(per_sm * sms), total);
  const Args args{da, dw, ds, dc, m, n, k, k, n, dws};
  Args pargs = args;
  pargs.weight = dp;

  std::vector<uint16_t> want(size_t{m} * n), got(size_t{m} * n);
  auto launch = [&](void (*f)(Args), uint32_t grid, uint32_t smem, const Args& x) {
    f<<<grid, 256, smem>>>(x);
    CHECK(cudaGetLastError());
  };
  CHECK(cudaMemset(dc, 0xAB, size_t{m} * n * 2));
  launch(cfg.product, strips, cfg.smem, args);
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(want.data(), dc, want.size() * 2, cudaMemcpyDeviceToHost));
  bool equal = true;
  auto compare = [&](const char* what, uint32_t grid) {
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(got.data(), dc, got.size() * 2, cudaMemcpyDeviceToHost));
    if (std::memcmp(want.data(), got.data(), want.size() * 2) == 0) return;
    size_t i = 0;
    while (want[i] == got[i]) ++i;
    std::printf("  MISMATCH (%s, grid %u): first at row %zu col %zu: product %04x, variant %04x\n", what, grid, i / n,
                i % n, want[i], got[i]);
    equal = false;
  };
  if (packed) {
    CHECK(cudaMemset(dc, 0xCD, size_t{m} * n * 2));
    launch(cfg.packed, strips, cfg.packed_smem, pargs);
    compare("packed", strips);
  } else {
    for (uint32_t grid : {slots, strips, std::min(strips * 3 + 1, total)})
      for (int rep = 0; rep < 2; ++rep) {  // twice: the counters must be back at zero
        CHECK(cudaMemset(dc, 0xCD, size_t{m} * n * 2));
        launch(cfg.streamk, grid, cfg.smem, args);
        compare("stream-K", grid);
      }
    std::vector<uint32_t> cnt(counter_words(strips));
    CHECK(cudaMemcpy(cnt.data(), dws, cnt.size() * 4, cudaMemcpyDeviceToHost));
    for (uint32_t c : cnt)
      if (c != 0) {
        std::printf("  a counter is %u after the launches, not 0\n", c);
        equal = false;
        break;
      }
  }

  // Back-to-back launches over the rotating weight copies (1..copies), 7 batches; the median.
  auto time_us = [&](void (*f)(Args), uint32_t grid, uint32_t smem, const Args& base, size_t stride) {
    const int reps = quick ? 3 : 20;
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    std::vector<float> per;
    for (int batch = 0; batch < 7; ++batch) {
      CHECK(cudaEventRecord(e0));
      for (int i = 0; i < reps; ++i) {
        Args x = base;
        x.weight = base.weight + (1 + (batch * reps + i) % copies) * stride;
        launch(f, grid, smem, x);
      }
      CHECK(cudaEventRecord(e1));
      CHECK(cudaEventSynchronize(e1));
      float ms;
      CHECK(cudaEventElapsedTime(&ms, e0, e1));
      per.push_back(ms * 1e3f / reps);
    }
    std::sort(per.begin(), per.end());
    CHECK(cudaEventDestroy(e0));
    CHECK(cudaEventDestroy(e1));
    return per[per.size() / 2];
  };
  const double bytes = double(w_bytes) + 4.0 * s_count + 2.0 * m * k + 2.0 * m * n;
  const double floor_us = bytes / copy_bw * 1e6;  // bytes moved once, at the copy's rate
  const float t_prod = time_us(cfg.product, strips, cfg.smem, args, w_bytes);
  if (packed) {
    const float t_packed = time_us(cfg.packed, strips, cfg.packed_smem, pargs, p_bytes);
    std::printf("%6u %6u %3u  %-22s %7u | %9.2f %9.2f | %6.3f %6.3f | %s\n", n, k, m, cfg.name, strips, t_prod,
                t_packed, floor_us / t_prod, floor_us / t_packed, equal ? "yes" : "NO");
  } else {
    const float t_sk = time_us(cfg.streamk, slots, cfg.smem, args, w_bytes);
    const float t_sk_strips = time_us(cfg.streamk, strips, cfg.smem, args, w_bytes);
    std::printf("%6u %6u %3u  %-22s %7u %7u | %9.2f %9.2f %9.2f | %6.3f %6.3f | %s\n", n, k, m, cfg.name, strips, slots,
                t_prod, t_sk, t_sk_strips, floor_us / t_prod, floor_us / t_sk, equal ? "yes" : "NO");
  }
  CHECK(cudaFree(dw));
  if (dp) CHECK(cudaFree(dp));
  CHECK(cudaFree(da));
  CHECK(cudaFree(ds));
  CHECK(cudaFree(dc));
  if (dws) CHECK(cudaFree(dws));
  return equal;
}

}  // namespace

// rows_variants {streamk|packed} [quick]
int main(int argc, char** argv) {
  const bool packed = argc > 1 && std::strcmp(argv[1], "packed") == 0;
  const bool quick = argc > 2 && std::strcmp(argv[2], "quick") == 0;
  if (argc < 2 || (!packed && std::strcmp(argv[1], "streamk") != 0)) {
    std::fprintf(stderr, "usage: rows_variants streamk|packed [quick]\n");
    return 2;
  }
  std::vector<Shape> shapes;
  if (quick) {
    shapes = {{1000, 1664, 3}, {777, 3200, 13}, {2000, 1280, 27}, {130, 384, 8}};
  } else {
    constexpr uint32_t kNk[][2] = {{12288, 2048}, {10240, 5120}, {5120, 25600}, {51200, 5120}};
    for (uint32_t m : {1u, 2u, 4u, 8u, 16u})
      for (const auto& nk : kNk) shapes.push_back({nk[0], nk[1], m});
    if (packed) {
      for (uint32_t m : {1u, 4u, 8u, 16u}) shapes.push_back({2048, 4096, m});
    } else {
      shapes.push_back({5120, 25600, 32});
      shapes.push_back({2048, 4096, 32});
    }
  }
  int dev_id = 0, sms = 0;
  CHECK(cudaGetDevice(&dev_id));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev_id));
  const double copy_bw = copy_bandwidth();
  std::printf("rows_variants %s: %d SMs, copy bandwidth %.0f GB/s%s\n", packed ? "packed" : "streamk", sms,
              copy_bw / 1e9, quick ? " (quick)" : "");
  if (packed)
    std::printf("%6s %6s %3s  %-22s %7s | %9s %9s | %6s %6s | %s\n", "N", "K", "M", "config", "strips", "prod us",
                "packed us", "fl pr", "fl pk", "bytes equal");
  else
    std::printf("%6s %6s %3s  %-22s %7s %7s | %9s %9s %9s | %6s %6s | %s\n", "N", "K", "M", "config", "strips", "slots",
                "prod us", "sk us", "sk=strp", "fl pr", "fl sk", "bytes equal");
  int failures = 0;
  std::mt19937 rng(12345);  // activations, scales and the planted NaN codes
  for (const Shape& sh : shapes) failures += run_shape(sh, packed, quick, sms, copy_bw, rng) ? 0 : 1;
  std::printf("rows_variants %s: %s\n", packed ? "packed" : "streamk",
              failures ? "FAILED (outputs differ)" : "every variant's output equals the product's");
  return failures ? 1 : 0;
}
