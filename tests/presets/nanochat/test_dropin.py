"""nanochat as a drop-in: a folder nanochat's own save code wrote (tokenizer.pkl, a pickled
tiktoken Encoding) loads with identical ids, read by a restricted unpickler that refuses any
other pickle without running it; from_pretrained, the (enc, bos_token) constructor and
token_bytes as nanochat's tok_train writes them."""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import pickletools
import shutil
import subprocess
import sys

import numpy as np
import pytest

import toksmith
from tests.conftest import CL100K_TIKTOKEN, DATA
from toksmith import TokenizerFileError
from toksmith.presets.nanochat import (
    SPECIAL_TOKENS,
    SPLIT_PATTERN,
    TOKEN_BYTES_NAME,
    ChatTokenizer,
    load_token_bytes,
)
from toksmith.presets.nanochat.tiktoken_pickle import read_encoding_pickle_bytes

tiktoken = pytest.importorskip("tiktoken")

#: held out: the tokenizers below are trained on the chat slice only
HELD_OUT = [
    (DATA / "corpora" / name).read_text(encoding="utf-8")[:20000]
    for name in ("english_slice.txt", "python_slice.txt", "cpp_slice.txt")
] + ["Unicode: 你好世界 🌍 naïve Grüße\r\n\t  12345 it's <|bos|> <|user_start|>"]


def _nanochat_encoding(texts, vocab_size):
    """The tiktoken Encoding nanochat's RustBPETokenizer.train_from_iterator builds: rustbpe's
    ranks and pattern, the nine special tokens right after them (nanochat's code semantics)."""
    rustbpe = pytest.importorskip("rustbpe")
    trainer = rustbpe.Tokenizer()
    trainer.train_from_iterator(texts, vocab_size - len(SPECIAL_TOKENS), pattern=SPLIT_PATTERN)
    ranks = {bytes(k): v for k, v in trainer.get_mergeable_ranks()}
    specials = {name: len(ranks) + i for i, name in enumerate(SPECIAL_TOKENS)}
    return tiktoken.Encoding(
        name="rustbpe",
        pat_str=trainer.get_pattern(),
        mergeable_ranks=ranks,
        special_tokens=specials,
    )


@pytest.fixture(scope="module")
def nanochat_enc():
    from tests.presets.nanochat.conftest import chat_texts

    return _nanochat_encoding(list(chat_texts()), 700)


def _save_like_nanochat(enc, folder, protocol=None):
    # nanochat's RustBPETokenizer.save: os.makedirs + pickle.dump(self.enc, f)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "tokenizer.pkl"), "wb") as f:
        pickle.dump(enc, f, protocol=protocol)


def test_a_nanochat_folder_loads_with_identical_ids(nanochat_enc, tmp_path):
    _save_like_nanochat(nanochat_enc, tmp_path / "tokenizer")
    chat = ChatTokenizer.from_directory(tmp_path / "tokenizer")
    assert chat.get_vocab_size() == nanochat_enc.n_vocab == 700
    assert chat.get_bos_token_id() == nanochat_enc.encode_single_token("<|bos|>")
    assert chat.get_special_tokens() == nanochat_enc.special_tokens_set
    for text in HELD_OUT:
        ids = chat.encode(text)
        assert ids == nanochat_enc.encode_ordinary(text)
        assert chat.decode(ids) == nanochat_enc.decode(ids) == text
    assert chat.encode(HELD_OUT, num_threads=2) == nanochat_enc.encode_ordinary_batch(HELD_OUT)
    for s in SPECIAL_TOKENS:
        assert chat.encode_special(s) == nanochat_enc.encode_single_token(s)
    # conversations render as nanochat's (its specials are the ones after the merges)
    ids, mask = chat.render_conversation(
        {"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Yo"}]}
    )
    sp = nanochat_enc._special_tokens
    assert ids[:2] == [sp["<|bos|>"], sp["<|user_start|>"]] and ids[-1] == sp["<|assistant_end|>"]
    assert len(mask) == len(ids)


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_every_pickle_protocol(nanochat_enc, tmp_path, protocol):
    _save_like_nanochat(nanochat_enc, tmp_path, protocol)
    chat = ChatTokenizer.load(tmp_path / "tokenizer.pkl")  # the file itself works too
    assert chat.encode(HELD_OUT[0]) == nanochat_enc.encode_ordinary(HELD_OUT[0])


