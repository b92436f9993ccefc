"""Regressions from an audit of the public API with wrong types and bad values per argument
(None, floats, bools, negative and huge ints, numpy values, str where a list is meant, lone
surrogates, ints where a path is meant...): each now raises TypeError / ValueError / OSError
saying what to pass, where it was an AttributeError, IndexError, KeyError, OverflowError,
LookupError or UnicodeEncodeError from deep inside, or silent acceptance."""

from __future__ import annotations

import io
import os
import warnings

import pytest

import toksmith
from toksmith import Tokenizer, calm, corpus, formats, streaming
from toksmith.formats import gpt2 as fgpt2
from toksmith.formats import huggingface as fhf
from toksmith.formats import tiktoken as ftiktoken
from toksmith.presets import (
    PRESETS,
    chat_render,
    chat_shards,
    conversation,
    embeddings,
    get_preset,
    nanochat,
    wordbpe,
)

np = pytest.importorskip("numpy")

BYTES = {bytes([b]): b for b in range(256)}
TEXTS = ["hello world, the quick brown fox", "lower lowest low"] * 5


@pytest.fixture(scope="module")
def tok():
    return Tokenizer.from_ranks({**BYTES, b"ab": 256}, "gpt2", {"<|end|>": 257})


@pytest.fixture(scope="module")
def word_tok():
    return wordbpe.train(TEXTS, num_merges=5)


@pytest.fixture(scope="module")
def chat_tok():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tiny corpus runs out of pairs
        return nanochat.train(TEXTS, vocab_size=300)


@pytest.fixture
def spare_fd(tmp_path):
    """A real file descriptor (of an empty file): were an int taken as a path again, it is this
    file that would be written and closed, not the test run's stdout."""
    path = tmp_path / "fd-target"
    fd = os.open(path, os.O_RDWR | os.O_CREAT)
    yield fd
    try:
        os.close(fd)
    except OSError:
        pass
    assert path.read_bytes() == b""


# ---------------------------------------------------------------- Tokenizer constructor


@pytest.mark.parametrize(
    "merges, exc, match",
    [
        ("abc", TypeError, "merges must be a list of"),  # was stored as [('a',), ('b',), ('c',)]
        (b"ab", TypeError, "merges must be a list of"),
        ({"a": 1}, TypeError, "merges must be a list of"),
        (5, TypeError, "not int"),
        ([5], TypeError, "merges must be a list of"),
        ([("a", "b")], TypeError, r"merges\[0\] is \('a', 'b'\)"),
        ([(97, 98, 99)], TypeError, r"merges\[0\] is"),
        ([(97, 300)], ValueError, "names the id 300, which is not a token"),
        ([(-1, 98)], ValueError, r"merges\[0\] = \(-1, 98\) is not a pair of token ids"),
        ([(1.0, 98)], ValueError, "is not a pair of token ids"),
    ],
)
def test_constructor_checks_merges(merges, exc, match):
    with pytest.raises(exc, match=match):
        Tokenizer({**BYTES, b"ab": 256}, pattern="gpt2", merges=merges)


def test_constructor_takes_good_merges():
    ranks = {**BYTES, b"ab": 256}
    assert Tokenizer(ranks, pattern="gpt2", merges=[(97, 98)]).merge_ids() == [(97, 98)]
    assert Tokenizer(ranks, pattern="gpt2", merges=np.array([[97, 98]])).merge_ids() == [(97, 98)]
    assert Tokenizer(ranks, pattern="gpt2", merges=iter([[np.int64(97), 98]])).merge_ids() == [
        (97, 98)
    ]
    assert (
        type(Tokenizer(ranks, pattern="gpt2", merges=[(np.int32(97), 98)]).merge_ids()[0][0]) is int
    )


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(metadata=[b"ab"]), "metadata must be a dict"),  # was dict([b"ab"]) == {97: 98}
        (dict(metadata="x"), "metadata must be a dict"),
        (dict(name=1.5), "name must be a str"),
        (dict(name=b"x"), "name must be a str"),
    ],
)
def test_constructor_checks_metadata_and_name(kwargs, match):
    with pytest.raises(TypeError, match=match):
        Tokenizer(BYTES, pattern="gpt2", **kwargs)
    if "name" in kwargs:
        with pytest.raises(TypeError, match=match):
            Tokenizer.from_ranks(BYTES, "gpt2", name=kwargs["name"])


