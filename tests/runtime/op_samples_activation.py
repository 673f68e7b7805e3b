"""op_samples entries for the activation operators (runtime/ops/activation.py): Activation,
LeakyReLU (rrelu sampled with its mean slope: the generic suites run outside training) and
hard_sigmoid."""

import numpy as np

from tests.runtime.op_samples import (FAILURES, SAMPLES, ZERO_SIZE, Failure, Sample, ZeroSize,
                                      _add, ints, positive, uniform, zeros)

F32 = np.float32

_add(SAMPLES, "hard_sigmoid",
     Sample([uniform((2, 3), -4, 4, seed=720)]),
     Sample([uniform((2, 3), -4, 4, seed=721)], {"alpha": 0.5, "beta": 0.25}),
     Sample([uniform((4,), -4, 4, seed=722, dtype=np.float32)], grad=False))
_add(FAILURES, "hard_sigmoid", Failure(
    [ints(1, 2, 3)], {}, TypeError, r"^hard_sigmoid: needs a floating-point input"))
_add(ZERO_SIZE, "hard_sigmoid", ZeroSize([zeros(0, 3)], {}, lambda x: x))

for _i, _t in enumerate(("relu", "sigmoid", "tanh", "softrelu", "softsign")):
    _add(SAMPLES, "Activation",
         Sample([uniform((2, 3), seed=_i)], {"act_type": _t}),
         Sample([uniform((4,), seed=_i, dtype=F32)], {"act_type": _t}, grad=False))
_add(FAILURES, "Activation",
     Failure([uniform((2, 3))], {"act_type": "swish"}, ValueError,
             r"^Activation: act_type must be one of"),
     Failure([ints(1, 2)], {"act_type": "relu"}, TypeError,
             r"^Activation: needs a floating-point data \(got int64\)", out=((2,), F32)))
_add(ZERO_SIZE, "Activation", ZeroSize([zeros(0, 3)], {"act_type": "tanh"}, np.tanh))

for _i, _t in enumerate(("leaky", "elu", "selu", "gelu", "rrelu")):
    _add(SAMPLES, "LeakyReLU",
         Sample([uniform((2, 3), seed=_i)], {"act_type": _t}),
         Sample([uniform((4,), seed=_i, dtype=F32)], {"act_type": _t, "slope": 0.1},
                grad=False))
_add(SAMPLES, "LeakyReLU",
     Sample([uniform((2, 3), seed=9)], {"slope": 0.1}),
     Sample([uniform((2, 3, 2), seed=10), positive((3,), 11, 0.1, 0.5)],
            {"act_type": "prelu"}),
     Sample([uniform((2, 3), seed=12), positive((1,), 13, 0.1, 0.5)],
            {"act_type": "prelu"}),
     Sample([uniform((2, 3), seed=14)], {"act_type": "elu", "slope": 0.7}))
_add(FAILURES, "LeakyReLU",
     Failure([uniform((2, 3))], {"act_type": "prelu"}, TypeError,
             r"^LeakyReLU: takes 2 array input\(s\) \(data, gamma\) with act_type='prelu' "
             r"\(got 1\)"),
     Failure([uniform((2, 3)), positive((2,))], {"act_type": "prelu"}, ValueError,
             r"^LeakyReLU: gamma must have shape \(1,\) or \(3,\)"),
     Failure([uniform((2, 3))], {"act_type": "rrelu", "lower_bound": 0.5,
                                 "upper_bound": 0.2}, ValueError,
             r"^LeakyReLU: lower_bound must be <= upper_bound"),
     Failure([ints(1, 2)], {}, TypeError,
             r"^LeakyReLU: needs floating-point data \(got int64\)", out=((2,), F32)))
_add(ZERO_SIZE, "LeakyReLU",
     ZeroSize([zeros(0, 3)], {"act_type": "gelu"}, lambda x: x),
     ZeroSize([zeros(0, 3), positive((3,))], {"act_type": "prelu"}, lambda x, g: x))
