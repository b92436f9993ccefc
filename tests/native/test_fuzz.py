"""None"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
import time
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toksmith
from tests.conftest import BYTES
from tests.panics import CORPUS, call, expect
from toksmith import Tokenizer, _core, streaming
from toksmith.errors import (
    CorpusDecodeError,
    DisallowedSpecialError,
    EmptyCorpusError,
    PatternError,
    UnknownTokenError,
    VocabError,
)
from toksmith.presets import wordbpe

np = pytest.importorskip("numpy")


BYTES_LIST = list(BYTES.items())


FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def run_isolated(code: str, timeout: float = 20, memory_gb: int = 8) -> subprocess.CompletedProcess:
    """Run ``code`` (after ``import toksmith._core as c``) in a child process with an address-space
    limit, for calls that abort the process or allocate without bound. The child prints
    ``RESULT <class name> <message>`` for what the last line raised, or ``RESULT OK <repr>``."""
    body = textwrap.dedent(code).strip().splitlines()
    script = "\n".join(
        [
            "import sys, resource",
            f"resource.setrlimit(resource.RLIMIT_AS, ({memory_gb} << 30, {memory_gb} << 30))",
            "import toksmith, toksmith._core as c",
            *body[:-1],
            "try:",
            f"    r = {body[-1]}",
            "    print('RESULT OK', repr(r)[:200])",
            "except BaseException as e:",
            "    print('RESULT', type(e).__name__, str(e)[:300])",
        ]
    )
    return subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "RUST_BACKTRACE": "0"},
    )


def isolated_result(code: str, timeout: float = 20) -> str:
    """What :func:`run_isolated` reports: ``"OK ..."``, ``"<exception class> <message>"``, or
    ``"DIED rc=..."`` / ``"HUNG"`` when the child aborted or ran out of time."""
    try:
        p = run_isolated(code, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "HUNG"
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
    if p.returncode != 0 or not lines:
        return f"DIED rc={p.returncode}: {p.stderr.strip().splitlines()[:1]}"
    return lines[-1][len("RESULT ") :]


@pytest.fixture(scope="module")
def trained_tok():
    """A trained tokenizer: merges, two special tokens, a pinned token with a space."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return toksmith.train_from_iterator(
            [CORPUS],
            vocab_size=420,
            pattern="gpt2",
            special_tokens=["<|endoftext|>", "<|fim|>"],
            pinned_tokens=["New York"],
        )


@pytest.fixture(scope="module")
def tiny_tok():
    return Tokenizer.from_ranks({**BYTES, b"ab": 256}, "gpt2", {"<|end|>": 257})


@pytest.fixture(scope="module")
def core(tiny_tok):
    return tiny_tok._core


BAD_IDS = [-1, -(2**31), 258, 10**6, 2**31, 2**32 - 1, 2**32, 2**63, 2**64, 10**40]


_PATTERNS = [
    toksmith.PATTERNS["gpt2"],
    toksmith.PATTERNS["cl100k"],
    toksmith.PATTERNS["o200k"],
    r"\S+|\s+",
    ".",
]


_NATIVE_REFUSALS = (
    ValueError,
    OverflowError,
    TypeError,
)  # VocabError, PatternError... are ValueErrors


_CHARS = st.one_of(
    st.characters(),
    st.sampled_from(
        [
            "\x00",
            "\ud800",
            "\udfff",
            "\ud83d",
            "\ude00",
            "😀",
            "<|fim|>",
            "<|endoftext|>",
            "New York",
            "\r\n",
            " ",
        ]
    ),
)


def _fixed(text: str) -> str:
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


class _InterruptedBar:
    """A progress bar whose first update of the merge loop raises KeyboardInterrupt (a Ctrl-C)."""

    def __init__(self, desc):
        self.desc, self.updates, self.closed = desc, 0, False

    def update(self, n):
        self.updates += 1
        if self.updates == 1 and self.desc == "merging":
            raise KeyboardInterrupt("Ctrl-C during merging")

    def set_postfix(self, **kw):
        pass

    def close(self):
        self.closed = True


@pytest.mark.parametrize("bad", BAD_IDS)
def test_public_decoders_name_an_out_of_range_id(tiny_tok, bad):
    msg = rf"token id {bad} is out of range: valid ids are 0\.\.257"
    for f in (
        lambda: tiny_tok.decode([97, bad]),
        lambda: tiny_tok.decode_bytes([bad]),
        lambda: tiny_tok.decode_batch([[97], [98, bad]], threads=2),
        lambda: tiny_tok.decode_tokens_bytes([bad]),
        lambda: tiny_tok.decode_single_token_bytes(bad),
        lambda: tiny_tok.decode_with_offsets([97, bad]),
        lambda: tiny_tok.decode([97, bad], skip_special_tokens=True),
        lambda: tiny_tok.stream_decoder().push(bad),
        lambda: tiny_tok.stream_decoder().push_many([97, bad]),
    ):
        e = expect(UnknownTokenError, f, match=msg)
        assert isinstance(e, ValueError) and isinstance(e, KeyError)


@pytest.mark.parametrize("bad", BAD_IDS)
def test_native_bpe_refuses_out_of_range_ids_without_panicking(core, bad):
    # the native objects a user can reach (tok._core): each refuses the id with an exception
    # (OverflowError for ints no u32 holds, UnknownTokenError for an unused u32)
    classes = (OverflowError, UnknownTokenError)
    for f in (
        lambda: core.decode_bytes([97, bad]),
        lambda: core.decode_str([bad], "replace"),
        lambda: core.char_spans([bad]),
        lambda: core.char_spans([bad], True),
        lambda: core.token_bytes(bad),
        lambda: core.decode_bytes_batch([[97], [bad]], 2),
    ):
        e = expect(classes, f)
        if isinstance(e, UnknownTokenError):
            assert str(bad) in str(e)
    if not 0 <= bad < 2**32:  # ids of the allowed / disallowed special tokens
        expect(OverflowError, core.encode, "ab<|end|>", [bad])
        expect(OverflowError, core.find_special, "ab<|end|>", [bad])
        expect(OverflowError, _core.pack_ids, [bad], 4)
        expect(
            OverflowError, _core.format_ids, [bad], b" "
        )  # (no vocabulary: any u32 is formatted)


@FUZZ
@given(ids=st.lists(st.integers(min_value=-(2**70), max_value=2**70), max_size=8))
def test_any_int_ids_decode_or_name_the_first_bad_one(tiny_tok, ids):
    bad = [i for i in ids if not 0 <= i < tiny_tok.n_vocab]
    if not bad:
        data = call(tiny_tok.decode_bytes, ids)
        assert data == b"".join(tiny_tok.decode_single_token_bytes(i) for i in ids)
        assert call(tiny_tok.decode, ids) == data.decode("utf-8", "replace")
        assert call(tiny_tok.decode_batch, [ids, ids[::-1]], threads=2) == [
            tiny_tok.decode(ids),
            tiny_tok.decode(ids[::-1]),
        ]
        return
    e = expect(UnknownTokenError, tiny_tok.decode, ids)
    assert f"token id {bad[0]} is out of range" in str(e)
    d = tiny_tok.stream_decoder()
    expect(UnknownTokenError, d.push_many, ids)
    assert d.pending == b"" and d.flush() == ""  # push_many pushed none of them


