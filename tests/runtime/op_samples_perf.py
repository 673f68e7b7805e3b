"""Samples of the fused backward kernels (runtime/ops/backward.py)."""

import numpy as np

from tests.runtime.op_samples import (FAILURES, SAMPLES, ZERO_SIZE, Failure, Sample, ZeroSize,
                                      _add, ints, uniform, zeros)

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
