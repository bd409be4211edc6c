# SPDX-License-Identifier: MIT OR Apache-2.0
# A pytest gate for a kernel launched from Python, with w8a16check.compare (reports/README.md,
# "Checking a kernel launched from Python"). Copy it beside a project's own tests and replace
# `launch_on_gpu` with the project's launch (a Triton kernel, a torch extension, ...).
#
#   python -m pytest -rs examples/python/test_kernel_gate.py
#
# In CI without a GPU the stand-in runs: an emulated kernel, which checks the gate itself (a kernel
# that meets the contract passes, one with a planted bug fails naming the element and the step).
# Where torch, a GPU and a kernel module are present ($W8A16_MODULE: a cubin or fatbin holding
# w8a16_gemv_batch4_strided, e.g. the consumer's build/.../consumer_kernels.fatbin), the real launch
# runs; elsewhere it is SKIPPED with the reason (-rs prints it), never passed.
import ctypes
import os

import numpy as np
import pytest

import w8a16check

# Operands as w8a16check draws them (a case line regenerates them on any machine, golden/README.md):
# 3 rows, 100 columns, 6 K steps, values like activations.
CASE = ("case/1 w8a16_gemv_batch4_strided m=3 n=100 k=768 a_row_stride=768 c_row_stride=100 "
        "dist=activation_like seed=0x00000000000000a1 gen=1")
ENTRY = "gemv_batch4_strided"


def operands():
    d = w8a16check.case_inputs(CASE)
    m, n, k = d["m"], d["n"], d["k"]
    return d["a"].reshape(m, k), d["w"].reshape(n, k), d["s"].reshape((n + 127) // 128, k // 128)


def emulated_kernel(a, w, s):
    """The stand-in: what a kernel that meets the GEMV order (NUMERICS.md 2.2) writes."""
    return w8a16check.gemm(np.ascontiguousarray(a), w, s, contract="gemv")


def test_a_kernel_that_meets_the_contract_passes():
    a, w, s = operands()
    result = w8a16check.compare(emulated_kernel(a, w, s), a, w, s, entry=ENTRY)
    assert result, result.explain()


def test_a_planted_bug_is_named():
    a, w, s = operands()

    def dropped_last_step(a_, w_, s_):  # a kernel whose last 128-K step reads a zero scale
        s_ = s_.copy()
        if s_.shape[1] == s.shape[1]:  # the whole K (compare's replays of shorter prefixes are exact)
            s_[:, -1] = 0.0
        return emulated_kernel(a_, w_, s_)

    result = w8a16check.compare(dropped_last_step(a, w, s), a, w, s, entry=ENTRY, launch=dropped_last_step)
    assert not result and result.mismatches > 0
    assert result.diverging_step == s.shape[1] - 1, result.explain()


def _gpu_launch_or_skip():
    """launch(a, w, s) -> C running $W8A16_MODULE's w8a16_gemv_batch4_strided through torch's
    CUDA context (the driver API via ctypes: the kernel's ABI is docs/KERNEL_ABI.md 1.1), or a skip
    saying what is missing."""
    torch = pytest.importorskip("torch", reason="SKIPPED: torch is not installed: no real launch here")
    if not torch.cuda.is_available():
        pytest.skip("SKIPPED: no CUDA GPU visible to torch: no real launch here")
    module = os.environ.get("W8A16_MODULE", "")
    if not module or not os.path.isfile(module):
        pytest.skip("SKIPPED: $W8A16_MODULE names no kernel module file (a cubin or fatbin holding "
                    "w8a16_gemv_batch4_strided)")
    cuda = ctypes.CDLL("libcuda.so.1")
    torch.zeros(1, device="cuda")  # makes torch's (primary) context current on this thread

    def check(r, what):
        if r != 0:
            raise RuntimeError(f"{what}: CUresult {r}")

    mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
    with open(module, "rb") as f:
        image = f.read()
    check(cuda.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(image)), "cuModuleLoadData")
    check(cuda.cuModuleGetFunction(ctypes.byref(fn), mod, b"w8a16_gemv_batch4_strided"), "cuModuleGetFunction")
    cuda.cuLaunchKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p,
                                                                              ctypes.POINTER(ctypes.c_void_p),
                                                                              ctypes.c_void_p]

    def launch(a, w, s):
        m, k = a.shape
        n = w.shape[0]
        ta = torch.from_numpy(np.ascontiguousarray(a).view(np.int16)).cuda()
        tw = torch.from_numpy(np.ascontiguousarray(w)).cuda()
        ts = torch.from_numpy(np.ascontiguousarray(s)).cuda()
        tc = torch.zeros((m, n), dtype=torch.int16, device="cuda")
        args = [ctypes.c_void_p(t.data_ptr()) for t in (ta, tw, ts, tc)] + \
               [ctypes.c_uint32(v) for v in (m, n, k, k, n)]  # a_row_stride = k, c_row_stride = n
        params = (ctypes.c_void_p * len(args))(*[ctypes.cast(ctypes.pointer(x), ctypes.c_void_p) for x in args])
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        # The launch layer's geometry for this kernel (docs/KERNEL_ABI.md 2): ceil(N/8) CTAs of 256 threads.
        check(cuda.cuLaunchKernel(fn, (n + 7) // 8, 1, 1, 256, 1, 1, 0, stream, params, None), "cuLaunchKernel")
        torch.cuda.synchronize()
        return tc.cpu().numpy().view(np.uint16)

    return launch


def test_the_kernel_launched_from_pytorch_meets_the_contract():
    launch = _gpu_launch_or_skip()
    a, w, s = operands()
    result = w8a16check.compare(launch(a, w, s), a, w, s, entry=ENTRY, launch=launch)
    assert result, result.explain()
