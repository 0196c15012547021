"""While a large graph is alive, full cyclic-GC collections wait (autograd/gc_guard.py); the user's
settings come back when it is freed, young garbage cycles are still collected, and small graphs
never change anything."""
import gc
import weakref

import numpy as np
import pytest

import gradwalk as gw
from gradwalk.autograd import gc_guard


@pytest.fixture(autouse=True)
def user_settings():
    saved = gc.get_threshold()
    gc.enable()
    yield
    gc_guard.release()
    gc.set_threshold(*saved)
    gc.enable()


def chain(length):
    x = gw.tensor(np.float32(0.5), requires_grad=True)
    y = x
    for _ in range(length // 2):
        y = y * 1.0001
        y = y + 0.25
    return x, y


def test_a_large_graph_pauses_full_collections_until_it_is_freed():
    gc.set_threshold(700, 10, 10)
    x, y = chain(3 * gc_guard.STRIDE)
    assert gc_guard.paused()
    assert gc.get_threshold() == (700, 10, gc_guard._OUT_OF_REACH)
    y.backward()
    assert gc_guard.paused()  # the graph lives on in y.grad_fn
    del y
    assert not gc_guard.paused()
    assert gc.get_threshold() == (700, 10, 10)
    assert x.grad is not None


def test_dropping_the_graph_restores_the_settings():
    gc.set_threshold(500, 7, 9)
    x, y = chain(3 * gc_guard.STRIDE)
    assert gc_guard.paused()
    del y
    assert gc.get_threshold() == (500, 7, 9)


def test_small_graphs_change_nothing():
    gc.set_threshold(700, 10, 10)
    gc_guard.release()
    w = gw.tensor(np.float32(0.5), requires_grad=True)
    for _ in range(3 * gc_guard.STRIDE // 4):  # many training-step-sized graphs, each freed
        loss = (w * 2.0 + 1.0).tanh()
        loss.backward()
        assert gc.get_threshold() == (700, 10, 10)


def test_thresholds_the_user_sets_meanwhile_are_kept():
    gc.set_threshold(700, 10, 10)
    x, y = chain(3 * gc_guard.STRIDE)
    assert gc_guard.paused()
    gc.set_threshold(100, 5, 5)
    del y
    assert gc.get_threshold() == (100, 5, 5)


def test_a_disabled_collector_is_left_alone():
    gc.set_threshold(700, 10, 10)
    gc.disable()
    x, y = chain(3 * gc_guard.STRIDE)
    assert not gc_guard.paused()
    assert gc.get_threshold() == (700, 10, 10)
    assert not gc.isenabled()


class Cycle:
    def __init__(self):
        self.me = self


def test_garbage_cycles_are_still_collected_while_paused():
    gc.set_threshold(700, 10, 10)
    x, y = chain(3 * gc_guard.STRIDE)
    assert gc_guard.paused()
    lost = Cycle()
    alive = weakref.ref(lost)
    del lost
    for _ in range(2000):  # recording goes on: young collections run on their own
        y = y * 1.0
    assert alive() is None
    stray = Cycle()
    alive = weakref.ref(stray)
    del stray
    gc.collect()  # and a full collection still runs when asked for
    assert alive() is None