def test_train_name_must_be_str():
    with pytest.raises(TypeError, match="name must be a str"):
        toksmith.train_from_iterator(["a b"], vocab_size=257, pattern="gpt2", name=5)


def test_added_token_with_lone_surrogate_is_a_value_error():
    """was: a UnicodeEncodeError from the native core."""
    with pytest.raises(ValueError, match=r"special_tokens: '\\ud800' holds a lone surrogate"):
        Tokenizer(BYTES, pattern="gpt2", special_tokens={"\ud800": 256})
    with pytest.raises(ValueError, match="pinned_tokens: .* lone surrogate"):
        Tokenizer(BYTES, pattern="gpt2", pinned_tokens={"a\udfffb": 256})


# ---------------------------------------------------------------- patterns and split


@pytest.mark.parametrize(
    "call",
    [
        lambda p: toksmith.pretokenize.resolve_pattern(p),
        lambda p: Tokenizer(BYTES, pattern=p),
        lambda p: toksmith.split("ab", p),
        lambda p: toksmith.train_from_iterator(["a b"], vocab_size=257, pattern=p),
    ],
)
def test_pattern_with_lone_surrogate_is_a_pattern_error(call):
    """was: a UnicodeEncodeError from compiling the pattern."""
    with pytest.raises(toksmith.PatternError, match=r"lone surrogate \(U\+D800 at index 1\)"):
        call("a\ud800|b")


def test_split_reads_lone_surrogates_as_encode_does():
    """was: a UnicodeEncodeError; now split as U+FFFD, as encode() reads the text."""
    assert (
        toksmith.split("a\ud800b c", "gpt2")
        == toksmith.split("a\ufffdb c", "gpt2")
        == ["a", "\ufffd", "b", " c"]
    )
    assert toksmith.split("a\ud800b c") == ["a", "\ufffdb", " c"]
    assert toksmith.split("\ud83d\ude00 x", "gpt2") == ["\U0001f600", " x"]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(pattern=None), "pattern must be a name or a regex string, not NoneType"),
        (dict(pattern=5), "pattern must be a name or a regex string, not int"),
        (dict(engine=None), "engine must be 'auto' or 'regex', not NoneType"),
    ],
)
def test_split_argument_types(kwargs, match):
    """was: pyo3's "argument 'pattern': 'NoneType' object cannot be cast as 'str'"."""
    with pytest.raises(TypeError, match=match):
        toksmith.split("ab", **kwargs)


# ---------------------------------------------------------------- encode / decode


@pytest.mark.parametrize("ids", [bytearray(b"ab"), b"ab", "ab"])
def test_decode_refuses_byte_buffers(tok, ids):
    """was: bytearray(b"ab") decoded as the ids [97, 98] ("ab"), while bytes were refused."""
    for call in (tok.decode, tok.decode_bytes, tok.decode_tokens_bytes, tok.decode_with_offsets):
        with pytest.raises(TypeError, match="ids must be a sequence of int"):
            call(ids)


@pytest.mark.parametrize("batch", ["", "ab", b"ab"])
def test_decode_batch_refuses_a_string(tok, batch):
    """was: decode_batch("") returned [] (the empty string iterated as no sequences)."""
    with pytest.raises(TypeError, match="batch must be a list of id sequences"):
        tok.decode_batch(batch)
    with pytest.raises(TypeError, match="batch must be a list of id sequences"):
        tok.decode_bytes_batch(batch)


