// SPDX-License-Identifier: MIT OR Apache-2.0
// What compute-sanitizer's racecheck accepts as the release of a shared-memory stage before an
// asynchronous refill (tools/gpu-racecheck-ring builds and runs it). A ring of 4 stages of 16 KB:
// one producer thread refills a stage once its `empty` mbarrier completes; 4 consumer warps wait on
// its `full` mbarrier, read it with ld.shared.v2 and release it. The data is checked on the host,
// so a real race would also show as a wrong sum. Mode (argv[1]):
//   0  refill by cp.async.bulk (1-D, PTX ISA 9.7.9.25); lane 0 of each consumer warp arrives
//   1  as 0, __syncwarp() before lane 0 arrives
//   2  as 0, every consumer thread arrives (the empty barrier counts 128)
//   3  refill by cp.async.bulk.tensor.2d (PTX ISA 9.7.9.27); lane 0 arrives
//   4  as 0, the producer issues fence.proxy.async.shared::cta before each refill
//   5  as 0, the bulk copy's destination is .shared::cta
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

// The kernels' own mbarrier, copy and shared-load wrappers, so that the ring issues the
// instructions the Hopper tier issues.
#include "w8a16_tma.cuh"

namespace {

namespace kn = w8a16::kernels;

constexpr int kStages = 4, kSteps = 13, kTile = 16384, kWarps = 4, kReads = 16;

// One consumer thread's digest of the words it reads (the host recomputes it from W).
__host__ __device__ uint32_t mix(uint32_t acc, uint32_t a, uint32_t b) { return acc * 31u + (a ^ (b * 7u)); }
__host__ __device__ uint32_t offset(int c, int lane, int j) { return j * 1024 + c * 256 + lane * 8; }

__global__ void __launch_bounds__(32 * (kWarps + 1))
    ring(const uint8_t* w, const __grid_constant__ CUtensorMap map, int mode, uint32_t* out) {
  extern __shared__ __align__(1024) uint8_t smem[];
  __shared__ __align__(8) uint64_t bars[2 * kStages];
  const uint32_t base = kn::smem_addr(smem), bar0 = kn::smem_addr(bars);
  auto full = [&](int s) { return bar0 + 8 * s; };
  auto empty = [&](int s) { return bar0 + 8 * (kStages + s); };
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      kn::mbar_init(full(s), 1);
      kn::mbar_init(empty(s), mode == 2 ? 32 * kWarps : kWarps);
    }
    kn::mbar_fence_init();
  }
  __syncthreads();
  if (warp == 0) {
    if (lane != 0) return;
    for (int q = 0; q < kSteps; ++q) {
      const int s = q % kStages;
      if (q >= kStages) kn::mbar_wait(empty(s), (q / kStages - 1) & 1);
      kn::mbar_arrive_expect_tx(full(s), kTile);
      const uint32_t dst = base + s * kTile;
      const uint8_t* src = w + static_cast<size_t>(q) * kTile;
      if (mode == 4 && q >= kStages) kn::fence_proxy_async_shared();
      if (mode == 3) kn::tma_load_2d(dst, &map, 0, q * 128, full(s));
      else if (mode == 5)  // the one form the kernels do not use
        asm volatile("cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
                     "l"(src), "r"(kTile), "r"(full(s))
                     : "memory");
      else kn::bulk_load(dst, src, kTile, full(s));
    }
    return;
  }
  const int c = warp - 1;
  uint32_t acc = 0;
  for (int q = 0; q < kSteps; ++q) {
    const int s = q % kStages;
    kn::mbar_wait(full(s), (q / kStages) & 1);
    for (int j = 0; j < kReads; ++j) {
      uint32_t v[2];
      kn::lds_v2_u32(base + s * kTile + offset(c, lane, j), v);
      acc = mix(acc, v[0], v[1]);
    }
    if (mode == 1) __syncwarp();
    if (mode == 2 || lane == 0) kn::mbar_arrive(empty(s));
  }
  out[threadIdx.x - 32] = acc;
}

}  // namespace

int main(int argc, char** argv) {
  const int mode = argc > 1 ? std::atoi(argv[1]) : 0;
  if (mode < 0 || mode > 5) {
    std::fprintf(stderr, "usage: %s MODE (0..5)\n", argv[0]);
    return 2;
  }
  std::vector<uint8_t> h(static_cast<size_t>(kSteps) * kTile);
  for (size_t i = 0; i < h.size(); ++i) h[i] = static_cast<uint8_t>(i * 2654435761u >> 13);
  uint8_t* w = nullptr;
  uint32_t* out = nullptr;
  if (cudaMalloc(&w, h.size()) != cudaSuccess || cudaMalloc(&out, 4 * 32 * kWarps) != cudaSuccess) {
    std::fprintf(stderr, "no GPU memory\n");
    return 2;
  }
  cudaMemcpy(w, h.data(), h.size(), cudaMemcpyHostToDevice);
  CUtensorMap map{};
  if (mode == 3) {  // W as a 2-D tensor of 128-byte rows, a 128 x 128 box a step
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found) !=
            cudaSuccess ||
        fn == nullptr) {
      std::fprintf(stderr, "cuTensorMapEncodeTiled not found\n");
      return 2;
    }
    using Encode = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
    const cuuint64_t dims[2] = {128, static_cast<cuuint64_t>(kSteps) * 128}, strides[1] = {128};
    const cuuint32_t box[2] = {128, 128}, elem[2] = {1, 1};
    if (reinterpret_cast<Encode>(fn)(&map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, w, dims, strides, box, elem,
                                     CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                     CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                     CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) {
      std::fprintf(stderr, "cuTensorMapEncodeTiled failed\n");
      return 2;
    }
  }
  cudaFuncSetAttribute(ring, cudaFuncAttributeMaxDynamicSharedMemorySize, kStages * kTile);
  ring<<<1, 32 * (kWarps + 1), kStages * kTile>>>(w, map, mode, out);
  const cudaError_t e = cudaDeviceSynchronize();
  std::vector<uint32_t> got(32 * kWarps);
  cudaMemcpy(got.data(), out, 4 * got.size(), cudaMemcpyDeviceToHost);
  int differ = 0;
  for (int t = 0; t < 32 * kWarps; ++t) {
    uint32_t acc = 0;
    for (int q = 0; q < kSteps; ++q)
      for (int j = 0; j < kReads; ++j) {
        uint32_t a, b;
        const uint8_t* p = &h[static_cast<size_t>(q) * kTile + offset(t / 32, t % 32, j)];
        std::memcpy(&a, p, 4);
        std::memcpy(&b, p + 4, 4);
        acc = mix(acc, a, b);
      }
    differ += acc != got[t];
  }
  std::printf("mode %d: %s, %d of %d consumer threads' sums differ from the host's\n", mode, cudaGetErrorString(e),
              differ, 32 * kWarps);
  return e != cudaSuccess || differ != 0;
}
