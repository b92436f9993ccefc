"""SentencePiece `.model` files, Unigram / WordPiece / character-BPE `tokenizer.json` files and
WordPiece folders through `toksmith.load_any` (PipelineTokenizer): ids and decoded text equal
those of the files' own libraries (sentencepiece, tokenizers, transformers)."""

import json
import lzma
import random
import shutil

import pytest

import toksmith
from toksmith.errors import TokenizerFileError
from toksmith.files.detect import detect_format
from toksmith.pipeline_tokenizer import PipelineTokenizer

from ..conftest import CORPORA, DATA

spm = pytest.importorskip("sentencepiece")
tokenizers = pytest.importorskip("tokenizers")

MODELS = DATA / "models"

TEXTS = [
    "Hello world",
    "Hello  world",
    " leading space",
    "   three leading spaces and trailing   ",
    "tabs\tand\nnew\n\nlines\r\n",
    "Ünïcödé façade naïve café",
    "日本語のテキストです。中文文本。한국어 텍스트",
    "Привет, мир! Γειά σου Κόσμε",
    "مرحبا بالعالم",
    "emoji 🤗🎉👨‍👩‍👧‍👦 flags 🇫🇷 and skin 👍🏽",
    "def f(x):\n    return x  *  2  # comment\n\n\tif x:\n\t\tpass",
    "for (int i = 0; i < n; ++i) { a[i] = b[i]; }",
    "unknown chars: \u0378 \U000e0001 \ufffd \u0000 \x07 \U0010fffd",
    "control tokens: <s> </s> <unk> <pad> [CLS] [SEP] [MASK] <extra_id_0>",
    "ＦＵＬＬＷＩＤＴＨ ｶﾀｶﾅ ① ㍿ ﬁ",
    "don't can't I'm we've they're it's",
    "",
    " ",
    "a",
    "   ",
]


def corpus_lines(n=60):
    lines = []
    for name in ("english_slice.txt", "python_slice.txt", "cpp_slice.txt"):
        text = (CORPORA / name).read_text(encoding="utf-8", errors="replace")
        lines += [line for line in text.splitlines() if line.strip()][:n]
    lines.append((CORPORA / "python_slice.txt").read_text(encoding="utf-8")[:4000])
    return lines


