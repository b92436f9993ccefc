"""SentencePiece Unigram (`.model`) segments the text word by word, with a word cache, where the
vocabulary allows it; sentencepiece runs one lattice over the whole text, summing f32 scores, so
a word's pieces can depend on where it is. The ids must stay sentencepiece's everywhere."""

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toksmith

from ..files.test_sentencepiece import ALL_TEXTS

spm = pytest.importorskip("sentencepiece")

WORDS = ["+++", "++++", "aaa", "----", "====", "!!!!", "....", "hahaha", "xxxx", "the", "quick"]
WORDS += ["1111", "0000", "~~~~", "****", "___", "日本語", "🤗🤗", "ǅǅ", "\u0378x", "{}", "<>"]


def segmentations(pieces):
    """word -> the distinct ways sentencepiece split it."""
    seen = {}
    cur = []
    for p in pieces + ["▁"]:
        if p.startswith("▁") and cur:
            seen.setdefault("".join(cur), set()).add(tuple(cur))
            cur = []
        cur.append(p)
    return seen


@pytest.fixture(scope="module")
def t5(files):
    path = files / "t5_spm.model"
    return toksmith.load_any(path), spm.SentencePieceProcessor(model_file=str(path))


def test_long_texts_match_sentencepiece(t5):
    tok, sp = t5
    # the test texts three times over: the words repeat (cache hits) far into the text, where
    # the running score is large
    text = "\n".join(ALL_TEXTS * 3)
    want = sp.encode(text)
    for _ in range(2):  # the second time from the cache
        assert tok.encode(text, special=False) == want
    parts = [text[i : i + 997] for i in range(0, len(text), 997)]
    assert tok.encode_batch(parts, special=False) == [sp.encode(p) for p in parts]


def test_exact_ties_far_into_a_text_match_sentencepiece(t5):
    tok, sp = t5
    rng = random.Random(1)
    text = " ".join(rng.choice(WORDS) for _ in range(6000))
    # the same word is split in more than one way by its position
    split = segmentations(sp.encode(text, out_type=str))
    assert any(len(s) > 1 for s in split.values())
    assert tok.encode(text, special=False) == sp.encode(text)


def path_score(sp, ids):
    """sentencepiece's path score of `ids` without its resets (unknown pieces at min - 10)."""
    scores = [sp.get_score(i) for i in range(sp.get_piece_size()) if not sp.is_control(i)]
    unk = min(scores) - 10
    return sum(unk if sp.is_unknown(i) else sp.get_score(i) for i in ids)


