"""The graph pipeline: torch-free and Qt-free, shared by the kernel, the window and the
exporters.

The captured graph as data (:mod:`.graphdata`, :mod:`.wire`, :mod:`.delta`,
:mod:`.snapshot_file` and its schema), its picture (:mod:`.layout`, :mod:`.routing`,
:mod:`.grouping`, :mod:`.style`, :mod:`.render_svg`), what a run produced
(:mod:`.results`) and the words beside it (:mod:`.fmt`, :mod:`.explain`,
:mod:`.chain_rule`, :mod:`.statements`). Nothing here imports torch, Qt or
:mod:`gradviz.core` (``tests/test_import_contracts.py``).
"""