ALL_TEXTS = TEXTS + corpus_lines()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The model files, decompressed, and a BERT folder (vocab.txt + tokenizer_config.json)."""
    d = tmp_path_factory.mktemp("models")
    for name in ("llama2.model", "mistral_v1.model", "t5_spm.model"):
        (d / name).write_bytes(lzma.decompress((MODELS / f"{name}.xz").read_bytes()))
    bert = d / "bert"
    bert.mkdir()
    (bert / "vocab.txt").write_bytes(
        lzma.decompress((MODELS / "bert_base_uncased_vocab.txt.xz").read_bytes())
    )
    (bert / "tokenizer_config.json").write_text(
        '{"do_lower_case": true, "tokenizer_class": "BertTokenizer"}'
    )
    return d


def random_ids(n_vocab, seed):
    rng = random.Random(seed)
    out = []
    for _ in range(40):
        k = rng.randrange(1, 12)
        # low ids (control, unknown, byte pieces) often
        out.append(
            [rng.randrange(300) if rng.random() < 0.5 else rng.randrange(n_vocab) for _ in range(k)]
        )
    return out


@pytest.mark.parametrize("name", ["llama2.model", "mistral_v1.model", "t5_spm.model"])
def test_model_files_match_sentencepiece(files, name):
    path = files / name
    sp = spm.SentencePieceProcessor(model_file=str(path))
    tok = toksmith.load_any(path)
    assert isinstance(tok, PipelineTokenizer)
    assert detect_format(path) == "sentencepiece"
    assert tok.n_vocab == sp.get_piece_size()
    for text in ALL_TEXTS:
        ids = tok.encode(text)
        assert ids == sp.encode(text), text
        assert tok.decode(ids) == sp.decode(ids), text
    for ids in random_ids(tok.n_vocab, name):
        assert tok.decode(ids) == sp.decode(ids), ids
    assert tok.encode_batch(ALL_TEXTS) == [sp.encode(t) for t in ALL_TEXTS]
    assert tok.encode_batch(ALL_TEXTS, threads=2) == tok.encode_batch(ALL_TEXTS, threads=1)
    assert tok.decode_batch([sp.encode(t) for t in TEXTS]) == [
        sp.decode(sp.encode(t)) for t in TEXTS
    ]


def test_model_file_control_tokens(files):
    tok = toksmith.load_any(files / "llama2.model")
    assert tok.special_tokens == {"<s>": 1, "</s>": 2}
    # sentencepiece reads "<s>" in text as text; special=True matches it
    assert tok.encode("<s>hi") != tok.encode("<s>hi", special=True)
    assert tok.encode("<s>hi", special=True)[0] == 1
    assert tok.encode("<s>hi", special=True)[1:] == tok.encode("hi")
    with pytest.raises(TypeError):
        tok.encode("x", special=1)
    with pytest.raises(toksmith.UnknownTokenError):
        tok.decode([tok.n_vocab])


def test_model_folder(files, tmp_path):
    shutil.copy(files / "t5_spm.model", tmp_path / "spiece.model")
    assert detect_format(tmp_path) == "sentencepiece"
    tok = toksmith.load_any(tmp_path)
    sp = spm.SentencePieceProcessor(model_file=str(files / "t5_spm.model"))
    assert tok.encode("Hello  world") == sp.encode("Hello  world")


def test_truncated_and_corrupted_model_files(files, tmp_path):
    full = (files / "llama2.model").read_bytes()
    bad = tmp_path / "bad.model"
    raised = 0
    for cut in (1, 2, 3, 7, 100, 1000, len(full) // 2, len(full) - 1):
        bad.write_bytes(full[:cut])
        try:
            tok = toksmith.load_any(bad)
        except TokenizerFileError as e:
            raised += 1
            assert "offset" in str(e) and str(bad) in str(e), e
        else:  # a cut between two top-level fields is a shorter valid message
            tok.encode("Hello world")
    assert raised >= 4
    flipped = bytearray(full)
    flipped[1] = 0xFF  # the first piece's length varint now runs on
    bad.write_bytes(bytes(flipped))
    with pytest.raises(TokenizerFileError, match="offset"):
        toksmith.load_any(bad)
    bad.write_bytes(b"")
    with pytest.raises(TokenizerFileError):
        toksmith.load_any(bad)
    rng = random.Random(7)
    for _ in range(30):
        data = bytearray(full)
        for _ in range(rng.randrange(1, 5)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        bad.write_bytes(bytes(data))
        try:
            tok = toksmith.load_any(bad)
        except TokenizerFileError:
            continue
        tok.encode("Hello world ✓")
        try:
            tok.decode([0, 1, 2, 3, 40000])
        except toksmith.ToksmithError:
            pass


def _t5_tokenizer_json(model_path):
    """T5's tokenizer.json as transformers converts spiece.model (built with `tokenizers`)."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers

    proto = spm.SentencePieceProcessor(model_file=str(model_path))
    vocab = [(proto.id_to_piece(i), proto.get_score(i)) for i in range(proto.get_piece_size())]
    tok = Tokenizer(models.Unigram(vocab, unk_id=2, byte_fallback=False))
    from sentencepiece import sentencepiece_model_pb2 as pb

    m = pb.ModelProto()
    m.ParseFromString(model_path.read_bytes())
    tok.normalizer = normalizers.Sequence(
        [
            normalizers.Precompiled(m.normalizer_spec.precompiled_charsmap),
            normalizers.Strip(left=False, right=True),
            normalizers.Replace(tokenizers.Regex(" {2,}"), "▁"),
        ]
    )
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    tok.add_special_tokens(
        [AddedToken(t, normalized=False, special=True) for t in ("<pad>", "</s>", "<unk>")]
        + [AddedToken(f"<extra_id_{k}>", normalized=False, special=True) for k in range(99, -1, -1)]
    )
    return tok


