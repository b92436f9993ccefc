"""Golden tests: every example of seed 003 ("CALM Tokenizer"), with the ids written out."""

from __future__ import annotations

import numpy as np
import pytest

from toksmith import calm

# --------------------------------------------------------------------------- vocabulary


def test_special_token_table_exactly_as_the_seed():
    assert calm.SPECIAL_TOKENS == {
        "<PAD>": 256,
        "<BOS>": 257,
        "<EOS>": 258,
        "<ATN>": 259,
        "<CWD>": 260,
        "<GIT>": 261,
        "<HIST>": 262,
        "<EXIT>": 263,
        "<CMD>": 264,
        "<ENV>": 265,
        "<COMP>": 266,
        "<QUERY>": 267,
        "<NEXT>": 268,
        "<END>": 269,
        "<WORD>": 270,
        "<POS>": 271,
        "<NOTE>": 272,
        "<IPA>": 273,
        "<DEF>": 274,
        "<QUOTE>": 275,
        "<BY>": 276,
        "<REF>": 277,
    }
    assert list(calm.SPECIAL_TOKENS.values()) == list(range(256, 278))


def test_lua_api_constants():
    assert (calm.PAD, calm.BOS, calm.EOS, calm.ATN, calm.CWD, calm.GIT) == (
        256,
        257,
        258,
        259,
        260,
        261,
    )
    assert (calm.HIST, calm.EXIT, calm.CMD, calm.ENV, calm.COMP, calm.QUERY) == (
        262,
        263,
        264,
        265,
        266,
        267,
    )
    assert (calm.NEXT, calm.END_TOKEN, calm.WORD, calm.POS, calm.NOTE, calm.IPA) == (
        268,
        269,
        270,
        271,
        272,
        273,
    )
    assert (calm.DEF, calm.QUOTE, calm.BY, calm.REF) == (274, 275, 276, 277)


def test_c_constants_and_layout():
    assert calm.VOCAB_SIZE == 320
    assert calm.BYTE_TOKENS == 256
    assert calm.SPECIAL_BASE == 256
    assert calm.MAX_TOKENS == 1024
    assert calm.NUM_SPECIAL == 22
    assert list(calm.RESERVED_IDS) == list(range(278, 320))
    assert len(calm.SPECIAL_NAMES) == 22


# --------------------------------------------------------------------------- encoding


def test_lua_tokenize_example():
    # calm.tokenize("git commit -m fix") -> {103, 105, 116, 32, 99, 111, ...}
    ids = calm.tokenize("git commit -m fix")
    assert ids.dtype == np.uint16
    assert ids.tolist() == [
        103,
        105,
        116,
        32,
        99,
        111,
        109,
        109,
        105,
        116,
        32,
        45,
        109,
        32,
        102,
        105,
        120,
    ]


def test_multibyte_codepoints_are_consecutive_byte_tokens():
    assert calm.tokenize("ˈwɪndoʊ").tolist() == [203, 136, 119, 201, 170, 110, 100, 111, 202, 138]
    assert calm.tokenize("é").tolist() == [195, 169]


def test_whitespace_and_shell_structure_are_raw_bytes():
    assert calm.tokenize(" \t|&&||;--").tolist() == [32, 9, 124, 38, 38, 124, 124, 59, 45, 45]


def test_decode_skips_special_tokens():
    assert calm.detokenize([257, 103, 105, 116, 269, 258]) == b"git"


# --------------------------------------------------------------------------- frames


def test_cwd_frame_example():
    # calm_tokenize_frame(CWD, "/home/user") -> [CWD, '/', 'h', 'o', 'm', 'e', '/', 'u', 's', 'e', 'r', END]
    assert calm.tokenize_frame(calm.CWD, "/home/user") == [
        260,
        47,
        104,
        111,
        109,
        101,
        47,
        117,
        115,
        101,
        114,
        269,
    ]
    assert calm.tokenize_frame("CWD", "/home/user") == calm.tokenize_frame("<CWD>", b"/home/user")


def test_hist_frame_with_exit():
    # <HIST> git diff --stat <EXIT> 0 <END>
    assert calm.tokenize_frame("HIST", "git diff --stat", exit=0) == [
        262, 103, 105, 116, 32, 100, 105, 102, 102, 32, 45, 45, 115, 116, 97, 116, 263, 48, 269,
    ]  # fmt: skip


