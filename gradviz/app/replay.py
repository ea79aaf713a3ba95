"""What a replay from the start would do again outside the script (trusted mode).

Going back past the steps the window keeps re-runs the script from its first line, with
the same seeds: its tensors come back the same, but whatever it did to the world
(files written, folders made, processes started, downloads) happens again. Before such a
replay the window says which lines will repeat which of those. Torch- and Qt-free: a
reading of the script's syntax tree, so it can only name calls it can see.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

#: dotted call names (their last parts) that act outside the script
OUTSIDE = {
    "torch.save": "writes a file",
    "np.save": "writes a file", "np.savez": "writes a file", "np.savetxt": "writes a file",
    "numpy.save": "writes a file", "numpy.savez": "writes a file",
    "os.remove": "deletes a file", "os.unlink": "deletes a file", "os.rename": "renames a file",
    "os.replace": "moves a file", "os.makedirs": "makes folders", "os.mkdir": "makes a folder",
    "os.rmdir": "deletes a folder", "os.system": "runs a program",
    "shutil.rmtree": "deletes a folder", "shutil.copy": "copies a file",
    "shutil.copyfile": "copies a file", "shutil.move": "moves a file",
    "subprocess.run": "runs a program", "subprocess.Popen": "runs a program",
    "subprocess.call": "runs a program", "subprocess.check_call": "runs a program",
    "subprocess.check_output": "runs a program",
    "urllib.request.urlretrieve": "downloads", "urllib.request.urlopen": "downloads",
    "requests.get": "downloads", "requests.post": "sends a request",
}
#: method names that write wherever they are called (pathlib, pandas, matplotlib, writers)
METHODS = {
    "write_text": "writes a file", "write_bytes": "writes a file", "mkdir": "makes a folder",
    "unlink": "deletes a file", "to_csv": "writes a file", "savefig": "writes a file",
    "add_scalar": "writes a log", "to_parquet": "writes a file",
}


@dataclass(frozen=True)
class Effect:
    line: int
    call: str
    what: str


def _dotted(node: ast.expr) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _writes(call: ast.Call) -> bool:
    """open(path, mode) with a mode that writes, appends or creates."""
    mode = call.args[1] if len(call.args) > 1 else next(
        (k.value for k in call.keywords if k.arg == "mode"), None)
    return isinstance(mode, ast.Constant) and isinstance(mode.value, str) and any(
        c in mode.value for c in "wax+")


def outside_effects(source: str) -> list[Effect]:
    """The calls in ``source`` that act outside the script, in line order."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    found: list[Effect] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _dotted(node.func)
        if name is None:
            if isinstance(node.func, ast.Attribute) and node.func.attr in METHODS:
                name = f"….{node.func.attr}"  # Path("out.txt").write_text(...)
            else:
                continue
        last_two = ".".join(name.split(".")[-2:])
        if name in ("open", "io.open") and _writes(node):
            found.append(Effect(node.lineno, name, "writes a file"))
        elif name in OUTSIDE or last_two in OUTSIDE:
            found.append(Effect(node.lineno, name, OUTSIDE.get(name) or OUTSIDE[last_two]))
        elif "." in name and name.rsplit(".", 1)[1] in METHODS:
            found.append(Effect(node.lineno, name, METHODS[name.rsplit(".", 1)[1]]))
    return sorted(found, key=lambda e: (e.line, e.call))


def replay_note(source: str, statements: list[tuple[int, int]], upto: int) -> str | None:
    """What going back by a replay would repeat: ``statements`` are (line, end_line) of
    each top-level statement, ``upto`` how many of them the replay runs again."""
    spans = statements[:max(upto, 0)]
    effects = [e for e in outside_effects(source)
               if any(first <= e.line <= last for first, last in spans)]
    if not effects:
        return None
    shown = "; ".join(f"line {e.line} {e.what} ({e.call})" for e in effects[:4])
    more = f"; and {len(effects) - 4} more" if len(effects) > 4 else ""
    return (
        "Going back re-runs the script from its first line, with the same seeds: what it "
        f"did outside itself happens again: {shown}{more}."
    )
