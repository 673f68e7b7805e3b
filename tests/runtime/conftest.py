"""Helpers for the runtime suites."""

import functools
import os
import resource
import subprocess
import sys
import threading
import traceback

import numpy as np

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DTYPES = ["float16", "float32", "float64", "uint8", "int8", "int32", "int64", "bool"]


def assert_same(x, ref):
    """``x`` (NDArray) equals the NumPy reference in shape, dtype and values."""
    ref = np.asarray(ref)
    got = x.asnumpy()
    assert x.shape == ref.shape, (x.shape, ref.shape)
    assert np.dtype(x.dtype) == ref.dtype, (x.dtype, ref.dtype)
    np.testing.assert_array_equal(got, ref)


def child_env(env=None):
    """The environment for a child interpreter that imports the same ``runtime`` as this
    one (the source tree, an editable install or site-packages), wherever it runs."""
    import runtime
    env = dict(os.environ if env is None else env)
    here = os.path.dirname(os.path.dirname(os.path.abspath(runtime.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (here, _ROOT, env.get("PYTHONPATH")) if p)
    return env


def run_isolated(code, timeout=120):
    """Run ``code`` in a fresh interpreter and return its stdout: a crash (a signal such
    as SIGSEGV or SIGFPE) fails the calling test instead of killing pytest."""
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=timeout, cwd=_ROOT, env=child_env())
    assert res.returncode == 0, (f"exit status {res.returncode}"
                                 + (" (killed by a signal)" if res.returncode < 0 else "")
                                 + f"\n{res.stderr[-3000:]}")
    return res.stdout


def run_limited(code, *args, memory=3 << 29, timeout=120, env=None):
    """Run ``code`` (with ``args`` as sys.argv[1:]) in a fresh interpreter whose address
    space is limited to ``memory`` bytes (RLIMIT_AS, set before it starts; the runtime
    imports in about 300 MiB) and that is killed after ``timeout`` seconds (the test then
    fails with TimeoutExpired): what can exhaust memory or never end runs there.
    Returns the CompletedProcess (text output)."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, cwd=_ROOT, env=child_env(env),
                          preexec_fn=limit)


def frees_arrays(test):
    """Clear the frames of a failing test's traceback (and an AttributeError's ``obj``)
    before pytest keeps it: their NDArrays would otherwise count as leaked in the
    pool-balance fixture and add a teardown error to the real failure."""
    @functools.wraps(test)
    def run(*args, **kwargs):
        try:
            return test(*args, **kwargs)
        except BaseException as e:
            seen = e
            while seen is not None:
                traceback.clear_frames(seen.__traceback__)
                if isinstance(seen, AttributeError):
                    seen.obj = None
                seen = seen.__context__
            raise
    return run


def free_failing_tests(namespace):
    """Wrap every ``test_*`` function of a module (its ``globals()``) in frees_arrays."""
    for name, fn in list(namespace.items()):
        if name.startswith("test_") and callable(fn):
            namespace[name] = frees_arrays(fn)


def in_thread(fn):
    """Run ``fn`` in a new thread; return its result (or raise what it raised)."""
    box = {}

    def run():
        try:
            box["result"] = fn()
        except BaseException as e:  # noqa: BLE001  (handed back to the test's thread)
            box["error"] = e

    t = threading.Thread(target=run)
    t.start()
    t.join(30)
    assert not t.is_alive(), "the thread did not finish"
    if "error" in box:
        raise box["error"]
    return box["result"]


def dense_values(x):
    """Dense NumPy values of an NDArray of any storage type."""
    return (x if x.stype == "default" else x.tostype("default")).asnumpy()


def from_dense(values, stype):
    """NumPy ``values`` as an NDArray of storage type ``stype`` (dtype kept)."""
    from runtime import nd
    if stype == "default":
        return nd.array(values, dtype=values.dtype)
    if stype == "csr":
        return nd.sparse.csr_matrix(values, dtype=values.dtype)
    return nd.sparse.row_sparse_array(values, dtype=values.dtype)
