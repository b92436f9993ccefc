"""The modules of python/toksmith form layers: no import cycle among them, and no import of
toksmith's own modules inside a function (a deferred import hid the cycles that held ten
modules together). Checked on the source with `ast`, every Import/ImportFrom node counted,
those inside functions included; imports of other packages (numpy, tiktoken...) are free."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "toksmith"

#: subpackages whose function-level imports of toksmith are still allowed: presets, calm and
#: cli are being layered in a later step (task D empties this list)
DEFERRED_IMPORTS_ALLOWED: tuple = ()  # every layer imports at module level


def _modules():
    """``{module name: (path, is package)}`` for every .py file, and the extension modules."""
    mods = {}
    for p in sorted(PACKAGE.rglob("*.py")):
        parts = list(p.relative_to(PACKAGE.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        mods[".".join(parts)] = (p, is_pkg)
    # the extension modules: built in place (.so/.pyd) in a development checkout, or only their
    # typed stubs (.pyi) in a clean clone whose build went to site-packages
    for ext in ("*.so", "*.pyd", "*.pyi"):
        for so in PACKAGE.glob(ext):
            name = "toksmith." + so.name.split(".")[0]
            mods.setdefault(name, (None, False))
    return mods


def _targets(mod, is_pkg, node, mods):
    """The toksmith modules an import node names (``from . import x`` names the module ``x`` if
    there is one, else the package)."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        if node.level:
            base = mod.split(".") if is_pkg else mod.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            prefix = ".".join(base + ([node.module] if node.module else []))
        else:
            prefix = node.module or ""
        names = [
            f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in mods else prefix for a in node.names
        ]
    return [n for n in names if n == "toksmith" or n.startswith("toksmith.")]


def _imports():
    """``(module, target, at module level)`` for every import of a toksmith module."""
    mods = _modules()
    found = []
    for mod, (path, is_pkg) in mods.items():
        if path is None:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        top = set()
        for node in tree.body:
            # module level: the statements of the module and of its top-level if/try blocks
            stack = [node]
            while stack:
                n = stack.pop()
                top.add(id(n))
                if isinstance(n, (ast.If, ast.Try)):
                    for field in ("body", "orelse", "finalbody", "handlers"):
                        stack.extend(getattr(n, field, []))
                elif isinstance(n, ast.ExceptHandler):
                    stack.extend(n.body)
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for t in _targets(mod, is_pkg, node, mods):
                    if t != mod:
                        found.append((mod, t, id(node) in top))
    return mods, found


def test_the_checker_sees_the_package():
    mods, found = _imports()
    assert "toksmith.tokenizer" in mods and "toksmith.files.tiktoken" in mods
    assert ("toksmith.tokenizer", "toksmith.pretokenize", True) in found
    # a function-level import is found as one (this module's own example)
    tree = ast.parse("def f():\n    from .tokenizer import Tokenizer\n")
    node = tree.body[0].body[0]
    assert _targets("toksmith.x", False, node, mods) == ["toksmith.tokenizer"]


def test_no_function_level_imports_of_toksmith():
    _, found = _imports()
    deferred = sorted(
        f"{m} imports {t} inside a function"
        for m, t, top in found
        if not top and not m.startswith(DEFERRED_IMPORTS_ALLOWED)
    )
    assert deferred == []


def test_no_import_cycles():
    mods, found = _imports()
    graph = {m: set() for m in mods}
    for m, t, _ in found:
        if t in graph:
            graph[m].add(t)
    # Tarjan's strongly connected components (iterative: no recursion limit)
    index, low, on_stack, stack, cycles = {}, {}, set(), [], []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    cycles.append(sorted(comp))
    assert cycles == []
