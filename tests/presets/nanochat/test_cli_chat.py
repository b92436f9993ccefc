"""``toksmith chat show`` and ``toksmith chat render`` on the chat slice, in-process through
``toksmith.cli.main`` and once through ``python -m toksmith.cli``."""

from __future__ import annotations

import json
import lzma
import os
import subprocess
import sys

import numpy as np
import pytest

from toksmith.cli import main
from toksmith.presets.chat_shards import MANIFEST, ShardWriter, iter_rendered, read_manifest
from toksmith.presets.nanochat import ChatTokenizer


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def with_bad_lines(tmp_path, lines, bad):
    """The chat slice with some lines replaced by malformed ones ({line number: text})."""
    lines = list(lines)
    for lineno, text in bad.items():
        lines[lineno - 1] = text
    path = tmp_path / "chats.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_registered(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out, _ = capsys.readouterr()
    assert "chat" in out and "eval" in out


def test_render_slice(capsys, tmp_path, chat, chat_path, chat_slice_path, chat_lines):
    out_dir = tmp_path / "out"
    code, out, err = run(
        capsys,
        "chat",
        "render",
        chat_slice_path,
        "-t",
        chat_path,
        "-o",
        out_dir,
        "--shard-size",
        64,
        "--max-tokens",
        512,
        "--threads",
        2,
    )
    assert code == 0, err
    assert "rendered 200 conversation(s)" in err and "into 4 shard(s)" in err
    manifest = read_manifest(out_dir)
    assert manifest["conversations"] == 200 and manifest["dtype"] == "uint16"
    assert [s["conversations"] for s in manifest["shards"]] == [64, 64, 64, 8]
    assert sorted(os.listdir(out_dir)) == [MANIFEST] + [f"shard_0000{i}.npz" for i in range(4)]
    assert manifest["max_tokens"] == 512 and manifest["n_vocab"] == chat.get_vocab_size()
    assert manifest["special_tokens"]["<|bos|>"] == chat.get_bos_token_id()
    rendered = list(iter_rendered(out_dir))
    assert len(rendered) == 200
    total = trained = 0
    for line, (ids, mask) in zip(chat_lines, rendered):
        want_ids, want_mask = chat.render_conversation(json.loads(line), max_tokens=512)
        assert ids.dtype == np.uint16 and mask.dtype == np.uint8
        assert ids.tolist() == want_ids and mask.tolist() == want_mask
        total += len(want_ids)
        trained += sum(want_mask)
    assert manifest["tokens"] == total and manifest["trained_tokens"] == trained
    with np.load(out_dir / "shard_00003.npz") as shard:
        assert sorted(shard.files) == ["ids", "lines", "mask", "offsets"]
        assert shard["lines"].tolist() == list(range(193, 201))
        assert shard["offsets"][0] == 0 and shard["offsets"][-1] == len(shard["ids"]) == len(
            shard["mask"]
        )


def test_render_xz_and_no_limit(capsys, tmp_path, chat, chat_path, chat_lines):
    src = tmp_path / "chats.jsonl.xz"
    with lzma.open(src, "wt", encoding="utf-8") as f:
        f.write("\n".join(chat_lines[:30]) + "\n\n")  # a trailing blank line is ignored
    code, _, err = run(
        capsys,
        "chat",
        "render",
        src,
        "-t",
        chat_path,
        "-o",
        tmp_path / "o",
        "--max-tokens",
        0,
        "--compress",
        "--no-progress",
    )
    assert code == 0, err
    lengths = [len(ids) for ids, _ in iter_rendered(tmp_path / "o")]
    assert lengths == [
        len(chat.render_conversation(json.loads(line), max_tokens=None)[0])
        for line in chat_lines[:30]
    ]
    assert max(lengths) > 2048  # the first chat is long: not cut


