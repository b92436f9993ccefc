"""Generate golden ids for the SentencePiece / Unigram / WordPiece models of toksmith-core.

Reference libraries: sentencepiece (the .model files) and tokenizers (the tokenizer.json files).
Writes crates/toksmith-core/tests/data/model_goldens.jsonl.xz: one JSON object per line,
{"model": NAME, "text": TEXT, "ids": [...], "decoded": TEXT}. Also copies the model files it uses
(xz-compressed) next to it. Run from the repository root:

    python3 tools/gen_model_goldens.py [ZOO_DIR] [CORPORA_DIR]
"""

import json
import lzma
import random
import sys
from pathlib import Path

import sentencepiece as spm
import tokenizers

ZOO = Path(sys.argv[1] if len(sys.argv) > 1 else "/work/shared/data/vocabs/zoo")
CORPORA = Path(sys.argv[2] if len(sys.argv) > 2 else "/work/shared/data/corpora")
OUT = Path("crates/toksmith-core/tests/data")

HANDWRITTEN = [
    "",
    " ",
    "   ",
    "Hello world",
    " Hello world",
    "  Hello   world  ",
    "Hello\tworld\n\nagain\r\n",
    "\n",
    "a",
    "▁",
    "▁▁hello▁",
    "def f(x):\n    return x ** 2  # square\n",
    "for (int i = 0; i < n; ++i) { sum += a[i]; }",
    "if [ -z \"$HOME\" ]; then echo 'no home'; fi",
    "The quick brown fox jumps over the lazy dog. It's 3.14159!",
    "don't won't I'm you're we've they'll",
    "Emoji: 😀🎉👍🏽 👨‍👩‍👧‍👦 🇫🇷",
    "Ünïcödé àccénts ÀÉÎÕÜ ñ ç ß ẞ",
    "ＦＵＬＬＷＩＤＴＨ ｈｅｌｌｏ １２３",
    "ﬁ ﬂ ĳ Ⅻ ① ㍿ ℡",
    "日本語のテキスト、中文文本。한국어 텍스트",
    "Привет, мир! Γειά σου Κόσμε! שלום עולם مرحبا بالعالم",
    "हिन्दी ภาษาไทย ქართული Հայերեն",
    "unknown chars: \u0001\u0002 \u2028 \ufeff \u200b \U0001d11e \U000e0041 \uffff",
    "</s> <s> <unk> <pad> [CLS] [SEP] [UNK] [MASK]",
    "<0x41> <0xFF>",
    "1234567890 12,345.67 3rd 1st",
    "a" * 300,
    "x" * 120 + " " + "supercalifragilisticexpialidocious" * 4,
    "tab\there  trailing   ",
    "MiXeD CaSe WoRdS",
    "e\u0301 o\u0308 n\u0303",
    "\u3000ideographic\u3000space",
    "Zero\u00a0width\u202fnbsp",
]


def sample_corpus(name, n, seed, max_len=400):
    lines = lzma.open(CORPORA / name, "rt", encoding="utf-8", errors="replace").read().split("\n")
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        i = rng.randrange(len(lines))
        k = rng.randrange(1, 4)
        out.append("\n".join(lines[i : i + k])[:max_len])
    return out


def random_texts(n, seed):
    """Strings over a pool that stresses normalizers and unknown-character paths."""
    rng = random.Random(seed)
    pool = (
        list("aAbBzZ09 .,;!?'\"-_()[]{}<>/\\#@$%^&*+=~`|")
        + [" "] * 8
        + ["\t", "\n", "\r", "\u00a0", "\u3000", "\u2581", "\u200b", "\u200d", "\ufeff", "\u0301"]
        + ["\u0308", "\u00e9", "\u00df", "\u0130", "\u03a3", "\u1e9e", "\uff21", "\uff41", "\ufb01"]
        + ["\u2460", "\u3231", "\u4e2d", "\u6587", "\uac00", "\u0e01", "\u0627", "\u05d0", "\u0915"]
        + ["\U0001f600", "\U0001f3fd", "\U0001f1eb", "\U000e0001", "\U0010fffd", "\uffff", "\u0378"]
        + ["\u0000", "\u0001", "\u001f", "\u007f", "\u0085", "\u2028", "\U0001d11e", "\U00020000"]
    )
    return ["".join(rng.choice(pool) for _ in range(rng.randrange(1, 40))) for _ in range(n)]


def texts():
    t = list(HANDWRITTEN)
    t += random_texts(80, 6)
    t += sample_corpus("multilingual_ui.txt.xz", 150, 1)
    t += sample_corpus("english.txt.xz", 40, 2)
    t += sample_corpus("python.txt.xz", 25, 3)
    t += sample_corpus("cpp.txt.xz", 15, 4)
    t += sample_corpus("shell.txt.xz", 10, 5)
    return t


def random_ids(n_vocab, n, seed):
    """Id sequences for decode-only goldens: low ids (control, unknown, byte pieces) often."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        k = rng.randrange(1, 16)
        out.append(
            [rng.randrange(300) if rng.random() < 0.5 else rng.randrange(n_vocab) for _ in range(k)]
        )
    return out


def copy_xz(src, name):
    data = Path(src).read_bytes()
    (OUT / name).write_bytes(lzma.compress(data, preset=9 | lzma.PRESET_EXTREME))


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    rows = []
    all_texts = texts()
    spm_models = {
        "llama2": ZOO / "llama2_tokenizer.model",
        "mistral_v1": ZOO / "mistral_v1_tokenizer.model",
        "t5_spm": ZOO / "t5_v1_1/spiece.model",
    }
    for name, path in spm_models.items():
        copy_xz(path, name + ".model.xz")
        sp = spm.SentencePieceProcessor(model_file=str(path))
        for text in all_texts:
            ids = sp.encode(text)
            rows.append({"model": name, "text": text, "ids": ids, "decoded": sp.decode(ids)})
        for ids in random_ids(sp.get_piece_size(), 60, sum(map(ord, name))):
            rows.append({"model": name, "text": None, "ids": ids, "decoded": sp.decode(ids)})
    t5_json = lzma.open(ZOO / "t5_v1_1/tokenizer.json.xz").read()
    # the T5 pipeline is rebuilt from spiece.model in the tests (same vocab and charsmap)
    bert_json = (ZOO / "bert_base_uncased/tokenizer.json").read_bytes()
    copy_xz(ZOO / "bert_base_uncased/vocab.txt", "bert_base_uncased_vocab.txt.xz")
    for name, raw in [("t5_hf", t5_json), ("bert_hf", bert_json)]:
        tok = tokenizers.Tokenizer.from_str(raw.decode("utf-8"))
        for text in all_texts:
            ids = tok.encode(text, add_special_tokens=False).ids
            rows.append(
                {
                    "model": name,
                    "text": text,
                    "ids": ids,
                    "decoded": tok.decode(ids, skip_special_tokens=False),
                }
            )
        for ids in random_ids(tok.get_vocab_size(), 60, len(name)):
            rows.append(
                {
                    "model": name,
                    "text": None,
                    "ids": ids,
                    "decoded": tok.decode(ids, skip_special_tokens=False),
                }
            )
    with lzma.open(OUT / "model_goldens.jsonl.xz", "wt", encoding="utf-8", preset=9) as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(len(rows), "goldens; versions:", spm.__version__, tokenizers.__version__)


if __name__ == "__main__":
    main()