def test_word_frame_with_pos_note_ipa():
    # <WORD> window <POS> n. <NOTE> OE. windowe <IPA> ˈwɪndoʊ <END>
    assert calm.tokenize_frame("WORD", "window", pos="n.", note="OE. windowe", ipa="ˈwɪndoʊ") == [
        270, 119, 105, 110, 100, 111, 119,
        271, 110, 46,
        272, 79, 69, 46, 32, 119, 105, 110, 100, 111, 119, 101,
        273, 203, 136, 119, 201, 170, 110, 100, 111, 202, 138,
        269,
    ]  # fmt: skip


def test_word_frame_absent_subtokens_omitted():
    # <WORD> cat <POS> n. <END>
    assert calm.tokenize_frame("WORD", "cat", pos="n.") == [270, 99, 97, 116, 271, 110, 46, 269]
    assert calm.tokenize_frame("WORD", "cat", pos="n.", note=None, ipa="") == [
        270,
        99,
        97,
        116,
        271,
        110,
        46,
        269,
    ]


def test_def_frame():
    # <DEF> An opening in the wall for the admission of light and air <END>
    assert calm.tokenize_frame("DEF", "An opening in the wall for the admission of light and air") == [
        274, 65, 110, 32, 111, 112, 101, 110, 105, 110, 103, 32, 105, 110, 32, 116, 104, 101, 32, 119, 97,
        108, 108, 32, 102, 111, 114, 32, 116, 104, 101, 32, 97, 100, 109, 105, 115, 115, 105, 111, 110, 32,
        111, 102, 32, 108, 105, 103, 104, 116, 32, 97, 110, 100, 32, 97, 105, 114, 269,
    ]  # fmt: skip


def test_quote_frames():
    # <QUOTE> Never say never. <END>
    assert calm.tokenize_frame("QUOTE", "Never say never.") == [
        275, 78, 101, 118, 101, 114, 32, 115, 97, 121, 32, 110, 101, 118, 101, 114, 46, 269,
    ]  # fmt: skip
    # <QUOTE> Then to come, in spite of sorrow <BY> Milton <END>
    assert calm.tokenize_frame("QUOTE", "Then to come, in spite of sorrow", by="Milton") == [
        275, 84, 104, 101, 110, 32, 116, 111, 32, 99, 111, 109, 101, 44, 32, 105, 110, 32, 115, 112, 105,
        116, 101, 32, 111, 102, 32, 115, 111, 114, 114, 111, 119,
        276, 77, 105, 108, 116, 111, 110,
        269,
    ]  # fmt: skip


def test_query_frame():
    # <QUERY> what port does redis use <END>
    assert calm.tokenize_frame("QUERY", "what port does redis use") == [
        267, 119, 104, 97, 116, 32, 112, 111, 114, 116, 32, 100, 111, 101, 115, 32, 114, 101, 100, 105, 115,
        32, 117, 115, 101, 269,
    ]  # fmt: skip


def test_ref_frame_with_note():
    # <REF> RFC 8446, TLS 1.3 <NOTE> obsoletes RFC 5246 <END>
    assert calm.tokenize_frame("REF", "RFC 8446, TLS 1.3", note="obsoletes RFC 5246") == [
        277, 82, 70, 67, 32, 56, 52, 52, 54, 44, 32, 84, 76, 83, 32, 49, 46, 51,
        272, 111, 98, 115, 111, 108, 101, 116, 101, 115, 32, 82, 70, 67, 32, 53, 50, 52, 54,
        269,
    ]  # fmt: skip


def test_comp_frame_with_next_separators():
    # <COMP> commit <NEXT> checkout <NEXT> cherry-pick <NEXT> clone <END>
    assert calm.tokenize_frame("COMP", ["commit", "checkout", "cherry-pick", "clone"]) == [
        266, 99, 111, 109, 109, 105, 116,
        268, 99, 104, 101, 99, 107, 111, 117, 116,
        268, 99, 104, 101, 114, 114, 121, 45, 112, 105, 99, 107,
        268, 99, 108, 111, 110, 101,
        269,
    ]  # fmt: skip


def test_simple_frames_git_env():
    assert calm.tokenize_frame("GIT", "main") == [261, 109, 97, 105, 110, 269]
    assert calm.tokenize_frame("ENV", "venv:myproject") == [
        265, 118, 101, 110, 118, 58, 109, 121, 112, 114, 111, 106, 101, 99, 116, 269,
    ]  # fmt: skip
    assert calm.tokenize_frame("CMD", "ls") == [264, 108, 115, 269]