@pytest.mark.parametrize(
    "call",
    [
        lambda t, e: t.decode([104, 105], errors=e),  # valid UTF-8: the handler was never looked up
        lambda t, e: t.decode([0xFF], errors=e),  # was a bare LookupError
        lambda t, e: t.decode_batch([[104]], errors=e),
        lambda t, e: t.stream_decoder(errors=e),
        lambda t, e: calm.ByteTokenizer().decode([104], errors=e),
        lambda t, e: calm.ByteTokenizer().decode_batch([[104]], errors=e),
        lambda t, e: calm.StreamDecoder(errors=e),
        lambda t, e: list(streaming.iter_line_batches(io.BytesIO(b"a\n"), errors=e)),
        lambda t, e: list(streaming.encode_stream(t, io.BytesIO(b"a"), errors=e)),
    ],
)
@pytest.mark.parametrize("errors", ["bogus", "", "a\ud800"])
def test_unknown_error_handler_is_a_value_error(tok, call, errors):
    """An unknown ``errors=`` handler is a ValueError (and still a LookupError, as codecs
    raise it), found up front; a lone surrogate in the name was a UnicodeEncodeError."""
    with pytest.raises(ValueError, match="unknown error handler") as info:
        call(tok, errors)
    assert isinstance(info.value, LookupError)


def test_known_error_handlers_still_work(tok):
    assert tok.decode([0xFF, 104], errors="ignore") == "h"
    assert tok.decode([0xFF], errors="backslashreplace") == "\\xff"
    assert tok.decode_batch([[0xFF]], errors="surrogateescape") == ["\udcff"]


def test_disallowed_empty_string(tok):
    """was: every text was refused with "the text contains ''"."""
    with pytest.raises(ValueError, match="disallowed_special holds the empty string"):
        tok.encode("x", disallowed_special=[""])


@pytest.mark.parametrize("dtype", [{"a": 1}, "a\ud800", 5, "float32"])
def test_encode_to_numpy_bad_dtype(tok, dtype):
    """was: TypeError "object of type 'int' has no len()" (a dict) or a UnicodeEncodeError."""
    with pytest.raises(ValueError, match="dtype must be 'uint16' or 'uint32'"):
        tok.encode_to_numpy("hi", dtype=dtype)
    with pytest.raises(ValueError, match="dtype must be 'uint16' or 'uint32'"):
        calm.ByteTokenizer().encode_to_numpy("hi", dtype=dtype)


def test_encode_single_piece_lone_surrogate(tok):
    with pytest.raises(ValueError, match="lone surrogate"):
        tok._encode_single_piece("a\ud800")


# ---------------------------------------------------------------- formats


@pytest.mark.parametrize(
    "call, where",
    [
        (lambda t, p: formats.to_tiktoken(t), "to_tiktoken"),
        (lambda t, p: formats.save_tiktoken(t, p / "x.tiktoken"), "save_tiktoken"),
        (lambda t, p: formats.to_huggingface(t), "Hugging Face export"),
        (lambda t, p: formats.save_huggingface(t, p / "hf"), "save_huggingface"),
        (lambda t, p: fhf.huggingface_json(t), "Hugging Face export"),
        (lambda t, p: formats.save_gpt2_files(t, p / "g2"), "save_gpt2_files"),
        (lambda t, p: fgpt2.gpt2_vocab(t), "gpt2_vocab"),
    ],
)
@pytest.mark.parametrize("bad", [None, 1.5, "tok.json"])
def test_format_writers_need_a_tokenizer(tmp_path, call, where, bad):
    """was: AttributeError ("'NoneType' object has no attribute 'merges'")."""
    with pytest.raises(
        TypeError, match=f"{where} needs a toksmith.Tokenizer, not {type(bad).__name__}"
    ):
        call(bad, tmp_path)


def test_format_writers_name_a_preset_wrapper(chat_tok, tmp_path):
    with pytest.raises(
        TypeError, match="needs a toksmith.Tokenizer, not ChatTokenizer; pass its .tokenizer"
    ):
        formats.save_gpt2_files(chat_tok, tmp_path)


def test_to_tiktoken_name_must_be_str(tok):
    with pytest.raises(TypeError, match="name must be a str"):
        tok.to_tiktoken(name=1.5)


