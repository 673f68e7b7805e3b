"""The profiler (MXNet's ``mx.profiler``): the time of every operator call, written as a
Chrome trace (``chrome://tracing``, Perfetto) and summed into a table.

>>> from runtime import profiler
>>> profiler.set_config(profile_all=True, filename="trace.json", aggregate_stats=True)
>>> profiler.set_state("run")
>>> ...                                 # the code to profile
>>> profiler.set_state("stop")
>>> profiler.dump()                     # trace.json
>>> print(profiler.dumps())             # the table: count, total/min/max/avg ms per operator

While the profiler runs, the invoker times the kernel of each operator call (its
dispatch: the kernel with its storage fallback and write-back, not the argument parsing
and shape inference before it) and hands name, device and times to this module; the
short roads for small elementwise calls are not taken meanwhile, so every call is seen,
and the calls that gradient rules make during ``backward`` (``_backward_*`` and the other
ops they emit) are recorded like forward ones; the backward plan's C-level rules, which
call no operator, are recorded as ``_backward_<op>`` (MXNet's names for them).  Calls are recorded on the thread that
makes them.  :class:`Task`, :class:`Frame`, :class:`Event`, :class:`Counter` and
:class:`Marker` add the user's own ranges, values and instants to the trace.

Differences from MXNet: memory (``profile_memory``) and C API (``profile_api``) records
are not kept (ndrt's pool statistics are in ``allocator.memory_stats``); ``dumps`` sums
every recorded call whatever ``aggregate_stats`` says; ``continuous_dump`` and
``dump_period`` are accepted and ignored (``dump`` writes the whole trace).
"""

import json
import os
import tempfile
import threading
from time import perf_counter_ns

from runtime import _imperative

__all__ = ["set_config", "set_state", "pause", "resume", "dump", "dumps",
           "profiler_set_config", "profiler_set_state", "dump_profile", "Domain", "Task",
           "Frame", "Event", "Counter", "Marker", "scope"]

_CONFIG_KEYS = ("filename", "profile_all", "profile_symbolic", "profile_imperative",
                "profile_memory", "profile_api", "continuous_dump", "dump_period",
                "aggregate_stats", "profile_process")
_SORT_KEYS = ("total", "avg", "min", "max", "count")


class _Profiler:
    def __init__(self):
        self.config = {"filename": "profile.json", "profile_imperative": True}
        self.running = False
        self.paused = False
        self.origin = perf_counter_ns()
        self.events = []        # (name, category, device, start_ns, end_ns, thread id)
        self.marks = []         # Chrome events of counters and markers, ready to write
        self.agg = {}           # name -> [count, total_ns, min_ns, max_ns]
        self.folded = 0         # events[:folded] are in agg

    def record(self, name, ctx, start, end):
        self.events.append((name, "operator", str(ctx), start, end, threading.get_ident()))

    def hook_on(self):
        on = self.running and not self.paused and (self.config.get("profile_imperative")
                                                   or self.config.get("profile_all"))
        _imperative.set_profile_hook(self.record if on else None)

    def fold(self):
        for name, cat, _, start, end, _ in self.events[self.folded:]:
            if cat != "operator":
                continue
            d = end - start
            a = self.agg.get(name)
            if a is None:
                self.agg[name] = [1, d, d, d]
            else:
                a[0] += 1
                a[1] += d
                a[2] = min(a[2], d)
                a[3] = max(a[3], d)
        self.folded = len(self.events)


_P = _Profiler()


def set_config(**kwargs):
    """Configure the profiler (MXNet's keywords).

    Parameters
    ----------
    filename : str
        Where :func:`dump` writes the trace (default 'profile.json').
    profile_all : bool
        Record everything that can be recorded (operators).
    profile_imperative, profile_symbolic : bool
        Record operator calls (ndrt runs every operator through the one invoker, so
        either one turns the operator records on).
    profile_memory, profile_api, continuous_dump, dump_period, aggregate_stats,
    profile_process : accepted as MXNet's (see the module notes).
    """
    for key in kwargs:
        if key not in _CONFIG_KEYS:
            raise ValueError(f"set_config: {key!r} must be one of {_CONFIG_KEYS}")
    if "filename" in kwargs and not isinstance(kwargs["filename"], (str, os.PathLike)):
        raise TypeError(f"set_config: filename must be a path (got {kwargs['filename']!r})")
    config = dict(kwargs)
    if config.get("profile_symbolic"):
        config.setdefault("profile_imperative", True)
    _P.config.update(config)
    _P.hook_on()


