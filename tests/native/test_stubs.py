"""The typed stubs of the native module (`_core.pyi`) name exactly what the module has, and
each stubbed class's methods exist on the native class."""

from __future__ import annotations

import ast
from pathlib import Path

import toksmith
from toksmith import _core

STUB = Path(toksmith.__file__).with_name("_core.pyi")


def _stub_tree() -> ast.Module:
    return ast.parse(STUB.read_text(encoding="utf-8"))


def test_stub_names_equal_the_module():
    names = set()
    for node in _stub_tree().body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    public = {n for n in dir(_core) if not n.startswith("_")}
    assert names == public, (sorted(public - names), sorted(names - public))


def test_stubbed_methods_exist():
    missing = []
    for node in _stub_tree().body:
        if isinstance(node, ast.ClassDef):
            cls = getattr(_core, node.name)
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and not hasattr(cls, item.name):
                    missing.append(f"{node.name}.{item.name}")
    assert not missing, missing