@pytest.mark.parametrize(
    "ranks, exc, match",
    [
        (None, TypeError, "ranks must be a dict of bytes -> rank"),
        ({"a": 1}, TypeError, "ranks keys must be bytes, not str"),  # was: a base64 TypeError
        ({b"a": -1}, ValueError, "is not a rank"),
        ({b"a": True}, ValueError, "is not a rank"),
    ],
)
def test_dump_tiktoken_ranks_checks_ranks(tmp_path, ranks, exc, match):
    with pytest.raises(exc, match=match):
        ftiktoken.dump_tiktoken_ranks(ranks, tmp_path / "r.tiktoken")
    assert not (tmp_path / "r.tiktoken").exists()


def test_from_huggingface_strict_must_be_bool(tok):
    """was: strict="no" taken as True."""
    with pytest.raises(TypeError, match="strict must be True or False, not str"):
        formats.from_huggingface(fhf.huggingface_json(tok), strict="no")


def test_save_huggingface_takes_a_numpy_max_length(tok, tmp_path):
    formats.save_huggingface(tok, tmp_path, model_max_length=np.int64(77))
    import json

    assert json.loads((tmp_path / "tokenizer_config.json").read_text())["model_max_length"] == 77


def test_openai_encoding_name_type_message():
    with pytest.raises(TypeError, match="encoding name .* must be a str"):
        formats.get_encoding(None)


# ---------------------------------------------------------------- ints (file descriptors) as paths


@pytest.mark.parametrize(
    "call",
    [
        lambda w, fd: w.save(fd),
        lambda w, fd: wordbpe.load(fd),
        lambda w, fd: wordbpe.write_counts_csv(fd, [("a", 1)], ("token", "count")),
        lambda w, fd: wordbpe.write_embeddings_csv(fd, ["a"], np.zeros((1, 2)), 2),
        lambda w, fd: calm.ByteTokenizer().save(fd),
        lambda w, fd: calm.ByteTokenizer.load(fd),
        lambda w, fd: ftiktoken.identify_openai_file(fd),
    ],
)
def test_an_int_is_no_path(word_tok, spare_fd, call):
    """was: open(fd) wrote to (or read) that file descriptor and closed it: save(1) printed the
    tokenizer and closed stdout, save(True) too."""
    with pytest.raises(TypeError, match="expected str, bytes or os.PathLike object, not int"):
        call(word_tok, spare_fd)
    with pytest.raises(TypeError, match="not bool"):
        call(word_tok, True)


def test_preset_save_huge_int_path(chat_tok):
    """was: OverflowError "fd is greater than maximum" from os.path.isdir."""
    with pytest.raises(TypeError, match="expected str, bytes or os.PathLike object, not int"):
        chat_tok.save(2**64)


# ---------------------------------------------------------------- wordbpe


def test_word_from_dict_checks_its_argument(word_tok):
    """was: IndexError for a numpy scalar, KeyError 'tokens' for a dict without it."""
    with pytest.raises(TypeError, match="from_dict needs the dict WordTokenizer.to_dict"):
        wordbpe.WordTokenizer.from_dict(np.int64(3))
    with pytest.raises(ValueError, match="lacks the member 'tokens'"):
        wordbpe.WordTokenizer.from_dict({"a": 1})
    d = word_tok.to_dict()
    d["merges"] = "ab"
    with pytest.raises(TypeError, match="'merges' must be a list"):
        wordbpe.WordTokenizer.from_dict(d)


def test_word_load_names_a_missing_member(tmp_path):
    path = tmp_path / "w.json"
    path.write_text('{"format": "toksmith-wordbpe", "version": 1}')
    with pytest.raises(ValueError, match="w.json is not a valid .*lacks the member 'tokens'"):
        wordbpe.load(path)


@pytest.mark.parametrize("bad", [None, 1.5, b"h"])
def test_word_token_to_id_needs_a_str(word_tok, bad):
    """was: None for any non-str (as for an unknown token)."""
    with pytest.raises(TypeError, match="token must be a str"):
        word_tok.token_to_id(bad)
    assert word_tok.token_to_id("no such token") is None


