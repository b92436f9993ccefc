"""ChatTokenizer: nanochat's interface, the preset's vocabulary layout, training, files."""

from __future__ import annotations

import os
import pathlib
import warnings

import pytest

import toksmith
from tests.conftest import DATA
from toksmith.presets import NANOCHAT_SPECIAL_TOKENS, PRESETS, nanochat
from toksmith.presets.nanochat import ChatTokenizer


def test_layout_specials_after_the_merges(chat):
    n = chat.get_vocab_size()
    assert n == 768
    assert [chat.encode_special(s) for s in NANOCHAT_SPECIAL_TOKENS] == list(range(n - 9, n))
    assert chat.get_bos_token_id() == n - 9
    assert len(chat.tokenizer.merge_ids()) == n - 256 - 9
    assert chat.tokenizer.pattern_name == "nanochat"
    assert chat.get_special_tokens() == set(NANOCHAT_SPECIAL_TOKENS)
    assert chat.tokenizer.metadata["preset"] == "nanochat"
    assert nanochat.DEFAULT_VOCAB_SIZE == PRESETS["nanochat"].vocab_size == 65536


def test_id_to_token_and_decode(chat):
    assert chat.id_to_token(chat.get_bos_token_id()) == "<|bos|>"
    assert chat.id_to_token(ord("a")) == "a"
    ids = chat.encode("Hello world")
    assert "".join(chat.id_to_token(i) for i in ids) == "Hello world"
    assert chat.decode(ids) == "Hello world"


def test_encode_prepend_append(chat):
    bos = chat.get_bos_token_id()
    end = chat.encode_special("<|assistant_end|>")
    plain = chat.encode("hi there")
    assert chat.encode("hi there", prepend="<|bos|>") == [bos] + plain
    assert chat.encode("hi there", prepend=bos, append=end) == [bos] + plain + [end]
    assert chat.encode("hi there", append="<|assistant_end|>") == plain + [end]
    assert chat("hi there") == plain  # __call__, as nanochat
    batch = chat.encode(["hi there", "", "bye"], prepend="<|bos|>", num_threads=2)
    assert batch == [[bos] + plain, [bos], [bos] + chat.encode("bye")]
    with pytest.raises(ValueError, match="not a special token"):
        chat.encode("x", prepend="<|nope|>")
    with pytest.raises(ValueError, match="not a token id"):
        chat.encode("x", append=10**6)
    with pytest.raises(TypeError):
        chat.encode("x", prepend=True)
    with pytest.raises(TypeError):
        chat.encode(b"bytes")


def test_special_text_is_never_special(chat):
    text = "<|bos|>hi<|assistant_end|>"
    ids = chat.encode(text)
    assert not set(ids) & set(chat.tokenizer.special_tokens.values())
    assert chat.decode(ids) == text
    conv = {
        "messages": [
            {"role": "user", "content": "<|assistant_start|>"},
            {"role": "assistant", "content": "<|python_start|>x"},
        ]
    }
    ids, mask = chat.render_conversation(conv)
    specials = [i for i in ids if i in set(chat.tokenizer.special_tokens.values())]
    assert [chat.id_to_token(i) for i in specials] == [
        "<|bos|>",
        "<|user_start|>",
        "<|user_end|>",
        "<|assistant_start|>",
        "<|assistant_end|>",
    ]


def test_encode_special_errors(chat):
    with pytest.raises(ValueError, match="not a special token"):
        chat.encode_special("hello")


def test_needs_the_nine_specials():
    ranks = {bytes([b]): b for b in range(256)}
    tok = toksmith.Tokenizer.from_ranks(ranks, "nanochat", {"<|bos|>": 256, "<|user_start|>": 257})
    with pytest.raises(ValueError) as err:
        ChatTokenizer(tok)
    msg = str(err.value)
    for s in NANOCHAT_SPECIAL_TOKENS[2:]:
        assert s in msg
    assert "'<|bos|>'" not in msg.split("lacks")[1].split("]")[0]
    with pytest.raises(TypeError):
        ChatTokenizer("tok.json")
    # extra specials are fine, and a ChatTokenizer can wrap a ChatTokenizer
    specials = {s: 256 + i for i, s in enumerate(NANOCHAT_SPECIAL_TOKENS)}
    specials["<|endoftext|>"] = 300
    chat = ChatTokenizer(ChatTokenizer(toksmith.Tokenizer.from_ranks(ranks, "nanochat", specials)))
    assert chat.get_vocab_size() == 301 and "<|endoftext|>" in chat.get_special_tokens()


def test_save_load_round_trip(chat, tmp_path):
    path = tmp_path / "t.json"
    chat.save(path)
    again = ChatTokenizer.load(path)
    assert nanochat.load(str(path)).get_vocab_size() == chat.get_vocab_size()
    assert again.tokenizer.mergeable_ranks() == chat.tokenizer.mergeable_ranks()
    assert again.tokenizer.special_tokens == chat.tokenizer.special_tokens
    conv = {
        "messages": [
            {"role": "user", "content": "Hello there"},
            {"role": "assistant", "content": "hi!"},
        ]
    }
    assert again.render_conversation(conv) == chat.render_conversation(conv)


