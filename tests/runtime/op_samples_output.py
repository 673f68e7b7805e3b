"""op_samples entries for the output layers (runtime/ops/output.py).

The output layers' gradients ignore the head gradient (MXNet): their samples carry
``grad_ref``, the gradient MXNet documents, computed here with NumPy.
"""

import numpy as np

from tests.runtime.op_samples import (FAILURES, SAMPLES, ZERO_SIZE, Failure, Sample, ZeroSize,
                                      _add, ints, uniform, zeros)

F32 = np.float32


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _so_ref(axis_view, scale=1.0, alpha=0.0, use_ignore=False, ignore_label=-1.0,
            norm="null", out_grad=False, multi=False):
    """SoftmaxOutput's gradient as MXNet computes it; ``axis_view(x, label)`` gives the
    data as (rows, classes, cols) and the label as (rows, cols)."""
    def ref(inputs, heads):
        x, label = inputs
        p, lab = axis_view(x, label)
        p = _softmax(p, 1)
        rows, k, cols = p.shape
        target = np.full(p.shape, alpha / (k - 1) if alpha else 0.0)
        ignored = lab == ignore_label
        keep = ~ignored if use_ignore else np.ones(lab.shape, bool)
        for r, c in zip(*np.nonzero(keep)):
            target[r, int(lab[r, c]), c] = 1.0 - alpha
        grad = (p - target) * keep[:, None, :]
        count = {"null": 1, "batch": rows, "valid": max(lab.size - ignored.sum(), 1)}[norm]
        if multi and norm != "valid":
            count *= cols
        grad = (grad * scale / count).reshape(x.shape)
        if out_grad:
            grad = grad * heads[0]
        return [grad, None]
    return ref


def _flat(x, label):
    return x.reshape(x.shape[0], -1, 1), label.reshape(-1, 1)


def _multi(x, label):
    return x.reshape(x.shape[0], x.shape[1], -1), label.reshape(x.shape[0], -1)


def _last(x, label):
    return x.reshape(-1, x.shape[-1], 1), label.reshape(-1, 1)


_L = np.array([0.0, 2.0, 1.0, 2.0])
_add(SAMPLES, "SoftmaxOutput",
     Sample([uniform((4, 3)), _L], wrt=[0], grad_ref=_so_ref(_flat)),
     Sample([uniform((4, 3, 1), seed=1), _L], {"grad_scale": 2.0, "normalization": "batch"},
            wrt=[0], grad_ref=_so_ref(_flat, 2.0, norm="batch")),
     Sample([uniform((2, 3, 4), seed=2), np.array([[0, 1, 2, 1], [2, 2, 0, 1.0]])],
            {"multi_output": True}, wrt=[0], grad_ref=_so_ref(_multi, multi=True)),
     Sample([uniform((2, 3, 2, 2), seed=8), np.array([[[0, 1], [2, 1]], [[2, 2], [0, 1.0]]])],
            {"multi_output": True, "normalization": "batch"}, wrt=[0],
            grad_ref=_so_ref(_multi, norm="batch", multi=True)),
     Sample([uniform((2, 3, 4), seed=9), np.array([[0, 1, -1, 1], [2, 2, 0, 1.0]])],
            {"multi_output": True, "normalization": "valid", "use_ignore": True}, wrt=[0],
            grad_ref=_so_ref(_multi, use_ignore=True, norm="valid", multi=True)),
     Sample([uniform((2, 4, 3), seed=3), np.array([[0, 1, 2, 1], [2, 2, 0, 1.0]])],
            {"preserve_shape": True, "smooth_alpha": 0.1}, wrt=[0],
            grad_ref=_so_ref(_last, alpha=0.1)),
     Sample([uniform((4, 3), seed=4), np.array([0.0, -1.0, 1.0, -1.0])],
            {"use_ignore": True, "normalization": "valid"}, wrt=[0],
            grad_ref=_so_ref(_flat, use_ignore=True, norm="valid")),
     # 'valid' counts the labels equal to ignore_label without use_ignore too (MXNet)
     Sample([uniform((4, 3), seed=10), np.array([0.0, 2.0, 1.0, 2.0])],
            {"normalization": "valid", "ignore_label": 2.0}, wrt=[0],
            grad_ref=_so_ref(_flat, ignore_label=2.0, norm="valid")),
     Sample([uniform((4, 3), seed=5), np.array([0, 2, 1, 2], np.int64)],
            {"use_ignore": True, "ignore_label": 2, "out_grad": True}, wrt=[0],
            grad_ref=_so_ref(_flat, use_ignore=True, ignore_label=2.0, out_grad=True)),
     Sample([uniform((4, 3), seed=6), _L], wrt=[0],
            grad_ref=_so_ref(_flat)),
     Sample([uniform((4, 3), dtype=F32), _L.astype(F32)], grad=False))


def _soft_label_ref(inputs, heads):
    x, label = inputs
    return [_softmax(x, 1) - label, None]


_add(SAMPLES, "SoftmaxOutput",
     Sample([uniform((2, 3), seed=7), _softmax(uniform((2, 3), seed=8), 1)], wrt=[0],
            grad_ref=_soft_label_ref),
     Sample([uniform((2, 3), seed=7), _softmax(uniform((2, 3), seed=8), 1)],
            {"normalization": "batch"}, wrt=[0], grad_ref=_soft_label_ref))
