"""runtime._sparse_common: the one thread count of the sparse kernels (_sparse_format and
_sparse_arith), its default, its setting, and forked children; row_size."""

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from runtime import _sparse_common as C
from tests.runtime.conftest import child_env

ROOT = Path(__file__).resolve().parents[2]


def test_row_size_is_the_row_length_of_the_kernels_2d_view():
    assert [C.row_size(s) for s in [(5,), (0,), (4, 3), (2, 0, 7), (0, 3, 4), ()]] == \
        [1, 1, 3, 0, 12, 1]


def test_num_threads_setting():
    old = C.get_num_threads()
    assert old >= 1
    try:
        C.set_num_threads(2)
        assert C.get_num_threads() == 2
        with pytest.raises(ValueError, match=r"n must be >= 1 \(got 0\)"):
            C.set_num_threads(0)
        assert C.get_num_threads() == 2
    finally:
        C.set_num_threads(old)


def test_arith_serial_cutoff_and_backoff_settings():
    old = C.set_arith_serial_cutoff(5)
    try:
        assert old == C.ARITH_SERIAL_CUTOFF and C.set_arith_serial_cutoff(7) == 5
        with pytest.raises(ValueError, match=r"n must be >= 0 \(got -1\)"):
            C.set_arith_serial_cutoff(-1)
    finally:
        C.set_arith_serial_cutoff(old)
    old = C.set_contention_backoff(3)
    try:
        assert old == 32 and C.set_contention_backoff(0) == 3
        with pytest.raises(ValueError, match=r"calls must be >= 0 \(got -2\)"):
            C.set_contention_backoff(-2)
    finally:
        C.set_contention_backoff(old)


@pytest.mark.parametrize("omp, cpus, expected", [
    (None, 8, 8), ("", 8, 8), ("3", 8, 3), (" 3 ", 8, 3), ("4,2", 8, 4), ("16", 8, 8),
    ("1", 1, 1), ("0", 8, 8), ("-2", 8, 8), ("1.5", 8, 8), ("abc", 8, 8), ("\u00b3", 8, 8),
    (None, 0, 1),
])
def test_default_num_threads(omp, cpus, expected):
    assert C._default_num_threads(omp, cpus) == expected


def run_isolated(code, timeout=60, env=None):
    """Run `code` in a fresh interpreter; (returncode, stdout, stderr).

    It runs in a session of its own, so that a timeout kills the forked children that hang
    with it, and the test fails instead of hanging pytest.
    """
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=child_env(env),
                            text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"timed out after {timeout} s (a forked child hung?)\n{out}\n{err}")
    return proc.returncode, out, err


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs sched_setaffinity")
def test_default_num_threads_follows_affinity_and_omp_num_threads():
    code = ("import os\n"
            "os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})\n"
            "from runtime import _sparse_common as C\n"
            "print(C.get_num_threads())\n")
    rc, out, err = run_isolated(code)
    assert rc == 0 and out.strip() == "1", err
    code = "from runtime import _sparse_common as C; print(C.get_num_threads())"
    for omp, expected in [("1", 1), ("bogus", len(os.sched_getaffinity(0)))]:
        rc, out, err = run_isolated(code, env={**os.environ, "OMP_NUM_THREADS": omp})
        assert rc == 0 and out.strip() == str(expected), (omp, err)


# Threaded kernels in the parent, then the same kernels in children made by os.fork and by
# a fork-based multiprocessing.Pool: libgomp's team does not survive fork, and a child that
# starts a region of several threads waits forever.
FORK_CODE = """
import multiprocessing, os
import numpy as np
from runtime import _sparse_arith as A, _sparse_common as C, _sparse_format as F

C.set_num_threads(4)                    # a team of 4 even on a machine with fewer CPUs
C.set_arith_serial_cutoff(0)
C.set_contention_backoff(0)
dense = np.ones((512, 256), np.float32)              # more than SERIAL_CUTOFF elements
indices = np.tile(np.arange(256, dtype=np.int64), 512)

def kernels(_=None):
    indptr = np.empty(513, np.int64)
    nnz = F.csr_count(dense, indptr)
    out = np.empty((512, 8), np.float32)
    A.csr_dot_dense(indptr, indices, dense.ravel(), np.ones((256, 8), np.float32), out)
    return nnz, C.get_num_threads(), float(out.min()), float(out.max())

assert kernels() == (512 * 256, 4, 256.0, 256.0)
pid = os.fork()
if pid == 0:
    os._exit(0 if kernels() == (512 * 256, 1, 256.0, 256.0) else 3)
_, status = os.waitpid(pid, 0)
assert status == 0, status
with multiprocessing.get_context("fork").Pool(2) as pool:
    assert pool.map(kernels, range(4)) == [(512 * 256, 1, 256.0, 256.0)] * 4
assert kernels() == (512 * 256, 4, 256.0, 256.0)
print("ok")
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_forked_children_run_kernels_on_one_thread():
    rc, out, err = run_isolated(FORK_CODE)
    assert rc == 0 and out.strip() == "ok", err