def test_unused_id_inside_the_range_is_named(trained_tok):
    sparse = Tokenizer.from_ranks(BYTES, "gpt2", {"<|s|>": 300})  # ids 256..299 unused
    for f in (
        lambda: sparse.decode([97, 280]),
        lambda: sparse.decode_single_token_bytes(299),
        lambda: sparse.stream_decoder().push(256),
    ):
        expect(UnknownTokenError, f, match=r"token id 2\d\d is not used by this vocabulary")
    assert sparse.decode([97, 300]) == "a<|s|>"


def test_native_message_for_a_negative_id_names_it(core):
    for f in (
        lambda: core.decode_bytes([-1]),
        lambda: core.char_spans([-1]),
        lambda: _core.format_ids([-1], b" "),
        lambda: _core.pack_ids([-1], 4),
    ):
        e = expect(OverflowError, f)
        assert "too large" not in str(e) and "-1" in str(e), str(e)


@FUZZ
@given(
    extra=st.lists(st.tuples(st.binary(max_size=5), st.integers(0, 600)), max_size=10),
    added=st.lists(st.tuples(st.text(max_size=4), st.integers(0, 700), st.booleans()), max_size=4),
    pattern=st.sampled_from(_PATTERNS),
    drop=st.sets(st.integers(0, 255), max_size=1),
    text=st.text(max_size=40),
    ids=st.lists(st.integers(0, 800), max_size=8),
)
def test_native_bpe_from_random_tables(extra, added, pattern, drop, text, ids):
    # random rank tables (duplicate ids and bytes, gaps, empty tokens, a missing byte) and added
    # tokens (empty, overlapping, on a rank's id): the constructor builds a core or refuses with
    # an exception; a core it builds encodes any text back to its bytes and refuses bad ids
    mergeable = [(bytes([b]), b) for b in range(256) if b not in drop] + extra
    try:
        bpe = call(_core.Bpe, mergeable, added, pattern)
    except _NATIVE_REFUSALS:
        return
    data = _fixed(text).encode()
    assert bpe.decode_bytes(call(bpe.encode_ordinary, _fixed(text))) == data
    every = call(bpe.encode, _fixed(text), None, True)
    assert bpe.decode_bytes(every) == data
    assert call(bpe.encode_batch, [_fixed(text)] * 2, None, True, 2) == [every, every]
    for f in (
        lambda: bpe.decode_bytes(ids),
        lambda: bpe.char_spans(ids),
        bpe.recover_merges,
        *(lambda i=i: bpe.token_bytes(i) for i in ids),
    ):
        try:
            call(f)
        except _NATIVE_REFUSALS:
            pass


@pytest.mark.parametrize(
    "args, exc, match",
    [
        (([(b"a",)], [], "a"), ValueError, "expected tuple of length 2"),
        ((BYTES_LIST, [("x", 300)], "a"), ValueError, "expected tuple of length 3"),
        (("abc", [], "a"), TypeError, "Can't extract `str`"),
        (([("a", 0)], [], "a"), TypeError, None),
        (([(b"a", -1)], [], "a"), OverflowError, None),
        (([(b"a", 1.0)], [], "a"), TypeError, "float"),
        ((BYTES_LIST, [("x", 2**32, False)], "a"), OverflowError, None),
        ((BYTES_LIST, [("x", 1, "yes")], "a"), TypeError, "bool"),
        ((BYTES_LIST, [(b"x", 300, False)], "a"), TypeError, "bytes"),
        (
            (BYTES_LIST, [("a\ud800", 300, False)], "a"),
            UnicodeEncodeError,
            "surrogates not allowed",
        ),
        ((BYTES_LIST, [], "("), PatternError, "Opening parenthesis"),
        ((BYTES_LIST, [], "x\ud800"), UnicodeEncodeError, "surrogates not allowed"),
    ],
)
def test_native_bpe_constructor_with_wrong_shapes(args, exc, match):
    expect(exc, _core.Bpe, *args, match=match)


def test_empty_inputs(trained_tok):
    assert (
        trained_tok.encode("") == trained_tok.encode_ordinary("") == []
        and trained_tok.decode([]) == ""
        and trained_tok.decode_bytes([]) == b""
    )
    assert trained_tok.encode_batch([]) == trained_tok.decode_batch(
        []
    ) == [] and trained_tok.encode_batch([""]) == [[]]
    assert trained_tok.encode_to_numpy("").tolist() == [] and trained_tok.encode_with_offsets(
        ""
    ) == ([], [])
    assert trained_tok.decode_with_offsets([]) == ("", []) and trained_tok.encode_bytes(b"") == []
    assert (
        trained_tok.encode_with_unstable("") == ([], [])
        and trained_tok._encode_single_piece(b"") == []
    )
    assert trained_tok.stream_decoder().push_many([]) == "" and toksmith.split("", "cl100k") == []
    expect(UnknownTokenError, trained_tok.encode_single_token, "", match="is not a single token")
    expect(UnknownTokenError, trained_tok.encode_single_token, b"", match="is not a single token")
    assert (
        trained_tok._core.token_id(b"") is None
        and _core.parse_ids(b"") == []
        and _core.format_ids([], b",") == b""
    )
    assert (
        list(streaming.encode_stream(trained_tok, io.BytesIO(b""))) == []
        and list(streaming.encode_lines(trained_tok, [])) == []
    )


@pytest.mark.parametrize(
    "ids, what",
    [
        ([97, 1.0], "float"),
        ([97, "a"], "str"),
        ([97, None], "NoneType"),
        ([[97]], "list"),
        ([97, 2 + 0j], "complex"),
        ([97, b"a"], "bytes"),
    ],
)
def test_decoders_refuse_ids_of_the_wrong_type(tiny_tok, ids, what):
    for f in (
        tiny_tok.decode,
        tiny_tok.decode_bytes,
        tiny_tok.decode_with_offsets,
        lambda x: tiny_tok.decode_batch([x]),
        lambda x: tiny_tok.stream_decoder().push_many(x),
    ):
        expect(TypeError, f, ids, match=f"ids must be ints, got {what}")