def test_word_decode_refuses_a_string(word_tok):
    """was: decode("") gave ""."""
    with pytest.raises(TypeError, match="ids must be an iterable of int"):
        word_tok.decode("")


@pytest.mark.parametrize(
    "rows, header, exc, match",
    [
        (
            "abc",
            ("token", "count"),
            TypeError,
            "rows must be an iterable of",
        ),  # was a row per character
        ([("a", 1), "b"], ("token", "count"), TypeError, "row 1 is 'b'"),
        ([("a", 1.5)], ("token", "count"), TypeError, "row 0 is"),
        ([("a\ud800", 1)], ("token", "count"), ValueError, "row 0 holds a lone surrogate"),
        ([("a", 1)], "tc", TypeError, "header must be a pair of str"),  # was the header t,c
        ([("a", 1)], None, TypeError, "header must be a pair of str"),  # was _csv.Error
        ([("a", 1)], ("a", "b", "c"), TypeError, "header must be a pair of str"),
    ],
)
def test_write_counts_csv_checks_rows_and_header(tmp_path, rows, header, exc, match):
    with pytest.raises(exc, match=match):
        wordbpe.write_counts_csv(tmp_path / "c.csv", rows, header)
    assert not (tmp_path / "c.csv").exists()  # nothing half-written


@pytest.mark.parametrize(
    "tokens, dim, exc, match",
    [
        ([None], 2, TypeError, r"tokens\[0\] is NoneType"),  # was written as an empty field
        ("a", 2, TypeError, "tokens must be a list of str"),
        (["a\ud800"], 2, ValueError, "lone surrogate"),
        (["a"], 2.0, TypeError, "dim must be an int"),
        (["a"], 0, ValueError, "dim must be at least 1"),
    ],
)
def test_write_embeddings_csv_checks_tokens(tmp_path, tokens, dim, exc, match):
    with pytest.raises(exc, match=match):
        wordbpe.write_embeddings_csv(tmp_path / "e.csv", tokens, np.zeros((1, 2)), dim)
    assert not (tmp_path / "e.csv").exists()


def test_wordbpe_run_checks_prefix_before_training(tmp_path):
    """was: a UnicodeEncodeError when the first file was written, after the training."""
    with pytest.raises(ValueError, match="prefix .* holds a character"):
        wordbpe.run(["hello world"], tmp_path / "out", num_merges=2, dim=2, prefix="a\ud800")
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------- presets


def test_chat_render_needs_a_tokenizer(tok, chat_tok):
    """was: AttributeError "'NoneType' object has no attribute 'special_tokens'"."""
    for call in (
        lambda t: chat_render.token_pieces(t, [104]),
        lambda t: chat_render.to_ansi(t, [104]),
        lambda t: chat_render.html_section(t, "h", [104]),
        lambda t: chat_render.to_html(t, [("h", [104], None)]),
    ):
        with pytest.raises(
            TypeError, match="tokenizer must be a toksmith Tokenizer .*, not NoneType"
        ):
            call(None)
        with pytest.raises(TypeError, match="not ChatTokenizer; pass its .tokenizer"):
            call(chat_tok)
    assert chat_render.token_pieces(tok, [104, 257]) == [("h", False), ("<|end|>", True)]


@pytest.mark.parametrize("sections", ["", "abc", {"h": 1}])
def test_to_html_sections_must_be_a_list(tok, sections):
    """was: "" gave a page with no section."""
    with pytest.raises(TypeError, match="sections must be a list of"):
        chat_render.to_html(tok, sections)


@pytest.mark.parametrize(
    "messages", [np.array([1, 2]), "", "ab", [None], [{"role": "user"}], {"role": "user"}]
)
def test_plan_messages_checks_its_messages(messages):
    """was: IndexError for a numpy array, [BOS] for ""."""
    with pytest.raises(TypeError, match="normalize"):
        conversation.plan_messages(messages)
    msgs = conversation.normalize_messages({"messages": [{"role": "user", "content": "hi"}]})
    assert conversation.plan_messages(msgs) == conversation.plan_conversation({"messages": msgs})


