"""The fast paths of the pipeline models against the reference libraries on random text: the
word cache and the cut before `▁` of SentencePiece BPE, the packed trie of Unigram and
WordPiece, the ASCII runs of the precompiled normalizers (sentencepiece's and Hugging Face's);
and a big encode under a memory limit raises MemoryError."""

import lzma

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toksmith

from .. import oom
from ..conftest import DATA

spm = pytest.importorskip("sentencepiece")
tokenizers = pytest.importorskip("tokenizers")

MODELS = DATA / "models"

# spaces, `▁` itself, CR LF, letters that merge, combining marks next to ASCII, full-width
# letters (rewritten by the charsmap), CJK, emoji with ZWJ and characters no piece covers
ALPHABET = list(" \t\n\r▁▁abeinorstTH.,'0129") + [
    "\u0301",
    "\u0308",
    "é",
    "ﬁ",
    "Ｆ",
    "ｶ",
    "日",
    "本",
    "👨",
    "\u200d",
    "🇫",
    "🇷",
    "\u0378",
    "\U000e0001",
]
TEXT = st.lists(st.sampled_from(ALPHABET), max_size=40).map("".join)
FAST = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("fast")
    for name in ("llama2.model", "t5_spm.model"):
        (d / name).write_bytes(lzma.decompress((MODELS / f"{name}.xz").read_bytes()))
    return d


def _pair(models, name):
    path = models / name
    return toksmith.load_any(path), spm.SentencePieceProcessor(model_file=str(path))


@FAST
@given(texts=st.lists(TEXT, min_size=1, max_size=4))
def test_spm_bpe_words_match_sentencepiece(models, texts):
    tok, ref = _pair(models, "llama2.model")
    # twice: the second pass reads the word cache
    for _ in range(2):
        for t in texts:
            assert tok.encode(t, special=False) == ref.encode(t), t
    assert tok.encode(" ".join(texts), special=False) == ref.encode(" ".join(texts))


@FAST
@given(text=TEXT)
def test_spm_unigram_matches_sentencepiece(models, text):
    tok, ref = _pair(models, "t5_spm.model")
    assert tok.encode(text, special=False) == ref.encode(text)


def _t5_json(models):
    from sentencepiece import sentencepiece_model_pb2 as pb
    from tokenizers import Tokenizer, normalizers, pre_tokenizers

    path = models / "t5_spm.model"
    proto = spm.SentencePieceProcessor(model_file=str(path))
    vocab = [(proto.id_to_piece(i), proto.get_score(i)) for i in range(proto.get_piece_size())]
    ref = Tokenizer(tokenizers.models.Unigram(vocab, unk_id=2, byte_fallback=False))
    m = pb.ModelProto()
    m.ParseFromString(path.read_bytes())
    ref.normalizer = normalizers.Precompiled(m.normalizer_spec.precompiled_charsmap)
    ref.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    out = models / "t5.json"
    out.write_text(ref.to_str(), encoding="utf-8")
    return toksmith.load_any(out), ref


@pytest.fixture(scope="module")
def t5_json(models):
    return _t5_json(models)


@FAST
@given(texts=st.lists(TEXT, min_size=1, max_size=3))
def test_hf_unigram_and_precompiled_match_tokenizers(t5_json, texts):
    tok, ref = t5_json
    for _ in range(2):
        for t in texts:
            assert tok.encode(t) == ref.encode(t, add_special_tokens=False).ids, t


def test_wordpiece_packed_trie_matches_tokenizers(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_bytes(lzma.decompress((MODELS / "bert_base_uncased_vocab.txt.xz").read_bytes()))
    ref = tokenizers.BertWordPieceTokenizer(str(vocab), lowercase=True)
    tok = toksmith.load_any(vocab)
    words = "unaffable tokenization xylophonist ##ing HELLO naïve 日本 a1b2c3 " * 3
    assert (
        tok.encode(words, add_special_tokens=False)
        == ref.encode(words, add_special_tokens=False).ids
    )
    assert tok.encode(words) == ref.encode(words).ids  # [CLS] ... [SEP], as BERT's template


@pytest.mark.parametrize("extra_mb", [16, 40, 120])
def test_big_encode_under_a_memory_limit_raises_memory_error(models, extra_mb):
    # 13.6 MB of text: the ids (18 MB), the normalized text (14 MB) and the Unigram lattice
    # (300 MB) are refused in turn as the limit rises. No spaces: the text is one word, whose
    # lattice is the whole text's (words between spaces are segmented one by one).
    setup = f"""
import toksmith
tok = toksmith.load_any({str(models / "t5_spm.model")!r})
text = "Hello_world,_the_quick_brown_fox._" * 400_000
tok.encode(text[:1000], special=False)
"""
    body = f"""
def work():
    limit({extra_mb} << 20)
    tok.encode(text, special=False)
"""
    oom.check(oom.run_child(body, setup))
