# SPDX-License-Identifier: MIT OR Apache-2.0
# Batch invariance of three GPU GEMMs through w8a16check.invariance: the Triton W8A16 kernel of this
# folder with split_k = 1 and split_k = 4, and cuBLAS BF16 through torch.nn.functional.linear on W
# dequantized once to BF16; then split_k = 1 again with split_k = 4 as its tier (the tier verdict:
# the same kernel on its other split, C held to split_k = 1's bit for bit at every M). Prints a table
# (each verdict's PASS/FAIL and the first M where it breaks) and writes JSON. On the GPU machine,
# from the repository root:
#
#   PYTHONPATH=reports/python python3 examples/triton/run_invariance.py --json invariance-triton.json
#
# The sweep is the C++ engine of `w8a16check invariance` (through w8a16check._core), so the python3
# that runs this needs a _core built for it: on the GPU machine (python 3.12, with torch and Triton)
# `tools/gpu-python` builds one here to carry (build/py312, W8A16_BUILD_DIR=build/py312 there).
import argparse
import json
import pathlib
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]


def load_invariance():
    """w8a16check.invariance; SystemExit naming what is missing where _core does not load."""
    try:
        import w8a16check
    except ImportError as e:
        raise SystemExit(f"run_invariance: `import w8a16check` failed ({e}): the invariance sweep is the C++ "
                         "engine's, so this python needs a _core built for it (tools/gpu-python)") from None
    return w8a16check.invariance


def kernels():
    import torch
    import torch.nn.functional as F

    sys.path.insert(0, str(HERE))
    from w8a16_triton import dequantize_bf16, w8a16_gemm

    cache = {}

    def cublas(a, w, s):
        # W dequantized once per (W, S) and kept: the timing-free stand-in for serving BF16 weights.
        key = (w.data_ptr(), s.data_ptr())
        if key not in cache:
            cache.clear()
            cache[key] = dequantize_bf16(w, s)
        return F.linear(a, cache[key])

    return {
        "triton split_k=1": lambda a, w, s: w8a16_gemm(a, w, s, split_k=1),
        "triton split_k=4": lambda a, w, s: w8a16_gemm(a, w, s, split_k=4),
        "cublas bf16 (F.linear)": cublas,
    }, torch


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--n", type=int, default=4096)
    p.add_argument("--k", type=int, default=4096)
    p.add_argument("--m-max", type=int, default=130, help="M from 1 to this (default 130)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--contract", default=None, help="also the contract verdict (needs w8a16check._core)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds a call may take before it is a hang")
    p.add_argument("--json", default="invariance-triton.json")
    args = p.parse_args(argv)

    invariance = load_invariance()
    fns, torch = kernels()
    if not torch.cuda.is_available():
        print("no CUDA device: nothing to run", file=sys.stderr)
        return 77
    device = torch.cuda.get_device_name(0)
    print(f"device: {device}; torch {torch.__version__}; N={args.n} K={args.k} M 1..{args.m_max}")
    rows, out = [], {"device": device, "torch": torch.__version__, "n": args.n, "k": args.k,
                     "m_max": args.m_max, "seed": args.seed, "kernels": {}}
    try:
        import triton
        out["triton"] = triton.__version__
    except ImportError:
        pass
    # Each kernel alone (the rows docs/JOURNAL.md records), then split_k = 4 as a tier of split_k = 1:
    # the same kernel on its other split, its C held to split_k = 1's bit for bit at every M.
    runs = [(name, fn, {}) for name, fn in fns.items()]
    runs.append(("triton split_k=1, tier 4", fns["triton split_k=1"],
                 {"label": "split_k=1", "tiers": {"split_k=4": fns["triton split_k=4"]}}))
    for name, fn, tier_kwargs in runs:
        t0 = time.time()
        r = invariance(fn, args.n, args.k, m_values=range(1, args.m_max + 1), seed=args.seed,
                       contract=args.contract, backend="torch", device="cuda", timeout=args.timeout, **tier_kwargs)
        secs = time.time() - t0
        print(r.explain())
        d = r.to_dict()
        d["seconds"] = round(secs, 2)
        out["kernels"][name] = d
        rows.append((name, r, secs))
    verdicts = ["run-to-run", "batch", "tier"] + (["contract"] if args.contract else [])
    print()
    print(f"{'kernel':<26}" + "".join(f"{v:<26}" for v in verdicts) + "seconds")
    for name, r, secs in rows:
        cells = []
        for v in verdicts:
            vd = r.verdicts[v]
            if not vd.asked:
                cells.append("-")  # passed is true for a verdict not asked: not a result to print
            elif vd.passed:
                cells.append("invariant" if v not in ("tier", "contract") else "PASS")
            else:
                cells.append(f"FAIL from M={vd.first.m}" if vd.first else "FAIL: nothing compared")
        print(f"{name:<26}" + "".join(f"{c[:25]:<26}" for c in cells) + f"{secs:.1f}")
    pathlib.Path(args.json).write_text(json.dumps(out, indent=1))
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