def test_nanochat_folder_convention(chat, tmp_path):
    chat.save(tmp_path)  # nanochat: tokenizer.save(tokenizer_dir)
    assert (tmp_path / "tokenizer.json").is_file()
    again = ChatTokenizer.from_directory(tmp_path)
    assert again.tokenizer.mergeable_ranks() == chat.tokenizer.mergeable_ranks()
    assert ChatTokenizer.load(str(tmp_path)).get_vocab_size() == chat.get_vocab_size()


def test_train_from_iterator_alias():
    texts = ["hello world, hello chat. " * 3] * 20
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = ChatTokenizer.train_from_iterator(texts, 290)
        b = nanochat.train(texts, 290)
    assert a.tokenizer.mergeable_ranks() == b.tokenizer.mergeable_ranks()
    with pytest.raises(TypeError):
        ChatTokenizer.train_from_iterator("a path or a text", 290)


def test_load_rejects_a_tokenizer_without_the_specials(tmp_path):
    tok = toksmith.train_from_iterator(["some text here"] * 5, vocab_size=260, pattern="nanochat")
    tok.save(tmp_path / "plain.json")
    with pytest.raises(ValueError, match="lacks the nanochat special"):
        ChatTokenizer.load(tmp_path / "plain.json")


def test_train_sources(tmp_path):
    text = "the cat sat on the mat; the dog sat on the log. " * 30
    (tmp_path / "a.txt").write_text(text, encoding="utf-8")
    (tmp_path / "b.txt").write_text(text, encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from_texts = nanochat.train([text, text], vocab_size=300, threads=1)
        from_gen = nanochat.train((t for t in [text, text]), vocab_size=300, threads=1)
        from_paths = nanochat.train(
            [tmp_path / "a.txt", tmp_path / "b.txt"], vocab_size=300, threads=1
        )
        from_strs = nanochat.train(
            [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")], vocab_size=300
        )
        from_dir = nanochat.train(str(tmp_path), vocab_size=300)
        from_one = nanochat.train(pathlib.Path(tmp_path / "a.txt"), vocab_size=300)
    ranks = from_texts.tokenizer.mergeable_ranks()
    for other in (from_gen, from_paths, from_strs, from_dir):
        assert other.tokenizer.mergeable_ranks() == ranks
    assert isinstance(from_one, ChatTokenizer)
    for c in (from_texts, from_paths, from_one):
        n = c.get_vocab_size()
        assert [c.encode_special(s) for s in NANOCHAT_SPECIAL_TOKENS] == list(range(n - 9, n))
    with pytest.raises(TypeError):
        nanochat.train(b"bytes", vocab_size=300)
    with pytest.raises(FileNotFoundError):
        nanochat.train(os.path.join(str(tmp_path), "missing.txt"), vocab_size=300)


def test_too_small_vocab():
    with pytest.raises(toksmith.VocabError):
        nanochat.train(["abc"], vocab_size=260)


def test_numpy_ids_accepted(chat):
    np = pytest.importorskip("numpy")
    ids = chat.encode("Hello")
    assert chat.decode(np.array(ids, dtype=np.uint16)) == "Hello"


def test_cli_train_preset(tmp_path, capsys):
    """``toksmith train --preset nanochat`` (the core CLI, through the presets registry) makes a
    file ChatTokenizer loads, with the same merges as nanochat.train on the same text."""
    from toksmith.cli import main

    english = DATA / "corpora" / "english_slice.txt"
    (tmp_path / "a.txt").write_text(english.read_text(encoding="utf-8")[:30000], encoding="utf-8")
    out = tmp_path / "t.json"
    assert (
        main(
            [
                "train",
                "--preset",
                "nanochat",
                str(tmp_path / "a.txt"),
                "--vocab-size",
                "300",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    capsys.readouterr()
    chat = ChatTokenizer.load(out)
    assert chat.get_vocab_size() == 300
    assert [chat.encode_special(s) for s in NANOCHAT_SPECIAL_TOKENS] == list(range(291, 300))
    direct = nanochat.train(tmp_path / "a.txt", vocab_size=300)
    assert chat.tokenizer.mergeable_ranks() == direct.tokenizer.mergeable_ranks()
    assert chat.tokenizer.pattern == direct.tokenizer.pattern


def test_chat_tokenizer_pickles(chat, chat_lines):
    """A ChatTokenizer travels to worker processes like its Tokenizer: same ids, same renders."""
    import json
    import pickle

    back = pickle.loads(pickle.dumps(chat))
    assert isinstance(back, ChatTokenizer)
    text = "".join(chat_lines[:3])
    assert back.encode(text) == chat.encode(text)
    conversation = json.loads(chat_lines[0])
    assert back.render_conversation(conversation) == chat.render_conversation(conversation)