@pytest.mark.parametrize("ids", ["ab", b"ab", bytearray(b"ab")])
def test_text_or_bytes_is_not_a_sequence_of_ids(tiny_tok, ids):
    expect(TypeError, tiny_tok.decode, ids, match="ids must be a sequence of int")
    expect(TypeError, tiny_tok.decode_batch, [ids], match="ids must be a sequence of int")


def test_decode_batch_names_an_item_that_is_no_sequence(tiny_tok):
    # was: TypeError "'int' object is not iterable" / "'NoneType' object is not iterable",
    # naming neither the argument nor the item
    expect(
        TypeError,
        tiny_tok.decode_batch,
        [[97], 5],
        match=r"batch\[1\] must be a sequence of ids.*not int",
    )
    expect(
        TypeError, tiny_tok.decode_bytes_batch, [[97], None], match=r"batch\[1\] .* not NoneType"
    )
    expect(TypeError, tiny_tok.decode_batch, [{97: 1}], match=r"batch\[0\] .* not dict")
    expect(
        TypeError,
        tiny_tok.decode_batch,
        None,
        match="batch must be a list of id sequences, not NoneType",
    )
    expect(
        TypeError, tiny_tok.decode_batch, 7, match="batch must be a list of id sequences, not int"
    )
    assert tiny_tok.decode_batch([(97, 98), range(97, 99), np.array([99])]) == ["ab", "ab", "c"]
    assert tiny_tok.decode_batch([]) == []


@pytest.mark.parametrize(
    "dtype", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
)
def test_numpy_integer_arrays_decode_like_lists(trained_tok, dtype):
    ids = trained_tok.encode("New York café 😀 <|fim|>", allowed_special="all")
    small = [i for i in ids if i < 128] if dtype in ("int8", "uint8") else ids
    arr = np.array(small, dtype=dtype)
    assert trained_tok.decode(arr) == trained_tok.decode(small)
    assert trained_tok.decode_bytes(arr) == trained_tok.decode_bytes(small)
    assert (
        trained_tok.decode_batch(np.array([small, small], dtype=dtype))
        == [trained_tok.decode(small)] * 2
    )
    assert trained_tok.stream_decoder().push_many(arr) + "" == trained_tok.decode(small)


@pytest.mark.parametrize(
    "arr, exc, match",
    [
        (np.array([97.0, 98.0]), TypeError, "ids must be ints, got float"),
        (np.array([97 + 0j]), TypeError, "ids must be ints, got complex"),
        (np.array(["a"]), TypeError, "ids must be ints, got str"),
        (np.array([[97, 98]], dtype=np.int64), TypeError, "ids must be ints, got list"),
        (np.array([97, -1], dtype=np.int64), UnknownTokenError, "token id -1 is out of range"),
        (
            np.array([97, 2**63], dtype=np.uint64),
            UnknownTokenError,
            "token id 9223372036854775808 is out of range",
        ),
        (
            np.array([97, 2**40], dtype=np.int64),
            UnknownTokenError,
            "token id 1099511627776 is out of range",
        ),
    ],
)
def test_numpy_arrays_of_the_wrong_dtype_or_values(tiny_tok, arr, exc, match):
    for f in (tiny_tok.decode, tiny_tok.decode_bytes, tiny_tok.decode_with_offsets):
        expect(exc, f, arr, match=match)


def test_encode_to_numpy_dtypes(trained_tok):
    text = "New York <|fim|> é"
    want = trained_tok.encode(text, allowed_special="all")
    for dtype in (None, "uint16", "uint32", np.uint16, np.dtype("<u4")):
        got = trained_tok.encode_to_numpy(text, allowed_special="all", dtype=dtype)
        assert got.tolist() == want
    for bad in ("int8", "uint64", "float32", 5, {"a": 1}, "a\ud800"):
        expect(
            ValueError,
            trained_tok.encode_to_numpy,
            text,
            allowed_special="all",
            dtype=bad,
            match="dtype must be 'uint16' or 'uint32'",
        )
    big = Tokenizer.from_ranks(BYTES, "gpt2", {"<|big|>": 70000})
    expect(
        ValueError,
        big.encode_to_numpy,
        "x",
        dtype="uint16",
        match="dtype uint16 cannot hold ids up to 70000",
    )


def test_wrong_types_for_text(tiny_tok):
    for bad in (None, 5, b"ab", ["ab"]):
        for f in (
            tiny_tok.encode,
            tiny_tok.encode_ordinary,
            tiny_tok.encode_to_numpy,
            tiny_tok.encode_with_offsets,
        ):
            expect(TypeError, f, bad, match="text must be str")
    expect(TypeError, tiny_tok.encode_batch, "ab", match="not a single str")
    expect(
        TypeError,
        tiny_tok.encode_batch,
        ["ab", None],
        match=r"texts\[1\] must be str, not NoneType",
    )
    expect(
        TypeError,
        tiny_tok.encode_ordinary_batch,
        ["ab", b"x"],
        match=r"texts\[1\] must be str, not bytes",
    )
    assert tiny_tok.encode_batch(np.array(["ab", "cd"])) == [[256], [99, 100]]


@FUZZ
@given(text=st.lists(_CHARS, max_size=30).map("".join))
def test_any_text_encodes_and_round_trips(trained_tok, text):
    ids = call(trained_tok.encode, text, allowed_special="all")
    assert call(trained_tok.decode, ids) == _fixed(text)
    assert call(trained_tok.encode_ordinary, text) == trained_tok.encode(
        text, disallowed_special=()
    )
    assert call(trained_tok.encode_batch, [text, text, ""], allowed_special="all", threads=2) == [
        ids,
        ids,
        [],
    ]
    assert call(trained_tok.encode_to_numpy, text, allowed_special="all").tolist() == ids
    got, spans = call(trained_tok.encode_with_offsets, text, allowed_special="all")
    assert got == ids and len(spans) == len(ids)
    assert all(0 <= a <= b <= len(text) for a, b in spans)
    assert call(trained_tok.encode_bytes, text.encode("utf-8", "surrogatepass")) is not None
    if "<|fim|>" in text or "<|endoftext|>" in text:
        expect(DisallowedSpecialError, trained_tok.encode, text, match="special token")


@FUZZ
@given(data=st.binary(max_size=40))
def test_any_bytes_encode_and_round_trip(trained_tok, data):
    ids = call(trained_tok.encode_bytes, data)
    assert trained_tok.decode_bytes(ids) == data
    assert call(trained_tok._encode_single_piece, data) is not None
    assert trained_tok.decode_bytes(trained_tok._encode_single_piece(data)) == data


def test_nul_characters_are_text(trained_tok):
    text = "a\x00b\x00\x00<|fim|>\x00"
    ids = trained_tok.encode(text, allowed_special="all")
    assert trained_tok.decode(ids) == text
    assert toksmith.split("\x00a\x00", "cl100k") == ["\x00a", "\x00"]  # as regex.findall splits it
    nul_special = Tokenizer.from_ranks(BYTES, "gpt2", {"\x00\x00": 256})
    assert nul_special.encode("a\x00\x00b", allowed_special="all") == [97, 256, 98]


