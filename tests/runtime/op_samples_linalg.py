"""Samples, failures and zero-size cases of MXNet's linalg operators (runtime/ops/linalg.py)
(see op_samples.py for the tables' meaning)."""

import numpy as np

from tests.runtime.op_samples import (FAILURES, SAMPLES, ZERO_SIZE, Failure, Sample, ZeroSize,
                                      _add, ints, uniform, zeros)

def _spd(n, seed, batch=()):
    m = np.random.default_rng(seed).normal(size=batch + (n, n))
    return m @ np.swapaxes(m, -1, -2) + n * np.eye(n)


def _lower(n, seed, batch=()):
    """Lower triangular, a well-conditioned diagonal, random values above it (ignored)."""
    m = np.random.default_rng(seed).uniform(-1, 1, batch + (n, n))
    return m + 3 * np.eye(n)


_add(SAMPLES, "_linalg_gemm2",
     Sample([uniform((2, 3), seed=31), uniform((3, 4), seed=32)]),
     Sample([uniform((2, 3, 2), seed=31), uniform((2, 4, 3), seed=32)],
            {"transpose_a": True, "transpose_b": True, "alpha": -0.5}),
     Sample([uniform((4, 2, 3), seed=31), uniform((4, 2, 5), seed=32)],
            {"axis": 0, "transpose_a": True}))
_add(FAILURES, "_linalg_gemm2",
     Failure([uniform((2, 3)), uniform((2, 4))], {}, ValueError,
             r"^_linalg_gemm2: op\(A\) of shape \(2, 3\) and op\(B\) of shape \(2, 4\)"),
     Failure([uniform((2, 2, 3)), uniform((3, 3, 4))], {}, ValueError,
             r"^_linalg_gemm2: A \(2, 2, 3\) and B \(3, 3, 4\) must have one batch shape"),
     Failure([uniform((2, 3)), uniform((3, 4))], {"axis": -1}, ValueError,
             r"^_linalg_gemm2: axis must not be the last axis"),
     Failure([ints(1, 2).reshape(1, 2), ints(1, 2).reshape(2, 1)], {}, TypeError,
             r"^_linalg_gemm2: inputs must be float32 or float64"))
_add(ZERO_SIZE, "_linalg_gemm2",
     ZeroSize([zeros(2, 0), zeros(0, 3)], {}, np.matmul),
     ZeroSize([zeros(0, 2, 3), zeros(0, 3, 1)], {}, np.matmul))

_add(SAMPLES, "_linalg_gemm",
     Sample([uniform((2, 3), seed=33), uniform((3, 4), seed=34), uniform((2, 4), seed=35)],
            {"alpha": 2.0, "beta": -1.5}),
     Sample([uniform((2, 3, 2), seed=33), uniform((2, 3, 4), seed=34),
             uniform((2, 2, 4), seed=35)], {"transpose_a": True}))
_add(FAILURES, "_linalg_gemm",
     Failure([uniform((2, 3)), uniform((3, 4)), uniform((2, 3))], {}, ValueError,
             r"^_linalg_gemm: C has shape \(2, 3\), op\(A\) @ op\(B\) has \(2, 4\)"))
_add(ZERO_SIZE, "_linalg_gemm", ZeroSize([zeros(2, 0), zeros(0, 3), uniform((2, 3))],
                                         {}, lambda a, b, c: c))

_add(SAMPLES, "_linalg_potrf",
     Sample([_spd(3, 36)]), Sample([_spd(2, 37, (2,))]),
     Sample([_spd(3, 40)], {"lower": False}))
_add(FAILURES, "_linalg_potrf",
     Failure([-np.eye(3)], {}, ValueError, r"^_linalg_potrf: A must be symmetric positive "
                                           r"definite"),
     Failure([uniform((2, 3))], {}, ValueError,
             r"^_linalg_potrf: A must hold square matrices \(got shape \(2, 3\)\)"),
     Failure([uniform((3,))], {}, ValueError,
             r"^_linalg_potrf: A must have at least 2 dimensions"))
_add(ZERO_SIZE, "_linalg_potrf", ZeroSize([zeros(0, 3, 3)], {}, lambda a: a.copy()),
     ZeroSize([zeros(0, 0)], {}, lambda a: a.copy()))

_add(SAMPLES, "_linalg_potri",
     Sample([_lower(3, 38)]), Sample([_lower(2, 39, (2,))]),
     Sample([np.swapaxes(_lower(3, 41), -1, -2)], {"lower": False}))
_add(FAILURES, "_linalg_potri",
     Failure([np.zeros((2, 2))], {}, ValueError, r"^_linalg_potri: A must be non-singular"))
_add(ZERO_SIZE, "_linalg_potri", ZeroSize([zeros(0, 2, 2)], {}, lambda a: a.copy()))

