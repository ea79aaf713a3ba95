"""Capture summarizes values on one thread (a busy machine's cores do not stall it) and
gives the script back the thread count it had."""

from __future__ import annotations

import torch

from gradviz.core.session import Session


def test_capture_leaves_the_scripts_thread_count():
    before = torch.get_num_threads()
    try:
        session = Session(
            "import torch\n"
            "torch.set_num_threads(3)\n"
            "x = torch.randn(300, 300, requires_grad=True)\n"
            "y = (x * 2).sum()\n"
            "n = torch.get_num_threads()\n",
            trusted=True,
        )
        results = session.run_to_end()
        assert all(r.ok for r in results), [r.error for r in results if not r.ok]
        assert session.globals["n"] == 3 and torch.get_num_threads() == 3
        torch.set_num_threads(2)
        restricted = Session("x = torch.randn(300, 300, requires_grad=True)\ny = (x * 2).sum()\n")
        assert all(r.ok for r in restricted.run_to_end())
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
