"""Samples of CTCLoss and its hidden gradient operator (runtime/ops/ctc.py; see
op_samples.py).  Labels and lengths are integers, so the generic gradient checks take
data only."""

import numpy as np

from tests.runtime.op_samples import (FAILURES, SAMPLES, ZERO_SIZE, Failure, Sample, ZeroSize,
                                      _add, ints, uniform, zeros)

_LABEL = np.array([[1, 2, 0], [2, 2, 1]], np.int64)       # blank 'first': 0 pads
_LAST = np.array([[0, 1, -1], [1, -1, -1]], np.int64)     # blank 'last': -1 pads
_LENGTHS = {"use_data_lengths": True, "use_label_lengths": True}

for _name in ("CTCLoss", "_ctc_loss_grad"):
    _grad = _name == "CTCLoss"
    _out = ((2,), np.float64) if _grad else None    # the output: loss (N,) or like data
    _add(SAMPLES, _name,
         Sample([uniform((5, 2, 3)), _LABEL], wrt=[0] if _grad else None, grad=_grad),
         Sample([uniform((4, 2, 3), seed=1), _LAST], {"blank_label": "last"},
                wrt=[0] if _grad else None, grad=_grad),
         Sample([uniform((5, 2, 4), seed=2), _LABEL, ints(4, 5), ints(2, 1)], _LENGTHS,
                wrt=[0] if _grad else None, grad=_grad),
         Sample([uniform((4, 2, 3), seed=3, dtype=np.float32), _LABEL.astype(np.float32),
                 np.array([3.0, 4.0], np.float32)], {"use_data_lengths": True}, grad=False),
         Sample([uniform((3, 1, 3), seed=4, dtype=np.float16), ints(2).reshape(1, 1)],
                grad=False))
    _add(FAILURES, _name,
         Failure([uniform((5, 2)), _LABEL], {}, ValueError,
                 rf"^{_name}: data must be 3-D \(sequence_length, batch, alphabet_size\)"),
         Failure([uniform((5, 3, 3)), _LABEL], {}, ValueError,
                 rf"^{_name}: label must have data's batch size 3 on axis 0"),
         Failure([uniform((2, 2, 3)), _LABEL], {}, ValueError,
                 rf"^{_name}: the label length \(label's axis 1\) cannot exceed the "
                 r"sequence length"),
         Failure([uniform((5, 2, 3)), _LABEL], {"use_label_lengths": True}, ValueError,
                 rf"^{_name}: takes 3 array inputs \(data, label, label_lengths\)"),
         Failure([uniform((5, 2, 3)), _LABEL, ints(1, 2, 3)], {"use_data_lengths": True},
                 ValueError, rf"^{_name}: data_lengths must have shape \(2,\)"),
         Failure([ints(1, 2, 3, 4, 5, 6).reshape(1, 2, 3), ints(1, 2).reshape(2, 1)], {},
                 TypeError, rf"^{_name}: needs a floating-point data \(got int64\)"),
         # raised by the kernel, after out= is chosen
         Failure([uniform((5, 2, 3)), np.array([[1, 3, 0], [2, 2, 1]])], {}, ValueError,
                 rf"^{_name}: label must hold symbols in \[0, 2\] within its length "
                 r"\(alphabet_size 3, blank_label='first'\) \(got 3 at \(0, 1\)\)", out=_out),
         Failure([uniform((5, 2, 3)), _LABEL, ints(6, 5)], {"use_data_lengths": True},
                 ValueError, rf"^{_name}: data_lengths must hold integers in \[0, 5\] \(the "
                 r"sequence length\) \(got 6 at \(0,\)\)", out=_out),
         Failure([uniform((5, 2, 3)), _LABEL, np.array([2.5, 1.0])],
                 {"use_label_lengths": True}, ValueError,
                 rf"^{_name}: label_lengths must hold integers in \[0, 3\] \(label's axis 1\) "
                 r"\(got 2.5 at \(0,\)\)", out=_out))
    _add(ZERO_SIZE, _name,
         ZeroSize([zeros(3, 0, 4), np.zeros((0, 2), np.int64)], {},
                  (lambda d, l: np.zeros(0)) if _grad else (lambda d, l: d * 0)),
         # no frames and empty labels: p(empty | nothing) = 1, loss 0
         ZeroSize([zeros(0, 2, 3), np.zeros((2, 0), np.int64)], {},
                  (lambda d, l: np.zeros(2)) if _grad else (lambda d, l: d * 0)))
