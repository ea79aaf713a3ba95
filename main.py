"""Launch the gradviz window (``python main.py``); same as the ``gradviz`` command."""

from gradviz.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