def test_truncated_xz_is_an_error_message(capsys, tmp_path, chat_path, chat_lines):
    """A cut-off archive: the codec's EOFError was a traceback; now a message naming the file."""
    data = lzma.compress(("\n".join(chat_lines) + "\n").encode())
    src = tmp_path / "cut.jsonl.xz"
    src.write_bytes(data[: len(data) // 2])
    for argv in (["render", src, "-o", tmp_path / "o", "--no-progress"], ["show", src]):
        code, _, err = run(capsys, "chat", *argv, "-t", chat_path)
        assert code == 1 and "cut.jsonl.xz is not a valid .xz file" in err, err


BAD = {
    5: "{not json",
    9: json.dumps({"messages": [{"role": "assistant", "content": "hi"}]}),
    12: json.dumps({"messages": [{"role": "user", "content": ["x"]}]}),
    14: "[1, 2]",
}


def test_malformed_line_stops(monkeypatch, capsys, tmp_path, chat_path, chat_lines):
    src = with_bad_lines(tmp_path, chat_lines, BAD)
    out_dir = tmp_path / "out"
    written = []
    real_flush = ShardWriter.flush

    def flush(self):
        real_flush(self)
        written.extend(os.listdir(out_dir))

    monkeypatch.setattr(ShardWriter, "flush", flush)
    code, _, err = run(
        capsys, "chat", "render", src, "-t", chat_path, "-o", out_dir, "--shard-size", 2
    )
    assert "shard_00001.npz" in written
    assert code == 1
    assert f"{src}:5: not valid JSON" in err and "--skip-bad" in err
    # nothing half-written is left behind (two shards had been written before line 5)
    assert not out_dir.exists() or os.listdir(out_dir) == []


def test_malformed_lines_skipped(capsys, tmp_path, chat, chat_path, chat_lines):
    src = with_bad_lines(tmp_path, chat_lines, BAD)
    out_dir = tmp_path / "out"
    code, _, err = run(capsys, "chat", "render", src, "-t", chat_path, "-o", out_dir, "--skip-bad")
    assert code == 0, err
    assert f"{src}:5: not valid JSON" in err
    assert f"{src}:9: message 0: expected role 'user'" in err
    assert f"{src}:12: message 0: user content must be a str" in err
    assert f"{src}:14: message 0: expected an object" in err
    assert "rendered 196 conversation(s)" in err and "skipped 4 malformed line(s)" in err
    manifest = read_manifest(out_dir)
    assert manifest["skipped_lines"] == 4 and manifest["skipped_line_numbers"] == [5, 9, 12, 14]
    with np.load(out_dir / "shard_00000.npz") as shard:
        lines = shard["lines"].tolist()
    assert lines == [n for n in range(1, 201) if n not in BAD]
    good = [line for n, line in enumerate(chat_lines, 1) if n not in BAD]
    first_ids, _ = next(iter_rendered(out_dir))
    assert first_ids.tolist() == chat.render_conversation(json.loads(good[0]))[0]


def test_output_folder_reuse(capsys, tmp_path, chat_path, chat_lines):
    src = tmp_path / "c.jsonl"
    src.write_text("\n".join(chat_lines[:3]) + "\n", encoding="utf-8")
    out_dir = tmp_path / "out"
    assert (
        run(capsys, "chat", "render", src, "-t", chat_path, "-o", out_dir, "--shard-size", 1)[0]
        == 0
    )
    code, _, err = run(capsys, "chat", "render", src, "-t", chat_path, "-o", out_dir)
    assert code == 1 and "--overwrite" in err
    code, _, err = run(capsys, "chat", "render", src, "-t", chat_path, "-o", out_dir, "--overwrite")
    assert code == 0, err
    assert sorted(os.listdir(out_dir)) == [MANIFEST, "shard_00000.npz"]


def test_render_needs_chat_specials(capsys, tmp_path, chat_slice_path):
    import toksmith

    plain = toksmith.train_from_iterator(["abc abc"] * 5, vocab_size=258, pattern="nanochat")
    plain.save(tmp_path / "plain.json")
    code, _, err = run(
        capsys,
        "chat",
        "render",
        chat_slice_path,
        "-t",
        tmp_path / "plain.json",
        "-o",
        tmp_path / "o",
    )
    assert code == 1 and "<|bos|>" in err


def test_numpy_missing(monkeypatch, capsys, tmp_path, chat_path, chat_slice_path):
    monkeypatch.setitem(sys.modules, "numpy", None)
    with pytest.raises(ImportError, match=r"pip install toksmith\[numpy\]"):
        ShardWriter(str(tmp_path), n_vocab=100)
    code, _, err = run(
        capsys, "chat", "render", chat_slice_path, "-t", chat_path, "-o", tmp_path / "o"
    )
    assert code == 1 and "pip install toksmith[numpy]" in err


def test_show_terminal(capsys, chat, chat_path, chat_slice_path, chat_lines):
    code, out, err = run(
        capsys,
        "chat",
        "show",
        chat_slice_path,
        "-t",
        chat_path,
        "--index",
        2,
        "--ids",
        "--color",
        "never",
    )
    assert code == 0, err
    ids, mask = chat.render_conversation(json.loads(chat_lines[2]))
    head = f"== conversation 2 (line 3): {len(ids)} tokens, {sum(mask)} trained\n"
    assert (
        out == head + chat.visualize_tokenization(ids, mask, with_token_id=True, color=False) + "\n"
    )
    code, out, _ = run(
        capsys, "chat", "show", chat_slice_path, "-t", chat_path, "--limit", 3, "--color", "always"
    )
    assert code == 0 and out.count("== conversation") == 3 and "\033[" in out
    code, _, err = run(capsys, "chat", "show", chat_slice_path, "-t", chat_path, "--index", 999)
    assert code == 1 and "only 200 conversation(s)" in err


def test_show_html(capsys, tmp_path, chat_path):
    src = tmp_path / "c.jsonl"
    conv = {
        "messages": [
            {"role": "user", "content": "<b>bold</b> & more"},
            {
                "role": "assistant",
                "content": [
                    {"type": "python", "text": "1 < 2"},
                    {"type": "python_output", "text": "True"},
                ],
            },
        ]
    }
    src.write_text(json.dumps(conv) + "\n\n" + json.dumps(conv) + "\n", encoding="utf-8")
    page = tmp_path / "page.html"
    code, _, err = run(capsys, "chat", "show", src, "-t", chat_path, "--html", page)
    assert code == 0 and "wrote 2 conversation(s)" in err
    text = page.read_text(encoding="utf-8")
    assert text.count("<section>") == 2 and "<b>" not in text
    import html
    import re

    shown = html.unescape(re.sub(r"<[^>]+>", "", text))
    assert "<b>bold</b> & more" in shown and "<|python_start|>1 < 2<|python_end|>" in shown
    assert "conversation 1 (line 3)" in text


def test_show_bad_line(capsys, tmp_path, chat_path):
    src = tmp_path / "c.jsonl"
    src.write_text(
        '{"messages": [{"role": "user", "content": "hi"}]}\n{"messages": []}\n', encoding="utf-8"
    )
    code, _, err = run(capsys, "chat", "show", src, "-t", chat_path, "--color", "never")
    assert code == 1 and f"{src}:2: conversation has no messages" in err


def test_entry_point_subprocess(tmp_path, chat_path, chat_lines):
    src = with_bad_lines(tmp_path, chat_lines[:20], {3: "{oops"})
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    cmd = [
        sys.executable,
        "-m",
        "toksmith.cli",
        "chat",
        "render",
        str(src),
        "-t",
        str(chat_path),
        "-o",
        str(tmp_path / "out"),
    ]
    bad = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert bad.returncode == 1 and f"{src}:3: not valid JSON" in bad.stderr
    cmd[5] = "-"  # read the conversations from stdin
    ok = subprocess.run(
        cmd + ["--skip-bad"],
        input=src.read_text(encoding="utf-8"),
        capture_output=True,
        text=True,
        env=env,
    )
    assert ok.returncode == 0, ok.stderr
    assert "-:3: not valid JSON" in ok.stderr
    assert "rendered 19 conversation(s)" in ok.stderr and "skipped 1 malformed line(s)" in ok.stderr
    assert read_manifest(tmp_path / "out")["conversations"] == 19


U = {"role": "user", "content": "hi"}


A_YO = {"role": "assistant", "content": "yo"}


def test_chat_cli_deeply_nested_json_line(capsys, tmp_path, chat_path):
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({"messages": [U, A_YO]}) + "\n" + "[" * 100000 + "]" * 100000 + "\n")
    assert main(["chat", "show", str(path), "-t", str(chat_path), "--color", "never"]) == 1
    assert "2: JSON nested too deeply" in capsys.readouterr().err
    out = tmp_path / "out"
    assert (
        main(
            [
                "chat",
                "render",
                str(path),
                "-t",
                str(chat_path),
                "-o",
                str(out),
                "--skip-bad",
                "--no-progress",
            ]
        )
        == 0
    )
    assert read_manifest(out)["conversations"] == 1 and read_manifest(out)["skipped_lines"] == 1


CONV = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]}


