"""Samples, failures and zero-size cases of the operators of runtime/ops/dot.py: the fused
``_backward_FullyConnected`` (see op_samples.py for the tables' meaning)."""

import numpy as np

from tests.runtime.op_samples import (FAILURES, SAMPLES, ZERO_SIZE, Failure, Sample, ZeroSize,
                                      _add, uniform, zeros)

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
