"""The presets' layout: one base class under every preset tokenizer, the old import paths as
aliases of the moved modules, and the one set of argument checks."""

import importlib
import pickle
import subprocess
import sys
import warnings

import pytest

import toksmith
from toksmith.presets import calm, cppreason, cromwell, nanochat, wordbpe
from toksmith.presets._base import PresetTokenizer, WrapperTokenizer

TEXT = "int main() { return foo_bar + 1; } The quick brown fox jumps over the lazy dog. " * 20


@pytest.fixture(scope="module")
def tokenizers():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a small corpus may give fewer merges than asked for
        cpp = cppreason.train([TEXT], vocab_size=1900)
    return {
        "nanochat": nanochat.train([TEXT], vocab_size=300),
        "cromwell": cromwell.train([TEXT], vocab_size=300),
        "cppreason": cpp,
        "wordbpe": wordbpe.train_from_counts({"hello": 3, "help": 2, "world": 1}, num_merges=6),
        "calm": calm.ByteTokenizer(),
    }


def test_every_preset_tokenizer_derives_from_the_base(tokenizers):
    wrappers = {"nanochat", "cromwell", "cppreason"}
    for name, tok in tokenizers.items():
        assert isinstance(tok, PresetTokenizer), name
        assert tok.preset == name
        assert isinstance(tok, WrapperTokenizer) == (name in wrappers), name
        if name in wrappers:
            assert tok.n_vocab == tok.tokenizer.n_vocab
        ids = tok.encode("hello")
        assert tok.decode(ids) == "hello"
        assert tok.n_vocab > max(ids)


def test_the_base_needs_the_common_interface():
    class Half(PresetTokenizer):
        def encode(self, text, *args, **kwargs):
            return []

    with pytest.raises(TypeError, match="abstract"):
        Half()


def test_save_load_and_pickle_round_trip(tokenizers, tmp_path):
    for name, tok in tokenizers.items():
        path = tmp_path / f"{name}.json"
        tok.save(path)
        for again in (type(tok).load(path), pickle.loads(pickle.dumps(tok))):
            assert type(again) is type(tok)
            assert again.encode("hello world") == tok.encode("hello world"), name
            assert again.n_vocab == tok.n_vocab


def test_wrappers_save_into_a_folder(tokenizers, tmp_path):
    for name in ("nanochat", "cromwell", "cppreason"):
        folder = tmp_path / name
        folder.mkdir()
        tokenizers[name].save(folder)
        assert (folder / type(tokenizers[name]).FILE_NAME).is_file()
        assert type(tokenizers[name]).load(folder).encode("hi") == tokenizers[name].encode("hi")


@pytest.mark.parametrize(
    "old, new",
    [
        ("toksmith.calm", "toksmith.presets.calm"),
        ("toksmith.calm.byte_tokenizer", "toksmith.presets.calm.byte_tokenizer"),
        ("toksmith.calm.codec", "toksmith.presets.calm.codec"),
        ("toksmith.calm.cwgt", "toksmith.presets.calm.cwgt"),
        ("toksmith.calm.frames", "toksmith.presets.calm.frames"),
        ("toksmith.calm.sequence", "toksmith.presets.calm.sequence"),
        ("toksmith.calm.stops", "toksmith.presets.calm.stops"),
        ("toksmith.calm.vocab", "toksmith.presets.calm.vocab"),
        ("toksmith.presets.conversation", "toksmith.presets.nanochat.conversation"),
        ("toksmith.presets.chat_render", "toksmith.presets.nanochat.chat_render"),
        ("toksmith.presets.chat_shards", "toksmith.presets.nanochat.chat_shards"),
        ("toksmith.presets.embeddings", "toksmith.presets.wordbpe.embeddings"),
    ],
)
def test_old_module_paths_are_the_moved_modules(old, new):
    assert importlib.import_module(old) is importlib.import_module(new)


def test_old_paths_in_a_fresh_interpreter():
    # imported first under the old names: still one module object each, classes included
    code = (
        "import toksmith.calm.cwgt as a, toksmith.presets.calm.cwgt as b\n"
        "from toksmith.calm import ByteTokenizer\n"
        "from toksmith.presets.chat_shards import ShardWriter\n"
        "import toksmith.presets.calm, toksmith.presets.nanochat.chat_shards as s\n"
        "assert a is b and toksmith.calm is toksmith.presets.calm\n"
        "assert ByteTokenizer is toksmith.presets.calm.ByteTokenizer and ShardWriter is s.ShardWriter\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr


def test_calm_is_an_attribute_of_the_package():
    assert toksmith.calm is calm
