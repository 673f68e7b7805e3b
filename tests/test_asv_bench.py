"""The asv suite (asv_bench/benchmarks) runs: every benchmark, called once as asv calls it.

Each class's parameter grid is cut to its cheapest corner: along an axis whose values are
sizes (numbers, or tuples of numbers) only the smallest is kept; an axis of names (an
implementation, a pool, an operator) selects code paths, so every value of it is kept.
For each grid point and each ``time_``/``peakmem_``/``track_`` method, a fresh instance
runs ``setup``, the method once, then ``teardown``, as asv does.  ``setup`` may raise
``NotImplementedError`` (asv's skip) only to say that an optional peer is not installed,
``"<module> is not installed"``, and only when that module really does not import.

``test_signatures`` is the static half: the declared parameters, their names and the
argument counts of ``setup``, ``teardown`` and every benchmark method agree (asv pads
missing names silently and reports a wrong count only when the benchmark runs).
"""

import importlib
import importlib.util
import inspect
import itertools
import math
import numbers
import os
import pkgutil
import re
import sys
from pathlib import Path

import pytest

# The suite of the checkout these tests belong to, or of the clone .ci/run's wheel legs name.
ROOT = Path(os.environ.get("NDRT_SOURCE_TREE") or Path(__file__).resolve().parents[1])
BENCH_ROOT = ROOT / "asv_bench"
if not (BENCH_ROOT / "benchmarks").is_dir():
    if os.environ.get("NDRT_SOURCE_TREE"):
        raise RuntimeError(f"NDRT_SOURCE_TREE={ROOT} holds no asv_bench/benchmarks")
    pytest.skip(f"no source tree at {ROOT} (set NDRT_SOURCE_TREE)", allow_module_level=True)

# The modules import each other as ``benchmarks.<name>``, as asv imports them.
sys.path.insert(0, str(BENCH_ROOT))
import benchmarks  # noqa: E402

PREFIXES = ("time_", "peakmem_", "track_")
MISSING_PEER = re.compile(r"([A-Za-z_][\w.]*) is not installed")


def _modules():
    return [importlib.import_module(f"benchmarks.{m.name}")
            for m in pkgutil.iter_modules(benchmarks.__path__)]


def _classes():
    """(qualified name, class) of every benchmark class, in asv's discovery: public
    classes defined in the module with at least one benchmark method."""
    found = []
    for module in _modules():
        for name, cls in vars(module).items():
            if (not name.startswith("_") and inspect.isclass(cls)
                    and cls.__module__ == module.__name__ and _methods(cls)):
                found.append((f"{module.__name__.split('.')[-1]}.{name}", cls))
    return found


def _methods(cls):
    return sorted(n for n in dir(cls) if n.startswith(PREFIXES) and callable(getattr(cls, n)))


def _axes(cls):
    """The parameter axes of ``cls`` as asv reads them: a flat list is one parameter."""
    params = list(getattr(cls, "params", []))
    if params and not isinstance(params[0], (list, tuple)):
        params = [params]
    return [list(values) for values in params]


def _size(value):
    """The size a parameter value stands for, or None when it is a name or a flag."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return value
    if (isinstance(value, tuple) and value
            and all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in value)):
        return math.prod(value)
    return None


def _grid(cls):
    axes = []
    for values in _axes(cls):
        sizes = [_size(v) for v in values]
        if all(s is not None for s in sizes):
            values = [values[sizes.index(min(sizes))]]
        axes.append(values)
    return list(itertools.product(*axes))


CLASSES = _classes()
CASES = [pytest.param(cls, method, point, id=f"{name}.{method}-{point!r}")
         for name, cls in CLASSES for method in _methods(cls) for point in _grid(cls)]


def test_suite_is_found():
    names = {name for name, _ in CLASSES}
    assert {"bench_ctc.CTCLossStep", "bench_allocator.WarmHit", "bench_nn.LossStep"} <= names
    assert len(CASES) > len(CLASSES)


def _arg_count(func):
    return len(inspect.signature(func).parameters) - 1  # less self


@pytest.mark.parametrize("name, cls", CLASSES, ids=[name for name, _ in CLASSES])
def test_signatures(name, cls):
    axes = _axes(cls)
    names = list(getattr(cls, "param_names", []))
    assert len(names) == len(axes), (
        f"{name}: param_names must name each of the {len(axes)} parameters (got {names})")
    for attr in ("setup", "teardown", *_methods(cls)):
        func = getattr(cls, attr, None)
        if func is not None:
            assert _arg_count(func) == len(axes), (
                f"{name}.{attr} must take the {len(axes)} parameters {names} "
                f"(got {_arg_count(func)} arguments)")


def _imports(name):
    try:
        return importlib.util.find_spec(name) is not None
    except ImportError:  # a parent package of a dotted name is missing
        return False


def _setup_or_skip(bench, point):
    try:
        bench.setup(*point)
    except NotImplementedError as exc:
        match = MISSING_PEER.fullmatch(str(exc))
        if match is None:
            raise AssertionError(
                f"setup raised NotImplementedError({str(exc)!r}); a benchmark may skip only "
                f"for a missing optional peer ('<module> is not installed')") from exc
        peer = match.group(1)
        if _imports(peer):
            raise AssertionError(f"setup skipped with {str(exc)!r} but {peer} imports") from exc
        pytest.skip(f"optional peer {peer} is not installed")


# Each case is quick; together they take 30 s of CPU (Conv3x3 and the NumPy row of
# RandomTrace most of it), hence the mark.
@pytest.mark.slow
@pytest.mark.parametrize("cls, method, point", CASES)
def test_benchmark_runs(cls, method, point):
    bench = cls()
    if hasattr(bench, "setup"):
        _setup_or_skip(bench, point)
    try:
        result = getattr(bench, method)(*point)
        if method.startswith("track_"):
            # NaN is asv's "n/a" (a reference row with nothing to report).
            assert isinstance(result, numbers.Real) and not isinstance(result, bool), (
                f"{method} must return a number (got {result!r})")
    finally:
        if hasattr(bench, "teardown"):
            bench.teardown(*point)


class _Raises:
    def __init__(self, message):
        self.message = message

    def setup(self):
        raise NotImplementedError(self.message)


@pytest.mark.parametrize("message", ["not implemented yet", "numpy is not installed"])
def test_skip_for_a_bug_fails(message):
    with pytest.raises(AssertionError, match="NotImplementedError|imports"):
        _setup_or_skip(_Raises(message), ())


def test_skip_for_a_missing_peer():
    with pytest.raises(pytest.skip.Exception, match="no_such_peer is not installed"):
        _setup_or_skip(_Raises("no_such_peer is not installed"), ())
