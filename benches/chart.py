"""The PNG chart: encode (1 thread), batch, decode, training and loading, side by side."""

from __future__ import annotations

from pathlib import Path

from .config import ENCODE_LIBS, ENCODE_PATTERNS, LOAD_FORMATS, TRAIN_LIBS

COLORS = {
    "toksmith": "#d62728",
    "tiktoken": "#1f77b4",
    "fastokens": "#2ca02c",
    "hf": "#ff7f0e",
    "rustbpe": "#9467bd",
}
NAMES = {"hf": "HF tokenizers"}


def _bars(ax, groups, series, values, title, ylabel, note=None):
    import numpy as np

    x = np.arange(len(groups))
    n = max(1, len(series))
    width = 0.8 / n
    for i, (name, color) in enumerate(series):
        vals = [values.get((g, name)) for g in groups]
        ys = [v if v is not None else 0 for v in vals]
        bars = ax.bar(
            x + (i - (n - 1) / 2) * width, ys, width, label=NAMES.get(name, name), color=color
        )
        for b, v in zip(bars, vals):
            if v is None:
                ax.text(
                    b.get_x() + b.get_width() / 2,
                    0,
                    "n/a",
                    ha="center",
                    va="bottom",
                    fontsize=6,
                    rotation=90,
                )
            else:
                ax.text(
                    b.get_x() + b.get_width() / 2,
                    b.get_height(),
                    f"{v:.3g}",
                    ha="center",
                    va="bottom",
                    fontsize=6,
                )
    ax.set_xticks(x)
    ax.set_xticklabels(groups, fontsize=8)
    ax.set_title(title, fontsize=10)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.tick_params(axis="y", labelsize=7)
    ax.legend(fontsize=7)
    if note:
        ax.text(
            0.99, 0.98, note, transform=ax.transAxes, ha="right", va="top", fontsize=7, color="#555"
        )


def draw(res: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 3, figsize=(17, 8))
    enc = res.get("encode") or {}
    libs = [(lib, COLORS[lib]) for lib in ENCODE_LIBS]
    ok = lambda s: s and not s.get("error") and s.get("ids_equal") is not False  # noqa: E731
    vals = {(p, lib): enc[p][lib]["text_mbps"] for p in enc for lib in enc[p] if ok(enc[p][lib])}
    _bars(
        axes[0, 0],
        list(enc) or list(ENCODE_PATTERNS),
        libs,
        vals,
        "encode, 1 thread, one large string",
        "MB/s (higher is better)",
    )

    bt = res.get("batch") or {}
    vals = {}
    series = [("toksmith", COLORS["toksmith"])] + [
        (lib, COLORS[lib]) for lib in ENCODE_LIBS if lib != "toksmith"
    ]
    for p, b in bt.items():
        for _label, v in b.items():
            if v.get("error") or v.get("ids_equal") is False:
                continue
            if v["lib"] == "toksmith" and v["threads"] != max(x["threads"] for x in b.values()):
                continue
            vals[(p, v["lib"])] = v["mbps"]
    cores = res.get("machine", {}).get("cores")
    _bars(
        axes[0, 1],
        list(bt) or list(ENCODE_PATTERNS),
        series,
        vals,
        f"batch encode, {cores} threads",
        "MB/s (higher is better)",
    )

    vals = {
        (p, lib): enc[p][lib].get("decode_mbps") for p in enc for lib in enc[p] if ok(enc[p][lib])
    }
    _bars(
        axes[1, 0],
        list(enc) or list(ENCODE_PATTERNS),
        libs,
        vals,
        "decode",
        "MB/s of text (higher is better)",
    )

    tr = res.get("train") or {}
    groups, vals = [], {}
    for row in tr.get("rows", []):
        g = f"{row['pattern']}\n{row['vocab']}"
        groups.append(g)
        for lib in TRAIN_LIBS:
            vals[(g, lib)] = row["libs"][lib].get("wall_s")
    mbytes = tr.get("corpus_bytes", 0) / 1e6
    _bars(
        axes[1, 1],
        groups,
        [(lib, COLORS[lib]) for lib in TRAIN_LIBS],
        vals,
        f"training on {mbytes:.0f} MB (pattern, vocab)",
        "wall seconds (lower is better)",
    )
    ld = (res.get("load") or {}).get("cl100k") or {}
    files = {
        "tiktoken": ".tiktoken",
        "tokenizer.json": "tokenizer.json",
        "toksmith": "toksmith JSON",
    }
    groups, vals = [], {}
    for fmt_name, libs_of in LOAD_FORMATS.items():
        if fmt_name not in ld:
            continue
        groups.append(files[fmt_name])
        for lib in libs_of:
            s = ld[fmt_name].get(lib) or {}
            if "s" in s:
                vals[(files[fmt_name], lib)] = s["s"] * 1e3
    if groups:
        _bars(
            axes[0, 2],
            groups,
            libs,
            vals,
            "loading cl100k from a file (fresh process)",
            "milliseconds (lower is better)",
        )
    else:
        axes[0, 2].axis("off")
    axes[1, 2].axis("off")
    m = res.get("machine", {})
    fig.suptitle(
        f"toksmith vs peers — {m.get('cpu_model', '')}, {cores} cores, mode {res.get('mode')}",
        fontsize=11,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