# --------------------------------------------------------------------------- the shell context window

SHELL_CONTEXT = {
    "cwd": "/home/user/lilush",
    "git": "main",
    "history": [
        {"cmd": "git diff --stat", "exit": 0},
        {"cmd": "git status", "exit": 0},
    ],
    "completions": ["commit", "checkout", "cherry-pick", "clone"],
    "env": "venv:myproject",
    "input": "git com",
}

SHELL_WINDOW = [
    257,  # <BOS>
    260, 47, 104, 111, 109, 101, 47, 117, 115, 101, 114, 47, 108, 105, 108, 117, 115, 104, 269,  # <CWD> /home/user/lilush <END>
    261, 109, 97, 105, 110, 269,  # <GIT> main <END>
    262, 103, 105, 116, 32, 100, 105, 102, 102, 32, 45, 45, 115, 116, 97, 116, 263, 48, 269,  # <HIST> git diff --stat <EXIT> 0 <END>
    262, 103, 105, 116, 32, 115, 116, 97, 116, 117, 115, 263, 48, 269,  # <HIST> git status <EXIT> 0 <END>
    266, 99, 111, 109, 109, 105, 116, 268, 99, 104, 101, 99, 107, 111, 117, 116, 268,
    99, 104, 101, 114, 114, 121, 45, 112, 105, 99, 107, 268, 99, 108, 111, 110, 101, 269,  # <COMP> ... <END>
    265, 118, 101, 110, 118, 58, 109, 121, 112, 114, 111, 106, 101, 99, 116, 269,  # <ENV> venv:myproject <END>
    259,  # <ATN>
    264, 103, 105, 116, 32, 99, 111, 109,  # <CMD> git com
]  # fmt: skip


def test_shell_template_is_the_seed_window_order():
    assert (
        calm.TEMPLATES["shell"]
        == "BOS;CWD:cwd;GIT:git;HIST:history;COMP:completions;ENV:env;ATN;CMD:input"
    )


def test_shell_context_window():
    seq = calm.build_sequence("shell", SHELL_CONTEXT)
    assert seq == SHELL_WINDOW
    assert seq.ids == SHELL_WINDOW
    assert not seq.dropped
    assert seq.format() == (
        "<BOS> <CWD> /home/user/lilush <END> <GIT> main <END> <HIST> git diff --stat <EXIT> 0 <END> "
        "<HIST> git status <EXIT> 0 <END> <COMP> commit <NEXT> checkout <NEXT> cherry-pick <NEXT> clone <END> "
        "<ENV> venv:myproject <END> <ATN> <CMD> git com"
    )


def test_shell_context_window_training_ends_with_eos():
    # <BOS> [context frames] <ATN> <CMD> [full command bytes] <EOS>
    ctx = dict(SHELL_CONTEXT, input="git commit")
    seq = calm.build_sequence("shell", ctx, training=True)
    assert seq == SHELL_WINDOW + [109, 105, 116, 258]


def test_same_window_from_explicit_spec_string():
    seq = calm.build_sequence(
        "BOS;CWD:cwd;GIT:git;HIST:history;COMP:completions;ENV:env;ATN;CMD:input", SHELL_CONTEXT
    )
    assert seq == SHELL_WINDOW


def test_lua_template_example_input_only():
    # calm.build_sequence(pipeline.TEMPLATES.shell, { input = "git com" })
    assert calm.build_sequence(calm.TEMPLATES["shell"], {"input": "git com"}) == [
        257, 259, 264, 103, 105, 116, 32, 99, 111, 109,
    ]  # fmt: skip