@pytest.fixture()
def conv_file(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps(CONV) + "\n", encoding="utf-8")
    return path


def test_html_onto_the_input_is_refused(capsys, conv_file, chat_path, monkeypatch):
    # was: the input was truncated before it was read: "wrote 0 conversation(s)", exit 0, input lost
    before = conv_file.read_bytes()
    code, _, err = run(capsys, "chat", "show", conv_file, "-t", chat_path, "--html", conv_file)
    assert code == 1 and "is the input file" in err and "Traceback" not in err
    assert conv_file.read_bytes() == before
    with open(conv_file, "rb") as stdin:  # the same file behind stdin
        monkeypatch.setattr("sys.stdin", type("S", (), {"buffer": stdin, "fileno": stdin.fileno})())
        code, _, err = run(capsys, "chat", "show", "-", "-t", chat_path, "--html", conv_file)
    assert code == 1 and "is the input file" in err
    assert conv_file.read_bytes() == before


def test_html_onto_the_tokenizer_is_refused(capsys, tmp_path, conv_file, chat_path):
    # was: the tokenizer file was replaced by the HTML page, exit 0
    tok = tmp_path / "tok.json"
    tok.write_bytes(chat_path.read_bytes())
    code, _, err = run(capsys, "chat", "show", conv_file, "-t", tok, "--html", tok)
    assert code == 1 and "is the tokenizer file" in err
    assert tok.read_bytes() == chat_path.read_bytes()


