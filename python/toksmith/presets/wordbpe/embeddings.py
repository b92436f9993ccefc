"""Token embeddings for the word-level preset: one fixed vector per token, from its text alone.

The formula (seed 004 asks for "a unique, fixed-size numerical vector for each token" from a
per-token seed; this is toksmith's, chosen so that every backend gives the same numbers):

1. the token's seed is ``splitmix64(fnv1a64(text.encode()) ^ seed)``;
2. component ``i`` is ``2 u - 1`` with ``u = (splitmix64(token_seed + i * 0x9E3779B97F4A7C15)
   >> 11) / 2**53``, i.e. the ``i``-th output of a SplitMix64 generator started at the token's
   seed, as a double in [-1, 1) (exact);
3. the vector is scaled to unit length in double precision and stored as float32.

Backends: ``"cpu"`` (the Rust core, all cores), ``"numpy"``, ``"cupy"`` (CUDA) and ``"torch"``
(any torch device: ``device="cuda"``, ``"mps"``, ``"cpu"``). They agree to float32 rounding
(the sum of squares may be added in a different order).

This module needs nothing but the standard library at import time (the backends import numpy,
cupy or torch when used), so it can be loaded on its own.

>>> round(sum(x * x for x in embed_reference(["hello</w>"], 8)[0]), 6)
1.0
"""

from __future__ import annotations

import operator
from typing import Any, Iterable, List, Sequence, Sized

MASK64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
_M1 = 0xBF58476D1CE4E5B9
_M2 = 0x94D049BB133111EB
_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3

BACKENDS = ("cpu", "numpy", "cupy", "torch")
#: the most numbers (``dim * number of tokens``) one embedding table may hold: 2**31 float32,
#: 8 GiB (a larger request is refused before anything is allocated)
MAX_FLOATS = 2**31
#: rows computed at a time by the array backends (bounds their temporary memory)
ROWS_PER_STEP = 4096


def _int(value: Any, what: str) -> int:
    """``value`` as a Python int (numpy integers too: their fixed width overflowed in the
    arithmetic); a bool or a non-integer is a TypeError."""
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise TypeError(f"{what} must be an int, not {type(value).__name__}")
    return operator.index(value)


def _check_tokens(tokens: Any) -> None:
    if (
        isinstance(tokens, (str, bytes, bytearray))
        or not isinstance(tokens, Sized)
        or not isinstance(tokens, Iterable)
    ):
        raise TypeError(
            f"tokens must be a list of str, not {type(tokens).__name__}"
            + ("; wrap one token in a list" if isinstance(tokens, str) else "")
        )


def splitmix64(x: int) -> int:
    """One SplitMix64 output for state ``x`` (the state advanced by the golden gamma first)."""
    x = _int(x, "x")
    z = (x + GOLDEN) & MASK64
    z = ((z ^ (z >> 30)) * _M1) & MASK64
    z = ((z ^ (z >> 27)) * _M2) & MASK64
    return z ^ (z >> 31)


def token_seed(text: str, seed: int = 0) -> int:
    """The seed of a token's vector: SplitMix64 of the FNV-1a hash of its UTF-8, xor ``seed``."""
    if not isinstance(text, str):
        raise TypeError(f"a token must be a str, not {type(text).__name__} ({text!r})")
    seed = _int(seed, "seed")
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError(
            f"the token {text!r} holds a lone surrogate (U+{ord(text[e.start]):04X}) that UTF-8 "
            f"cannot encode; pass tokens of valid text"
        ) from None
    h = _FNV_OFFSET
    for b in data:
        h = ((h ^ b) * _FNV_PRIME) & MASK64
    return splitmix64(h ^ (seed & MASK64))


def embed_reference(tokens: Sequence[str], dim: int, seed: int = 0) -> List[List[float]]:
    """The formula in plain Python (slow; the tests check every backend against it)."""
    _check_tokens(tokens)
    check_args(dim, seed, "cpu", len(tokens))
    rows = []
    for t in tokens:
        s = token_seed(t, seed)
        v = [
            2.0 * ((splitmix64((s + i * GOLDEN) & MASK64) >> 11) * 2.0**-53) - 1.0
            for i in range(dim)
        ]
        norm = sum(c * c for c in v) ** 0.5
        rows.append([c / norm if norm > 0 else 0.0 for c in v])
    return rows