def test_the_toksmith_file_wins_when_both_are_there(nanochat_enc, chat, tmp_path):
    _save_like_nanochat(nanochat_enc, tmp_path)
    chat.save(tmp_path)  # tokenizer.json beside it
    assert ChatTokenizer.from_directory(tmp_path).get_vocab_size() == chat.get_vocab_size()


def test_a_registered_encoding_is_pickled_by_name(tmp_path, monkeypatch):
    """tiktoken pickles its own encodings as just their name: read from tiktoken's cache."""
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    url = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
    shutil.copy(CL100K_TIKTOKEN, tmp_path / hashlib.sha1(url.encode()).hexdigest())
    enc = tiktoken.get_encoding("cl100k_base")
    raw = pickle.dumps(enc)
    assert b"mergeable_ranks" not in raw  # only the name
    tok = read_encoding_pickle_bytes(raw)
    assert tok.encode_ordinary(HELD_OUT[1]) == enc.encode_ordinary(HELD_OUT[1])
    # and nanochat's from_pretrained: OpenAI's encoding, <|endoftext|> as the delimiter
    pre = ChatTokenizer.from_pretrained("cl100k_base")
    assert pre.get_bos_token_id() == 100257 and pre.get_vocab_size() == enc.n_vocab
    assert pre.encode(HELD_OUT[2], prepend="<|endoftext|>") == [100257] + enc.encode_ordinary(
        HELD_OUT[2]
    )
    with pytest.raises(ValueError, match=r"lacks \['<\|bos\|>'"):
        pre.render_conversation({"messages": [{"role": "user", "content": "hi"}]})
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "empty"))
    with pytest.raises(OSError, match="never downloads"):
        ChatTokenizer.from_pretrained("o200k_base")


def test_nanochats_constructor_shape(nanochat_enc, chat):
    """RustBPETokenizer(enc, bos_token): a tiktoken Encoding (or a toksmith Tokenizer)."""
    from_enc = ChatTokenizer(nanochat_enc, "<|bos|>")
    assert from_enc.encode(HELD_OUT[0]) == nanochat_enc.encode_ordinary(HELD_OUT[0])
    assert ChatTokenizer(chat.tokenizer, "<|user_start|>").get_bos_token_id() == (
        chat.encode_special("<|user_start|>")
    )
    with pytest.raises(ValueError, match="bos_token '<\\|nope\\|>'"):
        ChatTokenizer(chat.tokenizer, "<|nope|>")
    with pytest.raises(TypeError, match="bos_token must be"):
        ChatTokenizer(chat.tokenizer, 3)
    again = pickle.loads(pickle.dumps(ChatTokenizer(chat.tokenizer, "<|user_start|>")))
    assert again.get_bos_token_id() == chat.encode_special("<|user_start|>")


# ------------------------------------------------------------------ refused pickles


class _System:
    def __init__(self, cmd):
        self.cmd = cmd

    def __reduce__(self):
        return (os.system, (self.cmd,))


def _malicious_pickles(marker):
    cmd = f"touch {marker}"
    yield pickle.dumps(_System(cmd))
    for proto in (0, 2, 4):
        yield pickle.dumps(_System(cmd), protocol=proto)
    # eval and subprocess through other globals
    yield b"cbuiltins\neval\n(V__import__('os').system(" + repr(cmd).encode() + b")\ntR."
    yield b"csubprocess\ncall\n((V/bin/sh\nV-c\nV" + cmd.encode() + b"\nltR."
    # an Encoding whose state hides a call
    inner = pickle.dumps(_System(cmd), protocol=2)[2:-1]  # the GLOBAL+REDUCE, no PROTO/STOP
    yield (
        b"\x80\x02ctiktoken.core\nEncoding\n)\x81}(Vname\nVx\nVpat_str\n"
        + inner
        + b"Vmergeable_ranks\n}Vspecial_tokens\n}ub."
    )


