"""Samples, failures and zero-size cases of the operators added for MXNet conformance
(see op_samples.py for the tables' meaning)."""

import numpy as np

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
