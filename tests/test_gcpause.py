"""gradviz.graph.gcpause: the collector pauses for bulk work and always comes back."""

from __future__ import annotations

import gc
import threading

import pytest

from gradviz.graph.gcpause import paused_gc


@pytest.fixture(autouse=True)
def _collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_a_pause_stops_the_collector_and_gives_it_back_even_on_error():
    with paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ZeroDivisionError), paused_gc():
        1 / 0  # noqa: B018
    assert gc.isenabled()


def test_nested_pauses_give_it_back_once_the_outer_one_ends():
    with paused_gc():
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off():
    gc.disable()
    with paused_gc():
        pass
    assert not gc.isenabled()


def test_overlapping_pauses_on_two_threads_end_with_the_collector_running():
    inside, release = threading.Event(), threading.Event()

    def worker() -> None:
        with paused_gc():
            inside.set()
            release.wait(5)

    thread = threading.Thread(target=worker)
    thread.start()
    assert inside.wait(5)
    with paused_gc():
        release.set()
        thread.join(5)
        assert not gc.isenabled()  # the worker's end does not cut this pause short
    assert gc.isenabled()


def test_cycles_made_during_a_pause_are_collected_afterwards():
    class Node:
        pass

    with paused_gc():
        a, b = Node(), Node()
        a.other, b.other = b, a
        del a, b
    assert gc.collect() >= 2
