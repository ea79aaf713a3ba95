"""The kernel client on its own: JSON lines, one request in flight, stop, crash, giving up."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from gradviz.ui.kernel_client import KernelClient  # noqa: E402

TIMEOUT = 60_000


@pytest.fixture
def client(qtbot):
    kernel = KernelClient()
    yield kernel
    kernel.shutdown()
    assert kernel.pid() is None


def test_messages_split_across_reads_are_reassembled(qtbot):
    kernel = KernelClient()
    seen = []
    kernel.ready.connect(seen.append)
    message = json.dumps({"event": "ready", "pid": 1, "cuda_available": False, "cuda_reason": "x"})
    data = (message + "\n").encode()
    kernel.feed(data[:10])
    assert seen == []
    kernel.feed(data[10:] + b"not json\n")
    assert seen == [{"pid": 1, "cuda_available": False, "cuda_reason": "x"}]


def test_requests_queue_and_are_answered_in_order(qtbot, client):
    replies = []
    with qtbot.waitSignal(client.ready, timeout=TIMEOUT) as ready:
        client.start()
    assert "cuda_available" in ready.args[0]
    client.request("load", replies.append, source="a = torch.ones(2)\nb = a * 2\n", run_to=None)
    client.request("step", replies.append)
    client.request("step", replies.append)
    assert client.busy
    qtbot.waitUntil(lambda: len(replies) == 3 and not client.busy, timeout=TIMEOUT)
    assert [r["ok"] for r in replies] == [True, True, True]
    assert [r["state"]["cursor"] for r in replies] == [0, 1, 2]
    assert client.cursor == 2 and client.source.startswith("a = torch.ones(2)")
    client.request("set_device", replies.append, device="no_such_device", run_to=0)
    qtbot.waitUntil(lambda: len(replies) == 4, timeout=TIMEOUT)
    assert replies[-1]["ok"] is False and "no_such_device" in replies[-1]["message"]


def test_stop_kills_and_replays_what_had_run(qtbot, client):
    replies = []
    with qtbot.waitSignal(client.ready, timeout=TIMEOUT):
        client.start()
    source = "a = torch.ones(3)\nx = 0\nwhile True:\n    x = x + 1\n"
    client.request("load", replies.append, source=source, run_to=2)
    qtbot.waitUntil(lambda: len(replies) == 1, timeout=TIMEOUT)
    first_pid = client.pid()
    client.request("step", replies.append)
    client.request("step", replies.append)  # queued behind the runaway: cancelled by stop
    with qtbot.waitSignal(client.replayed, timeout=TIMEOUT) as replayed:
        assert client.stop()
    assert replies[1]["stopped"] and replies[2]["message"] == "cancelled"
    state = replayed.args[0]["state"]
    assert state["cursor"] == 2 and "a" in state["tensors"]
    assert client.pid() != first_pid
    assert not client.stop()  # nothing runs now


def test_a_kernel_that_keeps_dying_is_given_up_on(qtbot):
    kernel = KernelClient(python="/bin/false")
    with qtbot.waitSignal(kernel.gave_up, timeout=TIMEOUT):
        kernel.start()
    assert kernel.dead and not kernel.busy
    replies = []
    kernel.request("ping", replies.append)
    assert replies and replies[0]["ok"] is False
    kernel.shutdown()


def test_watchdog_kills_a_phase_that_outlives_its_limit(qtbot, client):
    replies = []
    client.time_limit_s = 1.0
    with qtbot.waitSignal(client.ready, timeout=TIMEOUT):
        client.start()
    source = "a = torch.ones(3)\nx = [0]\ny = [0]\nfor i in range(60):\n    x = [x, x]\n    y = [y, y]\nr = x == y\n"
    pid = client.pid()
    with qtbot.waitSignal(client.timed_out, timeout=TIMEOUT) as timed_out:
        client.request("load", replies.append, source=source, run_to=5)
    message, phase = timed_out.args
    assert "refused: time limit 1 s" in message and phase["phase"] == "statement"
    assert phase["index"] == 4 and phase["line"] == 7
    with qtbot.waitSignal(client.replayed, timeout=TIMEOUT) as replayed:
        pass
    assert replayed.args[0]["ok"] and replayed.args[0]["state"]["cursor"] == 4
    assert replies[0]["ok"] is False and replies[0]["timed_out"] is True
    assert client.pid() != pid
