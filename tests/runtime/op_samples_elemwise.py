"""Samples, failures and zero-size cases of the elementwise operators
(runtime/ops/elemwise.py): unary math, and the sparse kernels of clip, where and multiply
(see op_samples.py for the tables' meaning)."""

import numpy as np

from runtime.nd import sparse
from tests.runtime.op_samples import (FAILURES, SAMPLES, ZERO_SIZE, Failure, Sample, ZeroSize,
                                      _add, _csr, _rsp, _sparse_input, ints, uniform, zeros)

# name: input domain (lo, hi), as op_samples.UNARY
_UNARY = {"arccosh": (1.2, 4), "degrees": (-3, 3), "radians": (-3, 3),
          "erfinv": (-0.9, 0.9), "rcbrt": (0.2, 4), "softsign": (-3, 3),
          "log_sigmoid": (-4, 4), "mish": (-3, 3)}
_SPARSE = {"degrees", "radians"}

for _i, (_name, (_lo, _hi)) in enumerate(_UNARY.items()):
    _add(SAMPLES, _name,
         Sample([uniform((2, 3), _lo, _hi, seed=_i + 700)]),
         Sample([uniform((4,), _lo, _hi, seed=_i + 800, dtype=np.float32)], grad=False))
    if _name in _SPARSE:
        _x = _sparse_input((3, 4), _i + 700)
        _add(SAMPLES, _name, Sample([_csr(_x)], grad=False), Sample([_rsp(_x)], grad=False))
    _add(FAILURES, _name, Failure(
        [ints(1, 2, 3)], {}, TypeError,
        rf"^{_name}: needs a floating-point input \(got int64\)", out=((3,), np.float32)))
    _add(ZERO_SIZE, _name, ZeroSize([zeros(0, 3)], {}, lambda x: x))


# clip's sparse kernel (a_min <= 0 <= a_max keeps csr / row_sparse)
_CLIP_X = _sparse_input((3, 4), 750)
_add(SAMPLES, "clip",
     Sample([_csr(_CLIP_X)], {"a_min": -0.4, "a_max": 0.3}, grad=False),
     Sample([_rsp(_CLIP_X)], {"a_min": 0.0, "a_max": 0.5}, grad=False),
     Sample([_csr(_CLIP_X)], {"a_min": 0.2, "a_max": 0.5}, grad=False))


_SN = _sparse_input((4, 3), 27)
_SW = _SN.copy()
_SW[2, 1] = 0.0
_add(SAMPLES, "where",
     # a stored zero in the condition selects y
     Sample([lambda: sparse.csr_matrix(
         (np.array([0.0, 1.0, -2.0]), np.array([0, 1, 2]), np.array([0, 0, 2, 3, 3])),
         shape=(4, 3)), uniform((4, 3), seed=28), uniform((4, 3), seed=29)], wrt=[1, 2]),
     Sample([_csr(_SW), uniform((4, 3), seed=28), uniform((1, 3), seed=29)], wrt=[1, 2]))
_add(ZERO_SIZE, "where", ZeroSize([_csr(zeros(0, 3)), zeros(0, 3), zeros(0, 3)], {},
                                  lambda c, x, y: np.where(c != 0, x, y)))


# multiply of csr and dense keeps csr (runtime/ops/sparse.py)
_add(SAMPLES, "multiply",
     Sample([_csr(_SN), uniform((4, 3), seed=30)]),
     Sample([uniform((4, 3), seed=30), _csr(_SN)]))

# fused backward kernels of tanh and relu

for _i, _name in enumerate(("_backward_tanh", "_backward_relu")):
    _add(SAMPLES, _name,
         Sample([uniform((2, 3), seed=_i), uniform((2, 3), -0.9, 0.9, seed=_i + 10)]),
         Sample([uniform((4,), seed=_i + 20, dtype=np.float32),
                 uniform((4,), -0.9, 0.9, seed=_i + 30, dtype=np.float32)], grad=False))
    _add(FAILURES, _name,
         Failure([uniform((2, 3)), uniform((3,))], {}, ValueError,
                 rf"^{_name}: lhs and rhs must have one shape \(got \(2, 3\) and \(3,\)\)"),
         Failure([uniform((2, 3)), uniform((2, 3), dtype=np.float32)], {}, TypeError,
                 rf"^{_name}: inputs must have one dtype \(got float64, float32\)"))
    _add(ZERO_SIZE, _name, ZeroSize([zeros(0, 3), zeros(0, 3)], {}, lambda g, y: g))

_add(FAILURES, "_backward_tanh",
     Failure([ints(1, 2), ints(0, 1)], {}, TypeError,
             r"^_backward_tanh: needs a floating-point lhs \(got int64\)",
             out=((2,), np.float32)))
_add(SAMPLES, "_backward_relu", Sample([ints(3, -2, 5), ints(1, -1, 0)], grad=False))