@FUZZ
@given(
    names=st.lists(
        st.text(st.sampled_from(list("ab<|>é \n\x00") + ["😀"]), min_size=1, max_size=4),
        min_size=1,
        max_size=5,
        unique=True,
    ),
    parts=st.lists(st.text(st.sampled_from(list("ab<|>é \n\x00")), max_size=6), max_size=6),
    picks=st.lists(st.integers(min_value=0, max_value=4), min_size=6, max_size=6),
)
def test_overlapping_special_tokens_match_leftmost_longest(names, parts, picks):
    # special tokens that are prefixes / suffixes / parts of each other, of mergeable text,
    # whitespace and NUL: every text round-trips, and the match is leftmost, then longest
    specials = {s: 256 + k for k, s in enumerate(names)}
    t = call(Tokenizer.from_ranks, BYTES, "gpt2", specials)
    text = "".join(p + names[k % len(names)] for p, k in zip(parts, picks))
    ids = call(t.encode, text, allowed_special="all")
    assert t.decode(ids) == text
    want, i, gap = [], 0, 0
    longest_first = sorted(names, key=len, reverse=True)
    while i < len(text):
        hit = next((s for s in longest_first if text.startswith(s, i)), None)
        if hit is None:
            i += 1
            continue
        want += t.encode_ordinary(text[gap:i]) + [specials[hit]]
        i = gap = i + len(hit)
    assert ids == want + t.encode_ordinary(text[gap:])


@pytest.mark.parametrize(
    "specials, pinned, exc, match",
    [
        ({"": 256}, None, VocabError, "empty text"),
        ({"x": 97}, None, VocabError, "id 97 is used by two tokens"),
        ({"x": 256, "y": 256}, None, VocabError, "id 256 is used by two tokens"),
        ({"<a>": 256}, {"<a>": 257}, VocabError, "given twice"),
        ({"x": -1}, None, ValueError, r"is not a valid id \(0 <= id < 2\*\*32\)"),
        ({"x": 2**32}, None, ValueError, r"is not a valid id"),
        ({"x": 2**32 - 1}, None, VocabError, "ids must be dense"),
        ({"x": 256.0}, None, ValueError, "is not a valid id"),
        ({"x": "256"}, None, ValueError, "is not a valid id"),
        ({"\ud800": 256}, None, ValueError, "lone surrogate"),
        ({5: 256}, None, TypeError, "keys must be str"),
        ([("x", 256)], None, TypeError, "must be a dict"),
    ],
)
def test_bad_special_and_pinned_tokens(specials, pinned, exc, match):
    expect(exc, Tokenizer.from_ranks, BYTES, "gpt2", specials, pinned_tokens=pinned, match=match)


@pytest.mark.parametrize(
    "ranks, exc, match",
    [
        ({}, VocabError, "single byte 0x00 is not a token"),
        ({**BYTES, b"": 256}, VocabError, "empty bytes"),
        ({**BYTES, b"ab": 255}, VocabError, "id 255 is used by two tokens"),
        ({**BYTES, b"ab": -1}, ValueError, "is not a valid id"),
        ({**BYTES, b"ab": 2**32}, ValueError, "is not a valid id"),
        ({**BYTES, b"ab": 2**64}, ValueError, "is not a valid id"),
        ({**BYTES, b"ab": 2**31}, VocabError, "ids must be dense"),
        ({**BYTES, b"ab": 256.0}, ValueError, "is not a valid id"),
        ({**BYTES, b"ab": True}, ValueError, "is not a valid id"),
        ({**BYTES, "ab": 256}, TypeError, "keys must be bytes"),
        ([(b"a", 0)], TypeError, "must be a dict"),
    ],
)
def test_bad_rank_tables(ranks, exc, match):
    expect(exc, Tokenizer.from_ranks, ranks, "gpt2", match=match)


@pytest.mark.parametrize(
    "merges, exc, match",
    [
        ([(0, 300)], ValueError, "names the id 300"),
        ([(0, -1)], ValueError, "is not a pair of token ids"),
        ([(0, 2**64)], ValueError, "is not a pair of token ids"),
        ([(0, 1, 2)], TypeError, r"merges\[0\] is \(0, 1, 2\)"),
        ([(0,)], TypeError, r"merges\[0\]"),
        ([[0.0, 1]], ValueError, "is not a pair of token ids"),
        ([["a", "b"]], TypeError, r"merges\[0\]"),
        ("ab", TypeError, "not str"),
        ([5], TypeError, r"merges\[0\] is 5"),
    ],
)
def test_bad_merge_lists(merges, exc, match):
    expect(exc, Tokenizer, BYTES, pattern="gpt2", merges=merges, match=match)


@pytest.mark.parametrize("char", ["a", " ", "\u4e2d", "😀", "1", "!", "\ud800"])
def test_a_megabyte_of_one_character_is_fast_and_exact(tiny_tok, char):
    text = char * (1 << 20) if char not in ("😀", "\ud800") else char * (1 << 18)
    t0 = time.process_time()  # CPU seconds: a loaded machine does not stretch them
    ids = call(tiny_tok.encode, text)
    assert tiny_tok.decode(ids) == _fixed(text)
    assert call(tiny_tok.encode_ordinary_batch, [text, text[:10]], threads=2)[0] == ids
    assert sum(map(len, call(toksmith.split, _fixed(text), "gpt2"))) == len(_fixed(text))
    assert time.process_time() - t0 < 10


def test_unstable_end_of_a_megabyte_piece_is_fast(tiny_tok):
    # was: quadratic in the unstable end (every split of it sliced and looked up): 1 MB of "a"
    # ran for minutes; only suffixes up to the longest token's length can start a token
    t0 = time.process_time()  # CPU seconds: a loaded machine does not stretch them
    stable, completions = call(tiny_tok.encode_with_unstable, "a" * (1 << 20))
    assert stable == [] and len(completions) == 2
    assert all(tiny_tok.decode_bytes(c).startswith(b"a" * (1 << 20)) for c in completions)
    stable, completions = call(tiny_tok.encode_with_unstable, "x " + "ab" * (1 << 19))
    assert (
        stable == [120]
        and completions
        and all(tiny_tok.decode_bytes(c).startswith(b" " + b"ab" * (1 << 19)) for c in completions)
    )
    assert time.process_time() - t0 < 10


def test_unstable_completions_unchanged_for_short_ends(trained_tok):
    # the shortcut changes nothing where the unstable end is shorter than the longest token
    longest = max(map(len, trained_tok.mergeable_ranks()))
    for text in ["the qui", "New Yo", " ", "naïv", "12", "x  ", "ab" * longest]:
        stable, completions = trained_tok.encode_with_unstable(text)
        unstable = text.encode()[len(trained_tok.decode_bytes(stable)) :]
        assert all(trained_tok.decode_bytes(c).startswith(unstable) for c in completions), text
        assert trained_tok.encode(text)[: len(stable)] == stable