def profiler_set_config(mode="symbolic", filename="profile.json"):
    """MXNet's older ``set_config``: ``mode`` 'symbolic' or 'all'."""
    if mode not in ("symbolic", "all"):
        raise ValueError(f"profiler_set_config: mode must be 'symbolic' or 'all' (got "
                         f"{mode!r})")
    set_config(profile_symbolic=True, profile_all=mode == "all", filename=filename)


def set_state(state="stop", profile_process="worker"):
    """'run' starts recording, 'stop' ends it (what was recorded stays until dumped)."""
    if state not in ("run", "stop"):
        raise ValueError(f"set_state: state must be 'run' or 'stop' (got {state!r})")
    _P.running = state == "run"
    _P.paused = False
    _P.hook_on()


def profiler_set_state(state="stop"):
    """MXNet's older name of :func:`set_state`."""
    set_state(state)


def pause(profile_process="worker"):
    """Stop recording for a while, without ending the run."""
    _P.paused = True
    _P.hook_on()


def resume(profile_process="worker"):
    """Record again after :func:`pause`."""
    _P.paused = False
    _P.hook_on()


def _trace():
    pids, meta, out = {}, [], []
    own = os.getpid()
    for name, cat, device, start, end, tid in _P.events:
        if device not in pids:
            pids[device] = len(pids)
            meta.append({"name": "process_name", "ph": "M", "pid": pids[device],
                         "args": {"name": device if cat == "operator" else f"{cat}"}})
        out.append({"name": name, "cat": cat, "ph": "X", "pid": pids[device],
                    "tid": tid, "ts": (start - _P.origin) / 1000.0,
                    "dur": (end - start) / 1000.0,
                    "args": {"device": device, "process": own}})
    return {"traceEvents": meta + out + list(_P.marks), "displayTimeUnit": "ms"}


def dump(finished=True, profile_process="worker"):
    """Write the Chrome trace of everything recorded so far to the configured filename
    (atomically: a temporary file renamed).  With ``finished`` the records are then
    dropped (their sums stay for :func:`dumps`)."""
    path = os.fspath(_P.config["filename"])
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".profile-", suffix=".json", dir=folder)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(_trace(), f)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    if finished:
        _P.fold()
        _P.events.clear()
        _P.marks.clear()
        _P.folded = 0


def dump_profile():
    """MXNet's older name of ``dump(True)``."""
    dump(True)


def dumps(reset=False, format="table", sort_by="total", ascending=False):
    """The count and total, min, max and average time (ms) of each operator recorded,
    as MXNet's table (``format='table'``) or JSON (``'json'``), sorted by ``sort_by``
    ('total', 'avg', 'min', 'max', 'count'); ``reset`` clears the sums afterwards."""
    if format not in ("table", "json"):
        raise ValueError(f"dumps: format must be 'table' or 'json' (got {format!r})")
    if sort_by not in _SORT_KEYS:
        raise ValueError(f"dumps: sort_by must be one of {_SORT_KEYS} (got {sort_by!r})")
    _P.fold()
    rows = []
    for name, (count, total, lo, hi) in _P.agg.items():
        rows.append((name, count, total / 1e6, lo / 1e6, hi / 1e6, total / 1e6 / count))
    column = {"count": 1, "total": 2, "min": 3, "max": 4, "avg": 5}[sort_by]
    rows.sort(key=lambda r: (r[column], r[0]), reverse=not ascending)
    if reset:
        _P.agg.clear()
    if format == "json":
        return json.dumps({"Time": {"operator": {
            r[0]: {"Total Count": r[1], "Total Time": r[2], "Min Time": r[3],
                   "Max Time": r[4], "Avg Time": r[5]} for r in rows}},
            "Unit": {"Time": "ms"}}, indent=4)
    lines = ["", "Profile Statistics:", "\tNote the difference in units for different entries.",
             "operator", "=================",
             f"{'Name':<40}{'Total Count':>16}{'Time (ms)':>16}{'Min Time (ms)':>16}"
             f"{'Max Time (ms)':>16}{'Avg Time (ms)':>16}",
             f"{'----':<40}{'-----------':>16}{'---------':>16}{'-------------':>16}"
             f"{'-------------':>16}{'-------------':>16}"]
    for name, count, total, lo, hi, avg in rows:
        lines.append(f"{name:<40}{count:>16}{total:>16.4f}{lo:>16.4f}{hi:>16.4f}{avg:>16.4f}")
    return "\n".join(lines) + "\n"


