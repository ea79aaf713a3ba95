"""The window's application layer: free of Qt and torch, testable on its own.

:mod:`gradviz.app.models` decodes the kernel's replies once, at the border, into
typed, frozen objects every panel reads (``AppState.of(state)``); the other
modules here hold the window's logic as data (what the guide says, the
timeline, files, snapshots, ...).

Import from the submodules; this package module imports nothing, so each
submodule loads only what it needs.
"""
