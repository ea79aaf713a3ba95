#!/usr/bin/env bash
# Set up gradviz on a fresh machine: Qt's system libraries (Debian/Ubuntu, as root),
# torch pinned to the CPU build this project is tested with, then gradviz itself.
#   bash scripts/setup.sh          # to run the app
#   bash scripts/setup.sh --test   # also pytest, pytest-qt and ruff
set -euo pipefail
cd "$(dirname "$0")/.."

extra=""
if [ "${1:-}" = "--test" ]; then
  extra="[test]"
fi

# PySide6's wheels carry Qt but load GL, fonts, xkb and xcb from the system;
# libseccomp2 backs the kernel's syscall filter (gradviz/core/confine.py);
# fonts-nanum covers Hangul (the seed lessons' readers write Korean comments and
# prints: without a CJK font every Korean character is an empty box).
if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = "0" ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq || true
  apt-get install -y -qq --no-install-recommends \
    libgl1 libegl1 libopengl0 libxkbcommon0 libxkbcommon-x11-0 libfontconfig1 libfreetype6 \
    libdbus-1-3 libglib2.0-0 fonts-dejavu-core fonts-nanum libseccomp2 \
    libxcb1 libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-randr0 \
    libxcb-render-util0 libxcb-shape0 libxcb-xfixes0 libxcb-xinerama0 libxcb-xkb1 \
    >/dev/null || echo "setup: some system libraries could not be installed; Qt may not start" >&2
elif command -v apt-get >/dev/null 2>&1; then
  echo "setup: not root, skipping system libraries (Qt needs libEGL, libxkbcommon, fontconfig)" >&2
fi

# torch first, pinned: a bare requirement would pull a multi-GB CUDA build
# (elsewhere: pip install torch --index-url https://download.pytorch.org/whl/cpu).
python3 -m pip install -q torch==2.13.0
# This project was once installed under the distribution name "gradviz" (taken on
# PyPI by another project); an old editable install of it would shadow this one.
if python3 -m pip show gradviz 2>/dev/null | grep -q "^Summary: Step through PyTorch autograd"; then
  python3 -m pip uninstall -q -y gradviz
fi
python3 -m pip install -q -e ".${extra}"
# Bytecode, as pip writes it when it installs a wheel: an editable install has none for
# the modules only the kernel imports (the session, the sandbox, the guards, the capture),
# and a confined kernel (restricted mode) never writes any (gradviz.runner.kernel_environment),
# so each of its starts compiled them from source again, about 0.1 s; so did every process
# where the environment sets PYTHONDONTWRITEBYTECODE. (A module edited since is compiled in
# memory again until this runs again.)
python3 -m compileall -q gradviz >/dev/null \
  || echo "setup: gradviz could not be byte-compiled; kernels start about 0.1 s slower" >&2
# The window's translations: compile gradviz/i18n/*.ts to the .qm files Qt loads, with the
# lrelease that the PySide6-Essentials wheel ships (pyside6-lrelease).
python3 -m gradviz.i18n.build >/dev/null \
  || echo "setup: no lrelease; the window uses the committed gradviz/i18n/*.qm" >&2

# --test: the HTML view's browser tests (tests/test_html_view.py) drive Debian's
# chromium through its chromedriver with selenium; where these are missing they skip.
if [ -n "$extra" ]; then
  if ! command -v chromedriver >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 \
    && [ "$(id -u)" = "0" ]; then
    apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null \
      || echo "setup: chromium could not be installed; the browser tests will skip" >&2
  fi
  python3 -m pip install -q "selenium>=4.11"
fi