def test_shard_writer_checks_meta_line_and_extra(tmp_path):
    with pytest.raises(TypeError, match="meta must be a dict"):  # was dict([b"ab"]) == {97: 98}
        chat_shards.ShardWriter(str(tmp_path / "a"), n_vocab=300, meta=[b"ab"])
    w = chat_shards.ShardWriter(str(tmp_path / "b"), n_vocab=300)
    with pytest.raises(ValueError, match="line must be a line number >= 0"):
        w.add([1], [1], line=2**64)  # was OverflowError from the int64 array
    with pytest.raises(ValueError, match="line must be a line number >= 0"):
        w.add([1], [1], line=-1)
    with pytest.raises(TypeError, match="extra must be a dict"):
        w.close(extra=[b"ab"])
    w.add([1], [1], line=np.int64(3))
    assert w.close(extra={"note": "x"})["conversations"] == 1


@pytest.mark.parametrize(
    "index, exc", [(-1, ValueError), (None, TypeError), (True, TypeError), (1.0, TypeError)]
)
def test_shard_name_checks_index(index, exc):
    """was: 'shard_-0001.npz', and "unsupported format string passed to NoneType.__format__"."""
    with pytest.raises(exc, match="index must be"):
        chat_shards.shard_name(index)
    assert chat_shards.shard_name(np.int64(2)) == "shard_00002.npz"


@pytest.mark.parametrize(
    "extra, exc, match",
    [
        ("<X>", TypeError, "wrap one token in a list"),  # was '<', 'X', '>' as three tokens
        ([1], TypeError, r"extra must hold str, not int"),  # was the key 1 in a str -> id dict
        (["<X>", "<X>"], ValueError, "names '<X>' twice"),  # was a gap in the ids
        ([""], ValueError, "empty string"),
    ],
)
def test_special_token_spec_checks_extra(extra, exc, match):
    for name in ("cromwell", "nanochat"):
        with pytest.raises(exc, match=match):
            PRESETS[name].special_token_spec(extra)
    assert PRESETS["cromwell"].special_token_spec(iter(["<X>"]))["<X>"] == 8


def test_get_preset_name_type():
    with pytest.raises(TypeError, match="preset name must be a str"):
        get_preset(["nanochat"])


@pytest.mark.parametrize(
    "n, exc", [(1.5, TypeError), (True, TypeError), (0, ValueError), (object(), TypeError)]
)
def test_chat_encode_checks_num_threads_for_one_text(chat_tok, n, exc):
    """was: any value taken (and ignored) when encoding one text."""
    with pytest.raises(exc, match="threads"):
        chat_tok.encode("hi", num_threads=n)
    assert chat_tok.encode("hi", num_threads=2) == chat_tok.encode("hi")


def test_embeddings_argument_types():
    assert embeddings.splitmix64(np.int64(3)) == embeddings.splitmix64(3)  # was OverflowError
    assert embeddings.token_seed("a", np.uint64(3)) == embeddings.token_seed(
        "a", 3
    )  # was OverflowError
    with pytest.raises(TypeError, match="x must be an int"):
        embeddings.splitmix64(1.5)
    with pytest.raises(
        TypeError, match="a token must be a str, not NoneType"
    ):  # was AttributeError
        embeddings.token_seed(None)
    with pytest.raises(TypeError, match="wrap one token in a list"):  # was one vector per character
        embeddings.embed_reference("abc", 4)
    with pytest.raises(TypeError, match="a token must be a str, not int"):  # was AttributeError
        embeddings.embed_numpy([1, 2], 4)
    with pytest.raises(TypeError, match="xp must be an array module"):  # was AttributeError
        embeddings.embed_numpy(["a"], 4, xp=1.5)
    with pytest.raises(TypeError, match="n_tokens must be an int"):
        embeddings.check_dim(4, 1.5)
    with pytest.raises(ValueError, match="n_tokens must be a number of tokens >= 0"):
        embeddings.check_args(4, 0, "cpu", -1)
    with pytest.raises(TypeError, match="backend must be a str"):  # was "unhashable type"
        embeddings.gpu_backend(["torch"])


