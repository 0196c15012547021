"""Python's cyclic garbage collector and very large graphs.

Every recorded node is a Python object the cyclic collector tracks, and the graph holds no
reference cycles (reference counting frees it). Yet while a graph grows, the collector's *full*
collections (generation 2) rescan every live object, the whole graph included, each time the
objects that survived since the last one reach a quarter of the rest: about 14 rescans of an
ever larger heap while a million-node graph is recorded, which made the forward's cost per node
three times its cost in a small graph. PyTorch's nodes are C++ objects the collector never sees.

So while a large graph is alive, full collections wait. Every ``STRIDE``-th recorded node
(``ops/core.py`` checks its sequence number) calls :func:`recording`, which keeps a weak reference
to it. If the node checked ``STRIDE`` nodes earlier is still alive at the next check, a graph of
that size (or one that lives that long) is alive: the collector's generation-2 threshold (the
number of generation-1 collections between full ones) goes out of reach, for as long as the
newest checked node lives. When it is freed (its graph ran backward, or was dropped) or a check
finds the previous node gone, :func:`release` puts the user's threshold back, unless the user set
other thresholds meanwhile, which are then left alone. Graphs that die within ``STRIDE`` nodes
(a training step of a small network) never pause anything. What a user can see:

* generations 0 and 1 keep running on their thresholds: new garbage cycles are still collected;
  cycles that reached generation 2 before becoming garbage wait for the next full collection
  after the graph is gone (as they would wait for the next full collection anyway);
* ``gc.collect()`` still runs a full collection whenever called;
* ``gc.get_threshold()`` shows the raised third value only while such a graph is alive;
* nothing happens when the collector is disabled (``gc.disable()``).
"""
import gc
import weakref

STRIDE = 1 << 15  # recorded nodes between checks (a sequence number with these low bits zero)
_OUT_OF_REACH = 1 << 30  # generation-1 collections before a full one: never, in practice


class _Pause:
    """The pause in force, if any: the user's thresholds, ours, and the last node checked."""

    __slots__ = ("user", "ours", "watch")

    def __init__(self):
        self.user = self.ours = self.watch = None


_pause = _Pause()


def recording(node):
    """Called on every ``STRIDE``-th recorded node: pause full collections while graphs this large
    are alive, resume them when they are gone."""
    if not gc.isenabled():
        return
    previous = _pause.watch() if _pause.watch is not None else None
    if _pause.user is not None and gc.get_threshold() != _pause.ours:
        _forget()  # the user set thresholds of their own: theirs stay
    if previous is None:  # the node checked last time is gone: only small graphs live
        release()
        _pause.watch = weakref.ref(node)
        return
    if _pause.user is None:
        user = gc.get_threshold()
        if user[0] == 0 or user[2] >= _OUT_OF_REACH:  # automatic collection off, or nothing to raise
            _pause.watch = weakref.ref(node)
            return
        _pause.user, _pause.ours = user, (user[0], user[1], _OUT_OF_REACH)
        gc.set_threshold(*_pause.ours)
    _pause.watch = weakref.ref(node, _graph_freed)  # the pause lasts while this node lives


def _graph_freed(_ref):
    release()


def _forget():
    _pause.user = _pause.ours = _pause.watch = None


def release():
    """Put back the thresholds :func:`recording` replaced (unless the user changed them since)."""
    user, ours = _pause.user, _pause.ours
    _forget()
    if user is not None and gc.get_threshold() == ours:
        gc.set_threshold(*user)


def paused():
    """Whether full collections are waiting for a large graph to be freed."""
    return _pause.user is not None