def test_training_on_one_long_piece(tiny_tok):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = call(toksmith.train_from_iterator, ["ab" * (1 << 19)], vocab_size=270, pattern="gpt2")
    assert t.decode(t.encode("abab")) == "abab" and t.n_vocab == 270


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(vocab_size=2**40), VocabError, "too large"),
        (dict(vocab_size=2**64), VocabError, "too large"),
        (dict(vocab_size=-5), VocabError, "too small"),
        (dict(vocab_size=257.0), TypeError, "vocab_size must be an int"),
        (dict(vocab_size=True), TypeError, "vocab_size must be an int"),
        (dict(vocab_size=300, threads=2**31), ValueError, "threads must be between 1 and 4096"),
        (dict(vocab_size=300, threads=2**64), ValueError, "threads must be between 1 and 4096"),
        (dict(vocab_size=300, threads=0), ValueError, "threads must be between 1 and 4096"),
        (dict(vocab_size=300, min_frequency=2**63), ValueError, "min_frequency must be between"),
        (
            dict(vocab_size=300, max_token_length=2**64),
            ValueError,
            "max_token_length must be between",
        ),
        (dict(vocab_size=300, max_token_length=0), ValueError, "max_token_length must be between"),
        (dict(vocab_size=300, special_tokens={"x": 2**40}), VocabError, "does not fit"),
        (dict(vocab_size=300, special_tokens=[""]), ValueError, "is not a non-empty str"),
        (dict(vocab_size=300, special_tokens=["x", "x"]), ValueError, "given twice"),
        (dict(vocab_size=300, pinned_tokens=["\ud800"]), ValueError, "lone surrogate"),
    ],
)
def test_training_refuses_huge_or_bad_sizes(kwargs, exc, match):
    expect(exc, toksmith.train_from_iterator, ["ab ab ab"], match=match, **kwargs)