# ---------------------------------------------------------------- streaming and corpus


@pytest.mark.parametrize(
    "bad, exc", [(0, ValueError), (-1, ValueError), (1.5, TypeError), (True, TypeError)]
)
def test_encode_lines_batch_bytes_and_group_checked(tok, bad, exc):
    """was: taken as given (a negative or float batch size, a group of 1.5 parts)."""
    with pytest.raises(exc, match="batch_bytes"):
        list(streaming.encode_lines(tok, ["a\n"], batch_bytes=bad))
    with pytest.raises(exc, match="group"):
        list(streaming.iter_text_parts(tok, io.BytesIO(b"ab"), group=bad))


def test_huge_read_size_is_a_value_error(tok):
    """was: OverflowError "cannot fit 'int' into an index-sized integer" from f.read."""
    with pytest.raises(ValueError, match="block_size must be between 1 and"):
        list(streaming.encode_stream(tok, io.BytesIO(b"ab"), block_size=2**64))
    with pytest.raises(ValueError, match="batch_bytes must be between 1 and"):
        list(streaming.iter_line_batches(io.BytesIO(b"ab"), batch_bytes=2**64))


def test_streaming_helpers_check_their_arguments(tok):
    with pytest.raises(TypeError, match="wrap one token in a list"):  # was its characters
        streaming.cut_lookahead("New York")
    with pytest.raises(TypeError, match="avoid must be a list of str"):
        streaming.last_safe_cut("in New York and", avoid="New York")
    with pytest.raises(TypeError, match="text must be a str"):  # was 0
        streaming.last_safe_cut(["abc def"])
    with pytest.raises(ValueError, match="lo must be an index >= 0"):
        streaming.last_safe_cut("abc def", lo=-1)
    with pytest.raises(TypeError, match="lo must be an int"):
        streaming.last_safe_cut("abc def", lo=float("nan"))
    with pytest.raises(TypeError, match="threads must be an int"):  # was found at the first batch
        streaming.batch_encoder(tok, False, threads="2")
    with pytest.raises(TypeError, match="tok must be a tokenizer"):
        streaming.batch_encoder(None, False, threads=1)
    with pytest.raises(TypeError, match="tok must be a tokenizer"):  # was []
        streaming.spanning_tokens(None)
    with pytest.raises(ValueError, match="threads must be between"):  # was found at the first batch
        list(streaming.encode_lines(tok, [], threads=0))
    assert streaming.last_safe_cut("in New York and New Jersey", avoid=["New York"]) == 15


def test_corpus_helpers_check_their_arguments(tmp_path):
    with pytest.raises(TypeError, match="wrap it in a list"):  # was [['a', 'b', 'c']]
        list(corpus.batched("abc"))
    for kw in ("max_items", "max_bytes"):
        with pytest.raises(ValueError, match=f"{kw} must be at least 1"):
            list(corpus.batched(["a"], **{kw: 0}))
        with pytest.raises(TypeError, match=f"{kw} must be an int"):
            list(corpus.batched(["a"], **{kw: 1.5}))
    with pytest.raises(ValueError, match="max_bytes must be at least 1"):
        corpus.default_corpus(max_bytes=-1)
    with pytest.raises(TypeError, match="must be a str, not NoneType"):  # was AttributeError
        corpus.surrogates_checked(None, "strict", "the text")
    path = tmp_path / "a.txt"
    path.write_text("x")
    with pytest.raises(
        TypeError, match="raw must be an open binary file"
    ):  # was 1.5 returned as the file
        corpus.open_binary(path, raw=1.5)
    jsonl = tmp_path / "a.jsonl"
    jsonl.write_text('{"text": "x"}\n')
    with pytest.raises(TypeError, match="text_field must be a str"):  # was "unhashable type"
        list(corpus.iter_jsonl(jsonl, ["text"]))
    with pytest.raises(ValueError, match="errors must be 'strict' or 'replace'"):
        list(corpus.iter_jsonl(jsonl, "text", "bogus"))
    assert list(corpus.iter_jsonl(jsonl, "text")) == ["x"]