def check_dim(dim: Any, n_tokens: int = 1) -> None:
    """``dim`` must be an int >= 1 (TypeError / ValueError), and a table of ``n_tokens`` rows of
    ``dim`` numbers must hold at most :data:`MAX_FLOATS` of them (ValueError)."""
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"dim must be an int, not {type(dim).__name__}")
    if dim < 1:
        raise ValueError(f"dim must be >= 1, not {dim}")
    if isinstance(n_tokens, bool) or not isinstance(n_tokens, int):
        raise TypeError(f"n_tokens must be an int, not {type(n_tokens).__name__}")
    if n_tokens < 0:
        raise ValueError(f"n_tokens must be a number of tokens >= 0, not {n_tokens}")
    n = max(1, n_tokens)
    if dim * n > MAX_FLOATS:
        raise ValueError(
            f"dim={dim} is too large: {n} tokens x {dim} numbers is more than the limit of "
            f"{MAX_FLOATS} (2**31) float32 numbers per embedding table; pass dim <= {MAX_FLOATS // n}"
        )


def check_args(dim: Any, seed: Any, backend: Any, n_tokens: int = 1) -> None:
    """Check the embedding arguments: ``dim`` (:func:`check_dim` for ``n_tokens`` tokens), ``seed``
    (an int in 0..2**64-1) and ``backend`` (one of :data:`BACKENDS`)."""
    check_dim(dim, n_tokens)
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise TypeError(f"seed must be an int, not {type(seed).__name__}")
    if not 0 <= seed <= MASK64:
        raise ValueError(f"seed must be in 0..2**64-1, not {seed}")
    if not isinstance(backend, str):
        raise TypeError(f"backend must be a str, one of {BACKENDS}, not {type(backend).__name__}")
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, not {backend!r}")


