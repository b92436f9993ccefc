"""Texts for comparing toksmith with a model's reference library: multilingual, emoji, code,
English, whitespace runs and control characters, plus slices of the test corpora."""

from __future__ import annotations

import lzma
import os
import random
from typing import Iterable, List

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data")

MULTILINGUAL = [
    "Hello, world! It's 2024; we'll see 12345 items.",
    "Привет, мир! Как дела? Ёлка — это дерево.",
    "日本語のテキストです。東京は大きい都市です。漢字とかなカナ。",
    "中文文本：我爱北京天安门，天安门上太阳升。１２３４５",
    "한국어 텍스트입니다. 안녕하세요!",
    "العربية: مرحبا بالعالم، كيف حالك؟ ١٢٣",
    "हिन्दी पाठ: नमस्ते दुनिया। क्षत्रिय",
    "Ελληνικά: Καλημέρα κόσμε. ΑΒΓΔ",
    "עברית: שלום עולם",
    "ไทย: สวัสดีชาวโลก",
    "Emoji: 👍🏽 👨\u200d👩\u200d👧\u200d👦 🇫🇷 ❤️ 🤖🚀✨ 😀😀😀",
    "Combining: e\u0301 a\u0308 n\u0303 Å vs A\u030a; ﬁ ligature; ① ⅷ ²",
    "def f(x):\n    return x ** 2  # square\n\n\nclass A:\n\tpass\r\n",
    "for (int i = 0; i < n; ++i) { sum += a[i]; }  // C++\n",
    "   leading spaces\n\n\n  trailing   \t\n",
    "DON'T SHOUT, I'M HERE. You're, they've, we'd, I'll",
    "url: https://example.com/path?q=1&x=2#frag  /usr/bin/env  a/b/c//d",
    "numbers 1234567890 3.14159 1,000,000 0x1F -42",
    "\u00a0nbsp\u2003emsp\u3000ideographic\u200bzwsp\ufeffbom",
    "a" * 300 + " " + "ab" * 200,
    "\x00\x01\x7f control \u0085 nel \u2028 ls",
    "",
    " ",
]


def corpus_texts(per_file: int = 6, size: int = 2000) -> List[str]:
    out = []
    folder = os.path.join(DATA, "corpora")
    for f in sorted(os.listdir(folder)):
        if f.endswith(".txt"):
            with open(os.path.join(folder, f), encoding="utf-8") as fh:
                s = fh.read(per_file * size)
            out += [s[i : i + size] for i in range(0, len(s), size)]
    return out


def fuzz(n: int = 150, seed: int = 0) -> List[str]:
    r = random.Random(seed)
    pools = [" \n\t\r", "abcXYZ'", "0123456789", "éüñÅ", "日本中文", "👍🏽🇫", ".,;!?/-_()[]{}"]
    pools += ["\u0301\u0308\u200d\ufe0f", "ʼ’ﬁ²①"]
    return ["".join(r.choice(r.choice(pools)) for _ in range(r.randint(1, 60))) for _ in range(n)]


def with_specials(specials: Iterable[str], seed: int = 1) -> List[str]:
    r = random.Random(seed)
    sp = sorted(specials)
    out = []
    for t in MULTILINGUAL[:12]:
        i = r.randint(0, len(t))
        out.append(t[:i] + r.choice(sp) + t[i:] + r.choice(sp))
    return out


def all_texts(specials: Iterable[str] = ()) -> List[str]:
    sp = list(specials)
    return MULTILINGUAL + corpus_texts() + fuzz() + (with_specials(sp) if sp else [])


def unxz(name: str, dest) -> str:
    """Decompress ``tests/data/<name>.xz`` into the folder ``dest``; return the new path."""
    out = os.path.join(os.fspath(dest), os.path.basename(name))
    with lzma.open(os.path.join(DATA, name + ".xz"), "rb") as f, open(out, "wb") as g:
        g.write(f.read())
    return out