def test_train_checks_progress_and_text_field(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("hello world " * 10)
    with pytest.raises(TypeError, match="text_field must be a str"):  # was ignored for a .txt file
        toksmith.train(path, vocab_size=257, pattern="gpt2", text_field=5)
    with pytest.raises(ValueError, match="errors must be 'strict' or 'replace'"):
        toksmith.train(path, vocab_size=257, pattern="gpt2", errors="ignore")
    with pytest.raises(
        TypeError, match="progress must be True or False, not str"
    ):  # was a progress bar
        toksmith.train_from_iterator(["a b"], vocab_size=257, pattern="gpt2", progress="no")
    assert (
        toksmith.train_from_iterator(
            ["a b"], vocab_size=257, pattern="gpt2", progress=np.bool_(False)
        ).n_vocab
        == 257
    )


# ---------------------------------------------------------------- calm


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (
            dict(ids="abc"),
            TypeError,
            "ids must be an iterable of token ids, not str",
        ),  # was ['a', 'b', 'c']
        (dict(ids=[1, 400]), ValueError, r"ids\[1\] 400 is out of range"),
        (dict(ids=[1, None]), TypeError, r"ids\[1\] must be an int"),
        (dict(ids=[1], l_max="x"), TypeError, "l_max must be an int"),
        (dict(ids=[1], l_max=0), ValueError, "l_max must be >= 1"),
        (dict(ids=[1], training=1), TypeError, "training must be a bool"),
        (dict(ids=[1], dropped=5), TypeError, "dropped must be a calm.Dropped"),
        (dict(ids=[1], template="shell"), TypeError, "template must be a calm.Template"),
    ],
)
def test_token_sequence_checks_its_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        calm.TokenSequence(**kwargs)


def test_token_sequence_still_takes_ids():
    seq = calm.TokenSequence(np.array([257, 104]), l_max=np.int64(10))
    assert seq == [257, 104] and type(seq[0]) is int and seq.l_max == 10
    assert calm.TokenSequence(b"ab") == [97, 98]
    assert calm.build_sequence("shell", {"input": "ls"}).format() == "<BOS> <ATN> <CMD> ls"


def test_calm_ids_refuse_a_str():
    with pytest.raises(TypeError, match="not str"):  # was ""
        calm.format_tokens("")
    with pytest.raises(TypeError, match="not str"):  # was ""
        calm.StreamDecoder().push_many("")


def test_write_cwgt_over_a_folder(tmp_path):
    """was: an IsADirectoryError naming a temporary file, after the whole file was written."""
    with pytest.raises(IsADirectoryError, match="cannot write a CWGT file over a folder"):
        calm.write_cwgt(
            tmp_path,
            calm.CWGTHeader(d_model=16, n_layers=1, dt_rank=4),
            None,
            np.zeros(4, dtype=np.float32),
        )
    assert os.listdir(tmp_path) == []


def test_stream_of_a_tokenizer_without_batch_methods():
    """The up-front check of batch_encoder must not refuse a tokenizer that has no batch
    methods: encode_stream and encode_lines encode with it one part at a time."""

    class OneAtATime:
        def encode_ordinary(self, text):
            return [len(text)]

    assert list(streaming.encode_stream(OneAtATime(), io.BytesIO(b"abc def"), threads=2)) == [[7]]
    assert list(streaming.encode_lines(OneAtATime(), ["ab", "c"], threads=2)) == [[2], [1]]


@pytest.mark.parametrize("skip", [False, True])
def test_stream_decoder_push_takes_token_by_keyword(skip):
    # was: the native push named its argument 'id', so push(token=5) was a TypeError unless
    # skip_special_tokens=True put a Python wrapper in front of it
    tok = toksmith.Tokenizer.from_ranks({bytes([b]): b for b in range(256)}, "gpt2", {"<s>": 256})
    dec = tok.stream_decoder(skip_special_tokens=skip)
    assert dec.push(token=104) + dec.push(token=105) == "hi"
    with pytest.raises(ValueError, match="999"):
        dec.push(token=999)