def _need(module: str, extra: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(f"this embedding backend needs {module}: pip install {extra}") from None


#: what to install for each GPU backend (cupy's wheels are named after the CUDA version)
GPU_PACKAGES = {
    "cupy": "cupy-cuda12x (or the cupy wheel for your CUDA version, e.g. cupy-cuda11x)",
    "torch": "torch",
}


def gpu_backend(backend: str, device: Any = None) -> Any:
    """The module of the ``"cupy"`` or ``"torch"`` backend, checked to have a device to run on:
    ImportError naming the package to install when it is missing; ValueError saying what to pass
    instead when cupy finds no CUDA GPU, or ``device`` is no torch device or a CUDA device torch
    cannot use (``device=None`` is CUDA when available, else the CPU)."""
    if not isinstance(backend, str):
        raise TypeError(
            f"backend must be a str, one of {tuple(GPU_PACKAGES)}, not {type(backend).__name__}"
        )
    if backend not in GPU_PACKAGES:
        raise ValueError(f"backend must be one of {tuple(GPU_PACKAGES)}, not {backend!r}")
    module = _need(backend, GPU_PACKAGES[backend])
    if backend == "cupy":
        try:
            n, why = module.cuda.runtime.getDeviceCount(), "0 devices"
        except Exception as e:  # cupy's CUDARuntimeError: no driver, no device
            n, why = 0, f"{type(e).__name__}: {e}"
        if n < 1:
            raise ValueError(
                f"backend='cupy' needs a CUDA GPU, but cupy finds no CUDA GPU ({why}): pass "
                f"backend='cpu' or 'numpy' (the same numbers)"
            )
        return module
    if device is None:
        return module
    try:
        dev = module.device(device)
    except (RuntimeError, TypeError, ValueError) as e:
        raise ValueError(
            f"device must be a torch device such as 'cuda', 'cuda:0' or 'cpu', not {device!r} ({e})"
        ) from None
    if dev.type == "cuda":
        if not module.cuda.is_available():
            raise ValueError(
                f"device={device!r}, but torch finds no CUDA GPU (torch.cuda.is_available() is "
                f"False): pass device='cpu', or backend='cpu' (the same numbers)"
            )
        count = module.cuda.device_count()
        if dev.index is not None and not 0 <= dev.index < count:
            raise ValueError(
                f"device={device!r}, but torch sees {count} CUDA device(s): pass 'cuda:0'"
                f"{f' .. cuda:{count - 1}' if count > 1 else ''}"
            )
    return module


def embed_numpy(tokens: Sequence[str], dim: int, seed: int = 0, xp: Any = None) -> Any:
    """The embeddings as a float32 array of shape (len(tokens), dim), computed with ``xp``
    (numpy, or cupy for the GPU: the result then stays on the device)."""
    _check_tokens(tokens)
    check_args(dim, seed, "numpy", len(tokens))
    if xp is None:
        xp = _need("numpy", "toksmith[numpy]")
    elif not all(callable(getattr(xp, f, None)) for f in ("asarray", "empty", "arange", "uint64")):
        raise TypeError(
            f"xp must be an array module (numpy, or cupy for the GPU) or None, not {type(xp).__name__}"
        )
    seeds = xp.asarray([token_seed(t, seed) for t in tokens], dtype=xp.uint64)
    out = xp.empty((len(tokens), dim), dtype=xp.float32)
    steps = xp.arange(dim, dtype=xp.uint64) * xp.uint64(GOLDEN)
    for lo in range(0, len(tokens), ROWS_PER_STEP):
        z = seeds[lo : lo + ROWS_PER_STEP, None] + steps[None, :]
        z = z + xp.uint64(GOLDEN)
        z = (z ^ (z >> xp.uint64(30))) * xp.uint64(_M1)
        z = (z ^ (z >> xp.uint64(27))) * xp.uint64(_M2)
        z = z ^ (z >> xp.uint64(31))
        v = (z >> xp.uint64(11)).astype(xp.float64) * (2.0**-53) * 2.0 - 1.0
        norm = xp.sqrt((v * v).sum(axis=1, keepdims=True))
        out[lo : lo + ROWS_PER_STEP] = xp.where(norm > 0, v / xp.where(norm > 0, norm, 1.0), 0.0)
    return out


def _signed(x: int) -> int:
    return x - (1 << 64) if x >= 1 << 63 else x


def embed_torch(tokens: Sequence[str], dim: int, seed: int = 0, device: Any = None) -> Any:
    """The embeddings as a float32 torch tensor on ``device`` (default: CUDA if available).
    Torch has no unsigned 64-bit arithmetic, so the hash runs on int64 (wrapping multiply and
    add are the same bits) with logical right shifts made by masking."""
    _check_tokens(tokens)
    check_args(dim, seed, "torch", len(tokens))
    torch = gpu_backend("torch", device)
    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"

    def srl(z: Any, k: int) -> Any:
        return (z >> k) & ((1 << (64 - k)) - 1)

    seeds = torch.tensor(
        [_signed(token_seed(t, seed)) for t in tokens], dtype=torch.int64, device=device
    )
    steps = torch.arange(dim, dtype=torch.int64, device=device) * _signed(GOLDEN)
    out = torch.empty((len(tokens), dim), dtype=torch.float32, device=device)
    for lo in range(0, len(tokens), ROWS_PER_STEP):
        z = seeds[lo : lo + ROWS_PER_STEP, None] + steps[None, :]
        z = z + _signed(GOLDEN)
        z = (z ^ srl(z, 30)) * _signed(_M1)
        z = (z ^ srl(z, 27)) * _signed(_M2)
        z = z ^ srl(z, 31)
        v = srl(z, 11).to(torch.float64) * (2.0**-53) * 2.0 - 1.0
        norm = torch.sqrt((v * v).sum(dim=1, keepdim=True))
        out[lo : lo + ROWS_PER_STEP] = torch.where(
            norm > 0, v / torch.where(norm > 0, norm, torch.ones_like(norm)), torch.zeros_like(v)
        ).to(torch.float32)
    return out


__all__ = [
    "BACKENDS",
    "MAX_FLOATS",
    "GPU_PACKAGES",
    "check_args",
    "check_dim",
    "splitmix64",
    "token_seed",
    "embed_reference",
    "embed_numpy",
    "embed_torch",
    "gpu_backend",
]
