# SPDX-License-Identifier: MIT OR Apache-2.0
# A block-scaled W8A16 GEMM in Triton, written to be checked by w8a16check.invariance: BF16 A [M, K]
# times E4M3 codes W [N, K] decoded in the kernel, FP32 scales S [ceil(N/128), K/128] per 128x128
# block, FP32 accumulation, BF16 C [M, N]. Not tuned: every program does the same steps for every
# row it holds, so a row's bytes depend on the row alone, unless split_k > 1.
#
# split_k = 1: one program owns an output tile and walks K in 128-wide blocks, in order.
# split_k > 1: the K blocks are cut into split_k ranges, one program each, which atomically add
#   their FP32 partial tiles into a zeroed FP32 buffer; the order of those adds is whatever order the
#   programs finish in, so the bytes change from run to run (not batch-invariant, on purpose).
import torch
import triton
import triton.language as tl

BLOCK_M = 64
BLOCK_N = 64
BLOCK_K = 128  # one scale block along K per step: the scale multiplies the step's partial


@triton.jit
def _w8a16_kernel(a_ptr, w_ptr, s_ptr, c_ptr, acc_ptr, M, N, K, stride_am, stride_wn, stride_sn, stride_cm,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, SPLIT_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    pid_k = tl.program_id(2)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    row_ok = offs_m < M
    col_ok = offs_n < N
    k_blocks = K // BLOCK_K
    per_split = tl.cdiv(k_blocks, SPLIT_K)
    kb_begin = pid_k * per_split
    kb_end = tl.minimum(kb_begin + per_split, k_blocks)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kb in range(kb_begin, kb_end):
        k = kb * BLOCK_K + offs_k
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + k[None, :], mask=row_ok[:, None], other=0.0)
        codes = tl.load(w_ptr + offs_n[:, None] * stride_wn + k[None, :], mask=col_ok[:, None], other=0)
        # The E4M3 code's bits reinterpreted as float8e4nv (E4M3FN), then widened: exact in BF16.
        w = codes.to(tl.float8e4nv, bitcast=True).to(tl.bfloat16)
        part = tl.dot(a, tl.trans(w), out_dtype=tl.float32)
        scale = tl.load(s_ptr + (offs_n // 128) * stride_sn + kb, mask=col_ok, other=0.0)
        acc += part * scale[None, :]
    mask = row_ok[:, None] & col_ok[None, :]
    if SPLIT_K == 1:
        tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], acc.to(tl.bfloat16), mask=mask)
    else:
        tl.atomic_add(acc_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=mask)


def w8a16_gemm(a: torch.Tensor, w: torch.Tensor, s: torch.Tensor, split_k: int = 1) -> torch.Tensor:
    """C = A x dequant(W, S)^T. a: bfloat16 [M, K] (rows may be a padded view: A's row stride is
    passed; columns must be contiguous); w: uint8 [N, K] E4M3 codes; s: float32 [ceil(N/128), K/128].
    Returns bfloat16 [M, N]."""
    m, k = a.shape
    n = w.shape[0]
    if a.dtype != torch.bfloat16 or w.dtype != torch.uint8 or s.dtype != torch.float32:
        raise TypeError(f"w8a16_gemm: a bfloat16, w uint8, s float32; got {a.dtype}, {w.dtype}, {s.dtype}")
    if k % BLOCK_K or w.shape[1] != k or tuple(s.shape) != ((n + 127) // 128, k // 128):
        raise ValueError(f"w8a16_gemm: shapes a {tuple(a.shape)}, w {tuple(w.shape)}, s {tuple(s.shape)}")
    if split_k < 1:
        raise ValueError(f"w8a16_gemm: split_k must be >= 1, got {split_k}")
    if a.stride(1) != 1:
        a = a.contiguous()
    w, s = w.contiguous(), s.contiguous()
    c = torch.empty((m, n), dtype=torch.bfloat16, device=a.device)
    acc = torch.zeros((m, n), dtype=torch.float32, device=a.device) if split_k > 1 else c
    grid = (triton.cdiv(m, BLOCK_M), triton.cdiv(n, BLOCK_N), split_k)
    _w8a16_kernel[grid](a, w, s, c, acc, m, n, k, a.stride(0), w.stride(0), s.stride(0), c.stride(0),
                        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, SPLIT_K=split_k)
    if split_k > 1:
        c = acc.to(torch.bfloat16)  # one RNE rounding of the summed FP32 partials
    return c


def dequantize_bf16(w: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
    """W's codes times their block scales as BF16 [N, K], once (the cuBLAS comparison's weights).
    With power-of-two scales (invariance's operands) every value is exact in BF16."""
    n, k = w.shape
    full = s.repeat_interleave(128, dim=0)[:n].repeat_interleave(128, dim=1)
    return (w.view(torch.float8_e4m3fn).to(torch.float32) * full).to(torch.bfloat16)
