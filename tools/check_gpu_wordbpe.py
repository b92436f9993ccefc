"""End-to-end check of the word-level preset's GPU embedding backends on a machine with CUDA,
cupy and torch (toksmith installed, e.g. from a wheel): `embeddings()` on each backend equals
the native CPU backend bit for bit, and `run()` writes the same embeddings CSV on each.

    python tools/check_gpu_wordbpe.py
"""

import json
import pathlib
import time

import numpy as np

from toksmith.presets import wordbpe

corpus = "tests/data/corpora/english_slice.txt"
out = {}
tok = wordbpe.train(corpus, 2000)
cpu = tok.embeddings(300, seed=5)
for backend in ("numpy", "cupy", "torch"):
    t = time.perf_counter()
    e = tok.embeddings(300, seed=5, backend=backend)
    if backend == "cupy":
        e = e.get()
    elif backend == "torch":
        out["torch_device"] = str(e.device)
        e = e.cpu().numpy()
    out[backend + "_equal_cpu"] = bool(np.array_equal(e, cpu))
files = {}
for backend in ("cpu", "cupy", "torch"):
    r = wordbpe.run(corpus, f"/tmp/o_{backend}", num_merges=2000, dim=64, seed=5, backend=backend)
    files[backend] = pathlib.Path(r["files"]["final_embeddings"]).read_bytes()
out["run_csv_cupy_equal_cpu"] = files["cupy"] == files["cpu"]
out["run_csv_torch_equal_cpu"] = files["torch"] == files["cpu"]
out["csv_bytes"] = len(files["cpu"])
print(json.dumps(out, indent=1))