def test_html_empty_name_is_an_error(capsys, conv_file, chat_path):
    # was: --html "" was taken as no --html: the terminal view was printed, exit 0
    code, out, err = run(capsys, "chat", "show", conv_file, "-t", chat_path, "--html", "")
    assert code == 1 and "file name is empty" in err and out == ""


def test_html_not_half_written_on_a_bad_line(capsys, tmp_path, chat_path):
    # was: a malformed line left a half HTML page behind (and replaced an earlier good page)
    src = tmp_path / "c.jsonl"
    src.write_text(json.dumps(CONV) + "\n{oops\n", encoding="utf-8")
    page = tmp_path / "page.html"
    page.write_text("earlier page", encoding="utf-8")
    code, _, err = run(capsys, "chat", "show", src, "-t", chat_path, "--html", page)
    assert code == 1 and f"{src}:2: not valid JSON" in err
    assert page.read_text(encoding="utf-8") == "earlier page"
    assert sorted(os.listdir(tmp_path)) == ["c.jsonl", "page.html"]


def test_lone_surrogate_escape_is_a_malformed_line(capsys, tmp_path, chat_path):
    # was: a "\ud800" escape in a conversation was silently rendered as U+FFFD
    src = tmp_path / "c.jsonl"
    bad = '{"messages": [{"role": "user", "content": "a\\ud800"}, {"role": "assistant", "content": "b"}]}'
    pair = '{"messages": [{"role": "user", "content": "\\ud83d\\ude00"}, {"role": "assistant", "content": "b"}]}'
    src.write_text(json.dumps(CONV) + "\n" + bad + "\n" + pair + "\n", encoding="utf-8")
    code, _, err = run(
        capsys, "chat", "show", src, "-t", chat_path, "--color", "never", "--index", 1
    )
    assert code == 1 and f"{src}:2: a string holds a lone surrogate (U+D800" in err
    out_dir = tmp_path / "out"
    code, _, err = run(
        capsys, "chat", "render", src, "-t", chat_path, "-o", out_dir, "--skip-bad", "--no-progress"
    )
    assert code == 0, err
    manifest = read_manifest(out_dir)
    assert manifest["conversations"] == 2 and manifest["skipped_line_numbers"] == [2]
    pair_ids = list(iter_rendered(out_dir))[1][0].tolist()
    assert "\U0001f600" in ChatTokenizer.load(chat_path).decode(
        pair_ids
    )  # a valid surrogate pair still renders


def test_overwrite_with_a_missing_input_keeps_the_earlier_render(
    capsys, tmp_path, conv_file, chat_path
):
    # was: --overwrite deleted the earlier shards and manifest, then failed on the missing input
    out_dir = tmp_path / "out"
    assert (
        run(capsys, "chat", "render", conv_file, "-t", chat_path, "-o", out_dir, "--no-progress")[0]
        == 0
    )
    code, _, err = run(
        capsys,
        "chat",
        "render",
        tmp_path / "missing.jsonl",
        "-t",
        chat_path,
        "-o",
        out_dir,
        "--overwrite",
        "--no-progress",
    )
    assert code == 1 and "missing.jsonl" in err
    assert sorted(os.listdir(out_dir)) == [MANIFEST, "shard_00000.npz"]
    assert read_manifest(out_dir)["conversations"] == 1
