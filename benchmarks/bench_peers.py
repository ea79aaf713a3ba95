"""gradviz against what users run today: torchviz (and torchview, torchlens where installed).

The one command (default graphs, 3 fresh processes per cell; about 25 minutes
on a 2-core machine, most of it torchviz ``show_saved`` and torchlens on the
chains and ``dot`` on the 96-layer encoder):

    QT_QPA_PLATFORM=offscreen python3 benchmarks/bench_peers.py --json bench_peers.json

``--quick`` is a smoke test (one 500-op chain, 3 processes per cell),
``--graphs chain5k,gpt2`` picks graphs, ``--big`` adds the 50k- and 100k-op
stress chains, ``--repeat N`` processes per cell (default 3), ``--timeout S``
per process (default 300), ``--tools`` picks tools, ``--json PATH`` writes
every raw figure.

Every measurement runs in a fresh ``python -c`` process (no import caches, GC
state or warmed allocator leak between tools), and the tools alternate within
each repetition (the order rotates every repetition). The child builds the
graph (seeded, untimed), imports what it needs (untimed), then times only the
tool's work with ``time.perf_counter`` and reports it; the table shows the
minimum and median over the processes. What each tool's time covers:

- gradviz: ``gradviz.snapshot(root, names=params)`` -> ``layout`` ->
  ``set_graph`` on the window's canvas (which fits the view) -> the first paint of
  the canvas into a 1400x900 QImage. The QApplication, an empty, shown
  ``GraphCanvas`` and the image (its pixels touched once, as a shown window's backing
  store's are) exist before the clock starts, as in a running window, where the
  canvas is made once at start-up and a graph arrives later: the one-off cost of
  the first widget in a process (PySide6 sets up its QtWidgets types on first use,
  about 12 ms, plus the canvas's own construction, about 5 ms) belongs to starting
  the app, which the gradviz.show column times in full.
- gradviz.show: ``gradviz.show(root, names=params)`` from its call to the end of
  the first paint of the window's canvas with the graph's nodes on it (the
  capture, QApplication and window creation, snapshot validation, the layout on
  the window's worker thread included). Timed by an application event filter
  hooked in by wrapping ``gradviz.ui.app.create_application``; nothing in
  gradviz is changed.
- torchviz: ``make_dot(root, params=params)`` + ``dot -Tsvg`` on its source
  (a subprocess, output read back), timed together; ``torchviz+saved`` the same
  with ``show_saved=True``. torchviz recurses once per graph level, so the
  recursion limit is raised to 1,000,000 (what a user must do on deep graphs).
- torchview: ``draw_graph(model, input_data=...)`` with its defaults (depth 3)
  + ``dot -Tsvg``. It traces the model's forward by running it, so the forward
  (not the loss) is inside its time, as it is for every torchview user.
- torchlens: ``torchlens.trace(model, inputs, save=None)`` + ``Trace.draw(...,
  vis_fileformat="svg")`` (runs the model's forward and Graphviz itself).

Nodes are what each tool draws: gradviz counts the canvas items, the Graphviz
tools the ``class="node"`` elements of the SVG that ``dot`` wrote. gradviz draws
saved tensors by default (``snapshot(include_saved=True)``), so its count is
closest to torchviz's ``show_saved=True``; torchview draws modules (depth 3). A failed or
timed-out process prints "failed: <reason>" / "timeout" and the run goes on
(the remaining repetitions of that cell are skipped).
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import json
import math
import os
import platform
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F  # noqa: N812
from torch import nn

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

RESULT_MARK = "BENCH_PEERS_RESULT "
TOOLS = ("gradviz", "gradviz.show", "torchviz", "torchviz+saved", "torchview", "torchlens")
TOOL_PACKAGES = {"torchviz": "torchviz", "torchviz+saved": "torchviz", "torchview": "torchview",
                 "torchlens": "torchlens"}
CANVAS_SIZE = (1400, 900)


def seed_all(seed: int = 0) -> None:
    random.seed(seed)
    torch.manual_seed(seed)


# --- the graphs -------------------------------------------------------------------------


class Chain(nn.Module):
    """``n`` unary ops from one scalar leaf: alternating cos/sin, or ``sin(y) * 1.01``."""

    def __init__(self, n: int, kind: str = "sincos"):
        super().__init__()
        self.n, self.kind = n, kind

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x
        if self.kind == "sincos":
            for i in range(self.n):
                y = y.sin() if i % 2 else y.cos()
        else:
            for _ in range(self.n):
                y = torch.sin(y) * 1.01
        return y


class CausalSelfAttention(nn.Module):
    def __init__(self, d: int, heads: int, context: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        mask = torch.tril(torch.ones(context, context, dtype=torch.bool))
        self.register_buffer("mask", mask.view(1, 1, context, context), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // self.heads))
        att = att.masked_fill(~self.mask[:, :, :t, :t], float("-inf")).softmax(dim=-1)
        return self.proj((att @ v).transpose(1, 2).contiguous().view(b, t, d))


class GPTBlock(nn.Module):
    def __init__(self, d: int, heads: int, mlp: int, context: int):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = CausalSelfAttention(d, heads, context)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, mlp), nn.GELU(approximate="tanh"), nn.Linear(mlp, d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    """A GPT-2-style decoder from nn layers; the defaults are GPT-2 small (124M parameters,
    the lm head tied to the token embedding as in GPT-2)."""

    def __init__(self, vocab: int = 50257, context: int = 1024, d: int = 768, heads: int = 12,
                 layers: int = 12, mlp: int = 3072):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(context, d)
        self.blocks = nn.ModuleList(GPTBlock(d, heads, mlp, context) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.lm_head.weight = self.tok.weight

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln_f(x))


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes: int, planes: int, stride: int = 1):
        super().__init__()
        out = planes * self.expansion
        self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, out, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(out)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = None
        if stride != 1 or inplanes != out:
            self.downsample = nn.Sequential(
                nn.Conv2d(inplanes, out, 1, stride=stride, bias=False), nn.BatchNorm2d(out)
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x if self.downsample is None else self.downsample(x)
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.relu(self.bn2(self.conv2(y)))
        return self.relu(self.bn3(self.conv3(y)) + identity)


class ResNet(nn.Module):
    """ResNet from nn layers (torchvision's layout); the defaults are ResNet-50."""

    def __init__(self, blocks: Sequence[int] = (3, 4, 6, 3), width: int = 64,
                 classes: int = 1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        inplanes, stages = width, []
        for i, count in enumerate(blocks):
            planes = width * 2**i
            layer = []
            for j in range(count):
                layer.append(Bottleneck(inplanes, planes, stride=2 if (i > 0 and j == 0) else 1))
                inplanes = planes * Bottleneck.expansion
            stages.append(nn.Sequential(*layer))
        self.layer1, self.layer2, self.layer3, self.layer4 = stages
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(inplanes, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


class RMSNorm(nn.Module):
    def __init__(self, d: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    a, b = x.chunk(2, dim=-1)
    return x * cos + torch.cat((-b, a), dim=-1) * sin


class LlamaBlock(nn.Module):
    """RMSNorm, attention with rotary positions (no biases), SwiGLU MLP."""

    def __init__(self, d: int, heads: int, hidden: int):
        super().__init__()
        self.heads = heads
        self.attn_norm = RMSNorm(d)
        self.wq, self.wk = nn.Linear(d, d, bias=False), nn.Linear(d, d, bias=False)
        self.wv, self.wo = nn.Linear(d, d, bias=False), nn.Linear(d, d, bias=False)
        self.mlp_norm = RMSNorm(d)
        self.w1, self.w3 = nn.Linear(d, hidden, bias=False), nn.Linear(d, hidden, bias=False)
        self.w2 = nn.Linear(hidden, d, bias=False)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        h = self.attn_norm(x)
        q, k, v = (w(h).view(b, t, self.heads, d // self.heads).transpose(1, 2)
                   for w in (self.wq, self.wk, self.wv))
        q, k = _rotate(q, cos, sin), _rotate(k, cos, sin)
        att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.wo(att.transpose(1, 2).reshape(b, t, d))
        h = self.mlp_norm(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


class Llama(nn.Module):
    """A LLaMA-style decoder; the defaults: 16 layers, d512, 8 heads, 32,000 vocab."""

    def __init__(self, vocab: int = 32000, d: int = 512, heads: int = 8, layers: int = 16,
                 hidden: int = 1376, context: int = 256):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList(LlamaBlock(d, heads, hidden) for _ in range(layers))
        self.norm = RMSNorm(d)
        self.out = nn.Linear(d, vocab, bias=False)
        half = d // heads // 2
        freqs = 1.0 / (10000 ** (torch.arange(half).float() / half))
        angles = torch.outer(torch.arange(context).float(), freqs).repeat(1, 2)
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        t = idx.shape[1]
        x = self.tok(idx)
        cos, sin = self.cos[:t], self.sin[:t]
        for layer in self.layers:
            x = layer(x, cos, sin)
        return self.out(self.norm(x))


class ViTBlock(nn.Module):
    def __init__(self, d: int, heads: int, mlp: int):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, mlp), nn.GELU(), nn.Linear(mlp, d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        att = ((q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // self.heads))).softmax(dim=-1)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.ln2(x))


class ViT(nn.Module):
    """A ViT from nn layers; the defaults are ViT-B/16 (86M parameters) on 224x224."""

    def __init__(self, size: int = 224, patch: int = 16, d: int = 768, heads: int = 12,
                 layers: int = 12, mlp: int = 3072, classes: int = 1000):
        super().__init__()
        self.patch = nn.Conv2d(3, d, patch, stride=patch)
        self.cls = nn.Parameter(torch.zeros(1, 1, d))
        self.pos = nn.Parameter(torch.zeros(1, (size // patch) ** 2 + 1, d))
        self.blocks = nn.ModuleList(ViTBlock(d, heads, mlp) for _ in range(layers))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat((self.cls.expand(x.shape[0], -1, -1), x), dim=1) + self.pos
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x)[:, 0])


class LSTMLM(nn.Module):
    """An LSTM language model: embedding, a 2-layer nn.LSTM, a linear head."""

    def __init__(self, vocab: int = 10000, d: int = 256, layers: int = 2):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.lstm = nn.LSTM(d, d, num_layers=layers, batch_first=True)
        self.head = nn.Linear(d, vocab)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(self.tok(idx))
        return self.head(out)


def _double_conv(cin: int, cout: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(),
        nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(),
    )


class UNet(nn.Module):
    """A U-Net with ``levels`` down and up steps (double convs, max pooling, transposed convs,
    skip connections by concatenation)."""

    def __init__(self, levels: int = 4, width: int = 32, cin: int = 3, classes: int = 2):
        super().__init__()
        widths = [width * 2**i for i in range(levels + 1)]
        self.inc = _double_conv(cin, widths[0])
        self.down = nn.ModuleList(_double_conv(widths[i], widths[i + 1]) for i in range(levels))
        self.up = nn.ModuleList(nn.ConvTranspose2d(widths[i + 1], widths[i], 2, stride=2)
                                for i in reversed(range(levels)))
        self.dec = nn.ModuleList(_double_conv(2 * widths[i], widths[i])
                                 for i in reversed(range(levels)))
        self.outc = nn.Conv2d(widths[0], classes, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        skips = [self.inc(x)]
        for down in self.down:
            skips.append(down(F.max_pool2d(skips[-1], 2)))
        y = skips.pop()
        for up, dec in zip(self.up, self.dec):
            y = dec(torch.cat((skips.pop(), up(y)), dim=1))
        return self.outc(y)


@dataclass
class Case:
    """A model, its inputs and its loss: the same computation for every tool."""

    model: nn.Module
    inputs: tuple[torch.Tensor, ...]
    loss: Callable[[torch.Tensor], torch.Tensor] = lambda out: out
    leaves: dict[str, torch.Tensor] = field(default_factory=dict)

    def root(self) -> torch.Tensor:
        return self.loss(self.model(*self.inputs))

    def names(self) -> dict[str, torch.Tensor]:
        """What torchviz gets as ``params`` and gradviz as ``names``: parameters and input leaves."""
        return {**dict(self.model.named_parameters()), **self.leaves}



def chain_case(n: int, kind: str = "sincos") -> Case:
    seed_all()
    x = torch.tensor(1.0, requires_grad=True)
    return Case(Chain(n, kind), (x,), leaves={"x": x})


def encoder_case(layers: int) -> Case:
    seed_all()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        layer = nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128)
        enc = nn.TransformerEncoder(layer, num_layers=layers)
    return Case(enc, (torch.randn(8, 2, 64),), loss=lambda out: out.sum())


def gpt_case(tokens: int = 16, **dims: int) -> Case:
    seed_all()
    model = GPT(**dims)
    vocab = model.tok.num_embeddings
    idx = torch.randint(0, vocab, (1, tokens))
    targets = torch.randint(0, vocab, (1, tokens))
    return Case(model, (idx,),
                loss=lambda logits: F.cross_entropy(logits.view(-1, vocab), targets.view(-1)))


def resnet_case(blocks: Sequence[int] = (3, 4, 6, 3), width: int = 64, classes: int = 1000,
                size: int = 224) -> Case:
    seed_all()
    model = ResNet(blocks, width, classes)
    target = torch.tensor([classes // 2])
    return Case(model, (torch.randn(1, 3, size, size),),
                loss=lambda logits: F.cross_entropy(logits, target))


def llama_case(tokens: int = 16, **dims: int) -> Case:
    seed_all()
    model = Llama(**dims)
    vocab = model.tok.num_embeddings
    idx = torch.randint(0, vocab, (1, tokens))
    targets = torch.randint(0, vocab, (1, tokens))
    return Case(model, (idx,),
                loss=lambda logits: F.cross_entropy(logits.view(-1, vocab), targets.view(-1)))


def vit_case(size: int = 224, **dims: int) -> Case:
    seed_all()
    model = ViT(size=size, **dims)
    target = torch.tensor([1])
    return Case(model, (torch.randn(1, 3, size, size),),
                loss=lambda logits: F.cross_entropy(logits, target))


def lstm_case(tokens: int = 64, **dims: int) -> Case:
    seed_all()
    model = LSTMLM(**dims)
    vocab = model.tok.num_embeddings
    idx = torch.randint(0, vocab, (1, tokens))
    targets = torch.randint(0, vocab, (1, tokens))
    return Case(model, (idx,),
                loss=lambda logits: F.cross_entropy(logits.view(-1, vocab), targets.view(-1)))


def unet_case(size: int = 64, **dims: int) -> Case:
    seed_all()
    model = UNet(**dims)
    target = torch.randint(0, 2, (1, size, size))
    return Case(model, (torch.randn(1, 3, size, size),),
                loss=lambda out: F.cross_entropy(out, target))


#: name -> (description, builder, needs --big)
GRAPHS: dict[str, tuple[str, Callable[[], Case], bool]] = {
    "chain500": ("cos/sin chain, 500 ops (--quick)", lambda: chain_case(500), False),
    "chain5k": ("cos/sin chain, 5,000 ops", lambda: chain_case(5000), False),
    "sinmul5k": ("sin(y)*1.01 x 5,000 (10,000 ops)", lambda: chain_case(5000, "sinmul"), False),
    "encoder24": ("TransformerEncoder 24 layers, d64", lambda: encoder_case(24), False),
    "encoder96": ("TransformerEncoder 96 layers, d64", lambda: encoder_case(96), False),
    "gpt2": ("GPT-2 small (12x768, 50257 vocab), 1x16", gpt_case, False),
    "resnet50": ("ResNet-50, 1x3x224x224", resnet_case, False),
    "vit": ("ViT-B/16-sized (12x768), 1x3x224x224", vit_case, False),
    "llama16": ("LLaMA-style 16 layers, d512, 1x16", llama_case, False),
    "lstm": ("LSTM language model, 2 layers d256, seq 64", lstm_case, False),
    "unet": ("U-Net, 4 levels, width 32, 1x3x64x64", unet_case, False),
    "chain50k": ("cos/sin chain, 50,000 ops (--big)", lambda: chain_case(50_000), True),
    "chain100k": ("cos/sin chain, 100,000 ops (--big)", lambda: chain_case(100_000), True),
}
DEFAULT_GRAPHS = ("chain5k", "sinmul5k", "encoder24", "encoder96", "gpt2", "resnet50", "vit",
                  "llama16", "lstm", "unet")


# --- the child process: one tool, one graph, one measurement ------------------------------


def _dot_svg(source: str) -> str:
    return subprocess.run(["dot", "-Tsvg"], input=source, capture_output=True, text=True,
                          check=True).stdout


def _svg_nodes(svg: str) -> int:
    return svg.count('class="node"')


def _run_gradviz(case: Case) -> dict[str, Any]:
    from PySide6.QtGui import QColor, QImage, QPainter
    from PySide6.QtWidgets import QApplication

    import gradviz
    import gradviz.api  # noqa: F401 - gradviz.snapshot imports it lazily: not inside the clock
    from gradviz.graph.layout import layout
    from gradviz.ui.canvas import GraphCanvas

    app = QApplication.instance() or QApplication([])
    canvas = GraphCanvas()  # the window's canvas, waiting for a graph (see the docstring)
    canvas.resize(*CANVAS_SIZE)
    canvas.show()
    app.processEvents()
    root, names = case.root(), case.names()
    # the picture's pixels exist before the graph does, as a shown window's backing store
    # does (a fresh 5 MB image's first touch, ~2 ms of page faults, is no cost of drawing)
    image = QImage(canvas.viewport().size(), QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(0)
    t0 = time.perf_counter()
    snap = gradviz.snapshot(root, names=names)
    t1 = time.perf_counter()
    positions = layout(snap["graph"])  # as the window lays out a fresh graph: from its data
    pos = {k: [float(x), float(y)] for k, (x, y) in positions.items()}
    t2 = time.perf_counter()
    canvas.set_graph(snap["graph"], pos)  # the first graph is fitted to the view here
    t3 = time.perf_counter()
    painter = QPainter(image)
    canvas.render(painter)
    painter.end()
    t4 = time.perf_counter()
    background = image.pixel(0, 0)
    step = max(1, image.width() // 200)
    inked = sum(image.pixel(x, y) != background
                for x in range(0, image.width(), step) for y in range(0, image.height(), step))
    app.processEvents()
    return {
        "seconds": t4 - t0,
        "stages": {"capture": t1 - t0, "layout": t2 - t1, "scene": t3 - t2, "paint": t4 - t3},
        "nodes": len(canvas.node_ids()),
        "edges": len(snap["graph"]["edges"]),
        "zoom": canvas.zoom_level(),
        "inked_samples": inked,
        "white": QColor(background).name(),
    }


def _run_gradviz_show(case: Case, build_s: float = 0.0) -> dict[str, Any]:
    from PySide6.QtCore import QEvent, QObject, QTimer

    import gradviz
    import gradviz.api  # noqa: F401 - imported lazily by gradviz.show: not inside the clock
    import gradviz.ui.app as app_module
    import gradviz.ui.main_window  # noqa: F401 - the same
    from gradviz.ui.canvas import GraphCanvas

    root, names = case.root(), case.names()
    marks: dict[str, float] = {}
    original = app_module.create_application

    class FirstPaint(QObject):
        def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt API)
            if event.type() == QEvent.Type.Paint and "painted" not in marks:
                view = obj.parent()
                if isinstance(view, GraphCanvas) and view.node_ids():
                    marks["painted"] = 0.0
                    # fires once this paint event has been handled
                    QTimer.singleShot(0, lambda view=view: done(view))
            return False

    def done(view: GraphCanvas) -> None:
        marks["painted"] = time.perf_counter()
        window = view.window()
        result = {
            "seconds": marks["painted"] - marks["start"],
            "stages": {"snapshot_and_app": marks["app"] - marks["start"]},
            "nodes": len(view.node_ids()),
            "window": [window.width(), window.height()],
            "zoom": view.zoom_level(),
            "build_s": build_s,
        }
        print(RESULT_MARK + json.dumps({"ok": True, **result}), flush=True)
        os._exit(0)  # the figure is out; skip the teardown

    def create_application(*args: Any, **kwargs: Any) -> Any:
        app = original(*args, **kwargs)
        marks["app"] = time.perf_counter()
        spy = FirstPaint(app)
        app.installEventFilter(spy)
        return app

    app_module.create_application = create_application
    marks["start"] = time.perf_counter()
    code = gradviz.show(root, names=names)
    raise RuntimeError(f"gradviz.show returned {code!r} before its canvas painted the graph")


def _run_torchviz(case: Case, show_saved: bool) -> dict[str, Any]:
    from torchviz import make_dot

    sys.setrecursionlimit(1_000_000)
    root, params = case.root(), case.names()
    t0 = time.perf_counter()
    dot = make_dot(root, params=params, show_saved=show_saved)
    source = dot.source
    t1 = time.perf_counter()
    svg = _dot_svg(source)
    t2 = time.perf_counter()
    return {"seconds": t2 - t0, "stages": {"make_dot": t1 - t0, "dot": t2 - t1},
            "nodes": _svg_nodes(svg)}


def _run_torchview(case: Case) -> dict[str, Any]:
    from torchview import draw_graph

    model = case.model
    inputs = list(case.inputs)
    t0 = time.perf_counter()
    graph = draw_graph(model, input_data=inputs if len(inputs) > 1 else inputs[0])
    source = graph.visual_graph.source
    t1 = time.perf_counter()
    svg = _dot_svg(source)
    t2 = time.perf_counter()
    return {"seconds": t2 - t0, "stages": {"draw_graph": t1 - t0, "dot": t2 - t1},
            "nodes": _svg_nodes(svg)}


def _run_torchlens(case: Case) -> dict[str, Any]:
    import torchlens

    model = case.model
    inputs = list(case.inputs)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "graph")
        t0 = time.perf_counter()
        trace = torchlens.trace(model, inputs if len(inputs) > 1 else inputs[0], save=None)
        t1 = time.perf_counter()
        trace.draw(vis_outpath=out, vis_fileformat="svg", vis_save_only=True)
        t2 = time.perf_counter()
        svg = Path(out + ".svg").read_text(encoding="utf-8")
    return {"seconds": t2 - t0, "stages": {"trace": t1 - t0, "draw": t2 - t1},
            "nodes": _svg_nodes(svg)}


def child_main(spec_json: str) -> None:
    """Entry point of a measurement process: prints one RESULT_MARK line."""
    spec = json.loads(spec_json)
    tool = spec["tool"]
    try:
        t = time.perf_counter()
        case = GRAPHS[spec["graph"]][1]()
        build_s = time.perf_counter() - t
        runners: dict[str, Callable[[], dict[str, Any]]] = {
            "gradviz": lambda: _run_gradviz(case),
            "gradviz.show": lambda: _run_gradviz_show(case, build_s),
            "torchviz": lambda: _run_torchviz(case, False),
            "torchviz+saved": lambda: _run_torchviz(case, True),
            "torchview": lambda: _run_torchview(case),
            "torchlens": lambda: _run_torchlens(case),
        }
        import gc

        gc.collect()
        result = {"ok": True, **runners[tool](), "build_s": build_s}
    except subprocess.CalledProcessError as exc:
        why = " ".join((exc.stderr or "").split())[-300:]
        result = {"ok": False, "error": f"dot exited {exc.returncode}: {why}"}
    except BaseException as exc:  # noqa: BLE001 - reported as the cell's failure
        result = {"ok": False, "error": f"{type(exc).__name__}: {str(exc)[:300]}"}
    print(RESULT_MARK + json.dumps(result), flush=True)


# --- the parent: schedule, summarize, print ---------------------------------------------

CHILD = ("import sys; sys.path.insert(0, {bench!r}); import bench_peers; "
         "bench_peers.child_main(sys.argv[1])")


def measure(graph: str, tool: str, timeout: float) -> dict[str, Any]:
    """One fresh process; the child's own figures plus this side's wall time."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONHASHSEED": "0",
               "GRADVIZ_SETTINGS_DIR": tmp, "GRADVIZ_DATA_DIR": tmp}
        code = CHILD.format(bench=str(Path(__file__).resolve().parent))
        spec = json.dumps({"graph": graph, "tool": tool})
        t = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-c", code, spec], cwd=tmp, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the child and its dot
            proc.communicate()
            return {"ok": False, "timeout": True, "error": f"timeout after {timeout:g} s",
                    "process_s": time.perf_counter() - t}
    process_s = time.perf_counter() - t
    load = os.getloadavg()[0]
    for line in reversed(out.splitlines()):
        if line.startswith(RESULT_MARK):
            return {**json.loads(line[len(RESULT_MARK):]), "process_s": process_s, "load": load}
    code_ = proc.returncode
    why = f"signal {signal.Signals(-code_).name}" if code_ < 0 else f"exit code {code_}"
    tail = (err.strip().splitlines() or [""])[-1][:300]
    return {"ok": False, "error": f"process died ({why}) {tail}".strip(), "process_s": process_s}


def installed(tool: str) -> bool:
    package = TOOL_PACKAGES.get(tool)
    if package is None:
        return True
    try:
        importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def summarize(runs: Sequence[dict[str, Any]], is_installed: bool = True) -> dict[str, Any]:
    """min/median of a cell's runs, or why there are none."""
    if not is_installed:
        return {"status": "not installed"}
    if not runs:
        return {"status": "not run"}
    bad = [r for r in runs if not r.get("ok")]
    if bad:
        status = "timeout" if bad[0].get("timeout") else "failed"
        return {"status": status, "error": bad[0].get("error", "")}
    times = [r["seconds"] for r in runs]
    stages: dict[str, float] = {}
    for key in runs[0].get("stages", {}):
        stages[key] = statistics.median(r["stages"][key] for r in runs)
    return {"status": "ok", "min": min(times), "median": statistics.median(times), "n": len(runs),
            "nodes": runs[0].get("nodes"), "edges": runs[0].get("edges"), "stages": stages}


def _seconds(v: float) -> str:
    return f"{v:.3f}" if v < 0.1 else f"{v:.2f}"  # a small model's 24 ms is not "0.02"


def _cell(s: dict[str, Any] | None) -> str:
    if not s:
        return "-"
    if s["status"] == "ok":
        return f"{_seconds(s['min'])}/{_seconds(s['median'])}"
    return s["status"]


def _ratio(num: dict[str, Any] | None, den: dict[str, Any] | None, timeout: float,
           key: str = "median") -> str:
    if not num or not den or den.get("status") != "ok":
        return "-"
    if num["status"] == "ok":
        return f"{num[key] / den[key]:.2f}x"
    if num["status"] == "timeout":
        return f">{timeout / den['median']:.0f}x"
    return "-"


def _nodes(s: dict[str, Any] | None) -> str:
    return str(s["nodes"]) if s and s.get("status") == "ok" and s.get("nodes") is not None else "-"


def format_tables(summary: dict[str, dict[str, dict[str, Any]]], graphs: Sequence[str],
                  timeout: float = 300.0) -> str:
    """The printed tables from ``summary[graph][tool]`` (as :func:`summarize` makes them)."""
    lines = ["min/median seconds over fresh processes; tv/gradviz = median torchviz / median "
             "gradviz (min: the same of the minimums, what a quiet machine gives), saved/gv "
             "the same for show_saved=True (>1: gradviz faster)", ""]
    head = (f"{'graph':<11}{'nodes gv/tv':>13}{'gradviz':>13}{'torchviz':>13}"
            f"{'tv show_saved':>15}{'tv/gradviz':>12}{'min':>7}{'saved/gv':>10}")
    lines += [head, "-" * len(head)]
    for g in graphs:
        row = summary.get(g, {})
        gv, tv, tvs = row.get("gradviz"), row.get("torchviz"), row.get("torchviz+saved")
        nodes = f"{_nodes(gv)}/{_nodes(tv)}"
        lines.append(f"{g:<11}{nodes:>13}{_cell(gv):>13}{_cell(tv):>13}{_cell(tvs):>15}"
                     f"{_ratio(tv, gv, timeout):>12}{_ratio(tv, gv, timeout, 'min'):>7}"
                     f"{_ratio(tvs, gv, timeout):>10}")
    lines += ["", "the whole window path and the other tools (min/median s; nodes drawn):"]
    head = (f"{'graph':<11}{'gradviz.show':>14}{'tv/show':>9}{'torchview':>13}{'nodes':>7}"
            f"{'torchlens':>13}{'nodes':>7}{'tv+saved nodes':>16}")
    lines += [head, "-" * len(head)]
    for g in graphs:
        row = summary.get(g, {})
        show, tv = row.get("gradviz.show"), row.get("torchviz")
        view, lens = row.get("torchview"), row.get("torchlens")
        lines.append(f"{g:<11}{_cell(show):>14}{_ratio(tv, show, timeout):>9}{_cell(view):>13}"
                     f"{_nodes(view):>7}{_cell(lens):>13}{_nodes(lens):>7}"
                     f"{_nodes(row.get('torchviz+saved')):>16}")
    lines += ["", "where the time goes (medians, s):"]
    head = (f"{'graph':<11}{'gv capture':>11}{'layout':>8}{'scene':>8}{'paint':>8}"
            f"{'tv make_dot':>12}{'dot':>8}{'tv+saved dot':>13}")
    lines += [head, "-" * len(head)]

    def stage(s: dict[str, Any] | None, key: str) -> str:
        if not s or s.get("status") != "ok" or key not in s.get("stages", {}):
            return "-"
        return f"{s['stages'][key]:.3f}"

    for g in graphs:
        row = summary.get(g, {})
        gv, tv, tvs = row.get("gradviz"), row.get("torchviz"), row.get("torchviz+saved")
        lines.append(f"{g:<11}{stage(gv, 'capture'):>11}{stage(gv, 'layout'):>8}"
                     f"{stage(gv, 'scene'):>8}{stage(gv, 'paint'):>8}{stage(tv, 'make_dot'):>12}"
                     f"{stage(tv, 'dot'):>8}{stage(tvs, 'dot'):>13}")
    notes = [f"  {g} / {tool}: {s['status']}: {' '.join(str(s.get('error', '')).split())}"
             for g in graphs for tool, s in summary.get(g, {}).items()
             if s.get("status") in ("failed", "timeout")]
    if notes:
        lines += ["", "failures:", *notes]
    return "\n".join(lines)


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def machine() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    dot = "not found"
    if shutil.which("dot"):
        proc = subprocess.run(["dot", "-V"], capture_output=True, text=True)
        dot = (proc.stderr or proc.stdout).strip()
    try:
        import PySide6
        from PySide6 import QtCore

        qt = f"Qt {QtCore.qVersion()} (PySide6 {PySide6.__version__})"
    except ImportError:
        qt = "PySide6 not installed"
    return {
        "cores": os.cpu_count(), "cpu": cpu, "platform": platform.platform(),
        "python": platform.python_version(), "torch": torch.__version__, "qt": qt, "dot": dot,
        "torchviz": _version("torchviz"), "torchview": _version("torchview"),
        "torchlens": _version("torchlens"), "gradviz": _version("gradviz-autograd"),
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "loadavg": list(os.getloadavg()),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one 500-op chain, a smoke test")
    parser.add_argument("--graphs", help=f"comma-separated, of: {', '.join(GRAPHS)}")
    parser.add_argument("--big", action="store_true", help="add the 50k and 100k chains")
    parser.add_argument("--repeat", type=int, default=3, help="fresh processes per cell")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per process")
    parser.add_argument("--tools", help=f"comma-separated, of: {', '.join(TOOLS)}")
    parser.add_argument("--json", help="write the raw figures here")
    args = parser.parse_args(argv)

    if args.graphs:
        graphs = [g.strip() for g in args.graphs.split(",") if g.strip()]
        unknown = [g for g in graphs if g not in GRAPHS]
        if unknown:
            parser.error(f"unknown graphs {unknown}; known: {', '.join(GRAPHS)}")
    elif args.quick:
        graphs = ["chain500"]
    else:
        graphs = list(DEFAULT_GRAPHS) + (["chain50k", "chain100k"] if args.big else [])
    tools = [t.strip() for t in args.tools.split(",")] if args.tools else list(TOOLS)
    if unknown := [t for t in tools if t not in TOOLS]:
        parser.error(f"unknown tools {unknown}; known: {', '.join(TOOLS)}")
    repeat = max(1, args.repeat)

    info = machine()
    print(f"machine: {info['cores']} cores, {info['cpu']}, {info['platform']}")
    print(f"Python {info['python']}, torch {info['torch']}, {info['qt']}, {info['dot']}")
    print(f"torchviz {info['torchviz']}, torchview {info['torchview']}, "
          f"torchlens {info['torchlens']}, gradviz {info['gradviz']}")
    print(f"date {info['date']}, load average {info['loadavg'][0]:.2f}")
    print(f"{repeat} fresh processes per cell, tools alternating; timeout {args.timeout:g} s per "
          "process. Timed inside each process: the tool's work only (graph built and imports "
          "done first); see the module docstring for what each tool's time covers.")
    print("graphs: " + "; ".join(f"{g} = {GRAPHS[g][0]}" for g in graphs))
    print()

    available = {t: installed(t) for t in tools}
    for t in tools:
        if not available[t]:
            print(f"{t}: not installed")
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {g: {t: [] for t in tools} for g in graphs}
    stopped: set[tuple[str, str]] = set()
    for g in graphs:
        for rep in range(repeat):
            order = tools[rep % len(tools):] + tools[: rep % len(tools)]
            for t in order:
                if not available[t] or (g, t) in stopped:
                    continue
                r = measure(g, t, args.timeout)
                runs[g][t].append(r)
                if r.get("ok"):
                    what = f"{r['seconds']:.3f} s, {r.get('nodes')} nodes"
                elif r.get("timeout"):
                    what = "timeout"
                    stopped.add((g, t))
                else:
                    what = f"failed: {r.get('error')}"
                    stopped.add((g, t))
                print(f"  {g:<10} {t:<15} process {rep + 1}: {what}", flush=True)

    summary = {g: {t: summarize(runs[g][t], available[t]) for t in tools} for g in graphs}
    print()
    print(format_tables(summary, graphs, args.timeout))
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"machine": info, "args": vars(args), "graphs": {g: GRAPHS[g][0] for g in graphs},
             "runs": runs, "summary": summary}, indent=1), encoding="utf-8")
        print(f"raw figures: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
