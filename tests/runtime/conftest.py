"""Helpers for the runtime suites."""

import os
import subprocess
import sys

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
