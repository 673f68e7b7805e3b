"""op_samples entries for the normalisation, activation and output operators
(runtime/ops/norm.py, activation.py, output.py).

The generic suites run outside training, so BatchNorm is sampled with its moving
statistics (tests/runtime/test_norm.py checks training mode), LeakyReLU's rrelu with its
mean slope.  The output layers' gradients ignore the head gradient (MXNet): their samples
carry ``grad_ref``, the gradient MXNet documents, computed here with NumPy.
"""

import numpy as np

from tests.runtime.op_samples import (FAILURES, SAMPLES, ZERO_SIZE, Failure, Sample, ZeroSize,
                                      _add, ints, positive, uniform, zeros)

F32 = np.float32


def _bn_params(c, seed=0, dtype=np.float64):
    """gamma, beta, moving_mean, moving_var."""
    return [positive((c,), seed).astype(dtype), uniform((c,), seed=seed + 1).astype(dtype),
            uniform((c,), -0.5, 0.5, seed + 2).astype(dtype),
            positive((c,), seed + 3).astype(dtype)]


# -- BatchNorm -----------------------------------------------------------------------------

_X = uniform((2, 3, 4))
_add(SAMPLES, "BatchNorm",
     Sample([_X] + _bn_params(3), wrt=[0, 1, 2]),
     Sample([_X] + _bn_params(3), {"fix_gamma": False}, wrt=[0, 1, 2]),
     Sample([uniform((2, 4, 3), seed=1)] + _bn_params(3, 5),
            {"axis": -1, "fix_gamma": False, "eps": 0.01}, wrt=[0, 1, 2]),
     Sample([uniform((4, 3), seed=2)] + _bn_params(3, 6),
            {"use_global_stats": True, "fix_gamma": False}, wrt=[0, 1, 2]),
     Sample([_X] + _bn_params(3), {"output_mean_var": True, "fix_gamma": False},
            wrt=[0, 1, 2]),
     Sample([_X.astype(F32)] + _bn_params(3, dtype=F32), grad=False),
     Sample([_X.astype(np.float16)] + _bn_params(3, dtype=F32), {"fix_gamma": False},
            grad=False))
_add(FAILURES, "BatchNorm",
     Failure([_X] + _bn_params(4), {}, ValueError,
             r"^BatchNorm: gamma must have shape \(3,\) \(data's size 3 on axis 1\) "
             r"\(got \(4,\)\)"),
     Failure([_X] + _bn_params(3), {"axis": 3}, ValueError,
             r"^BatchNorm: axis 3 is out of range"),
     Failure([_X] + _bn_params(3), {"momentum": 1.5}, ValueError,
             r"^BatchNorm: momentum must be in \[0, 1\] \(got 1.5\)"),
     Failure([_X] + _bn_params(3), {"eps": -1.0}, ValueError,
             r"^BatchNorm: eps must be finite and >= 0 \(got -1.0\)"),
     Failure([_X.astype(F32)] + _bn_params(3), {}, TypeError,
             r"^BatchNorm: gamma must have dtype float32 for float32 data \(got float64\)",
             out=((2, 3, 4), F32)),
     Failure([np.ones((2, 3), np.int64)] + _bn_params(3), {}, TypeError,
             r"^BatchNorm: needs floating-point data \(got int64\)", out=((2, 3), F32)))
_add(ZERO_SIZE, "BatchNorm",
     ZeroSize([zeros(0, 3)] + _bn_params(3), {}, lambda x, *p: x),
     ZeroSize([zeros(2, 0)] + [zeros(0)] * 4, {}, lambda x, *p: x))

_G, _XB = uniform((2, 3, 4), seed=7), uniform((2, 3, 4), seed=8)
_add(SAMPLES, "_backward_BatchNorm",
     Sample([_G, _XB, uniform((3,), seed=9), positive((3,), 10)], grad=False),
     Sample([_G, _XB, uniform((3,), seed=9), positive((3,), 10), positive((3,), 11)],
            {"axis": 1}, grad=False),
     Sample([_G.astype(np.float16), _XB.astype(np.float16),
             uniform((3,), seed=9).astype(F32), positive((3,), 10).astype(F32)],
            grad=False))
_add(FAILURES, "_backward_BatchNorm",
     Failure([_G, uniform((2, 3, 5)), uniform((3,)), positive((3,))], {}, ValueError,
             r"^_backward_BatchNorm: grad must have data's shape \(2, 3, 5\)", out=False))


# -- LayerNorm, InstanceNorm, GroupNorm, L2Normalization -------------------------------------

def _affine(c, seed=0):
    return [positive((c,), seed), uniform((c,), seed=seed + 1)]


_add(SAMPLES, "LayerNorm",
     Sample([uniform((2, 3, 4))] + _affine(4)),
     Sample([uniform((2, 3, 4), seed=1)] + _affine(3, 2), {"axis": 1, "eps": 0.1}),
     Sample([uniform((5,), seed=3)] + _affine(5, 4)),
     Sample([uniform((2, 3, 4))] + _affine(4), {"output_mean_var": True}, grad=False),
     Sample([uniform((2, 4), dtype=F32)] + [a.astype(F32) for a in _affine(4)], grad=False))