def _llama_tokenizer_json(model_path):
    """Llama's tokenizer.json as transformers converts tokenizer.model: BPE over characters with
    byte fallback (built with `tokenizers`)."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    proto = spm.SentencePieceProcessor(model_file=str(model_path))
    pieces = [proto.id_to_piece(i) for i in range(proto.get_piece_size())]
    vocab = {p: i for i, p in enumerate(pieces)}
    # merges in the order of the merged piece's id (its score order in a BPE .model)
    merges = []
    for p, i in vocab.items():
        if len(p) < 2 or proto.is_byte(i) or proto.is_control(i) or proto.is_unknown(i):
            continue
        pairs = [(p[:k], p[k:]) for k in range(1, len(p)) if p[:k] in vocab and p[k:] in vocab]
        pairs.sort(key=lambda ab: (vocab[ab[0]], vocab[ab[1]]))
        merges += [(i, a, b) for a, b in pairs]
    merges.sort(key=lambda m: (m[0], vocab[m[1]], vocab[m[2]]))
    tok = Tokenizer(
        models.BPE(
            vocab=vocab,
            merges=[(a, b) for _, a, b in merges],
            unk_token="<unk>",
            fuse_unk=True,
            byte_fallback=True,
        )
    )
    tok.pre_tokenizer = pre_tokenizers.Metaspace(
        replacement="▁", prepend_scheme="first", split=False
    )
    tok.decoder = decoders.Sequence(
        [
            decoders.Replace("▁", " "),
            decoders.ByteFallback(),
            decoders.Fuse(),
            decoders.Strip(content=" ", left=1, right=0),
        ]
    )
    tok.add_special_tokens(
        [AddedToken(t, normalized=False, special=True) for t in ("<unk>", "<s>", "</s>")]
    )
    return tok


def _bert_tokenizer_json(vocab_path):
    return tokenizers.BertWordPieceTokenizer(str(vocab_path), lowercase=True)._tokenizer


@pytest.mark.parametrize(
    "kind,make,source,model_kind",
    [
        ("t5", _t5_tokenizer_json, "t5_spm.model", "unigram"),
        ("llama", _llama_tokenizer_json, "llama2.model", "bpe"),
        ("bert", _bert_tokenizer_json, "bert/vocab.txt", "wordpiece"),
    ],
)
def test_tokenizer_json_matches_tokenizers(files, tmp_path, kind, make, source, model_kind):
    ref = make(files / source)
    path = tmp_path / "tokenizer.json"
    path.write_text(ref.to_str(), encoding="utf-8")
    tok = toksmith.load_any(path)
    assert isinstance(tok, PipelineTokenizer) and tok.model_kind == model_kind
    assert detect_format(tmp_path) == "huggingface"
    assert toksmith.load_any(tmp_path).encode("Hello world") == tok.encode("Hello world")
    for text in ALL_TEXTS:
        ids = tok.encode(text, add_special_tokens=False)
        assert ids == ref.encode(text, add_special_tokens=False).ids, text
        assert tok.decode(ids) == ref.decode(ids, skip_special_tokens=False), text
        # the post-processor's tokens (BERT's [CLS] and [SEP]) by default, as tokenizers
        assert tok.encode(text) == ref.encode(text).ids, text
    for ids in random_ids(tok.n_vocab, kind):
        assert tok.decode(ids) == ref.decode(ids, skip_special_tokens=False), ids
    assert tok.encode_batch(ALL_TEXTS, add_special_tokens=False) == [
        e.ids for e in ref.encode_batch(ALL_TEXTS, add_special_tokens=False)
    ]


def test_bert_folder_matches_transformers(files):
    transformers = pytest.importorskip("transformers")
    folder = files / "bert"
    assert detect_format(folder) == "wordpiece"
    tok = toksmith.load_any(folder)
    ref = transformers.AutoTokenizer.from_pretrained(str(folder))
    assert tok.special_tokens == {
        t: ref.convert_tokens_to_ids(t) for t in ("[UNK]", "[SEP]", "[PAD]", "[CLS]", "[MASK]")
    }
    for text in ALL_TEXTS:
        ids = tok.encode(text, add_special_tokens=False)
        assert ids == ref(text, add_special_tokens=False)["input_ids"], text
    # the folder's own vocab.txt as a file
    assert toksmith.load_any(folder / "vocab.txt").encode("Hello") == tok.encode("Hello")


def test_bert_folder_decodes_as_tokenizers(files):
    tok = toksmith.load_any(files / "bert")
    ref = _bert_tokenizer_json(files / "bert" / "vocab.txt")
    for text in ALL_TEXTS:
        ids = tok.encode(text)  # with [CLS] and [SEP]
        assert ids[0] == 101 and ids[-1] == 102
        assert tok.decode(ids) == ref.decode(ids, skip_special_tokens=False), text


def test_bad_tokenizer_json_components(tmp_path):
    base = {
        "added_tokens": [],
        "normalizer": None,
        "pre_tokenizer": {"type": "WhitespaceSplit"},
        "decoder": None,
        "model": {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], ["a", -1.0]]},
    }
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(base))
    tok = toksmith.load_any(path)
    assert tok.encode("a b a") == [1, 0, 1]
    for key, value, match in [
        ("pre_tokenizer", {"type": "UnicodeScripts"}, "UnicodeScripts"),
        ("normalizer", {"type": "NoSuchThing"}, "NoSuchThing"),
        ("model", {"type": "Unigram", "unk_id": 5, "vocab": [["a", 0.0]]}, "unk_id"),
    ]:
        path.write_text(json.dumps(dict(base, **{key: value})))
        with pytest.raises(TokenizerFileError, match=match):
            toksmith.load_any(path)


def test_pattern_arguments_are_refused(files):
    with pytest.raises(ValueError, match="pattern"):
        toksmith.load_any(files / "llama2.model", pattern="gpt2")
