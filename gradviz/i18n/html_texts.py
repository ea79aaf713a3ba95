"""Every word of the interactive HTML page (:mod:`gradviz.html_view`), context ``HtmlView``.

lupdate cannot read the page's script (``html_view.js``: its parser stops at modern
syntax), so its texts are marked here, where lupdate reads them, and translated in
``gradviz_<lang>.ts`` like the window's. The page carries the chosen language's
translations as JSON (``data.messages``, English -> translation) and its script looks
each text up with ``tr("English {name}", {name: ...})``, English when there is no entry.
``html_view.py`` looks its own texts (the static page, the pictures' titles, the notes)
up with :func:`page_text`.

A text here is the English the script or ``html_view.py`` writes, byte for byte: named
placeholders, one text per count where English has two forms. tests/test_i18n_html.py
fails when the script shows a text that is not here, when a text here has no
translation, and when one is no longer used.
"""

from __future__ import annotations

from gradviz.i18n import QT_TRANSLATE_NOOP, catalog, messages

__all__ = ["CONTEXT", "TEXTS", "page_messages", "page_text"]

CONTEXT = "HtmlView"

TEXTS: tuple[str, ...] = (
    # the page's frame (html_view.py's _BODY)
    QT_TRANSLATE_NOOP("HtmlView", "Fit"),
    QT_TRANSLATE_NOOP("HtmlView", "Fit the graph to the window (0)"),
    QT_TRANSLATE_NOOP("HtmlView", "Zoom in (+ or the mouse wheel)"),
    QT_TRANSLATE_NOOP("HtmlView", "Zoom out (-)"),
    QT_TRANSLATE_NOOP("HtmlView", "Which picture of the graph: expanded, or grouped"),
    QT_TRANSLATE_NOOP("HtmlView", "Find a node (/)"),
    QT_TRANSLATE_NOOP("HtmlView", "Find a node: a name, an op, a module or a shape (Enter: the next one)"),
    QT_TRANSLATE_NOOP("HtmlView", "Backward passes"),
    QT_TRANSLATE_NOOP("HtmlView", "Before the first pass (Home)"),
    QT_TRANSLATE_NOOP("HtmlView", "Back to the end of the previous pass (Shift+Left, Page Up)"),
    QT_TRANSLATE_NOOP("HtmlView", "Back one step (Left)"),
    QT_TRANSLATE_NOOP("HtmlView", "One engine step (Right)"),
    QT_TRANSLATE_NOOP("HtmlView", "To the end of this pass, then of the next (Shift+Right, Page Down)"),
    QT_TRANSLATE_NOOP("HtmlView", "After the last pass (End)"),
    QT_TRANSLATE_NOOP("HtmlView", "Jump to a pass"),
    QT_TRANSLATE_NOOP("HtmlView", "Inspector"),
    QT_TRANSLATE_NOOP("HtmlView", "Leaf .grad"),
    QT_TRANSLATE_NOOP("HtmlView", "Modules"),
    QT_TRANSLATE_NOOP("HtmlView", "gradviz interactive graph"),
    QT_TRANSLATE_NOOP(
        "HtmlView",
        "gradviz: this notebook is not trusted, so its interactive graph is hidden. Trust the "
        "notebook (File > Trust Notebook) or run the cell again to see it; the static picture "
        "is in the same output as SVG.",
    ),
    # a graph too big for a page (html_view.PageTooBig: gradviz export prints it)
    QT_TRANSLATE_NOOP(
        "HtmlView",
        "the graph has {nodes} nodes and {edges} edges, more than an HTML page takes "
        "({limit} nodes + edges): building it would take minutes and hundreds of MB. "
        "Export it as .svg, .json or .graphml instead, or open it in the window "
        "(gradviz open)",
    ),
    # the page's data (html_view.py): titles, pictures, notes, what changed a leaf's .grad
    QT_TRANSLATE_NOOP("HtmlView", "autograd graph, {n} node"),
    QT_TRANSLATE_NOOP("HtmlView", "autograd graph, {n} nodes"),
    QT_TRANSLATE_NOOP("HtmlView", "Everything expanded"),
    QT_TRANSLATE_NOOP("HtmlView", "Modules collapsed"),
    QT_TRANSLATE_NOOP("HtmlView", "Linear chains collapsed"),
    QT_TRANSLATE_NOOP(
        "HtmlView",
        "No collapsed-modules picture: collapsing the one top block would hide only "
        "{hidden} of {total} nodes.",
    ),
    QT_TRANSLATE_NOOP(
        "HtmlView",
        "No collapsed-modules picture: collapsing the {blocks} top blocks would hide only "
        "{hidden} of {total} nodes.",
    ),
    QT_TRANSLATE_NOOP("HtmlView", "No collapsed-modules picture: it would make the page too big."),
    QT_TRANSLATE_NOOP(
        "HtmlView", "No collapsed-chains picture: it would hide only {hidden} of {total} nodes."
    ),
    QT_TRANSLATE_NOOP("HtmlView", "No collapsed-chains picture: it would make the page too big."),
    QT_TRANSLATE_NOOP(
        "HtmlView",
        "{n} grouped picture left out: building the page ran past its {seconds} s time budget.",
    ),
    QT_TRANSLATE_NOOP(
        "HtmlView",
        "{n} grouped pictures left out: building the page ran past its {seconds} s time budget.",
    ),
    QT_TRANSLATE_NOOP("HtmlView", "backward #{n}"),
    QT_TRANSLATE_NOOP("HtmlView", "grad #{n}"),
    QT_TRANSLATE_NOOP("HtmlView", "zeroed"),
    QT_TRANSLATE_NOOP("HtmlView", "assigned"),
    QT_TRANSLATE_NOOP("HtmlView", "set to None"),
    QT_TRANSLATE_NOOP("HtmlView", "as saved"),
    QT_TRANSLATE_NOOP("HtmlView", "{n} node"),
    QT_TRANSLATE_NOOP("HtmlView", "{n} nodes"),
    # the script (html_view.js): the legend and the bar
    QT_TRANSLATE_NOOP("HtmlView", "backward step"),
    QT_TRANSLATE_NOOP("HtmlView", "{title} · {n} backward pass"),
    QT_TRANSLATE_NOOP("HtmlView", "{title} · {n} backward passes"),
    QT_TRANSLATE_NOOP("HtmlView", "{block} open"),
    QT_TRANSLATE_NOOP("HtmlView", "{pass}: {where}"),
    QT_TRANSLATE_NOOP("HtmlView", "{pass} (fails)"),
    QT_TRANSLATE_NOOP("HtmlView", "after the last pass"),
    QT_TRANSLATE_NOOP("HtmlView", "{n} box"),
    QT_TRANSLATE_NOOP("HtmlView", "{n} boxes"),
    QT_TRANSLATE_NOOP("HtmlView", "{n} edge"),
    QT_TRANSLATE_NOOP("HtmlView", "{n} edges"),
    QT_TRANSLATE_NOOP("HtmlView", "zoom {zoom}%"),
    QT_TRANSLATE_NOOP("HtmlView", "zoom in for labels"),
    QT_TRANSLATE_NOOP("HtmlView", "some edges drawn unrouted (routing ran past its time)"),
    QT_TRANSLATE_NOOP("HtmlView", "no node matches “{text}”"),
    # the backward pass being replayed
    QT_TRANSLATE_NOOP("HtmlView", "{source} (line {line})"),
    QT_TRANSLATE_NOOP("HtmlView", "{source} (line {line}, iteration {n})"),
    QT_TRANSLATE_NOOP("HtmlView", "graph of backward #{n}"),
    QT_TRANSLATE_NOOP("HtmlView", "Drawn from what this pass recorded: the graph it ran over was freed before the last one was built, which the other pictures show."),
    QT_TRANSLATE_NOOP("HtmlView", "This pass ran over an earlier graph, which the page does not hold: it is replayed on the last graph, where only the nodes both share light up."),
    QT_TRANSLATE_NOOP("HtmlView", "a node of this pass's own graph"),
    QT_TRANSLATE_NOOP("HtmlView", "{node} received {grads} and sends {sends}"),
    QT_TRANSLATE_NOOP("HtmlView", "{node} received {grads} and adds it into .grad"),
    QT_TRANSLATE_NOOP("HtmlView", "{node} received {grads}"),
    QT_TRANSLATE_NOOP("HtmlView", "No backward pass was recorded: there is nothing to replay."),
    QT_TRANSLATE_NOOP("HtmlView", "after pass {k} of {n}"),
    QT_TRANSLATE_NOOP("HtmlView", "The end: every pass has run; .grad holds what was saved."),
    QT_TRANSLATE_NOOP("HtmlView", "pass {k} of {n} · step {step} of {steps}"),
    QT_TRANSLATE_NOOP("HtmlView", "Failed: {error}"),
    QT_TRANSLATE_NOOP("HtmlView", "Ready: ▶ (or →) runs its first engine step."),
    QT_TRANSLATE_NOOP("HtmlView", "Pass done."),
    QT_TRANSLATE_NOOP("HtmlView", "Pass done. {grads}"),
    QT_TRANSLATE_NOOP("HtmlView", "{grads}, … ({n} leaves)"),
    QT_TRANSLATE_NOOP("HtmlView", "Then failed: {error}"),
    # the leaves' .grad
    QT_TRANSLATE_NOOP("HtmlView", "No leaf received a gradient."),
    QT_TRANSLATE_NOOP("HtmlView", "leaf"),
    QT_TRANSLATE_NOOP("HtmlView", ".grad now"),
    QT_TRANSLATE_NOOP("HtmlView", "after"),
    QT_TRANSLATE_NOOP("HtmlView", "No plottable .grad history (summaries of big tensors)."),
    QT_TRANSLATE_NOOP("HtmlView", ".grad after each event: {names}"),
    QT_TRANSLATE_NOOP("HtmlView", "‖.grad‖ (norm) after each event: {names}"),
    QT_TRANSLATE_NOOP("HtmlView", "{name}.grad = {value} ({when})"),
    QT_TRANSLATE_NOOP("HtmlView", "{name}.grad norm = {value} ({when})"),
    # the inspector
    QT_TRANSLATE_NOOP(
        "HtmlView",
        "Click a node to inspect it. Drag to pan, wheel to zoom; ← → step the backward pass.",
    ),
    QT_TRANSLATE_NOOP("HtmlView", "linear chain"),
    QT_TRANSLATE_NOOP("HtmlView", "collapsed module"),
    QT_TRANSLATE_NOOP("HtmlView", "nodes"),
    QT_TRANSLATE_NOOP("HtmlView", "ops"),
    QT_TRANSLATE_NOOP("HtmlView", "pass {n}"),
    QT_TRANSLATE_NOOP("HtmlView", "{done} of {total} steps run"),
    QT_TRANSLATE_NOOP("HtmlView", "Expand"),
    QT_TRANSLATE_NOOP("HtmlView", "Show the nodes inside (double-click)"),
    QT_TRANSLATE_NOOP("HtmlView", "scalar"),
    QT_TRANSLATE_NOOP("HtmlView", "saved tensor"),
    QT_TRANSLATE_NOOP("HtmlView", "variables"),
    QT_TRANSLATE_NOOP("HtmlView", "module"),
    QT_TRANSLATE_NOOP("HtmlView", "storage"),
    QT_TRANSLATE_NOOP("HtmlView", "created by"),
    QT_TRANSLATE_NOOP("HtmlView", "line {line}: {source}"),
    QT_TRANSLATE_NOOP("HtmlView", "Saved for backward"),
    QT_TRANSLATE_NOOP("HtmlView", "Saved for backward (freed)"),
    QT_TRANSLATE_NOOP("HtmlView", "tensor"),
    QT_TRANSLATE_NOOP("HtmlView", "stale"),
    QT_TRANSLATE_NOOP("HtmlView", "freed by backward"),
    QT_TRANSLATE_NOOP("HtmlView", "nothing"),
    QT_TRANSLATE_NOOP("HtmlView", "value"),
    QT_TRANSLATE_NOOP("HtmlView", "grad (as saved)"),
    QT_TRANSLATE_NOOP("HtmlView", "{name}.grad now"),
    QT_TRANSLATE_NOOP("HtmlView", "In {pass}"),
    QT_TRANSLATE_NOOP("HtmlView", "The engine does not run this node in this pass."),
    QT_TRANSLATE_NOOP("HtmlView", "ran at step {n}"),
    QT_TRANSLATE_NOOP("HtmlView", "running now (step {n})"),
    QT_TRANSLATE_NOOP("HtmlView", "runs at step {n}"),
    QT_TRANSLATE_NOOP("HtmlView", "status"),
    QT_TRANSLATE_NOOP("HtmlView", "grad in"),
    QT_TRANSLATE_NOOP("HtmlView", "grad in [{n}]"),
    QT_TRANSLATE_NOOP("HtmlView", "grad out → {target}"),
    QT_TRANSLATE_NOOP("HtmlView", "grad out"),
    QT_TRANSLATE_NOOP("HtmlView", "added into .grad"),
    QT_TRANSLATE_NOOP("HtmlView", "Collapse {block}"),
    QT_TRANSLATE_NOOP("HtmlView", "Show this block as one box again"),
    # the modules panel
    QT_TRANSLATE_NOOP("HtmlView", "Collapse all"),
    QT_TRANSLATE_NOOP("HtmlView", "Each top block as one box"),
    QT_TRANSLATE_NOOP("HtmlView", "Collapse chains"),
    QT_TRANSLATE_NOOP("HtmlView", "Each run of one-to-one ops as one box"),
    QT_TRANSLATE_NOOP("HtmlView", "Expand all"),
    QT_TRANSLATE_NOOP("HtmlView", "Every node"),
    QT_TRANSLATE_NOOP("HtmlView", "Open this block (the others stay collapsed)"),
    QT_TRANSLATE_NOOP("HtmlView", "Too many blocks to open one at a time: use Expand all."),
)


def page_messages(language: str) -> dict[str, str]:
    """English -> ``language`` for every text of the page that has a translation (empty
    for English): what the page embeds for its script."""
    found = messages(CONTEXT, language)
    return {text: found[text] for text in TEXTS if text in found}


def page_text(language: str, text: str, **values: object) -> str:
    """``text`` (one of :data:`TEXTS`) in ``language``, its ``{name}`` placeholders filled."""
    found = catalog(language).get((CONTEXT, text, ""), text)
    return found.format(**values) if values else found
