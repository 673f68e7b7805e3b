"""Samples, failures and zero-size cases of the operators of runtime/ops/nn.py (see
op_samples.py for the tables' meaning)."""

import numpy as np

from tests.runtime.op_samples import (FAILURES, SAMPLES, ZERO_SIZE, Failure, Sample, ZeroSize,
                                      _add, ints, uniform, zeros)

# softmin (softmax of -x), as op_samples' softmax entries
_add(SAMPLES, "softmin",
     Sample([uniform((2, 5), seed=710)]),
     Sample([uniform((3, 2, 4), seed=711)], {"axis": 0, "temperature": 2.0}),
     Sample([uniform((4,), seed=712, dtype=np.float32)], {"axis": 0}, grad=False),
     Sample([uniform((2, 3), seed=713, dtype=np.float32)], {"dtype": "float64"}, grad=False))
_add(FAILURES, "softmin",
     Failure([uniform((2, 5))], {"axis": 2}, ValueError, r"^softmin: axis 2 is out of range"),
     Failure([uniform((2, 5))], {"temperature": 0.0}, ValueError,
             r"^softmin: temperature must be a finite non-zero number"),
     Failure([ints(1, 2)], {}, TypeError,
             r"^softmin: needs a floating-point input \(got int64\)"),
     Failure([uniform((3, 5))], {"use_length": True}, ValueError,
             r"^softmin: use_length=True needs a length input"))
_add(ZERO_SIZE, "softmin", ZeroSize([zeros(0, 5)], {}, lambda x: x),
     ZeroSize([zeros(3, 0)], {}, lambda x: x))
