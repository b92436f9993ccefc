"""Check the GPU embedding backends of the word-level preset against numpy and the plain-Python
formula, and time them. Needs only numpy (and cupy / torch for the GPU): it loads
``python/toksmith/presets/wordbpe/embeddings.py`` by path, so it runs where toksmith is not built.

    python tools/check_gpu_embeddings.py [--tokens 50000] [--dim 300] [--out results.json]
"""

import argparse
import importlib.util
import json
import pathlib
import time

HERE = pathlib.Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location(
    "embeddings", HERE / "python/toksmith/presets/wordbpe/embeddings.py"
)
E = importlib.util.module_from_spec(spec)
spec.loader.exec_module(E)


def tokens(n):
    alphabet = "abcdefghijklmnopqrstuvwxyzéжя中😀"
    out = []
    for i in range(n):
        s, k = "", i + 1
        while k:
            s += alphabet[k % len(alphabet)]
            k //= len(alphabet)
        out.append(s + ("</w>" if i % 3 else ""))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=50000)
    ap.add_argument("--dim", type=int, default=300)
    ap.add_argument("--seed", type=int, default=12345)
    ap.add_argument("--out")
    a = ap.parse_args()
    import numpy as np

    toks = tokens(a.tokens)
    report = {"tokens": a.tokens, "dim": a.dim}
    t = time.perf_counter()
    ref_np = E.embed_numpy(toks, a.dim, a.seed)
    report["numpy_s"] = time.perf_counter() - t
    plain = np.array(E.embed_reference(toks[:200], a.dim, a.seed), dtype=np.float32)
    report["numpy_vs_plain_max_abs"] = float(np.abs(ref_np[:200] - plain).max())
    try:
        import cupy as cp

        E.embed_numpy(toks[:10], a.dim, a.seed, xp=cp)  # warm up (kernel compilation)
        cp.cuda.Device().synchronize()
        t = time.perf_counter()
        g = E.embed_numpy(toks, a.dim, a.seed, xp=cp)
        cp.cuda.Device().synchronize()
        report["cupy_s"] = time.perf_counter() - t
        report["cupy_vs_numpy_max_abs"] = float(np.abs(cp.asnumpy(g) - ref_np).max())
        report["cupy_equal"] = bool((cp.asnumpy(g) == ref_np).all())
    except ImportError as e:
        report["cupy"] = str(e)
    try:
        import torch

        dev = "cuda" if torch.cuda.is_available() else "cpu"
        report["torch_device"] = dev
        E.embed_torch(toks[:10], a.dim, a.seed, device=dev)
        if dev == "cuda":
            torch.cuda.synchronize()
        t = time.perf_counter()
        g = E.embed_torch(toks, a.dim, a.seed, device=dev)
        if dev == "cuda":
            torch.cuda.synchronize()
        report["torch_s"] = time.perf_counter() - t
        g = g.cpu().numpy()
        report["torch_vs_numpy_max_abs"] = float(np.abs(g - ref_np).max())
        report["torch_equal"] = bool((g == ref_np).all())
        c = E.embed_torch(toks[:2000], a.dim, a.seed, device="cpu").numpy()
        report["torch_cpu_equal"] = bool((c == ref_np[:2000]).all())
    except ImportError as e:
        report["torch"] = str(e)
    print(json.dumps(report, indent=1))
    if a.out:
        pathlib.Path(a.out).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
