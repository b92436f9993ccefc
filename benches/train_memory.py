"""Training memory per unique chunk: peak RSS growth of one training run divided by the number
of unique chunks, for toksmith, rustbpe and Hugging Face `tokenizers` on the same synthetic
corpus (N distinct lowercase words, each once, in lines of 1,000 words).

Each measurement runs in its own child process (ru_maxrss is a per-process high-water mark).
Usage: python3 benches/train_memory.py [N_WORDS] [MERGES]
"""

import os
import resource
import subprocess
import sys
import tempfile

PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def word(i: int) -> str:
    # distinct for distinct i: base-26 digits of a scrambled i (bijective on 0..2**32)
    x = (i * 2654435761) % (1 << 32)
    s = []
    while True:
        s.append(chr(97 + x % 26))
        x //= 26
        if x == 0:
            break
    return "".join(s)


def write_corpus(path: str, n: int) -> None:
    with open(path, "w") as f:
        for start in range(0, n, 1000):
            f.write(" ".join(word(i) for i in range(start, min(n, start + 1000))) + "\n")


def lines(path: str):
    with open(path) as f:
        yield from f


def run(engine: str, path: str, merges: int) -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    unique = None
    if engine == "toksmith":
        from toksmith import _core

        c = _core.ChunkCounter("gpt2")
        c.add_file(path)
        unique = c.stats()["unique"]
        c.train(merges)
    elif engine == "rustbpe":
        import rustbpe

        t = rustbpe.Tokenizer()
        t.train_from_iterator(lines(path), 256 + merges, pattern=PATTERN)
    elif engine == "tokenizers":
        from tokenizers import Tokenizer, models, pre_tokenizers, trainers

        t = Tokenizer(models.BPE())
        t.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tr = trainers.BpeTrainer(
            vocab_size=256 + merges,
            show_progress=False,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        )
        t.train_from_iterator(lines(path), tr)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"{engine} {(after - before) * 1024} {unique}")


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        run(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        return
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2_000_000
    merges = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    engines = sys.argv[3].split(",") if len(sys.argv) > 3 else ["toksmith", "rustbpe", "tokenizers"]
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "corpus.txt")
        write_corpus(path, n)
        print(f"{n} unique words, {os.path.getsize(path) / 1e6:.1f} MB, {merges} merges")
        for engine in engines:
            out = subprocess.run(
                [sys.executable, __file__, "--child", engine, path, str(merges)],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.split()
            peak = int(out[1])
            print(
                f"{engine:>10}: peak RSS +{peak / 1e6:8.1f} MB = {peak / n:6.1f} bytes per unique chunk"
            )


if __name__ == "__main__":
    main()
