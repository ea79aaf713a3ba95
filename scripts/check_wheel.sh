#!/usr/bin/env bash
# Test gradviz as a user gets it: build the sdist, build the wheel from that sdist,
# install the wheel into a fresh virtual environment (its own torch, no source tree
# on any path), and use it from an unrelated folder: the commands, an export, a
# snapshot file, and the window (offscreen) on a demo.
#   bash scripts/check_wheel.sh
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/gradviz-wheel-XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail() { echo "check_wheel: $*" >&2; exit 1; }

# 1. The sdist carries what builds and tests the package (setuptools' own PEP 517
#    hook, so no extra build tool is needed).
python3 -c "import sys; from setuptools import build_meta as b; print(b.build_sdist(sys.argv[1]))" \
  "$work/sdist" >/dev/null
sdist="$(ls "$work"/sdist/*.tar.gz)"
listing="$(tar -tzf "$sdist")"
for f in LICENSE tests/conftest.py tests/helpers.py resources/demos/03_retain_graph.py \
         gradviz/graph/snapshot.schema.json; do
  grep -q "/$f\$" <<<"$listing" || fail "the sdist lacks $f"
done

# 2. The wheel, built from the sdist alone.
python3 -m pip wheel -q --no-deps -w "$work/dist" "$sdist"
wheel="$(ls "$work"/dist/*.whl)"
case "$(basename "$wheel")" in gradviz_autograd-*) ;; *) fail "unexpected wheel $wheel" ;; esac

# 3. A fresh venv: torch pinned as in scripts/setup.sh (a bare requirement pulls CUDA).
python3 -m venv "$work/venv"
py="$work/venv/bin/python"
"$py" -m pip install -q torch==2.13.0
"$py" -m pip install -q "$wheel"
export PATH="$work/venv/bin:$PATH"
elsewhere="$work/elsewhere"
mkdir -p "$elsewhere"
cd "$elsewhere"
export GRADVIZ_SETTINGS_DIR="$work/settings" GRADVIZ_DATA_DIR="$work/data"

where="$("$py" -c 'import gradviz, os; print(os.path.dirname(gradviz.__file__))')"
case "$where" in "$work/venv/"*) ;; *) fail "gradviz imported from $where, not the venv" ;; esac

# 4. The commands.
want="gradviz $(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$repo/gradviz/__init__.py")"
[ "$(gradviz --version)" = "$want" ] || fail "gradviz --version says '$(gradviz --version)', not '$want'"
lines="$(gradviz demos | wc -l)"
[ "$lines" -eq 12 ] || fail "gradviz demos printed $lines lines, not 12"
set +e
gradviz run --demo retain_graph --json --keep-going >"$work/report.json"
code=$?
set -e
[ "$code" -eq 1 ] || fail "gradviz run --demo retain_graph exited $code (its third backward fails: 1)"
"$py" - "$work/report.json" <<'EOF'
import json, sys
report = json.load(open(sys.argv[1]))
assert [round(v, 4) for v in report["grad_history"]["x"]] == [0.6, 1.2], report["grad_history"]
assert [p["retain_graph"] for p in report["backward_passes"][:2]] == [True, False]
EOF
gradviz export --demo two_paths -o "$elsewhere/two_paths.svg" >/dev/null
"$py" -c "import sys, xml.etree.ElementTree as ET; ET.parse(sys.argv[1])" "$elsewhere/two_paths.svg"

# 5. A snapshot made by the library, exported, refused by run, checked when damaged.
"$py" - "$elsewhere/run.gradviz.json" <<'EOF'
import sys, torch, gradviz
x = torch.tensor(2.0, requires_grad=True)
with gradviz.record() as rec:
    z = x ** 3
    z.backward(None, True)
    z.backward()
snap = gradviz.snapshot(z, names={"x": x}, recorder=rec)
assert snap["grad_history"]["x"] == [12.0, 24.0], snap["grad_history"]
assert snap._repr_svg_().startswith("<svg") and len(snap._repr_html_()) > 0
snap.save(sys.argv[1])
EOF
gradviz export "$elsewhere/run.gradviz.json" -o "$elsewhere/run.svg" | grep -q "nodes" \
  || fail "gradviz export of a snapshot file drew nothing"
grep -q "PowBackward0" "$elsewhere/run.svg" || fail "the snapshot's SVG lacks its graph"
if gradviz run "$elsewhere/run.gradviz.json" 2>"$work/err.txt"; then
  fail "gradviz run accepted a snapshot file as a script"
fi
grep -q "gradviz open" "$work/err.txt" || fail "gradviz run did not suggest gradviz open"
echo '{"format": "gradviz-snapshot", "version": 1, "graph": {"nodes": [7], "edges": []}, "tensors": {}}' \
  >"$elsewhere/bad.gradviz.json"
if gradviz export "$elsewhere/bad.gradviz.json" -o "$elsewhere/bad.svg" 2>"$work/err.txt"; then
  fail "a damaged snapshot was exported"
fi
grep -q "graph.nodes\[0\]" "$work/err.txt" || fail "the damaged snapshot's message does not say where"
! grep -q Traceback "$work/err.txt" || fail "a damaged snapshot gave a traceback"

# 6. The window, offscreen: the command's own path, then a demo stepped to its end.
export QT_QPA_PLATFORM=offscreen
command -v gradviz-app >/dev/null || fail "no gradviz-app launcher"
timeout 300 gradviz window --demo retain_graph --quit-after 5
timeout 300 "$py" - <<'EOF'
import time
from PySide6.QtCore import QCoreApplication
from gradviz.ui.app import create_application
from gradviz.ui import main_window as mw

app = create_application()
window = mw.MainWindow()
window.show()
window.open_initial(demo="two_paths")
deadline = time.monotonic() + 240
def idle():
    return window.client.is_ready and window.state is not None and not window.busy
while not idle() and time.monotonic() < deadline:
    QCoreApplication.processEvents()
    time.sleep(0.02)
assert idle(), "the kernel never answered"
assert len(window.demo_actions) == 12, window.demo_actions
window.run_to_end()
while (window.busy or not window.state.get("at_end")) and time.monotonic() < deadline:
    QCoreApplication.processEvents()
    time.sleep(0.02)
assert window.state.get("at_end"), "Run to end did not finish"
assert window.canvas.node_ids(), "the canvas is empty"
mw.ask_unsaved_changes = lambda *a, **k: mw.QMessageBox.StandardButton.Discard
window.close()
print(f"window: {len(window.canvas.node_ids())} nodes drawn for two_paths")
EOF
echo "check_wheel: the installed wheel works ($(basename "$wheel"))"