def test_training_inputs(tiny_tok):
    expect(EmptyCorpusError, toksmith.train_from_iterator, [], vocab_size=300, match="empty")
    expect(EmptyCorpusError, toksmith.train_from_iterator, ["", ""], vocab_size=300, match="empty")
    expect(
        CorpusDecodeError,
        toksmith.train_from_iterator,
        ["ok", "a\ud800"],
        vocab_size=300,
        match="text 1 of the iterable holds a lone surrogate",
    )
    expect(TypeError, toksmith.train_from_iterator, ["ab", 5], vocab_size=300, match="item 1")
    expect(TypeError, toksmith.train_from_iterator, "ab", vocab_size=300, match="single str")
    expect(
        ValueError, toksmith.train_from_counts, {"ab": 2**63}, vocab_size=300, match="between 0 and"
    )
    expect(
        ValueError,
        toksmith.train_from_counts,
        {"ab": 2**62, "abc": 2**62},
        vocab_size=300,
        match="the counts are too large",
    )
    expect(
        ValueError, toksmith.train_from_counts, {"ab": -1}, vocab_size=300, match="between 0 and"
    )
    expect(
        TypeError, toksmith.train_from_counts, [("ab", 3, 4)], vocab_size=300, match="an item is"
    )
    expect(
        TypeError,
        toksmith.train_from_counts,
        {5: 1},
        vocab_size=300,
        match="chunks must be str or bytes",
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = toksmith.train_from_counts({b"\xff\xfe": 3, "ab": 2**40}, vocab_size=258)
    assert t.decode_bytes(t.encode_bytes(b"\xff\xfeab")) == b"\xff\xfeab" and t.n_vocab == 258


def test_native_counter_refuses_negative_and_oversized_counts():
    k = _core.ChunkCounter(toksmith.PATTERNS["gpt2"])
    expect(OverflowError, k.add_counts, [(b"ab", -1)])
    expect(OverflowError, k.add_counts, [(b"ab", 2**64)])
    expect(OverflowError, k.train, 2**64)
    expect(OverflowError, k.train, -1)
    expect(OverflowError, k.add_texts, ["ab"], 2**64)
    k.add_texts(["ab ab ab", "", "cd"], 2**31)  # more threads than cores: capped, not refused
    assert k.stats()["texts"] == 3 and k.train(2) == [(97, 98), (32, 256)]
    expect(RuntimeError, k.train, 1, match="already consumed")


def test_native_counter_does_not_wrap_counts():
    k = _core.ChunkCounter(toksmith.PATTERNS["gpt2"])
    try:
        k.add_counts([(b"ab", 2**64 - 1), (b"ab", 5)])
    except (OverflowError, ValueError):
        return
    assert k.counts() == [(b"ab", 2**64 + 4)]


def test_native_word_counts_do_not_wrap():
    outcomes = []
    for f in (
        lambda: _core.fold_word_counts([(b"A", 2**64 - 1), (b"a", 5)], True),
        lambda: _core.train_words([("ab", 2**64 - 1), ("ab", 5)], 10),
        lambda: _core.WordEncoder(_core.WORDS_PATTERN, True, [(b"a\xff", 1)], 0).token_counts(
            [("a", 2**64 - 1), ("a", 2)], 2
        ),
    ):
        try:
            outcomes.append(call(f))
        except (OverflowError, ValueError):
            outcomes.append("refused")
    assert outcomes == ["refused"] * 3, outcomes


def test_ctrl_c_in_the_merge_progress_bar_is_not_swallowed(monkeypatch):
    # was: the native merge loop calls progress(done, total), prints what it raises and goes on:
    # a KeyboardInterrupt in the bar's update was dropped and training returned a tokenizer
    bars = []

    def fake_bar(progress, **kw):
        bars.append(_InterruptedBar(kw.get("desc")))
        return bars[-1] if progress else None

    monkeypatch.setattr(sys.modules["toksmith.train"], "_progress_bar", fake_bar)
    monkeypatch.setattr(wordbpe, "_progress_bar", fake_bar)
    text = " ".join(str(i) for i in range(5000))  # enough merges for the loop to report during them
    for train in (
        lambda: toksmith.train_from_iterator(
            [text], vocab_size=256 + 300, pattern="gpt2", progress=True
        ),
        lambda: wordbpe.train_from_counts(
            {f"w{i}x{7 * i}": 3 for i in range(3000)}, num_merges=300, progress=True
        ),
    ):
        bars.clear()
        with pytest.raises(KeyboardInterrupt, match="Ctrl-C during merging"):
            train()
        merging = [b for b in bars if b.desc == "merging"]
        assert len(merging) == 1 and merging[0].updates == 1 and merging[0].closed


def test_native_merge_loop_stops_when_the_progress_callback_raises(capfd):
    calls = []

    def interrupt(done, total):
        calls.append(done)
        raise KeyboardInterrupt

    k = _core.ChunkCounter(toksmith.PATTERNS["gpt2"])
    k.add_texts([" ".join(str(i) for i in range(5000))])
    try:
        k.train(3000, interrupt)
    except KeyboardInterrupt:
        assert len(calls) == 1
        return
    finally:
        capfd.readouterr()  # (the printed tracebacks)
    pytest.fail(
        f"the merge loop ran on after the callback raised KeyboardInterrupt ({len(calls)} calls)"
    )


def test_block_and_batch_sizes_are_checked_in_python():
    f = io.BytesIO(b"ab ab")
    tiny_tok = Tokenizer.from_ranks(BYTES, "gpt2")
    for size in (0, -1, 2**33, 2**64):
        expect(
            ValueError,
            lambda: list(streaming.encode_stream(tiny_tok, f, block_size=size)),
            match="block_size",
        )
        expect(
            ValueError,
            lambda: list(streaming.iter_line_batches(f, batch_bytes=size)),
            match="batch_bytes",
        )
    expect(
        TypeError,
        lambda: list(streaming.encode_stream(tiny_tok, f, block_size=2.0)),
        match="block_size",
    )
    k = _core.ChunkCounter(toksmith.PATTERNS["gpt2"])
    expect(
        ValueError,
        k.add_stream,
        io.BytesIO(b"ab"),
        "x",
        False,
        0,
        0,
        match="block_size must be between 1 byte and",
    )
    expect(OverflowError, k.add_stream, io.BytesIO(b"ab"), "x", False, 0, 2**64)


def test_native_huge_block_size_does_not_abort(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text("ab ab ab\n")
    for code in (
        f"k = c.ChunkCounter(toksmith.PATTERNS['gpt2'])\nk.add_file({str(path)!r}, False, 0, 2**40)",
        "import io\nk = c.ChunkCounter(toksmith.PATTERNS['gpt2'])\n"
        "k.add_stream(io.BytesIO(b'ab'), 'x', False, 0, 2**40)",
    ):
        got = isolated_result(code)
        assert got.startswith(("OK", "ValueError", "MemoryError", "OverflowError")), got


def test_native_huge_sizes_do_not_panic():
    for code in (
        "c.word_embeddings([b'a'], 2**62)",
        "c.word_embeddings([b'a'] * 10, 2**40)",
        "c.WordEncoder(c.WORDS_PATTERN, True, [(b'a\\xff', 1)], 0).token_counts([('a', 5)], 2**62)",
    ):
        got = isolated_result(code)
        assert got.startswith(("ValueError", "MemoryError", "OverflowError")), f"{code}: {got}"


def test_native_word_encoder_refuses_sparse_ids():
    for code in (
        "c.WordEncoder(c.WORDS_PATTERN, True, [(b'a\\xff', 2**32 - 1)], 0)",
        "c.WordEncoder(c.WORDS_PATTERN, True, [(b'a\\xff', 1)], 2**31)",
    ):
        got = isolated_result(code, timeout=15)
        assert got.startswith(("VocabError", "ValueError")), f"{code}: {got}"


@pytest.mark.parametrize(
    "pattern, match",
    [
        ("(", "Opening parenthesis without closing"),
        ("*", "Target of repeat operator"),
        ("\\", "Backslash without following character"),
        ("(a)\\2", "Invalid back reference"),
        ("(?<=a+)b", "Look-behind assertion without constant size"),
        ("a{4294967296}", "invalid regex pattern"),
        ("\\p{Bogus}", "invalid regex pattern"),
        ("", "the split pattern is empty"),
        ("CL100K", "is no pattern name"),
        ("x\ud800", "lone surrogate"),
        ("|a", "can match the empty string"),
        ("(?:)", "can match (only )?the empty string"),
    ],
)
def test_invalid_custom_patterns(pattern, match):
    expect(PatternError, Tokenizer.from_ranks, BYTES, pattern, match=match)
    expect(PatternError, toksmith.split, "ab", pattern, match=match)


@pytest.mark.parametrize(
    "pattern",
    [
        r"\b",
        "(?=a)",
        "(?!x)",
        "^",
        r"\A",
        r"\z",
        r"\b|\B",
        r"(?i)\b",
        "(?=a)(?!b)",
        "(?<=a)",
        "(?#comment)",
    ],
)
def test_a_pattern_that_matches_only_empty_strings_is_refused(tiny_tok, pattern):
    # was: accepted, and every text encoded to [] (all of it silently dropped), as the empty
    # pattern (refused) would
    match = "can match only the empty string"
    expect(PatternError, Tokenizer.from_ranks, BYTES, pattern, match=match)
    expect(PatternError, toksmith.split, "ab cd", pattern, match=match)
    expect(
        PatternError,
        toksmith.train_from_iterator,
        ["ab cd"],
        vocab_size=300,
        pattern=pattern,
        match=match,
    )
    words = wordbpe.train_from_counts({"low": 5, "lower": 2}, num_merges=3)
    expect(
        PatternError,
        wordbpe.WordTokenizer,
        words.tokens,
        merges=words.merges,
        pattern=pattern,
        match=match,
    )
    expect(PatternError, wordbpe.count_words, ["low lower"], pattern=pattern, match=match)


def test_word_pattern_checks():
    words = wordbpe.train_from_counts({"low": 5, "lower": 2}, num_merges=3)
    # was: the empty word pattern encoded every text to []
    expect(
        PatternError,
        wordbpe.WordTokenizer,
        words.tokens,
        merges=words.merges,
        pattern="",
        match="the word pattern is empty",
    )
    expect(
        PatternError,
        wordbpe.WordTokenizer,
        words.tokens,
        merges=words.merges,
        pattern="(",
        match="Opening parenthesis",
    )
    expect(
        PatternError,
        wordbpe.train_from_counts,
        {"low": 5},
        num_merges=3,
        pattern="",
        match="the word pattern is empty",
    )
    kept = wordbpe.WordTokenizer(words.tokens, merges=words.merges, pattern=r"\w+(?=\s|$)|\w+")
    assert kept.decode(kept.encode("low lower")) == "low lower"


@pytest.mark.parametrize(
    "pattern, text, want",
    [
        ("a?", "ab a", ["a", "a"]),
        (r"\w+(?=x)", "abx cd", ["ab"]),
        ("(?=a)a", "aba", ["a", "a"]),
        (r"[^\n]+", "a\x00b\nc", ["a\x00b", "c"]),
    ],
)
def test_patterns_with_empty_or_zero_width_parts_still_work(pattern, text, want):
    assert call(toksmith.split, text, pattern) == want
    t = Tokenizer.from_ranks(BYTES, pattern)
    assert t.decode(t.encode(text)) == "".join(want)


@pytest.mark.parametrize("pattern", [r"((?:a|a)+)\1x|.", r"(a*)*\1b|.", r"(?:(a|aa)+(?=c))|."])
def test_catastrophic_backtracking_is_a_pattern_error_not_a_hang(pattern):
    text = "a" * 40
    match = "more than 10M backtracking steps"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = Tokenizer.from_ranks(BYTES, pattern)
    t0 = time.process_time()  # CPU seconds: a loaded machine does not stretch them
    expect(PatternError, t.encode, text, match=match)
    expect(PatternError, t.encode_batch, ["b", text], threads=2, match=match)
    expect(PatternError, toksmith.split, text, pattern, match=match)
    expect(
        PatternError,
        toksmith.train_from_iterator,
        [text],
        vocab_size=300,
        pattern=pattern,
        match=match,
    )
    assert time.process_time() - t0 < 20


@pytest.mark.parametrize("value", [None, 5, "x", [1], {"a": 2**70}, {5: 0}, {"a": -1}])
def test_native_table_readers_decline_junk(value):
    # the native readers return None for anything unusual (the Python reference then reports it)
    assert call(_core.toksmith_tables, value, None) is None
    if value is not None:  # (no merge list is a valid file)
        assert call(_core.toksmith_tables, {"a": 0}, value) is None
    assert call(_core.ranks_from_vocab_and_merges, value, [], {}) is None
    assert call(_core.ranks_from_vocab_and_merges, {"a": 0}, [["a"]], value) is None
    tables = call(_core.split_gpt2_files, json.dumps(value).encode(), "a b")
    assert tables is None or call(tables.ranks_from_vocab_and_merges, {}) is None
    expect(ValueError, _core.split_json_tables, b"{}", "bogus", match="layout must be")


def test_native_merges_text_reader():
    assert call(_core.parse_merges_text, "#version: 0.2\na b\nab c\n") == [("a", "b"), ("ab", "c")]
    for bad in ("a b c\n", "a\n", "#version\na b\nc\n"):
        assert call(_core.parse_merges_text, bad) is None
    expect(UnicodeEncodeError, _core.parse_merges_text, "\ud800 b\n")


@FUZZ
@given(
    ids=st.lists(
        st.sampled_from([97, 195, 169, 226, 130, 172, 240, 159, 152, 128, 255, 256, 257, 0]),
        max_size=20,
    ),
    errors=st.sampled_from(["replace", "ignore", "backslashreplace", "surrogateescape"]),
)
def test_stream_decoder_equals_decode(tiny_tok, ids, errors):
    d = tiny_tok.stream_decoder(errors)
    out = "".join(call(d.push, i) for i in ids) + call(d.flush)
    assert out == tiny_tok.decode(ids, errors)
    d2 = tiny_tok.stream_decoder(errors, skip_special_tokens=True)
    assert d2.push_many(ids) + d2.flush() == tiny_tok.decode(ids, errors, skip_special_tokens=True)


@FUZZ
@given(
    garbage=st.one_of(
        st.integers(min_value=-(2**80), max_value=2**80).filter(lambda i: not 0 <= i < 258),
        st.floats(allow_nan=True),
        st.text(max_size=3),
        st.none(),
        st.binary(max_size=3),
        st.lists(st.integers(0, 300), max_size=2),
    )
)
def test_stream_decoder_fed_garbage_keeps_its_state(tiny_tok, garbage):
    d = tiny_tok.stream_decoder()
    assert d.push(195) == ""
    e = expect((UnknownTokenError, TypeError), d.push, garbage)
    assert (
        ("out of range" in str(e))
        if isinstance(e, UnknownTokenError)
        else ("ids must be ints" in str(e))
    )
    assert d.pending == b"\xc3"  # the split character survives the bad id
    assert d.push(169) == "é"
    if not isinstance(garbage, (str, bytes)):
        expect((UnknownTokenError, TypeError), d.push_many, [195, garbage])
        assert d.pending == b""


def test_stream_decoder_bad_arguments(tiny_tok):
    expect(ValueError, tiny_tok.stream_decoder, "bogus", match="unknown error handler 'bogus'")
    expect(TypeError, tiny_tok.stream_decoder, None, match="errors must be a str")
    expect(ValueError, tiny_tok.stream_decoder, "a\x00b", match="NUL")
    expect(ValueError, tiny_tok.stream_decoder, "\ud800", match="unknown error handler")
    expect(TypeError, tiny_tok.stream_decoder().push_many, b"ab", match="not bytes")
    d = tiny_tok.stream_decoder("strict")
    d.push(195)
    expect(UnicodeDecodeError, d.flush, match="unexpected end of data")
    d.reset()
    assert d.push(97) == "a"


def test_native_stream_state_with_a_bad_error_callback(core):
    expect(TypeError, _core.StreamState(core, "replace", None).push, 999)
    expect(
        TypeError,
        _core.StreamState(core, "replace", lambda ids: 5).push,
        999,
        match="exceptions must derive from BaseException",
    )
    expect(ZeroDivisionError, _core.StreamState(core, "replace", lambda ids: 1 / 0).push, 999)
    expect(
        ValueError,
        _core.StreamState(core, "strict", lambda ids: ValueError(ids)).push,
        2**70,
        match="1180591620717411303424",
    )
    expect(LookupError, _core.StreamState(core, "bogus", lambda ids: ValueError()).push, 255)
    s = _core.StreamState(core, "replace", lambda ids: ValueError(ids))
    assert (
        s.push(195) == ""
        and s.copy().pending == b"\xc3"
        and s.flush() == "\ufffd"
        and s.pending == b""
    )


def test_native_ids_formatting_and_parsing():
    assert _core.format_ids([1, 2, 3], b", ") == b"1, 2, 3"
    assert _core.format_id_lines(iter([[1], [2, 3]]), b" ", b"[", b"]") == b"[1]\n[2 3]\n"
    expect(TypeError, _core.format_ids, [1.5], b",", match="ids must be ints")
    expect(TypeError, _core.format_id_lines, [[1], 5], b" ", b"", b"")
    expect(OverflowError, _core.format_id_lines, (x for x in [[1], [2**33]]), b" ", b"", b"")
    assert _core.pack_ids([1, 65535], 2) == b"\x01\x00\xff\xff"
    expect(ValueError, _core.pack_ids, [65536], 2, match="does not fit in 2 bytes")
    for width in (0, 1, 3, 8):
        expect(ValueError, _core.pack_ids, [1], width, match="width must be 2 or 4")
    expect(OverflowError, _core.pack_ids, [1], -2)
    assert _core.parse_ids(b"1 2\n3") == [1, 2, 3] and _core.parse_ids(b"") == []
    for bad in (
        b"-1",
        b"4294967296",
        b"9" * 40,
        b"1,,2",
        b"[1]",
        b"1\x002",
        b"\xff",
        b"1.5",
        b"+1",
        b"1e3",
    ):
        assert call(_core.parse_ids, bad) is None, bad
    assert len(_core.parse_ids(b"7 " * 200000)) == 200000


def test_native_batch_bytes_options(core):
    assert core.encode_batch_bytes(["ab", "c"], None, False, 0, 0, b" ", False, b"", b"") == (
        b"256 99",
        2,
    )
    assert core.encode_batch_bytes(["ab", "c"], None, False, 2, 0, b"", True, b"[", b"]") == (
        b"[256]\n[99]\n",
        2,
    )
    for width in (1, 3, 8, 2**40):
        expect(
            ValueError,
            core.encode_batch_bytes,
            ["ab"],
            None,
            False,
            0,
            width,
            match="width must be 0",
        )
    expect(OverflowError, core.encode_batch_bytes, ["ab"], None, False, 0, -1)
    expect(TypeError, core.encode_batch_bytes, ["ab"], None, False, 0, 0, "x", match="sep")
    assert core.encode_batch(["a"], None, False, 2**31) == [[97]]  # capped, not refused
    expect(OverflowError, core.encode_batch, ["a"], None, False, 2**64)
    expect(UnicodeEncodeError, core.encode_batch, ["a", "\ud800"], None, False, 2)


@pytest.mark.parametrize(
    "vocab, exc, match",
    [
        ([(b"", 1)], VocabError, "is not whole UTF-8 characters"),
        ([(b"\xfe\xfe", 1)], VocabError, "is not whole UTF-8 characters"),
        ([(b"a\xff", 1), (b"a\xff", 2)], VocabError, "twice"),
        ([(b"a\xff", 2**32)], OverflowError, None),
        ([(b"a\xff", -1)], OverflowError, None),
    ],
)
def test_native_word_encoder_vocabularies(vocab, exc, match):
    expect(exc, _core.WordEncoder, _core.WORDS_PATTERN, True, vocab, 0, match=match)


def test_native_word_encoder_inputs():
    enc = _core.WordEncoder(_core.WORDS_PATTERN, True, [(b"a\xff", 1)], 0)
    assert enc.encode("a b") == [1, 0, 0]
    expect(UnicodeEncodeError, enc.encode, "a\ud800")
    expect(UnicodeEncodeError, enc.encode_word, "\ud800")
    expect(PatternError, _core.WordEncoder, "(", True, [], 0, match="Opening parenthesis")
    expect(
        PatternError,
        _core.WordEncoder(r"((?:a|a)+)\1x|.", True, [], 0).encode,
        "a" * 40,
        match="backtracking",
    )
    assert enc.token_counts([("a", 5)], 2) == [0, 5]
    expect(EmptyCorpusError, _core.train_words, [], 10)
    expect(OverflowError, _core.train_words, [("ab", 5)], 2**64)
    expect(ValueError, _core.fold_word_counts, [(b"\xff", 5)], True, match="not valid UTF-8")
    assert _core.word_embeddings([b"a"], 0) == b"" and _core.word_embeddings([], 2**40) == b""
    expect(OverflowError, _core.word_embeddings, [b"a"], 4, 2**64)


def test_native_fixed_word_tables(core):
    enc = _core.FixedWordEncoder(r"\S+", [("int", [5])], [], (10, 11), "\u2581")
    assert enc.encode(core, "int x") == [5, 226, 150, 129, 120]
    expect(
        ValueError,
        _core.FixedWordEncoder(r"\S+", [("int", [5000])], [], (10, 11), "\u2581").encode,
        core,
        "int x",
        match="fixed id 5000 is not an id of this tokenizer",
    )
    expect(UnicodeEncodeError, enc.encode, core, "\ud800")
    expect(PatternError, enc.count_learned, ["int x"], "(", 0)
    dec = _core.FixedWordDecoder(["x", None], "\u2581", [], [])
    assert dec.decode(core, [0, 257]) == "x<|end|>"
    expect(UnknownTokenError, dec.decode, core, [0, 2**32 - 1], match="4294967295 is out of range")
    expect(OverflowError, dec.decode, core, [-1])


def test_public_wrappers_of_presets_check_ids():
    words = wordbpe.train_from_counts({"low": 5, "lower": 2}, num_merges=3)
    for bad in (-1, 2**32, 2**64, len(words.tokens)):
        expect(ValueError, words.decode, [0, bad], match="out of range")
    expect(TypeError, words.decode, [0, 1.0], match="token ids must be int")
    expect(ValueError, words.embeddings, 2**62)
    expect(ValueError, words.token_stats, {"low": 2**63 - 1}, match="too large")


def test_encode_lines_names_a_line_that_is_no_str(tiny_tok):
    # was: TypeError "object of type 'int' has no len()", naming no line
    expect(
        TypeError, lambda: list(streaming.encode_lines(tiny_tok, ["ab", 5])), match="line 1 is int"
    )
    expect(
        TypeError,
        lambda: list(streaming.encode_lines(tiny_tok, ["ab", b"cd"])),
        match="line 1 is bytes",
    )
    assert list(streaming.encode_lines(tiny_tok, ["ab", "", "c\ud800"])) == [
        [256],
        [],
        [99, 239, 191, 189],
    ]


def test_stream_encoding_equals_whole_text(trained_tok):
    data = ("word\nAnd more é text New York\nB😀 " * 40).encode()
    for block, threads in ((1, 1), (7, 3), (1 << 20, None)):
        ids = sum(
            streaming.encode_stream(
                trained_tok, io.BytesIO(data), block_size=block, threads=threads
            ),
            [],
        )
        assert ids == trained_tok.encode_ordinary(data.decode())
    expect(
        CorpusDecodeError,
        lambda: list(streaming.encode_stream(trained_tok, io.BytesIO(b"ab\nXY \xff"))),
        match="byte offset 6",
    )
    expect(
        TypeError,
        lambda: list(streaming.encode_stream(trained_tok, io.StringIO("ab"))),
        match="binary mode",
    )


def test_file_problems_are_os_errors(tmp_path):
    expect(
        FileNotFoundError,
        toksmith.train,
        [tmp_path / "missing.txt"],
        vocab_size=300,
        match="missing.txt",
    )
    k = _core.ChunkCounter(toksmith.PATTERNS["gpt2"])
    expect(OSError, k.add_file, str(tmp_path / "missing.txt"), match="No such file")
    expect(OSError, k.add_file, str(tmp_path), match="Is a directory")
    expect(OSError, k.add_file, "a\x00b", match="NUL")
    expect(OSError, toksmith.load, tmp_path / "missing.json")
    expect(OSError, toksmith.load, tmp_path)
