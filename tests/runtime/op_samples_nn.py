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

# the hidden softmax cross-entropy gradients

_BCE = "_backward_softmax_cross_entropy"
_add(SAMPLES, _BCE,
     Sample([np.array([0.7]), uniform((3, 4), seed=5), ints(0, 3, 1)], wrt=[0, 1]),
     Sample([np.array([0.5], np.float32), uniform((2, 5), seed=6, dtype=np.float32),
             np.array([4.0, 0.0], np.float32)], grad=False))

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


_add(SAMPLES, "_contrib_SparseEmbedding",
     Sample([np.array([[0, 2], [1, 4]], np.int64), uniform((5, 3), seed=940)],
            {"input_dim": 5, "output_dim": 3}, wrt=[1]))
_add(FAILURES, "_contrib_SparseEmbedding", Failure(
    [np.array([0, 1], np.int64), uniform((5, 2))], {"input_dim": 5, "output_dim": 3},
    ValueError, r"^_contrib_SparseEmbedding: weight must have shape \(5, 3\)", out=False))
