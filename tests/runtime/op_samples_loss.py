"""Samples of the fused loss operators of runtime/ops/loss.py (see op_samples.py)."""

import numpy as np

from tests.runtime.op_samples import (FAILURES, SAMPLES, ZERO_SIZE, Failure, Sample, ZeroSize,
                                      _add, ints, uniform, zeros)


def _np_ce(x, label):
    x = x.astype(np.float64)
    m = x.max(axis=1)
    lse = np.log(np.exp(x - m[:, None]).sum(axis=1)) + m
    return lse - x[np.arange(len(x)), label.astype(np.int64)]


_add(SAMPLES, "_softmax_ce_loss",
     Sample([uniform((3, 4)), ints(0, 3, 1)]),
     Sample([uniform((2, 3), dtype=np.float32), np.array([2.0, 0.0], np.float32)], grad=False),
     Sample([uniform((2, 3), dtype=np.float16), ints(1, 2)], grad=False))
_add(FAILURES, "_softmax_ce_loss",
     Failure([uniform((3, 4)), ints(0, 1)], {}, ValueError,
             r"^_softmax_ce_loss: label must have shape \(3,\) for data of shape \(3, 4\)"),
     Failure([uniform((3,)), ints(0, 1, 2)], {}, ValueError,
             r"^_softmax_ce_loss: data must be 2-D"),
     Failure([ints(1, 2).reshape(1, 2), ints(0)], {}, TypeError,
             r"^_softmax_ce_loss: needs a floating-point data"),
     Failure([uniform((2, 2)), np.array([True, False])], {}, TypeError,
             r"^_softmax_ce_loss: label must hold integer or floating-point indices"),
     # raised by the kernel, after out= is chosen
     Failure([uniform((3, 4)), ints(0, 4, 1)], {}, ValueError,
             r"^_softmax_ce_loss: label must hold integers in \[0, 4\) \(got 4 at "
             r"position 1\)", out=((3,), np.float64)))
_add(ZERO_SIZE, "_softmax_ce_loss", ZeroSize([zeros(0, 4), np.zeros(0, np.int64)], {},
                                             lambda d, l: np.zeros(0)))

_add(SAMPLES, "_softmax_ce_loss_grad",
     Sample([uniform((3, 4)), ints(0, 3, 1), uniform((3,), seed=1)]),
     Sample([uniform((2, 3), dtype=np.float32), np.array([2.0, 0.0], np.float32),
             uniform((2,), seed=2, dtype=np.float32)], grad=False))
_add(FAILURES, "_softmax_ce_loss_grad",
     Failure([uniform((3, 4)), ints(0, 1, 2), uniform((2,))], {}, ValueError,
             r"^_softmax_ce_loss_grad: ograd must have shape \(3,\)"),
     Failure([uniform((3, 4)), ints(0, 1, 2), uniform((3,), dtype=np.float32)], {},
             TypeError, r"^_softmax_ce_loss_grad: ograd must have data's dtype float64"),
     Failure([uniform((3, 4)), np.array([0.0, 1.5, 2.0]), uniform((3,))], {}, ValueError,
             r"^_softmax_ce_loss_grad: label must hold integers in \[0, 4\) \(got 1.5 at "
             r"position 1\)", out=((3, 4), np.float64)))
_add(ZERO_SIZE, "_softmax_ce_loss_grad",
     ZeroSize([zeros(0, 4), np.zeros(0, np.int64), zeros(0)], {}, lambda d, l, g: d * 0))

_add(SAMPLES, "_sigmoid_bce_loss",
     Sample([uniform((3, 4)), np.random.default_rng(3).uniform(0, 1, (3, 4))]),
     Sample([np.array([1e4, -1e4, 0.0, 50.0], np.float32),
             np.array([0.0, 1.0, 0.5, 1.0], np.float32)], grad=False),
     Sample([uniform((2, 2), dtype=np.float16), np.ones((2, 2), np.float16)], grad=False))
_add(FAILURES, "_sigmoid_bce_loss",
     Failure([uniform((3, 4)), uniform((4, 3))], {}, ValueError,
             r"^_sigmoid_bce_loss: label must have data's shape \(3, 4\) \(got \(4, 3\)\)"),
     Failure([uniform((2,)), uniform((2,), dtype=np.float32)], {}, TypeError,
             r"^_sigmoid_bce_loss: label must have data's dtype float64"),
     Failure([ints(1, 2), ints(1, 0)], {}, TypeError,
             r"^_sigmoid_bce_loss: needs a floating-point data"))
_add(ZERO_SIZE, "_sigmoid_bce_loss",
     ZeroSize([zeros(0, 3), zeros(0, 3)], {}, lambda x, z: x * 0))

_add(SAMPLES, "_sigmoid_bce_loss_grad",
     Sample([uniform((3, 4)), np.random.default_rng(4).uniform(0, 1, (3, 4)),
             uniform((3, 4), seed=5)]),
     Sample([np.array([1e4, -1e4, 0.0], np.float32), np.array([0.0, 1.0, 0.5], np.float32),
             np.ones(3, np.float32)], grad=False),
     Sample([uniform((2,), dtype=np.float16), np.ones(2, np.float16),
             np.ones(2, np.float16)], grad=False))
_add(FAILURES, "_sigmoid_bce_loss_grad",
     Failure([uniform((3,)), uniform((3,)), uniform((2,))], {}, ValueError,
             r"^_sigmoid_bce_loss_grad: ograd must have data's shape \(3,\) \(got \(2,\)\)"),
     Failure([uniform((3,)), uniform((3,), dtype=np.float32), uniform((3,))], {}, TypeError,
             r"^_sigmoid_bce_loss_grad: label must have data's dtype float64"))
_add(ZERO_SIZE, "_sigmoid_bce_loss_grad",
     ZeroSize([zeros(0, 3), zeros(0, 3), zeros(0, 3)], {}, lambda x, z, g: x * 0))