_add(FAILURES, "LayerNorm",
     Failure([uniform((2, 3))] + _affine(2), {}, ValueError,
             r"^LayerNorm: gamma must have shape \(3,\) \(data's size 3 on axis -1\) "
             r"\(got \(2,\)\)"),
     Failure([uniform((2, 3))] + _affine(3), {"axis": 2}, ValueError,
             r"^LayerNorm: axis 2 is out of range"),
     Failure([np.ones((2, 3), np.int64)] + _affine(3), {}, TypeError,
             r"^LayerNorm: needs floating-point data \(got int64\)", out=((2, 3), F32)))
_add(ZERO_SIZE, "LayerNorm", ZeroSize([zeros(0, 4)] + _affine(4), {}, lambda x, g, b: x))

_add(SAMPLES, "InstanceNorm",
     Sample([uniform((2, 3, 4))] + _affine(3)),
     Sample([uniform((2, 2, 2, 3), seed=1)] + _affine(2, 2), {"eps": 0.01}),
     Sample([uniform((2, 3, 4), dtype=F32)] + [a.astype(F32) for a in _affine(3)],
            grad=False))
_add(FAILURES, "InstanceNorm",
     Failure([uniform((2, 3))] + _affine(3), {}, ValueError,
             r"^InstanceNorm: data must have at least 3 dimensions .* \(got shape \(2, 3\)\)"),
     Failure([uniform((2, 3, 4))] + _affine(4), {}, ValueError,
             r"^InstanceNorm: gamma must have shape \(3,\)"))
_add(ZERO_SIZE, "InstanceNorm", ZeroSize([zeros(0, 3, 4)] + _affine(3), {},
                                         lambda x, g, b: x))

_add(SAMPLES, "GroupNorm",
     Sample([uniform((2, 4, 3))] + _affine(4), {"num_groups": 2}),
     Sample([uniform((2, 4, 3), seed=1)] + _affine(2, 2), {"num_groups": 2}),
     Sample([uniform((2, 3, 2, 2), seed=2)] + _affine(3, 3), {"eps": 0.1}),
     Sample([uniform((3, 4), seed=3)] + _affine(4, 4), {"num_groups": 4}),
     Sample([uniform((2, 4, 3))] + _affine(4), {"num_groups": 2, "output_mean_var": True},
            grad=False))
_add(FAILURES, "GroupNorm",
     Failure([uniform((2, 4, 3))] + _affine(4), {"num_groups": 3}, ValueError,
             r"^GroupNorm: num_groups must divide the 4 channels \(got num_groups=3\)"),
     Failure([uniform((2, 4, 3))] + _affine(3), {"num_groups": 2}, ValueError,
             r"^GroupNorm: gamma must have shape \(4,\) \(channels\) or \(2,\)"),
     Failure([uniform((2, 4, 3))] + _affine(4), {"num_groups": 0}, ValueError,
             r"^GroupNorm: num_groups must be >= 1 \(got 0\)"))
_add(ZERO_SIZE, "GroupNorm", ZeroSize([zeros(0, 4, 3)] + _affine(4), {"num_groups": 2},
                                      lambda x, g, b: x))

_add(SAMPLES, "L2Normalization",
     Sample([uniform((2, 3, 4))]),
     Sample([uniform((2, 3, 4), seed=1)], {"mode": "channel"}),
     Sample([uniform((2, 3, 2, 2), seed=2)], {"mode": "spatial", "eps": 0.1}),
     Sample([uniform((2, 3), dtype=F32)], grad=False))
_add(FAILURES, "L2Normalization",
     Failure([uniform((2, 3))], {"mode": "spatial"}, ValueError,
             r"^L2Normalization: data must have at least 3 dimensions for "
             r"mode='spatial' \(got 2\)"),
     Failure([uniform((2, 3))], {"mode": "channel"}, ValueError,
             r"^L2Normalization: data must have at least 3 dimensions for "
             r"mode='channel' \(got 2\)"),
     Failure([uniform((2, 3))], {"mode": "all"}, ValueError,
             r"^L2Normalization: mode must be one of"))
_add(ZERO_SIZE, "L2Normalization", ZeroSize([zeros(0, 3)], {}, lambda x: x))


# -- Activation, LeakyReLU ---------------------------------------------------------------

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


# -- output layers -----------------------------------------------------------------------

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


# -- LRN, _lrn_window_sum --

_LRN_X = uniform((2, 5, 3, 2), seed=780)
_add(SAMPLES, "LRN",
     Sample([_LRN_X], {"nsize": 3, "alpha": 0.5}),
     Sample([uniform((2, 4, 3), seed=781)], {"nsize": 5, "alpha": 0.3, "beta": 0.5,
                                             "knorm": 1.0}),
     Sample([uniform((1, 3, 2, 2), seed=782, dtype=np.float32)], {"nsize": 1}, grad=False))
_add(SAMPLES, "_lrn_window_sum",
     Sample([_LRN_X], {"nsize": 3}),
     Sample([uniform((2, 4), seed=783, dtype=np.float32)], {"nsize": 5}, grad=False))
for _name in ("LRN", "_lrn_window_sum"):
    _add(FAILURES, _name,
         Failure([_LRN_X], {"nsize": 4}, ValueError,
                 rf"^{_name}: nsize must be a positive odd number \(got nsize=4\)"),
         Failure([uniform((5,))], {"nsize": 3}, ValueError,
                 rf"^{_name}: data must have a channel axis 1"),
         Failure([ints(1, 2, 3, 4).reshape(1, 4)], {"nsize": 3}, TypeError,
                 rf"^{_name}: needs a floating-point input"))
    _add(ZERO_SIZE, _name, ZeroSize([zeros(0, 3, 2)], {"nsize": 3}, lambda x: x))
