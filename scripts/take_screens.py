"""Screenshots of every demo, as a user sees them: ``docs/screens/<demo>-<size>-<theme>.png``.

Run under a real X server (the window, its fonts and its palette as on a desktop)::

    xvfb-run -a -s "-screen 0 1600x1000x24" python scripts/take_screens.py [--theme light|dark]

Each demo is loaded in a fresh window of each size, run to its end, and, when it
called backward(), stepped one engine step into its first pass (F7) so the
canvas shows the backward highlight. ``--theme`` picks the palette through
``GRADVIZ_THEME`` (the app's own switch); without it both are taken, one
process each.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's gradviz, installed or not
SIZES = ((1400, 900), (1024, 700))


def _wait(app, until, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while not until():
        if time.monotonic() > end:
            raise TimeoutError("the window did not settle")
        app.processEvents()
        time.sleep(0.01)


def shoot(theme: str, out: Path, only: list[str]) -> None:
    os.environ["GRADVIZ_THEME"] = theme
    from gradviz.app.demos import list_demos
    from gradviz.ui.app import create_application

    app = create_application(["gradviz"])
    out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="gradviz-screens-"))
    for demo in list_demos():
        if only and demo.name not in only:
            continue
        for width, height in SIZES:
            path = out / f"{demo.name}-{width}x{height}-{theme}.png"
            _shoot_one(app, demo, width, height, tmp, path)
            print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path, flush=True)


def _shoot_one(app, demo, width: int, height: int, tmp: Path, path: Path) -> None:
    from PySide6.QtCore import QSettings

    from gradviz.ui.main_window import MainWindow

    settings = QSettings(str(tmp / f"{demo.name}-{width}.ini"), QSettings.Format.IniFormat)
    settings.setValue("launched", True)
    w = MainWindow(settings=settings, data_dir=tmp / "data")
    w.resize(width, height)
    w.show()
    w.files.load_demo(demo, ask=False)

    def settled() -> bool:
        return w.client.is_ready and w.state is not None and not w.busy

    _wait(app, settled)
    # run to the end; a demo that fails on purpose (a lesson about an error) runs on past it
    for _ in range(10):
        w.run_to_end()
        _wait(app, settled)
        if w.at_end():
            break
        w.step()
        _wait(app, settled)
    if w.replay.available():
        w.replay.backward_step()
    _wait(app, lambda: not w.layout_pending)
    for _ in range(20):
        app.processEvents()
        time.sleep(0.02)
    w.grab().save(str(path))
    w.editor.document().setModified(False)
    w.close()
    w.deleteLater()
    app.processEvents()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--theme", choices=("light", "dark"))
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screens")
    parser.add_argument("demos", nargs="*", help="demo names (default: all)")
    args = parser.parse_args()
    if args.theme:
        shoot(args.theme, args.out, args.demos)
        return 0
    for theme in ("light", "dark"):
        cmd = [sys.executable, __file__, "--theme", theme, "--out", str(args.out), *args.demos]
        if subprocess.run(cmd, check=False).returncode:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
