"""What a run held is released by Reset and by the next load (issue 22: the kernel grew
about 780 MB with every run of the in-place lesson, Reset freeing nothing)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gradviz.runner import KernelProcess

SOURCE = (
    "import torch\n"
    "t = torch.randn(4000, 4000)\n"          # 64 MB
    "out = torch.relu(t)\n"                  # 64 MB more
    "torch.relu_(t)\n"
    "x = torch.ones(3, requires_grad=True)\n"
    "y = (x * out[0, :3]).sum()\n"
    "y.backward()\n"
)
MIB = 1024 * 1024


def _rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/<pid>/status")
@pytest.mark.parametrize("trusted", [False, True], ids=["restricted", "trusted"])
def test_reset_and_reload_release_what_a_run_held(trusted):
    with KernelProcess(trusted=trusted) as kernel:
        pid = kernel.info["pid"]
        kernel.request("load", source=SOURCE, device="cpu", run_to=100)
        held = _rss(pid)
        kernel.request("reset")
        after_reset = _rss(pid)
        assert held - after_reset > 100 * MIB, (held / MIB, after_reset / MIB)
        for _ in range(3):  # load again and again: no growth
            kernel.request("load", source=SOURCE, device="cpu", run_to=100)
        assert _rss(pid) - held < 40 * MIB, (held / MIB, _rss(pid) / MIB)
        kernel.request("load", source="a = 1\n", device="cpu", run_to=100)  # a new script
        assert _rss(pid) - after_reset < 40 * MIB, (after_reset / MIB, _rss(pid) / MIB)


@pytest.mark.parametrize("trusted", [False, True], ids=["restricted", "trusted"])
def test_a_reload_frees_the_last_run_before_the_new_one_runs(trusted):
    """Loading a script again (an edit, the timeline going back) drops the last run's
    objects before the new run starts, so the two are never held at once: the in-place
    lesson peaked at 1.8 GB for its 0.8 GB. Checked when the new run's first statement
    starts, through the kernel's phase event."""
    import gc
    import io
    import weakref

    from gradviz.kernel_server import Kernel

    kernel = Kernel(io.StringIO(), trusted=trusted)
    kernel.handle({"cmd": "load", "source": SOURCE, "device": "cpu", "run_to": 100})
    last_run = weakref.ref(kernel.session.globals["t"])
    gc.collect()
    assert last_run() is not None  # the run holds its tensor until the reload
    alive_when_the_new_run_started = []
    phase = kernel.phase

    def watch(*args, **kwargs):
        if not alive_when_the_new_run_started:
            alive_when_the_new_run_started.append(last_run() is not None)
        return phase(*args, **kwargs)

    kernel.phase = watch  # type: ignore[method-assign]
    kernel.handle({"cmd": "load", "source": SOURCE, "device": "cpu", "run_to": 100})
    assert alive_when_the_new_run_started == [False]
    assert kernel.session.results[-1].ok