_add(SAMPLES, "_linalg_trsm",
     Sample([_lower(3, 40), uniform((3, 2), seed=41)]),
     Sample([_lower(3, 40), uniform((2, 3), seed=41)],
            {"rightside": True, "transpose": True, "alpha": 0.5}),
     Sample([_lower(3, 40, (2,)), uniform((2, 3, 2), seed=41)],
            {"lower": False, "transpose": True}),
     Sample([_lower(2, 42), uniform((4, 2), seed=41)], {"rightside": True, "lower": False}))
_add(FAILURES, "_linalg_trsm",
     Failure([_lower(3, 40), uniform((2, 2))], {}, ValueError,
             r"^_linalg_trsm: B \(2, 2\) must have as many rows as A \(3, 3\) has"),
     # found by the kernel, after out= is chosen
     Failure([np.tril(np.ones((2, 2))) - np.eye(2), uniform((2, 2))], {}, ValueError,
             r"^_linalg_trsm: A must be non-singular", out=((2, 2), np.float64)))
_add(ZERO_SIZE, "_linalg_trsm", ZeroSize([_lower(2, 40), zeros(2, 0)], {},
                                         lambda a, b: b.copy()))

_add(SAMPLES, "_linalg_trmm",
     Sample([_lower(3, 43), uniform((3, 2), seed=44)], {"alpha": 1.5}),
     Sample([_lower(3, 43), uniform((2, 3), seed=44)], {"rightside": True, "transpose": True}),
     Sample([_lower(3, 43, (2,)), uniform((2, 3, 2), seed=44)], {"lower": False}),
     Sample([_lower(2, 45), uniform((4, 2), seed=44)], {"rightside": True, "lower": False,
                                                        "transpose": True}))
_add(FAILURES, "_linalg_trmm",
     Failure([_lower(3, 43), uniform((3, 2))], {"rightside": True}, ValueError,
             r"^_linalg_trmm: B \(3, 2\) must have as many columns as A \(3, 3\) has"))
_add(ZERO_SIZE, "_linalg_trmm", ZeroSize([_lower(2, 43), zeros(2, 0)], {},
                                         lambda a, b: b.copy()))

_add(SAMPLES, "_linalg_syrk",
     Sample([uniform((2, 3), seed=46)]),
     Sample([uniform((2, 3, 2), seed=46)], {"transpose": True, "alpha": -2.0}))
_add(FAILURES, "_linalg_syrk",
     Failure([uniform((3,))], {}, ValueError, r"^_linalg_syrk: A must have at least 2"))
_add(ZERO_SIZE, "_linalg_syrk", ZeroSize([zeros(2, 0)], {}, lambda a: np.zeros((2, 2))))

_add(SAMPLES, "_linalg_inverse",
     Sample([_lower(3, 47) + _lower(3, 48).T]), Sample([_spd(2, 49, (3,))]))
_add(FAILURES, "_linalg_inverse",
     Failure([np.ones((2, 2))], {}, ValueError, r"^_linalg_inverse: A must be non-singular"))
_add(ZERO_SIZE, "_linalg_inverse", ZeroSize([zeros(0, 2, 2)], {}, lambda a: a.copy()))

_add(SAMPLES, "_linalg_det",
     Sample([_lower(3, 50) + _lower(3, 51).T]), Sample([uniform((2, 2, 2), seed=52)]))
_add(FAILURES, "_linalg_det",
     Failure([uniform((2, 3))], {}, ValueError, r"^_linalg_det: A must hold square"))
_add(ZERO_SIZE, "_linalg_det", ZeroSize([zeros(0, 2, 2)], {}, lambda a: np.zeros(0)))

_add(SAMPLES, "_linalg_slogdet",
     Sample([_lower(3, 53) + _lower(3, 54).T]),
     Sample([uniform((2, 2, 2), seed=55)], wrt=[0]))
_add(FAILURES, "_linalg_slogdet",
     Failure([uniform((2, 3))], {}, ValueError, r"^_linalg_slogdet: A must hold square"))
_add(ZERO_SIZE, "_linalg_slogdet", ZeroSize([zeros(0, 2, 2)], {},
                                            lambda a: [np.zeros(0), np.zeros(0)]))

_add(SAMPLES, "_linalg_sumlogdiag",
     Sample([_spd(3, 56)]), Sample([_spd(2, 57, (2,))]))
_add(FAILURES, "_linalg_sumlogdiag",
     Failure([uniform((2, 3))], {}, ValueError, r"^_linalg_sumlogdiag: A must hold square"))
_add(ZERO_SIZE, "_linalg_sumlogdiag", ZeroSize([zeros(0, 2, 2)], {}, lambda a: np.zeros(0)))

_add(SAMPLES, "_linalg_gelqf",
     Sample([uniform((2, 3), seed=58)]), Sample([uniform((2, 2, 4), seed=59)]))
_add(FAILURES, "_linalg_gelqf",
     Failure([uniform((3, 2))], {}, ValueError,
             r"^_linalg_gelqf: A must have at least as many columns as rows"))
