"""ByteTokenizer: toksmith's tokenizer interface over the CALM vocabulary."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toksmith
from tests.complexity import peak_allocated
from toksmith import calm
from toksmith.calm import byte_tokenizer, cwgt

tok = calm.ByteTokenizer()


def test_vocabulary_properties():
    assert tok.n_vocab == 320 == tok.vocab_size
    assert tok.max_token_value == 319
    assert tok.eot_token == calm.EOS
    assert tok.pattern is None
    assert tok.special_tokens == calm.SPECIAL_TOKENS
    tok.special_tokens["<PAD>"] = 0  # a copy
    assert tok.special_tokens["<PAD>"] == 256
    assert tok.special_tokens_set == set(calm.SPECIAL_TOKENS)
    assert tok.mergeable_ranks() == {bytes([i]): i for i in range(256)}
    assert tok.merges() == []


def test_encode_is_identity_on_utf8():
    assert tok.encode("héllo") == list("héllo".encode())
    assert tok.encode_ordinary("a<EOS>") == list(b"a<EOS>")
    assert tok.encode("") == []


def test_disallowed_special_raises_with_instructions():
    with pytest.raises(ValueError) as info:
        tok.encode("cmd <EOS>")
    assert isinstance(info.value, toksmith.DisallowedSpecialError)
    message = str(info.value)
    assert (
        "'<EOS>'" in message and "allowed_special" in message and "disallowed_special=()" in message
    )
    with pytest.raises(ValueError, match="'<END>'"):
        tok.encode("x<END>", allowed_special={"<EOS>"})


def test_allowed_special_encoded_as_ids():
    assert tok.encode("a<EOS>b", allowed_special={"<EOS>"}) == [97, 258, 98]
    assert tok.encode("<BOS><CWD>/x<END>", allowed_special="all") == [257, 260, 47, 120, 269]
    assert tok.encode("<EOS>", disallowed_special=()) == list(b"<EOS>")
    # only the allowed ones become ids; the others are plain text when not disallowed
    assert tok.encode("<EOS><PAD>", allowed_special={"<EOS>"}, disallowed_special=()) == [
        258,
        *b"<PAD>",
    ]
    # names that are not CALM specials are an error, as in toksmith's Tokenizer
    with pytest.raises(ValueError, match="'<|endoftext|>', which is not a CALM special token"):
        tok.encode("x", allowed_special={"<|endoftext|>"})
    # a custom disallowed list is honoured
    with pytest.raises(ValueError, match="'foo'"):
        tok.encode("a foo", disallowed_special={"foo"})


def test_encode_bad_arguments():
    with pytest.raises(TypeError, match="text must be a str"):
        tok.encode(b"abc")
    with pytest.raises(TypeError, match="text must be a str"):
        tok.encode_ordinary(None)
    with pytest.raises(ValueError, match="allowed_special must be 'all' or a set"):
        tok.encode("a", allowed_special="<EOS>")
    with pytest.raises(TypeError, match="allowed_special"):
        tok.encode("a", allowed_special=5)
    with pytest.raises(TypeError, match="must contain strings"):
        tok.encode("a", allowed_special={5})
    with pytest.raises(TypeError, match="disallowed_special"):
        tok.encode("a", disallowed_special=5)


def test_lone_surrogates_replaced_like_tiktoken():
    assert tok.encode("a\ud800b") == list("a\ufffdb".encode())


def test_batches_and_numpy():
    assert tok.encode_batch(["a", "b<EOS>"], allowed_special="all") == [[97], [98, 258]]
    assert tok.encode_batch(["a"], threads=4) == [[97]]
    assert tok.encode_ordinary_batch(["a<EOS>", ""]) == [list(b"a<EOS>"), []]
    with pytest.raises(TypeError, match="single str"):
        tok.encode_batch("abc")
    with pytest.raises(TypeError):
        tok.encode_ordinary_batch(5)
    arr = tok.encode_to_numpy("ab<EOS>", allowed_special="all")
    assert arr.dtype == np.uint16 and arr.tolist() == [97, 98, 258]
    assert tok.encode_to_numpy("a", dtype="uint32").dtype == np.uint32
    with pytest.raises(ValueError, match="dtype"):
        tok.encode_to_numpy("a", dtype="int8")
    assert tok.decode_batch([[104, 105], [258]]) == ["hi", "<EOS>"]


def test_single_tokens():
    assert tok.encode_single_token("<ATN>") == 259
    assert tok.encode_single_token(b"<ATN>") == 259
    assert tok.encode_single_token(b"\xff") == 255
    assert tok.encode_single_token("a") == 97
    for bad in ("ab", "é", b"", ""):
        with pytest.raises(KeyError):
            tok.encode_single_token(bad)
        with pytest.raises(ValueError, match="not a single CALM token"):
            tok.encode_single_token(bad)
    with pytest.raises(TypeError):
        tok.encode_single_token(5)
    assert tok.token_to_id("<EOS>") == 258 and tok.token_to_id(b"a") == 97
    with pytest.raises(toksmith.UnknownTokenError, match="'ab' is not a single CALM token"):
        tok.token_to_id("ab")
    with pytest.raises(TypeError):
        tok.token_to_id(5)


def test_decode_renders_specials_by_name():
    assert tok.decode([104, 105, 258]) == "hi<EOS>"
    assert tok.decode_bytes([257, 0xFF, 300]) == b"<BOS>\xff<RESERVED_300>"
    assert tok.decode([0xFF]) == "\ufffd"
    assert tok.decode([0xFF], errors="ignore") == ""
    with pytest.raises(UnicodeDecodeError):
        tok.decode([0xFF], errors="strict")
    assert tok.decode_single_token_bytes(258) == b"<EOS>"
    assert tok.decode_single_token_bytes(65) == b"A"
    assert tok.id_to_bytes(269) == b"<END>"
    assert tok.decode_tokens_bytes([65, 258]) == [b"A", b"<EOS>"]
    assert tok.decode(np.array([104, 105], dtype=np.uint16)) == "hi"
    # the seed's detokenize skips them instead
    assert calm.detokenize([104, 105, 258]) == b"hi"


def test_decode_bad_ids():
    for bad in (320, -1, 10**9):
        with pytest.raises(toksmith.UnknownTokenError, match=str(bad)):
            tok.decode([97, bad])
        with pytest.raises(KeyError):
            tok.decode_bytes([bad])
        with pytest.raises(ValueError, match=str(bad)):
            tok.decode_single_token_bytes(bad)
    with pytest.raises(TypeError):
        tok.decode("abc")
    with pytest.raises(TypeError):
        tok.decode([1.0])
    with pytest.raises(TypeError):
        tok.decode(np.array([1.0]))
    with pytest.raises(LookupError):
        tok.decode([97], errors="nope")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_roundtrip_text(text):
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return
    assert tok.decode(tok.encode(text, allowed_special="all")) == text
    assert tok.decode(tok.encode_ordinary(text)) == text


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 319), max_size=80))
def test_stream_decoder_equals_decode(ids):
    dec = tok.stream_decoder()
    pieces = [dec.push(t) for t in ids] + [dec.flush()]
    expected = tok.decode(ids)
    assert "".join(pieces) == expected
    # never a broken sequence: every piece is valid text on its own
    for piece in pieces:
        piece.encode("utf-8")


def test_stream_decoder_holds_back_partial_sequences():
    dec = tok.stream_decoder()
    euro = "€".encode()
    assert [dec.push(b) for b in euro] == ["", "", "€"]
    assert dec.push(euro[0]) == ""
    assert dec.push(calm.EOS) == "\ufffd<EOS>"
    assert dec.flush() == ""
    assert tok.stream_decoder().push_many(euro) == "€"
    quiet = tok.stream_decoder(skip_special_tokens=True)
    assert quiet.push(calm.EOS) == "" and quiet.push(97) == "a"
    with pytest.raises(ValueError, match="320"):
        dec.push(320)
    with pytest.raises(LookupError):
        tok.stream_decoder("nope")


def test_save_and_load(tmp_path):
    path = tmp_path / "calm.json"
    tok.save(path)
    doc = json.loads(path.read_text())
    assert doc["format"] == "toksmith.calm" and doc["version"] == 1
    assert doc["vocab_size"] == 320 and doc["special_tokens"]["<REF>"] == 277
    assert doc["reserved"] == {"first": 278, "last": 319}
    loaded = calm.ByteTokenizer.load(path)
    assert loaded == tok and isinstance(loaded, calm.ByteTokenizer)
    assert calm.ByteTokenizer.load(str(path)).encode("a") == [97]


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d.update(format="toksmith"), "format is 'toksmith'"),
        (lambda d: d.update(version=2), "version 2 is newer"),
        (lambda d: d.update(version="1"), "invalid version"),
        (lambda d: d.update(vocab_size=321), "vocab_size must be 320"),
        (lambda d: d["special_tokens"].update({"<PAD>": 0}), "special_tokens differ"),
        (lambda d: d.update(kind="bpe"), "unknown kind"),
    ],
)
def test_load_rejects_bad_documents(tmp_path, mutate, message):
    doc = tok.to_dict()
    mutate(doc)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=message):
        calm.ByteTokenizer.load(path)


def test_load_rejects_broken_files(tmp_path):
    path = tmp_path / "bad.json"
    tok.save(path)
    path.write_text(path.read_text()[:30])
    with pytest.raises(ValueError, match="not a valid toksmith.calm JSON file"):
        calm.ByteTokenizer.load(path)
    path.write_bytes(b"\xff\xfe")
    with pytest.raises(ValueError, match="not a valid"):
        calm.ByteTokenizer.load(path)
    path.write_text("[1, 2]")
    with pytest.raises(ValueError, match="expected a JSON object"):
        calm.ByteTokenizer.load(path)


def _header(**fields):
    values = dict(d_model=8, n_layers=1, dt_rank=1)
    values.update(fields)
    return calm.CWGTHeader(**values)


@pytest.mark.parametrize(
    "method, args",
    [
        ("encode_batch", (["a"],)),
        ("encode_ordinary_batch", (["a"],)),
        ("decode_batch", ([[97]],)),
    ],
)
def test_byte_tokenizer_checks_threads_like_tokenizer(method, args):
    call = getattr(tok, method)
    assert call(*args, threads=2) == call(*args)
    for bad in (True, "4", 1.5):
        with pytest.raises(TypeError, match="threads"):
            call(*args, threads=bad)
    for bad in (0, -1, 2**70):
        with pytest.raises(ValueError, match="threads must be between 1 and 4096"):
            call(*args, threads=bad)
    with pytest.raises(ValueError, match="num_threads"):
        call(*args, num_threads=2**62)


def test_byte_tokenizer_decode_skip_special_tokens_like_tokenizer():
    ids = [104, 258, 105, 300, 0xC3, 259, 0xA9]
    assert tok.decode(ids) == "h<EOS>i<RESERVED_300>\ufffd<ATN>\ufffd"
    assert tok.decode(ids, skip_special_tokens=True) == "hié"
    assert tok.decode_bytes(np.array(ids), skip_special_tokens=True) == calm.detokenize(ids)
    assert tok.decode_batch([ids], skip_special_tokens=True) == ["hié"]
    with pytest.raises(TypeError, match="skip_special_tokens must be a bool"):
        tok.decode(ids, skip_special_tokens=1)
    with pytest.raises(TypeError, match="errors must be a str"):
        tok.decode(ids, errors=None)
    with pytest.raises(TypeError, match="skip_special_tokens must be a bool"):
        tok.stream_decoder(skip_special_tokens="yes")


def test_disallowed_special_string_is_type_error_and_empty_name_ignored():
    with pytest.raises(TypeError, match="disallowed_special"):
        tok.encode("a", disallowed_special="ALL")
    # an empty name used to "match" every text, even ""
    assert tok.encode("abc", disallowed_special={""}) == [97, 98, 99]
    assert tok.encode("", disallowed_special={"", "<EOS>"}) == []


def test_special_regex_cache_is_bounded():
    for i in range(300):
        tok.encode("x", disallowed_special={f"name{i}"})
    assert len(byte_tokenizer._SPECIAL_RE) <= byte_tokenizer._SPECIAL_RE_MAX


def test_byte_tokenizer_load_hostile_json(tmp_path):
    path = tmp_path / "calm.json"
    path.write_text("[" * 200_000 + "]" * 200_000)
    with pytest.raises(ValueError, match="nested too deeply"):  # was a RecursionError
        calm.ByteTokenizer.load(path)
    path.write_text('{"format": "toksmith.calm", "version": ' + "9" * 5000 + "}")
    with pytest.raises(ValueError, match=str(path).replace("\\", "\\\\")):
        calm.ByteTokenizer.load(path)
    doc = tok.to_dict()
    for bad in (
        {**doc, "vocab_size": 320.0},
        {**doc, "version": 1.0},
        {**doc, "special_tokens": {k: float(v) for k, v in doc["special_tokens"].items()}},
    ):
        with pytest.raises(ValueError):
            calm.ByteTokenizer.from_dict(bad)
    assert calm.ByteTokenizer.from_dict(doc) == tok


def test_is_special_and_is_reserved_check_types():
    assert calm.is_special(np.int64(260)) and calm.is_reserved(np.uint16(300))
    assert not calm.is_special(2**70) and not calm.is_reserved(-1)
    for bad in (True, "260", None, 260.0):
        with pytest.raises(TypeError):
            calm.is_special(bad)
        with pytest.raises(TypeError):
            calm.is_reserved(bad)


def test_empty_memoryview_sub_token_is_absent_like_empty_bytes():
    assert calm.tokenize_frame("HIST", "ls", exit=memoryview(b"")) == calm.tokenize_frame(
        "HIST", "ls"
    )
    assert calm.tokenize_frame("WORD", "a", pos=memoryview(b"")) == [calm.WORD, 97, calm.END]


def test_huge_meta_size_is_refused_before_reading(tmp_path):
    path = tmp_path / "sparse.cwgt"
    header = bytearray(_header().to_bytes())
    struct.pack_into("<I", header, 34, 2**32 - 1)
    with open(path, "wb") as fh:  # a sparse file really holding the claimed 4 GiB
        fh.write(header)
        fh.truncate(48 + 2**32 - 1)

    def read():
        with pytest.raises(
            calm.CWGTError,
            match="'meta_size' at byte offset 34: .* larger than the 16777216-byte limit",
        ):
            calm.read_cwgt(path)

    assert peak_allocated(read) < 1 << 20  # refused from the header: nothing of the 4 GiB read
    with pytest.raises(ValueError, match="larger than the 16777216-byte limit"):
        calm.write_cwgt(
            tmp_path / "big.cwgt", _header(), ("a" * cwgt.MAX_META_SIZE, "", ""), np.zeros(1)
        )
    assert not (tmp_path / "big.cwgt").exists()


@pytest.mark.parametrize("ids", [{104, 105}, {104: 1}, frozenset({104})])
def test_unordered_ids_are_type_errors(ids):
    # was: sets and dicts were decoded in their iteration order (bytes silently shuffled)
    with pytest.raises(TypeError, match="sequence of token ids"):
        calm.detokenize(ids)
    with pytest.raises(TypeError, match="sequence of token ids"):
        calm.ByteTokenizer().decode(ids)


def test_decode_batch_of_a_non_iterable_names_the_type():
    # was: TypeError "'NoneType' object is not iterable"
    with pytest.raises(TypeError, match="list of id sequences, not NoneType"):
        calm.ByteTokenizer().decode_batch(None)