def test_score_resets_far_into_a_text_match_sentencepiece(t5):
    # sentencepiece 0.2.3 starts the running score from 0 again each time it passes 1e5 in
    # magnitude; exact ties (`▁----`) all along the text land near each of those resets
    tok, sp = t5
    rng = random.Random(1)
    text = " ".join(rng.choice(WORDS) for _ in range(25000))
    want = sp.encode(text)
    assert path_score(sp, want) < -350_000  # more than three resets
    split = segmentations(sp.encode(text, out_type=str))
    assert any(len(s) > 1 for s in split.values())
    for _ in range(2):  # the second time from the cache
        assert tok.encode(text, special=False) == want
    # one long word (no space in it): the resets fall inside the word's own lattice
    glued = "".join(rng.choice(WORDS) for _ in range(20000))
    want = sp.encode(glued)
    assert path_score(sp, want) < -200_000
    assert tok.encode(glued, special=False) == want


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pattern=st.lists(st.sampled_from(WORDS + [" ", "-", "+", "x"]), min_size=1, max_size=12),
    repeat=st.integers(1000, 6000),
)
def test_repeated_word_patterns_match_sentencepiece(t5, pattern, repeat):
    tok, sp = t5
    text = " ".join(pattern * (repeat // len(pattern) + 1))
    assert tok.encode(text, special=False) == sp.encode(text)


def test_user_defined_pieces_match_sentencepiece(tmp_path):
    # sentencepiece 0.2.3 scores a user-defined piece 0.1 * (bytes - 1) (older versions:
    # bytes * the largest score - 0.1); with the normal pieces' scores close together (set
    # below), which of a user-defined piece and normal ones wins depends on that score
    from sentencepiece import sentencepiece_model_pb2 as pb

    rng = random.Random(3)
    words = "the quick brown fox jumps over a lazy dog ++ -- == ab abc cab".split()
    lines = [" ".join(rng.choice(words) for _ in range(12)) + " <sep> [[x]]" for _ in range(400)]
    prefix = tmp_path / "ud"
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines),
        model_prefix=str(prefix),
        vocab_size=80,
        model_type="unigram",
        user_defined_symbols=["<sep>", "[[x]]", "ab", "bro", "-", "jumps", "ca"],
        hard_vocab_limit=False,
        minloglevel=2,
    )
    m = pb.ModelProto()
    m.ParseFromString((tmp_path / "ud.model").read_bytes())
    kinds = {p.type for p in m.pieces}
    assert pb.ModelProto.SentencePiece.USER_DEFINED in kinds
    # normal pieces of 2 to 4 characters of the words, competing with the user-defined ones
    have = {p.piece for p in m.pieces}
    for w in sorted(set(words)):
        w = "\u2581" + w
        for i in range(len(w)):
            for j in range(i + 2, min(len(w), i + 4) + 1):
                if w[i:j] not in have:
                    have.add(w[i:j])
                    m.pieces.add(piece=w[i:j], score=0.0, type=pb.ModelProto.SentencePiece.NORMAL)
    for p in m.pieces:
        if p.type == pb.ModelProto.SentencePiece.NORMAL:
            p.score = rng.uniform(-0.5, -0.05)
    path = tmp_path / "close.model"
    path.write_bytes(m.SerializeToString())
    sp = spm.SentencePieceProcessor(model_file=str(path))
    tok = toksmith.load_any(path)
    texts = lines[:50] + [
        "ab abab abc cabc <sep><sep> [[x]][[x]] brown bro-ken --- jumps jumpsjumps",
        "x<sep>y [[x]]z ab-ab - cab cabcab abcab",
        " ".join(rng.choice(words + ["<sep>", "[[x]]", "-x-"]) for _ in range(30000)),
    ]
    for text in texts:
        assert tok.encode(text, special=False) == sp.encode(text), text[:80]


# Raw text is encoded word by word between the separators (space, tab, CR, LF for T5) without
# normalizing a word seen before; words whose normalization is not one word (no-break and
# zero-width spaces, `▁`, removed characters) take the normalizer's whitespace rules instead.
RAW = [" ", "  ", "\n", "\r\n", "\t", "\x0b", "\xa0", "\u3000", "\u200b", "\u200c", "\u2581"]
RAW += ["\ufeff", "the", "é", "e\u0301", "\u0301", "\u00a8", "ﬁ", "Ａ", "中", "\u0e47", "😀", "12"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    words=st.lists(st.lists(st.sampled_from(RAW), min_size=1, max_size=5), min_size=1, max_size=8),
    picks=st.lists(st.integers(0, 7), min_size=1, max_size=60),
)
def test_raw_words_and_whitespace_match_sentencepiece(t5, words, picks):
    tok, sp = t5
    text = "".join("".join(words[i % len(words)]) for i in picks)
    for _ in range(2):  # the second time from the word caches
        assert tok.encode(text, special=False) == sp.encode(text), repr(text)


@pytest.mark.parametrize("rule", ["nfkc", "identity", "nmt_nfkc_cf"])
def test_raw_words_of_trained_unigram_models(tmp_path, rule):
    # other normalization rules: `\n` kept (nfkc, identity), case folding; no byte fallback,
    # so characters outside the vocabulary are unknown pieces
    rng = random.Random(7)
    lines = [" ".join(rng.choice(WORDS + RAW) for _ in range(10)) for _ in range(300)]
    prefix = tmp_path / rule
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines),
        model_prefix=str(prefix),
        vocab_size=60,
        model_type="unigram",
        normalization_rule_name=rule,
        character_coverage=0.98,
        hard_vocab_limit=False,
        minloglevel=2,
    )
    path = tmp_path / f"{rule}.model"
    tok, sp = toksmith.load_any(path), spm.SentencePieceProcessor(model_file=str(path))
    for _ in range(300):
        text = "".join(
            rng.choice(RAW + ["Q", "日本語", "\n\n"]) for _ in range(rng.randrange(0, 40))
        )
        for _ in range(2):
            assert tok.encode(text, special=False) == sp.encode(text), repr(text)