def test_malicious_pickles_are_refused_without_side_effects(tmp_path):
    marker = tmp_path / "pwned"
    for n, raw in enumerate(_malicious_pickles(marker)):
        d = tmp_path / f"m{n}"
        d.mkdir()
        (d / "tokenizer.pkl").write_bytes(raw)
        with pytest.raises(TokenizerFileError, match="refused|not a pickled tiktoken Encoding"):
            ChatTokenizer.from_directory(d)
        assert not marker.exists(), n
    # the same bytes do run under plain pickle.loads (the test pickle is real)
    subprocess.run(
        [sys.executable, "-c", "import pickle,sys; pickle.loads(sys.stdin.buffer.read())"],
        input=pickle.dumps(_System(f"touch {marker}")),
        check=False,
    )
    assert marker.exists()


def test_other_pickles_are_refused(nanochat_enc):
    good = pickle.dumps(nanochat_enc)
    bad = {
        "a plain dict": pickle.dumps({"name": "x"}),
        "truncated": good[: len(good) // 2],
        "empty": b"",
        "a persistent id": b"\x80\x04Pfoo\n.",
        "wrong state keys": pickle.dumps(_FakeEncoding({"name": "x", "pat_str": "a"})),
        "a str rank": pickle.dumps(
            _FakeEncoding(
                {"name": "x", "pat_str": "a", "mergeable_ranks": {"a": 0}, "special_tokens": {}}
            )
        ),
        "a bool id": pickle.dumps(
            _FakeEncoding(
                {
                    "name": "x",
                    "pat_str": "a",
                    "mergeable_ranks": {b"a": True},
                    "special_tokens": {},
                }
            )
        ),
        "a state that is a list": pickle.dumps(_FakeEncoding([1, 2])),
        "an unknown encoding name": pickle.dumps(_FakeEncoding("cl200k")),
    }
    for what, raw in bad.items():
        with pytest.raises(TokenizerFileError):
            read_encoding_pickle_bytes(raw, what)


class _FakeEncoding:
    """Pickles as a call of tiktoken.core.Encoding, then a chosen state."""

    def __init__(self, state):
        self.state = state

    def __reduce__(self):
        return (tiktoken.Encoding, (), self.state)


def test_the_reader_never_imports_the_classes_it_names(nanochat_enc):
    """The Encoding in the file is a stand-in: tiktoken's own __setstate__ never runs."""
    ops = {op.name for op, _, _ in pickletools.genops(io.BytesIO(pickle.dumps(nanochat_enc)))}
    assert "STACK_GLOBAL" in ops or "GLOBAL" in ops
    calls = []
    orig = tiktoken.Encoding.__setstate__
    tiktoken.Encoding.__setstate__ = lambda self, v: calls.append(v)
    try:
        read_encoding_pickle_bytes(pickle.dumps(nanochat_enc))
    finally:
        tiktoken.Encoding.__setstate__ = orig
    assert calls == []


# ------------------------------------------------------------------ token bytes


def test_token_bytes_as_tok_train_writes_them(nanochat_enc, chat, tmp_path):
    """tok_train: len(decode([id]).encode('utf-8')) per id, 0 for the special tokens, int32."""
    for c in (chat, ChatTokenizer(nanochat_enc, "<|bos|>")):
        tb = c.token_bytes()
        specials = set(c.get_special_tokens())
        want = []
        for i in range(c.get_vocab_size()):
            s = c.decode([i])
            want.append(0 if s in specials else len(s.encode("utf-8")))
        assert tb.dtype == np.int32 and tb.tolist() == want
        assert tb[:256].min() >= 1 and (tb == 0).sum() == len(SPECIAL_TOKENS)
    path = chat.save_token_bytes(tmp_path / "tok")
    assert os.path.basename(path) == TOKEN_BYTES_NAME
    assert load_token_bytes(tmp_path / "tok").tolist() == chat.token_bytes().tolist()
    assert load_token_bytes(path).dtype == np.int32


def test_cli_train_preset_nanochat_writes_token_bytes(tmp_path):
    out = tmp_path / "tokenizer.json"
    corpus = tmp_path / "c.txt"
    corpus.write_text((DATA / "corpora" / "english_slice.txt").read_text(encoding="utf-8"))
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "toksmith",
            "train",
            str(corpus),
            "--preset",
            "nanochat",
            "--vocab-size",
            "400",
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert r.returncode == 0, r.stderr
    chat = ChatTokenizer.from_directory(tmp_path)
    assert load_token_bytes(tmp_path).tolist() == chat.token_bytes().tolist()
    assert toksmith.load(out).n_vocab == 400
