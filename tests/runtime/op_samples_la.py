"""Samples of the batched linear algebra operators (runtime/ops/la.py), read through
tests/runtime/op_samples.py."""

import numpy as np

from tests.runtime.op_samples import (FAILURES, SAMPLES, ZERO_SIZE, Failure, Sample, ZeroSize,
                                      _add, uniform)


def spd(n, batch=(), seed=0):
    """Symmetric positive definite matrices, well conditioned."""
    a = uniform(batch + (n, n), seed=seed)
    return np.matmul(a, np.swapaxes(a, -1, -2)) + n * np.eye(n)


def factor(n, batch=(), seed=0, lower=True):
    """A triangular matrix with a diagonal in [1, 2] (the other triangle is noise the ops
    must not read)."""
    a = uniform(batch + (n, n), seed=seed)
    idx = np.arange(n)
    a[..., idx, idx] = 1.0 + np.abs(a[..., idx, idx]) / 2
    return a


def invertible(n, batch=(), seed=0):
    return uniform(batch + (n, n), seed=seed) + 3 * np.eye(n)


_add(SAMPLES, "_linalg_gemm2",
     Sample([uniform((2, 3)), uniform((3, 4), seed=1)]),
     Sample([uniform((3, 2)), uniform((4, 3), seed=1)],
            {"transpose_a": True, "transpose_b": True, "alpha": 0.5}),
     Sample([uniform((2, 2, 3)), uniform((2, 4, 3), seed=1)], {"transpose_b": True}),
     Sample([uniform((2, 3)).astype(np.float32), uniform((3, 4), seed=1).astype(np.float32)],
            grad=False))
_add(FAILURES, "_linalg_gemm2",
     Failure([uniform((2, 3)), uniform((2, 4))], {}, ValueError,
             r"^_linalg_gemm2: op\(A\) is 2x3 and op\(B\) is 2x4"),
     Failure([uniform((2, 2, 3)), uniform((3, 3, 4))], {}, ValueError, "batch"),
     Failure([uniform((3,)), uniform((3, 4))], {}, ValueError, "at least 2 dimensions"),
     Failure([uniform((2, 3)).astype(np.int32), uniform((3, 4)).astype(np.int32)], {},
             TypeError, "float32 or float64"))
_add(ZERO_SIZE, "_linalg_gemm2",
     ZeroSize([np.zeros((0, 2, 3)), np.zeros((0, 3, 4))], {}, np.matmul),
     ZeroSize([np.zeros((2, 0)), np.zeros((0, 4))], {}, np.matmul))

_add(SAMPLES, "_linalg_gemm",
     Sample([uniform((2, 3)), uniform((3, 4), seed=1), uniform((2, 4), seed=2)],
            {"alpha": 2.0, "beta": 0.5}),
     Sample([uniform((2, 3, 2)), uniform((2, 3, 4), seed=1), uniform((2, 2, 4), seed=2)],
            {"transpose_a": True}))
_add(FAILURES, "_linalg_gemm",
     Failure([uniform((2, 3)), uniform((3, 4)), uniform((4, 2))], {}, ValueError,
             r"^_linalg_gemm: C must have the shape"))

_add(SAMPLES, "_linalg_syrk",
     Sample([uniform((3, 4))]),
     Sample([uniform((2, 3, 4))], {"transpose": True, "alpha": 0.5}))

_add(SAMPLES, "_linalg_potrf",
     Sample([spd(3)]),
     Sample([spd(3, (2,), seed=1)], {"lower": False}))
_add(FAILURES, "_linalg_potrf",
     Failure([-spd(3)], {}, ValueError, r"^_linalg_potrf: A must be symmetric positive definite"),
     Failure([uniform((2, 3))], {}, ValueError, "square matrices"))
_add(ZERO_SIZE, "_linalg_potrf", ZeroSize([np.zeros((0, 3, 3))], {}, lambda a: a))
_add(SAMPLES, "_backward_linalg_potrf",
     Sample([np.linalg.cholesky(spd(3)), uniform((3, 3))], grad=False))

_add(SAMPLES, "_linalg_potri",
     Sample([factor(3)]),
     Sample([factor(3, (2,), seed=1)], {"lower": False}))
_add(FAILURES, "_linalg_potri",
     Failure([np.zeros((2, 2))], {}, ValueError, r"^_linalg_potri: A must be a Cholesky factor"))
_add(SAMPLES, "_backward_linalg_potri",
     Sample([factor(3), spd(3), uniform((3, 3))], grad=False))

for _op in ("_linalg_trmm", "_linalg_trsm"):
    _add(SAMPLES, _op,
         Sample([factor(3), uniform((3, 2), seed=1)]),
         Sample([factor(3, seed=2), uniform((2, 3), seed=3)],
                {"rightside": True, "transpose": True, "alpha": 1.5}),
         Sample([factor(3, (2,), seed=4), uniform((2, 3, 2), seed=5)], {"lower": False}))
    _add(FAILURES, _op,
         Failure([factor(3), uniform((2, 2))], {}, ValueError,
                 r"^_linalg_tr[ms]m: A is 3x3 but B has 2 rows"))
    _add(SAMPLES, "_backward" + _op,
         Sample([factor(3), uniform((3, 2), seed=1), uniform((3, 2), seed=2)], grad=False))
_add(FAILURES, "_linalg_trsm",
     Failure([np.zeros((2, 2)), uniform((2, 2))], {}, ValueError,
             r"^_linalg_trsm: A must have a non-zero diagonal"))

_add(SAMPLES, "_linalg_sumlogdiag",
     Sample([factor(3)]),
     Sample([factor(2, (3,), seed=1)]))
_add(SAMPLES, "_backward_linalg_sumlogdiag",
     Sample([factor(3), uniform((1,))], grad=False))

_add(SAMPLES, "_linalg_inverse",
     Sample([invertible(3)]),
     Sample([invertible(2, (2,), seed=1)]))
_add(FAILURES, "_linalg_inverse",
     Failure([np.ones((2, 2))], {}, ValueError, r"^_linalg_inverse: A must be invertible"))
_add(ZERO_SIZE, "_linalg_inverse", ZeroSize([np.zeros((0, 2, 2))], {}, lambda a: a))

for _op in ("_linalg_det", "_linalg_slogdet"):
    _add(SAMPLES, _op,
         Sample([invertible(3)]),
         Sample([invertible(2, (2,), seed=1) * np.array([1, -1])[:, None, None]]))
    _add(FAILURES, _op,
         Failure([uniform((2, 3))], {}, ValueError, "square matrices"))
_add(ZERO_SIZE, "_linalg_det", ZeroSize([np.zeros((0, 2, 2))], {}, np.linalg.det))
