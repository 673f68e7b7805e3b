"""Samples, failures and zero-size cases of the operators of runtime/ops/activation.py (see
op_samples.py for the tables' meaning)."""

import numpy as np

from tests.runtime.op_samples import (FAILURES, SAMPLES, ZERO_SIZE, Failure, Sample, ZeroSize,
                                      _add, ints, uniform, zeros)

_add(SAMPLES, "hard_sigmoid",
     Sample([uniform((2, 3), -4, 4, seed=720)]),
     Sample([uniform((2, 3), -4, 4, seed=721)], {"alpha": 0.5, "beta": 0.25}),
     Sample([uniform((4,), -4, 4, seed=722, dtype=np.float32)], grad=False))
_add(FAILURES, "hard_sigmoid", Failure(
    [ints(1, 2, 3)], {}, TypeError, r"^hard_sigmoid: needs a floating-point input"))
_add(ZERO_SIZE, "hard_sigmoid", ZeroSize([zeros(0, 3)], {}, lambda x: x))
