"""Side panels: tensors, .grad accumulation, memory, inspector, output, modules.

Every panel is handed the kernel's state, as a typed :class:`~gradviz.app.models.AppState`
or as the wire dict (``AppState.of`` decodes it once; see
``docs/snapshot-example.json``), and renders it. No autograd logic lives here:
the numbers come from the kernel; the panels only format (through
:mod:`gradviz.graph.fmt`, the one formatter), sort and colour.

One module per panel (superqt's one feature per module), the chart apart:
:mod:`.tensors`, :mod:`.accumulation`, :mod:`.memory`, :mod:`.modules`,
:mod:`.inspector`, :mod:`.output`, :mod:`.plot` (MiniPlot), and :mod:`._common`
(row tints, reading the state, table cells that fit their text).

The panels are read at 1024x700 as well as at 1400x900: tables fit their
columns to what they show (the numbers a learner reads first get their room,
long values are elided with the whole value in the tooltip), byte counts use the
short form in cells and the full one in tooltips, and every widget has an
accessible name.
"""

from __future__ import annotations

from .accumulation import AccumulationPanel
from .inspector import InspectorPanel
from .memory import MemoryPanel
from .modules import ModulesPanel
from .output import OutputEntry, OutputPanel
from .plot import MiniPlot, Series, nice_ticks
from .tensors import TensorsPanel

__all__ = [
    "AccumulationPanel",
    "InspectorPanel",
    "MemoryPanel",
    "MiniPlot",
    "ModulesPanel",
    "OutputEntry",
    "OutputPanel",
    "Series",
    "TensorsPanel",
    "nice_ticks",
]
