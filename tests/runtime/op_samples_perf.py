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

_BCE = "_backward_softmax_cross_entropy"
_add(SAMPLES, _BCE,
     Sample([np.array([0.7]), uniform((3, 4), seed=5), ints(0, 3, 1)], wrt=[0, 1]),
     Sample([np.array([0.5], np.float32), uniform((2, 5), seed=6, dtype=np.float32),
             np.array([4.0, 0.0], np.float32)], grad=False))
_add(FAILURES, _BCE,
     Failure([np.array([1.0]), uniform((3, 4)), ints(0, 4, 1)], {}, ValueError,
             rf"^{_BCE}: label must hold integers in \[0, 4\) \(got 4 at position 1\)",
             out=((3, 4), np.float64)),
     Failure([np.array([1.0, 2.0]), uniform((3, 4)), ints(0, 1, 1)], {}, ValueError,
             rf"^{_BCE}: ograd must have shape \(1,\) \(got \(2,\)\)", out=((3, 4), np.float64)),
     Failure([np.array([1.0], np.float32), uniform((3, 4)), ints(0, 1, 1)], {}, TypeError,
             rf"^{_BCE}: ograd must have data's dtype float64 \(got float32\)",
             out=((3, 4), np.float64)))
_add(ZERO_SIZE, _BCE, ZeroSize([np.array([1.0]), zeros(0, 4), np.zeros(0, np.int64)], {},
                               lambda og, x, label: np.zeros((0, 4))))
