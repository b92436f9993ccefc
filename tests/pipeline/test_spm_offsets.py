"""`encode_with_offsets` of SentencePiece `.model` files against sentencepiece's own piece spans
(`encode(..., return_type="proto")`: `begin` / `end`, byte offsets in the input).

toksmith gives character spans, as `tokenizers`' `Encoding.offsets`; two conventions differ from
sentencepiece's, on purpose, and the comparison spells them out:

* sentencepiece gives a piece that stands for no input (the dummy-prefix `▁`) and every byte
  piece of a character but the last an empty span at its position; toksmith gives them the span
  of the character there (every byte piece of a character spans the whole character);
* characters the normalizer removes (the spaces of a run that `remove_extra_whitespaces`
  shortens, characters the charsmap maps to nothing) belong, in sentencepiece, to the piece
  before them; toksmith leaves them out where that piece ends before them (its span stops at
  the last character it keeps).

Everything else (every other piece's start and end) must be equal."""

import pytest

import toksmith

from ..files.test_sentencepiece import ALL_TEXTS

spm = pytest.importorskip("sentencepiece")


def char_index(text):
    """byte offset -> character offset, for every character boundary of `text`."""
    out = {}
    at = 0
    for i, c in enumerate(text):
        out[at] = i
        at += len(c.encode("utf-8"))
    out[at] = len(text)
    return out


@pytest.mark.parametrize("name", ["llama2.model", "t5_spm.model"])
def test_offsets_match_sentencepiece(files, name):
    path = files / name
    sp = spm.SentencePieceProcessor(model_file=str(path))
    tok = toksmith.load_any(path)
    compared = empty = shortened = 0
    for text in ALL_TEXTS:
        pieces = sp.encode(text, return_type="proto").pieces
        ids, spans = tok.encode_with_offsets(text, special=False)
        assert ids == [p.id for p in pieces], text
        at = char_index(text)
        for p, (start, end) in zip(pieces, spans):
            begin, stop = at[p.begin], at[p.end]
            compared += 1
            if begin == stop:
                # no input of its own: the character at its position
                empty += 1
                assert (start, end) == (begin, begin + 1), (text, p.piece)
                continue
            assert start == begin, (text, p.piece, (start, end), (begin, stop))
            if end != stop:
                # only what the normalizer removes lies between the two ends
                shortened += 1
                assert start < end < stop, (text, p.piece)
                assert sp.normalize(text[end:stop]) == "", (text, p.piece)
    # the texts exercise both conventions and plenty of ordinary pieces
    assert empty > 0 and compared > 1000
    if name == "t5_spm.model":
        assert shortened > 0