def test_lua_model_example(tmp_path):
    # calm.build_sequence(model, {cwd=..., git="main+3", history=..., completions=..., input="git com"})
    path = tmp_path / "shell.cwgt"
    calm.write_cwgt(
        path,
        calm.CWGTHeader(d_model=32, n_layers=2, dt_rank=2),
        calm.CWGTMetadata("shell", calm.TEMPLATES["shell"], "| ; && ||"),
        np.zeros(8, dtype=np.float32),
    )
    model = calm.load_model(path)
    seq = calm.build_sequence(
        model,
        {
            "cwd": "/home/user/lilush",
            "git": "main+3",
            "history": [{"cmd": "git diff --stat", "exit": 0}, {"cmd": "git status", "exit": 0}],
            "completions": ["commit", "checkout", "cherry-pick", "clone"],
            "input": "git com",
        },
    )
    assert seq == [
        257,
        260, 47, 104, 111, 109, 101, 47, 117, 115, 101, 114, 47, 108, 105, 108, 117, 115, 104, 269,
        261, 109, 97, 105, 110, 43, 51, 269,
        262, 103, 105, 116, 32, 100, 105, 102, 102, 32, 45, 45, 115, 116, 97, 116, 263, 48, 269,
        262, 103, 105, 116, 32, 115, 116, 97, 116, 117, 115, 263, 48, 269,
        266, 99, 111, 109, 109, 105, 116, 268, 99, 104, 101, 99, 107, 111, 117, 116, 268,
        99, 104, 101, 114, 114, 121, 45, 112, 105, 99, 107, 268, 99, 108, 111, 110, 101, 269,
        259,
        264, 103, 105, 116, 32, 99, 111, 109,
    ]  # fmt: skip
    assert seq.l_max == 768


def test_atn_exactly_once_in_the_window():
    assert SHELL_WINDOW.count(calm.ATN) == 1


# --------------------------------------------------------------------------- stop conditions


def test_shell_stop_conditions_example():
    stops = calm.StopConditions("| ; && ||")
    assert stops.patterns == (b"|", b";", b"&&", b"||")
    assert str(stops) == "| ; && ||"


# --------------------------------------------------------------------------- CWGT header


def test_cwgt_header_offsets():
    assert calm.HEADER_SIZE == 48
    expected = {
        "magic": (0, 4),
        "arch_version": (4, 2),
        "flags": (6, 2),
        "vocab_size": (8, 2),
        "d_model": (10, 2),
        "n_layers": (12, 1),
        "ffn_expand": (13, 1),
        "expand": (14, 1),
        "d_state": (15, 1),
        "l_max": (16, 2),
        "param_count": (18, 4),
        "def_temperature": (22, 2),
        "def_top_k": (24, 2),
        "def_top_p": (26, 2),
        "def_min_p": (28, 2),
        "def_max_tokens": (30, 2),
        "def_candidates": (32, 1),
        "d_conv": (33, 1),
        "meta_size": (34, 4),
        "dt_rank": (38, 1),
        "reserved": (39, 9),
    }
    assert calm.HEADER_FIELDS == expected


def test_cwgt_header_bytes_literal():
    header = calm.CWGTHeader(
        flags=calm.FLAG_TIED,
        d_model=256,
        n_layers=8,
        ffn_expand=4,
        expand=2,
        d_state=16,
        l_max=768,
        param_count=0x01020304,
        def_temperature=700,
        def_top_k=40,
        def_top_p=950,
        def_min_p=50,
        def_max_tokens=128,
        def_candidates=3,
        d_conv=4,
        meta_size=0x0A0B0C0D,
        dt_rank=16,
    )
    assert header.to_bytes() == bytes(
        [
            0x43, 0x57, 0x47, 0x54,  # "CWGT"
            5, 0,  # arch_version
            1, 0,  # flags: tied
            0x40, 0x01,  # vocab_size 320
            0x00, 0x01,  # d_model 256
            8,  # n_layers
            4,  # ffn_expand
            2,  # expand (offset 14)
            16,  # d_state (offset 15)
            0x00, 0x03,  # l_max 768
            0x04, 0x03, 0x02, 0x01,  # param_count
            0xBC, 0x02,  # def_temperature 700
            40, 0,  # def_top_k
            0xB6, 0x03,  # def_top_p 950
            50, 0,  # def_min_p
            128, 0,  # def_max_tokens
            3,  # def_candidates
            4,  # d_conv (offset 33)
            0x0D, 0x0C, 0x0B, 0x0A,  # meta_size
            16,  # dt_rank (offset 38)
            0, 0, 0, 0, 0, 0, 0, 0, 0,  # reserved
        ]
    )  # fmt: skip


def test_arch_version_below_5_rejected():
    data = bytearray(calm.CWGTHeader(d_model=8, n_layers=1, dt_rank=1).to_bytes())
    data[4] = 4
    with pytest.raises(calm.CWGTError, match=r"arch_version.*offset 4"):
        calm.CWGTHeader.from_bytes(bytes(data))
