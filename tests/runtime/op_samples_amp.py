"""op_samples entries for the mixed-precision operators (runtime/ops/amp.py): amp_cast,
amp_multicast, all_finite and multi_all_finite."""

import numpy as np

from tests.runtime.op_samples import (FAILURES, SAMPLES, ZERO_SIZE, Failure, Sample, ZeroSize,
                                      _add, ints, uniform, zeros)

F32 = np.float32

_add(SAMPLES, "amp_cast",
     Sample([uniform((2, 3), seed=900)], {"dtype": "float64"}),
     Sample([uniform((2, 3), seed=901, dtype=F32)], {"dtype": "float16"}, grad=False),
     Sample([ints(1, 2, 3)], {"dtype": "float16"}, grad=False))
_add(FAILURES, "amp_cast", Failure(
    [uniform((2, 3))], {"dtype": "complex64"}, TypeError, r"^amp_cast: dtype must be one of"))
_add(ZERO_SIZE, "amp_cast", ZeroSize([zeros(0, 3)], {"dtype": "float32"},
                                     lambda x: x.astype(F32)))

_add(SAMPLES, "amp_multicast",
     Sample([uniform((2, 3), seed=902), uniform((3,), seed=903)], {"num_outputs": 2}),
     Sample([uniform((2,), seed=904, dtype=np.float16), uniform((2,), seed=905, dtype=F32),
             ints(4, 5)], {"num_outputs": 3}, grad=False))
_add(FAILURES, "amp_multicast", Failure(
    [uniform((2, 3)), uniform((2, 3))], {"num_outputs": 3}, ValueError,
    r"^amp_multicast: num_outputs must equal the number of inputs 2 \(got 3\)"))

_add(SAMPLES, "all_finite",
     Sample([uniform((2, 3), seed=906)], grad=False),
     Sample([np.array([1.0, np.inf])], grad=False))
_add(FAILURES, "all_finite", Failure(
    [uniform((2, 3))], {"init_output": False}, ValueError,
    r"^all_finite: init_output must be True \(got False\)", out=((1,), F32)))
_add(ZERO_SIZE, "all_finite", ZeroSize([zeros(0, 3)], {},
                                       lambda x: np.ones(1, F32)))

_add(SAMPLES, "multi_all_finite",
     Sample([uniform((2, 3), seed=907), np.array([np.nan, 1.0])], {"num_arrays": 2},
            grad=False))
_add(FAILURES, "multi_all_finite", Failure(
    [uniform((2, 3)), uniform((3,))], {"num_arrays": 1}, ValueError,
    r"^multi_all_finite: num_arrays must equal the number of arrays 2 \(got 1\)",
    out=((1,), F32)))
