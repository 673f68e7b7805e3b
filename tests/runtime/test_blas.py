"""The dense products' BLAS (runtime/_blas.pyx): MKL on ndrt's OpenMP team where it is
installed, NumPy's matmul otherwise; the loops that split over that team."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from runtime import _blas, _sparse_common, autograd, nd

LAYOUTS = [(False, False), (True, False), (False, True), (True, True)]


def _stored(x, transposed):
    """x itself, or the transpose view of a row-major copy of x.T (BLAS's 'T' layout)."""
    return np.ascontiguousarray(x.T).T if transposed else x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("ta,tb", LAYOUTS)
@pytest.mark.parametrize("m,k,n", [(64, 784, 256), (3, 5, 7), (1, 300, 40), (40, 300, 1),
                                   (7, 1, 9), (256, 1024, 200)])
def test_matmul_matches_float64_numpy(dtype, ta, tb, m, k, n):
    rng = np.random.default_rng(m * 1000 + k + n)
    a = _stored(rng.standard_normal((m, k)).astype(dtype), ta)
    b = _stored(rng.standard_normal((k, n)).astype(dtype), tb)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    tol = dict(rtol=1e-5, atol=1e-4 * np.sqrt(k)) if dtype == np.float32 else \
        dict(rtol=1e-12, atol=1e-12 * np.sqrt(k))
    out = np.full((m, n), np.nan, dtype)            # a write ignores what was there
    assert _blas.matmul(a, b, out) is out
    np.testing.assert_allclose(out, ref, **tol)
    _blas.matmul(a, b, out, add=True)               # an add accumulates into it
    np.testing.assert_allclose(out, 2 * ref, **tol)


def test_matmul_into_a_row_block_of_a_larger_array():
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((5, 6)), rng.standard_normal((6, 4))
    big = np.zeros((10, 9))
    _blas.matmul(a, b, big[2:7, 3:7])
    expect = np.zeros((10, 9))
    expect[2:7, 3:7] = a @ b
    np.testing.assert_allclose(big, expect, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", ["int", "mixed", "strided", "overlap"])
def test_other_operands_take_numpys_matmul(case):
    rng = np.random.default_rng(2)
    if case == "int":
        a, b = rng.integers(-5, 5, (4, 6)), rng.integers(-5, 5, (6, 3))
        out = np.empty((4, 3), np.int64)
    elif case == "mixed":
        a, b = rng.standard_normal((4, 6)).astype(np.float32), rng.standard_normal((6, 3))
        out = np.empty((4, 3), np.float64)
    elif case == "strided":
        a, b = rng.standard_normal((8, 12))[::2, ::2], rng.standard_normal((6, 3))
        out = np.empty((4, 3))
    else:
        a = rng.standard_normal((4, 4))
        b, out = a, a                         # the product overwrites its own operand
    expect = np.matmul(a, b)
    _blas.matmul(a, b, out)
    np.testing.assert_allclose(out, expect, rtol=1e-12, atol=1e-12)


def test_blas_note_names_the_library_in_use():
    note = _blas.blas_note()
    if _blas.uses_mkl():
        assert note.startswith("MKL (") and "libmkl_rt" in note
    else:
        assert note.startswith("NumPy's matmul (")


def _run(code, env=None, timeout=120):
    full = dict(os.environ, **(env or {}))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full,
                          capture_output=True, text=True, timeout=timeout)


def test_ndrt_blas_numpy_keeps_numpys_matmul():
    r = _run("""
        import numpy as np
        from runtime import _blas, nd
        assert not _blas.uses_mkl(), _blas.blas_note()
        assert "NDRT_BLAS=numpy" in _blas.blas_note()
        a = np.arange(12.0).reshape(3, 4)
        np.testing.assert_array_equal(nd.dot(nd.array(a), nd.array(a.T)).asnumpy(),
                                      (a @ a.T).astype(np.float32))
    """, {"NDRT_BLAS": "numpy"})
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("blas", ["default", "numpy"])
def test_a_forked_child_runs_products_and_split_loops(blas):
    # libgomp's team does not survive fork(): a child that asked MKL (or a split loop)
    # for two threads would wait for them forever.  ndrt's thread count is 1 in the
    # child.  On NumPy's BLAS the child's products are OpenBLAS's, after its own fork
    # handling.
    env = {"NDRT_BLAS": "numpy"} if blas == "numpy" else {}
    r = _run("""
        import os, numpy as np
        from runtime import _blas, _sparse_common, nd
        a = np.random.default_rng(0).standard_normal((512, 512)).astype(np.float32)
        out = np.empty_like(a)
        x = nd.array(np.linspace(-1, 1, 3 * _blas.LOOP_SERIAL_CUTOFF, dtype=np.float32))
        _blas.matmul(a, a, out)                   # the team has run in the parent
        x * x
        pid = os.fork()
        if pid == 0:
            _blas.matmul(a, a, out)
            ok = np.allclose(out, a.astype(np.float64) @ a, rtol=1e-4, atol=1e-2)
            ok = ok and np.array_equal((x * x).asnumpy(), x.asnumpy() * x.asnumpy())
            ok = ok and _sparse_common.get_num_threads() == 1
            os._exit(0 if ok else 3)
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    """, env, timeout=60)
    assert r.returncode == 0, r.stderr


@pytest.fixture
def one_thread():
    """Run the body with ndrt's thread count at 1, then restore it."""
    old = _sparse_common.get_num_threads()
    _sparse_common.set_num_threads(1)
    yield
    _sparse_common.set_num_threads(old)


def _large_loops():
    """Results of loops long enough to split over the team: operators on the short road
    (a binary op, a scalar op, an in-place op) and an elementwise gradient."""
    rng = np.random.default_rng(3)
    n = 3 * _blas.LOOP_SERIAL_CUTOFF + 17
    a = nd.array(rng.standard_normal(n).astype(np.float32))
    b = nd.array(rng.standard_normal(n).astype(np.float32))
    c = a * b
    d = a * 0.5
    e = a.copy()
    e -= b
    x = a.copy()
    x.attach_grad()
    with autograd.record():
        y = nd.tanh(x)
    y.backward()
    return [v.asnumpy() for v in (c, d, e, y, x.grad)], [v.asnumpy() for v in (a, b)]


def test_split_loops_equal_one_thread_bit_for_bit(one_thread):
    serial, _ = _large_loops()
    _sparse_common.set_num_threads(2)
    split, (a, b) = _large_loops()
    for s, p in zip(serial, split):
        np.testing.assert_array_equal(s, p)
    np.testing.assert_array_equal(split[0], a * b)
    np.testing.assert_array_equal(split[1], a * np.float32(0.5))
    np.testing.assert_array_equal(split[2], a - b)
    t = np.tanh(a)
    np.testing.assert_allclose(split[4], 1 - t * t, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("batch", [(3,), (2, 3), (0,)])
@pytest.mark.parametrize("tb", [False, True])
def test_batched_matmul_matches_numpy(batch, tb):
    rng = np.random.default_rng(4)
    a = rng.standard_normal(batch + (5, 6)).astype(np.float32)
    b = rng.standard_normal(batch + (6, 4)).astype(np.float32)
    if tb:                                  # each matrix the transpose of a stored one
        b = np.ascontiguousarray(np.swapaxes(b, -1, -2)).swapaxes(-1, -2)
    ref = np.matmul(a.astype(np.float64), b.astype(np.float64))
    out = np.full(batch + (5, 4), np.nan, np.float32)
    assert _blas.matmul(a, b, out) is out
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)
    _blas.matmul(a, b, out, add=True)
    np.testing.assert_allclose(out, 2 * ref, rtol=1e-5, atol=1e-5)
