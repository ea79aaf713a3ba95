"""The engine: the torch side of gradviz, run in the kernel process (or in-process by the
library API).

It runs scripts (:mod:`.session`; restricted mode's interpreter :mod:`.sandbox` with
its op guard :mod:`.guards` and OS confinement :mod:`.confine`; trusted mode's line
tracer :mod:`.pyengine`), captures the autograd graph (:mod:`.capture`,
:mod:`.modules`) and records backward passes (:mod:`.backward`). What it produces
leaves as plain data through :mod:`gradviz.graph` (torch-free), so the window never
imports this package: ``tests/test_import_contracts.py`` checks that.
"""