_add(FAILURES, "SoftmaxOutput",
     Failure([uniform((4, 3)), np.zeros(3)], {}, ValueError,
             r"^SoftmaxOutput: label must have shape \(4,\) or \(4, 3\) for data of shape "
             r"\(4, 3\) with multi_output=False, preserve_shape=False \(got \(3,\)\)"),
     Failure([uniform((4, 3)), _L], {"smooth_alpha": 1.0}, ValueError,
             r"^SoftmaxOutput: smooth_alpha must be in \[0, 1\) \(got 1.0\)"))
_add(ZERO_SIZE, "SoftmaxOutput", ZeroSize([zeros(0, 3), zeros(0)], {}, lambda x, l: x))

_add(SAMPLES, "_backward_SoftmaxOutput",
     Sample([_softmax(uniform((4, 3)), 1), _L], grad=False),
     Sample([_softmax(uniform((4, 3)), 1), _L, uniform((4, 3), seed=1)], {"out_grad": True},
            grad=False))
_add(FAILURES, "_backward_SoftmaxOutput",
     # found by the kernel, after out= is chosen
     Failure([_softmax(uniform((4, 3)), 1), np.array([0.0, 3.0, 1.0, 0.0])], {}, ValueError,
             r"^_backward_SoftmaxOutput: label must hold class indices in \[0, 3\) \(got "
             r"3.0 at row 1\)"),
     Failure([_softmax(uniform((4, 3)), 1), np.array([0.0, 0.5, 1.0, 0.0])], {}, ValueError,
             r"^_backward_SoftmaxOutput: label must hold class indices"))


def _reg_ref(kind, scale=1.0):
    def ref(inputs, heads):
        x, label = inputs
        y = 1 / (1 + np.exp(-x)) if kind == "logistic" else x
        d = y - label.reshape(x.shape)
        d = np.sign(d) if kind == "mae" else d
        return [d * scale / int(np.prod(x.shape[1:])), None]
    return ref


for _name, _kind in (("LinearRegressionOutput", "linear"),
                     ("LogisticRegressionOutput", "logistic"),
                     ("MAERegressionOutput", "mae")):
    _add(SAMPLES, _name,
         Sample([uniform((3, 2)), uniform((3, 2), seed=1)], wrt=[0],
                grad_ref=_reg_ref(_kind)),
         Sample([uniform((3, 1), seed=2), uniform((3,), seed=3)], {"grad_scale": 3.0},
                wrt=[0], grad_ref=_reg_ref(_kind, 3.0)),
         Sample([uniform((2, 4), seed=4), uniform((2, 2, 2), seed=5)], wrt=[0],
                grad_ref=_reg_ref(_kind)),
         Sample([uniform((3, 2), dtype=F32), uniform((3, 2), seed=1, dtype=F32)], grad=False))
    _add(FAILURES, _name,
         Failure([uniform((3, 2)), uniform((3,))], {}, ValueError,
                 rf"^{_name}: label must have 3 rows and 6 values, as data of shape "
                 r"\(3, 2\) \(got \(3,\)\)"),
         Failure([uniform((3, 2)), uniform((2, 3))], {}, ValueError,
                 rf"^{_name}: label must have 3 rows"))
    _add(ZERO_SIZE, _name, ZeroSize(
        [zeros(0, 2), zeros(0, 2)], {},
        (lambda x, l: 1 / (1 + np.exp(-x))) if _kind == "logistic" else (lambda x, l: x)))


def _make_loss_ref(scale=1.0, norm="null", thresh=0.0):
    def ref(inputs, heads):
        x = inputs[0]
        n = {"null": 1, "batch": x.shape[0],
             "valid": max(int((x > thresh).sum()), 1)}[norm]
        return [np.full(x.shape, scale / n)]
    return ref


_add(SAMPLES, "MakeLoss",
     Sample([uniform((2, 3))], grad_ref=_make_loss_ref()),
     Sample([uniform((2, 3), seed=1)], {"grad_scale": 2.0, "normalization": "batch"},
            grad_ref=_make_loss_ref(2.0, "batch")),
     Sample([uniform((2, 3), seed=2)], {"normalization": "valid", "valid_thresh": 0.5},
            grad_ref=_make_loss_ref(1.0, "valid", 0.5)),
     Sample([uniform((2, 3), dtype=F32)], grad=False))
_add(FAILURES, "MakeLoss",
     Failure([uniform((2, 3))], {"normalization": "all"}, ValueError,
             r"^MakeLoss: normalization must be one of"))
_add(ZERO_SIZE, "MakeLoss", ZeroSize([zeros(0, 3)], {"normalization": "valid"}, lambda x: x))

_SL = np.array([[-2.3, -0.6, -0.2], [0.1, 0.45, 1.7]])
_add(SAMPLES, "smooth_l1",
     Sample([_SL]), Sample([_SL], {"scalar": 2.0}), Sample([_SL], {"scalar": 0.5}),
     Sample([_SL.astype(F32)], grad=False))
_add(FAILURES, "smooth_l1",
     Failure([_SL], {"scalar": 0.0}, ValueError, r"^smooth_l1: scalar must be > 0 \(got 0.0\)"),
     Failure([ints(1, 2)], {}, TypeError, r"^smooth_l1: needs a floating-point data",
             out=((2,), F32)))
_add(ZERO_SIZE, "smooth_l1", ZeroSize([zeros(0, 3)], {}, lambda x: x))
