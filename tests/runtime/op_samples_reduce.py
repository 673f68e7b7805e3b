"""Samples, failures and zero-size cases of the reductions (runtime/ops/reduce.py): moments,
and norm's sparse kernel (see op_samples.py for the tables' meaning)."""

import numpy as np

from tests.runtime.op_samples import (FAILURES, SAMPLES, ZERO_SIZE, Failure, Sample, ZeroSize,
                                      _add, _csr, _rsp, _sparse_input, ints, uniform, zeros)

_add(SAMPLES, "moments",
     Sample([uniform((2, 3, 4), seed=760)], {"axes": (1, 2)}),
     Sample([uniform((2, 3, 4), seed=761)], {"axes": (0,), "keepdims": True}),
     Sample([uniform((3, 4), seed=762)]),
     Sample([uniform((5,), seed=763, dtype=np.float32)], {"axes": (0,)}, grad=False))
_add(FAILURES, "moments",
     Failure([uniform((2, 3))], {"axes": (2,)}, ValueError, r"^moments: axis 2 is out of "
             r"range"),
     Failure([ints(1, 2)], {}, TypeError, r"^moments: needs a floating-point input"))
_add(ZERO_SIZE, "moments",
     ZeroSize([zeros(0, 3)], {"axes": (1,)},
              lambda x: [np.zeros(0), np.zeros(0)]))


_SN = _sparse_input((4, 3), 27)
_add(SAMPLES, "norm",
     Sample([_csr(_SN)]),
     Sample([_rsp(_SN)], {"ord": 1, "keepdims": True}),
     Sample([_csr(_SN)], {"axis": 1}))                      # fallback: an axis
_add(ZERO_SIZE, "norm", ZeroSize([_csr(zeros(0, 3))], {}, lambda x: np.zeros(1)))