# -- the user's own records ------------------------------------------------------------------

class Domain:
    """A named group of the user's records (the category of their trace events)."""

    def __init__(self, name):
        self.name = str(name)

    def new_task(self, name):
        return Task(self, name)

    def new_frame(self, name):
        return Frame(self, name)

    def new_counter(self, name, value=None):
        return Counter(self, name, value)

    def new_marker(self, name):
        return Marker(self, name)

    def __str__(self):
        return self.name


class _Range:
    """A named time range, recorded from ``start()`` to ``stop()`` while the profiler
    runs (also a context manager)."""

    def __init__(self, domain, name):
        self.domain = domain
        self.name = str(name)
        self._start = None

    def start(self):
        self._start = perf_counter_ns()

    def stop(self):
        if self._start is None:
            raise RuntimeError(f"{type(self).__name__} {self.name!r}: stop() before start()")
        if _P.running and not _P.paused:
            cat = str(self.domain) if self.domain is not None else type(self).__name__.lower()
            _P.events.append((self.name, cat, cat, self._start, perf_counter_ns(),
                              threading.get_ident()))
        self._start = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()


class Task(_Range):
    """A task of a :class:`Domain`: a range of the user's own work."""


class Frame(_Range):
    """A frame of a :class:`Domain` (one iteration of a loop, say)."""


class Event(_Range):
    """A range that belongs to no domain."""

    def __init__(self, name):
        super().__init__(None, name)


class Counter:
    """A value of a :class:`Domain` over time (a counter track of the trace)."""

    def __init__(self, domain, name, value=None):
        self.domain = domain
        self.name = str(name)
        self.value = 0
        if value is not None:
            self.set_value(value)

    def set_value(self, value):
        self.value = value
        if _P.running and not _P.paused:
            _P.marks.append({"name": self.name, "cat": str(self.domain), "ph": "C",
                             "pid": os.getpid(), "ts": (perf_counter_ns() - _P.origin) / 1000.0,
                             "args": {self.name: value}})

    def increment(self, delta=1):
        self.set_value(self.value + delta)

    def decrement(self, delta=1):
        self.set_value(self.value - delta)

    def __iadd__(self, delta):
        self.increment(delta)
        return self

    def __isub__(self, delta):
        self.decrement(delta)
        return self


class Marker:
    """An instant of a :class:`Domain`."""

    _SCOPES = {"global": "g", "process": "p", "thread": "t", "task": "t", "marker": "t"}

    def __init__(self, domain, name):
        self.domain = domain
        self.name = str(name)

    def mark(self, scope="process"):
        if scope not in self._SCOPES:
            raise ValueError(f"Marker.mark: scope must be one of {sorted(self._SCOPES)} (got "
                             f"{scope!r})")
        if _P.running and not _P.paused:
            _P.marks.append({"name": self.name, "cat": str(self.domain), "ph": "i",
                             "s": self._SCOPES[scope], "pid": os.getpid(),
                             "tid": threading.get_ident(),
                             "ts": (perf_counter_ns() - _P.origin) / 1000.0})


class scope:
    """``with profiler.scope(name):`` records the enclosed code as one range named
    ``name`` (MXNet's scope names the operators inside it; ndrt records the range)."""

    def __init__(self, name="<unk>:", append_mode=False):
        self._event = Event(name)

    def __enter__(self):
        self._event.start()
        return self

    def __exit__(self, *exc):
        self._event.stop()
