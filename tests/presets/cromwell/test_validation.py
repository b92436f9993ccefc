"""The Cromwell preset on adversarial input: argument types and sizes, numpy ids, lone
surrogates, flags."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toksmith
from tests.complexity import assert_linear
from tests.conftest import DATA
from toksmith.presets import CROMWELL_SPECIAL_TOKENS, cromwell
from toksmith.presets.cromwell import CodeTokenizer, TokenCache

CORPORA = DATA / "corpora"


PY = CORPORA / "python_slice.txt"


MARKERS = [
    "<FILE>",
    "</FILE>",
    "<EDIT_START>",
    "<EDIT_END>",
    "<DELETE>",
    "<PAD>",
    "<EOS>",
    "<BOS>",
    "<FILE=",
    ">",
    "\r\n",
    "\r",
    "\n",
    "\t",
    " ",
    "\x00",
    "é",
    "🌍",
    "\ufeff",
]


@pytest.fixture(scope="module")
def code() -> CodeTokenizer:
    return cromwell.train([PY], vocab_size=800)


def _quiet_train(*args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tiny corpora run out of pairs
        return cromwell.train(*args, **kw)


text_with_markers = st.lists(
    st.one_of(st.sampled_from(MARKERS), st.text(max_size=6)), max_size=10
).map("".join)


def test_train_option_types_and_values():
    texts = ["def f(x):\n    return x\n"] * 5
    with pytest.raises(ValueError, match='errors must be "strict"'):
        _quiet_train(texts, vocab_size=270, errors="bad")  # was ignored for texts
    with pytest.raises(TypeError, match="errors must be a str"):
        _quiet_train(texts, vocab_size=270, errors=None)
    with pytest.raises(TypeError, match="text_field must be a str"):
        _quiet_train(texts, vocab_size=270, text_field=None)
    with pytest.raises(TypeError, match="name must be a str or None"):
        _quiet_train(texts, vocab_size=270, name=5)
    with pytest.raises(TypeError, match="progress must be True or False"):
        _quiet_train(texts, vocab_size=270, progress="yes")
    with pytest.raises(TypeError, match="paths_or_texts must be .* not None"):
        _quiet_train(None, vocab_size=270)
    with pytest.raises(TypeError, match="vocab_size must be an int, not bool"):
        _quiet_train(texts, vocab_size=True)
    with pytest.raises(TypeError, match="threads must be an int or None"):
        _quiet_train(texts, vocab_size=270, threads=1.5)
    # huge sizes are ValueErrors, never an abort or an OverflowError
    for kw in ({"vocab_size": 2**40}, {"vocab_size": 2**70}, {"vocab_size": 270, "threads": 2**70}):
        with pytest.raises(ValueError):
            _quiet_train(texts, **kw)
    # numpy integers are ints
    tok = _quiet_train(texts, vocab_size=np.int64(270), threads=np.int32(1))
    assert tok.n_vocab <= 270 and tok.special_ids["<FILE>"] == 3


def test_extensions_and_directories_types(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    for bad in ([1], b".py", None, 5, {".py": 1}):
        with pytest.raises(TypeError, match="extensions must be"):
            cromwell.collect_code_corpus(tmp_path, bad)
    with pytest.raises(TypeError, match="extensions must be"):
        _quiet_train(tmp_path, vocab_size=270, extensions=5)
    for bad in ([""], []):
        with pytest.raises(ValueError, match="non-empty strings"):
            cromwell.collect_code_corpus(tmp_path, bad)
    for bad in (None, 5, bytes(str(tmp_path), "utf-8"), [5]):
        with pytest.raises(TypeError, match="directories must"):
            cromwell.collect_code_corpus(bad)
    # a str is one extension, a generator of folders is read once and named in the error
    assert cromwell.collect_code_corpus(iter([tmp_path]), ".py") == [tmp_path / "a.py"]
    with pytest.raises(ValueError, match=str(tmp_path).replace("\\", "\\\\")):
        cromwell.collect_code_corpus(iter([tmp_path]), ".rs")


def test_a_typo_in_a_list_of_paths_is_not_trained_on_as_text(tmp_path):
    good = tmp_path / "a.py"
    good.write_text("def f(x):\n    return x\n" * 5)
    for source in ([str(good), str(tmp_path / "typo.py")], [str(tmp_path / "typo.py"), str(good)]):
        with pytest.raises(FileNotFoundError, match="typo.py' does not exist"):
            _quiet_train(source, vocab_size=270)  # trained on the two path strings before
    # texts that merely look like words, globs, and the explicit iterator still work
    assert (
        _quiet_train(["hello world", "docs", "."], vocab_size=270).tokenizer.metadata["corpus"][
            "texts"
        ]
        == 3
    )
    globbed = _quiet_train([str(good), str(tmp_path / "*.py")], vocab_size=270)
    assert globbed.tokenizer.metadata["corpus"]["n_sources"] == 2
    texts = _quiet_train(iter([str(good), str(tmp_path / "typo.py")]), vocab_size=270)
    assert texts.tokenizer.metadata["corpus"]["texts"] == 2


def test_paths_mixed_with_texts_train_like_the_seed(tmp_path):
    # seed 000, 6.1: train(code_corpus + text_corpus); the files are read whole, as train(files) does
    (tmp_path / "m.cpp").write_text("int main() {\r\n    return 0;\r\n}\r\n", newline="")
    (tmp_path / "d.jsonl").write_text(
        '{"text": "const x = 1;"}\n{"body": "no", "text": "let y = 2;"}\n'
    )
    files = cromwell.collect_code_corpus(tmp_path, [".cpp", ".jsonl"])
    english = ["the quick brown fox jumps over the lazy dog"] * 3
    mixed = _quiet_train(files + english, vocab_size=300)
    contents = ["const x = 1;", "let y = 2;", "int main() {\r\n    return 0;\r\n}\r\n"]
    same = _quiet_train(contents + english, vocab_size=300)
    assert mixed.tokenizer.mergeable_ranks() == same.tokenizer.mergeable_ranks()
    with pytest.raises(ValueError, match="m.cpp' names a file: pass it as pathlib.Path"):
        _quiet_train(
            [files[0], str(files[1])], vocab_size=270
        )  # not trained on as the text 'm.cpp'
    (tmp_path / "bad.cpp").write_bytes(b"int \xff;\n")
    with pytest.raises(toksmith.CorpusDecodeError, match="bad.cpp is not valid UTF-8"):
        _quiet_train([tmp_path / "bad.cpp", "text"], vocab_size=270)
    assert (
        _quiet_train([tmp_path / "bad.cpp", "text"], vocab_size=270, errors="replace").n_vocab
        <= 270
    )


def test_numpy_integer_ids_are_accepted(code):
    frame = code.tokenize_file_with_edit("a.py", "x = 1\n", "x = 2\n")
    expected = code.parse_edit_output(frame)
    assert code.parse_edit_output([np.int64(i) for i in frame]) == expected
    assert code.parse_edit_output(np.array(frame, dtype=np.uint16)) == expected
    assert code.decode([np.int32(i) for i in frame]) == code.decode(frame)
    assert (
        code.decode_batch([[np.uint32(i) for i in frame], np.array(frame)])
        == [code.decode(frame)] * 2
    )
    assert code.encode_batch(["a b"], threads=np.int64(2)) == [code.encode("a b")]


def test_ids_of_the_wrong_type_are_type_errors(code):
    frame = code.tokenize_file_with_edit("a.py", "x", "y")
    for bad in (set(frame), dict.fromkeys(frame), np.int64(5), None, 5, "<EDIT_START>", b"\x05"):
        with pytest.raises(TypeError, match="sequence of int token ids"):
            code.parse_edit_output(bad)  # a set or dict has no order: it was parsed silently
    for bad in (np.array(frame, dtype=float), np.array([True, False])):
        with pytest.raises(TypeError, match="must be integers"):
            code.parse_edit_output(bad)
        with pytest.raises(TypeError, match="must be integers"):
            code.decode(bad)
    with pytest.raises(TypeError, match=r"not bool \(True\) at index 1"):
        code.parse_edit_output([5, True])
    with pytest.raises(ValueError, match="out of range"):
        code.parse_edit_output([5, 2**70])
    with pytest.raises(TypeError, match="batch must be a list"):
        code.decode_batch("abc")


def test_flags_must_be_bools(code):
    with pytest.raises(TypeError, match="bos must be True or False"):
        code.encode("x", bos=1)
    with pytest.raises(TypeError, match="eos must be True or False"):
        code.encode("x", eos="yes")
    with pytest.raises(TypeError, match="skip_special_tokens must be True or False"):
        code.decode(
            [code.eos_id], skip_special_tokens="no"
        )  # "no" is truthy: specials were dropped
    with pytest.raises(TypeError, match="skip_special_tokens must be True or False"):
        code.decode_batch([[code.eos_id]], skip_special_tokens=0)
    assert code.encode("x", bos=np.bool_(True))[0] == code.bos_id


def test_a_lone_surrogate_in_a_frame_is_a_value_error(code):
    # surrogateescape'd file contents would come back as U+FFFD: refused, not silently changed
    for args, what in (
        (("a\udcff.py", "x", "y"), "file_path"),
        (("a.py", "x\udcff", "y"), "file_content"),
        (("a.py", "x", "\ud800y"), "edit_instruction"),
    ):
        with pytest.raises(ValueError, match=f"{what} holds a lone surrogate"):
            code.tokenize_file_with_edit(*args)
    with pytest.raises(ValueError, match="U\\+DCFF at index 1"):
        code.encode_delete("a.py", "x\udcff")
    ok = "x \U0001f30d \ud83c\udf0d".encode("utf-16", "surrogatepass").decode(
        "utf-16"
    )  # pairs are fine
    assert code.parse_edit_output(code.tokenize_file_with_edit("a.py", ok, ok))["old_content"] == ok


def test_parse_is_linear_on_marker_floods(code):
    def floods(n):
        return [
            [code.edit_start_id] * n,
            [code.file_id]
            + [code.file_end_id] * n
            + [code.edit_start_id]
            + [code.delete_id] * n
            + [code.edit_end_id] * n,
            [code.bos_id, code.pad_id] * n + [code.edit_start_id],
            code.tokenize_file_with_edit("p", "x = 1\n" * n, "y" * n),
        ]

    small, large = floods(10_000), floods(80_000)
    for i in range(len(small)):
        sized = {10_000: small[i], 80_000: large[i]}
        assert_linear(lambda n: code.parse_edit_output(sized[n]), 10_000)


@settings(max_examples=150, deadline=None)
@given(
    path=text_with_markers.filter(bool),
    old=text_with_markers,
    new=text_with_markers,
    pads=st.integers(0, 3),
)
def test_frames_round_trip_with_marker_texts(code, path, old, new, pads):
    frame = code.tokenize_file_with_edit(path, old, new)
    out = code.parse_edit_output(frame)
    assert (out["file_path"], out["old_content"], out["new_content"], out["complete"]) == (
        path,
        old,
        new,
        True,
    )
    wrapped = [code.bos_id, *frame, code.eos_id, *[code.pad_id] * pads, *frame]
    assert code.parse_edit_output(np.array(wrapped)) == out
    gone = code.parse_edit_output(code.encode_delete(path, old))
    assert (gone["file_path"], gone["old_content"], gone["new_content"], gone["edit_type"]) == (
        path,
        old,
        "",
        "delete",
    )


def test_token_cache_is_an_lru_of_encodings(code):
    cache = TokenCache(code, cache_size=2)
    for text in ["a", "b", "a", "c", "b"]:
        assert cache.encode_cached(text) == code.encode(text)
    assert list(cache._cache) == ["c", "b"] and (cache.hits, cache.misses, len(cache)) == (1, 4, 2)
    ids = cache.encode_cached("c")
    ids.append(-1)  # the caller's list, not the cache's
    assert cache.encode_cached("c") == code.encode("c")
    cache.clear()
    assert (len(cache), cache.hits, cache.misses) == (0, 0, 0)
    none = TokenCache(code.tokenizer, cache_size=0)  # a plain Tokenizer with the specials works too
    assert none.encode_cached("x = 1") == code.encode("x = 1") and len(none) == 0


def test_token_cache_sizes_and_types(code):
    assert TokenCache(code, cache_size=2**62).encode_cached("def") == code.encode(
        "def"
    )  # nothing reserved
    assert TokenCache(code, cache_size=np.int64(3)).cache_size == 3
    with pytest.raises(ValueError, match="cache_size must be >= 0"):
        TokenCache(code, cache_size=-1)
    for bad in (True, 1.5, "10", None):
        with pytest.raises(TypeError, match="cache_size must be an int"):
            TokenCache(code, cache_size=bad)
    with pytest.raises(TypeError, match="text must be str"):
        TokenCache(code).encode_cached(b"x")
    with pytest.raises(TypeError, match="needs a toksmith.Tokenizer"):
        TokenCache("tokenizer.json")


def test_token_cache_shared_by_threads(code):
    cache = TokenCache(code, cache_size=8)
    texts = [f"x{i % 20} = {i % 20}" for i in range(400)]
    errors = []

    def work():
        try:
            for t in texts:
                assert cache.encode_cached(t) == code.encode(t)
        except Exception as e:  # pragma: no cover - what the test looks for
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors and len(cache) == 8 and cache.hits + cache.misses == 1600


def test_specials_are_the_seeds(code):
    assert code.special_ids == {s: i for i, s in enumerate(CROMWELL_SPECIAL_TOKENS)}


PY_SLICE = DATA / "corpora" / "python_slice.txt"


@pytest.fixture(scope="module")
def py_code() -> CodeTokenizer:
    return cromwell.train([PY_SLICE], vocab_size=400)


@pytest.mark.parametrize("batch", [None, 5])
def test_decode_batch_of_a_non_iterable_names_the_type(py_code, batch):
    # was: TypeError "'NoneType' object is not iterable"
    with pytest.raises(TypeError, match="batch must be a list of id sequences"):
        py_code.decode_batch(batch)
