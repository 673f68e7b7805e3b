"""Samples of the fused backward kernels (runtime/ops/backward.py, _backward_FullyConnected,
the hidden softmax cross-entropy gradients)."""

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

_FCB = "_backward_FullyConnected"
_add(SAMPLES, _FCB,
     Sample([uniform((3, 2), seed=40), uniform((3, 4), seed=41), uniform((2, 4), seed=42)],
            {"num_hidden": 2}),
     Sample([uniform((2, 3), seed=43), uniform((2, 2, 2), seed=44), uniform((3, 4), seed=45)],
            {"num_hidden": 3, "no_bias": True}),
     Sample([uniform((2, 2, 3), seed=46), uniform((2, 2, 4), seed=47),
             uniform((3, 4), seed=48)], {"num_hidden": 3, "flatten": False}),
     Sample([uniform((5, 2), seed=49, dtype=np.float32),
             uniform((5, 3), seed=50, dtype=np.float32),
             uniform((2, 3), seed=51, dtype=np.float32)], {"num_hidden": 2}, grad=False))
_add(FAILURES, _FCB,
     Failure([uniform((3, 2)), uniform((3, 4)), uniform((2, 5))], {"num_hidden": 2},
             ValueError, rf"^{_FCB}: weight must have shape \(2, 4\) for data of "
             rf"shape \(3, 4\), num_hidden=2 and flatten=True \(got \(2, 5\)\)", out=False),
     Failure([uniform((3, 3)), uniform((3, 4)), uniform((2, 4))], {"num_hidden": 2},
             ValueError, rf"^{_FCB}: ograd must have shape \(3, 2\), the layer's result "
             rf"for data of shape \(3, 4\) \(got \(3, 3\)\)", out=False),
     Failure([uniform((3, 2)), uniform((3, 4)), uniform((2, 4), dtype=np.float32)],
             {"num_hidden": 2}, TypeError,
             rf"^{_FCB}: inputs must have one dtype \(got float64, float64, float32\)",
             out=False))
_add(ZERO_SIZE, _FCB,
     ZeroSize([zeros(0, 2), zeros(0, 4), uniform((2, 4), seed=52)], {"num_hidden": 2},
              lambda g, x, w: [np.zeros((0, 4)), np.zeros((2, 4)), np.zeros(2)]))

_PCE = "_backward_softmax_ce_prob"
_add(SAMPLES, _PCE,
     Sample([np.array([0.7]), uniform((3, 4), 0.05, 0.9, seed=7), ints(0, 3, 1)], wrt=[0, 1]),
     Sample([np.array([0.5], np.float32), uniform((2, 5), 0.05, 0.9, seed=8, dtype=np.float32),
             np.array([4.0, 0.0], np.float32)], grad=False))
for _name, _what in ((_BCE, "data"), (_PCE, "prob")):
    _add(FAILURES, _name,
         Failure([np.array([1.0]), uniform((3, 4)), ints(0, 4, 1)], {}, ValueError,
                 rf"^{_name}: label must hold integers in \[0, 4\) \(got 4 at position 1\)",
                 out=((3, 4), np.float64)),
         Failure([np.array([1.0, 2.0]), uniform((3, 4)), ints(0, 1, 1)], {}, ValueError,
                 rf"^{_name}: ograd must have shape \(1,\) \(got \(2,\)\)",
                 out=((3, 4), np.float64)),
         Failure([np.array([1.0], np.float32), uniform((3, 4)), ints(0, 1, 1)], {}, TypeError,
                 rf"^{_name}: ograd must have {_what}'s dtype float64 \(got float32\)",
                 out=((3, 4), np.float64)))
    _add(ZERO_SIZE, _name, ZeroSize([np.array([1.0]), zeros(0, 4), np.zeros(0, np.int64)], {},
                                    lambda og, x, label: np.zeros((0, 4))))
