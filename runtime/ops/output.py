"""Output (loss) layers with MXNet's special gradients: SoftmaxOutput,
LinearRegressionOutput, LogisticRegressionOutput, MAERegressionOutput, MakeLoss; and
smooth_l1 (an ordinary differentiable op).

As in MXNet, the backward of an output layer ignores the head gradient (the layer ends
the graph; ``backward()`` on it needs no head gradient) and computes the loss gradient
from the label; the label gets no gradient.  SoftmaxOutput with ``out_grad=True``
multiplies by the head gradient.
"""

import math

import numpy as np
import scipy.special as sps

from runtime._ndarray import shape_size
from runtime.ops._call import F, zeros
from runtime.ops.registry import Attr, float_input, register


def _label_type(op):
    def infer(attrs, dtypes):
        d = np.dtype(dtypes[0])
        if d.kind != "f":
            raise TypeError(f"{op}: needs floating-point data (got {d}); cast with "
                            "astype('float32')")
        if np.dtype(dtypes[1]).kind not in "iuf":
            raise TypeError(f"{op}: label must hold numbers (got {np.dtype(dtypes[1])})")
        return [d]
    return infer


# -- SoftmaxOutput -----------------------------------------------------------------------

SOFTMAX_OUTPUT_ATTRS = {
    "grad_scale": Attr("float", 1.0), "ignore_label": Attr("float", -1.0),
    "multi_output": Attr("bool", False), "use_ignore": Attr("bool", False),
    "preserve_shape": Attr("bool", False),
    "normalization": Attr("str", "null", choices=("null", "batch", "valid")),
    "out_grad": Attr("bool", False), "smooth_alpha": Attr("float", 0.0)}


def _so_plan(op, attrs, ds, ls):
    """(view shape (rows, k, cols) that softmax runs along axis 1 of, soft labels?) after
    validating the label's shape."""
    ds, ls = tuple(ds), tuple(ls)
    if not ds:
        raise ValueError(f"{op}: data must have at least 1 dimension (got shape ())")
    if attrs["multi_output"]:
        if len(ds) < 2:
            raise ValueError(f"{op}: data must have at least 2 dimensions (batch, classes, "
                             f"...) with multi_output=True (got shape {ds!r})")
        view = (ds[0], ds[1], shape_size(ds[2:]))
        want = [ds[:1] + ds[2:], (ds[0], shape_size(ds[2:])), ds[:1] + (1,) + ds[2:]]
    elif attrs["preserve_shape"]:
        view = (shape_size(ds[:-1]), ds[-1], 1)
        want = [ds[:-1]]
    else:
        view = (ds[0], shape_size(ds[1:]), 1)
        want = [ds[:1]]
    if ls == ds:
        return view, True
    if ls not in want:
        forms = " or ".join(repr(w) for w in want + [ds])
        raise ValueError(f"{op}: label must have shape {forms} for data of shape {ds!r} "
                         f"with multi_output={attrs['multi_output']}, preserve_shape="
                         f"{attrs['preserve_shape']} (got {ls!r})")
    return view, False


def _so_shape(attrs, shapes):
    if attrs["smooth_alpha"] < 0 or attrs["smooth_alpha"] >= 1:
        raise ValueError(f"SoftmaxOutput: smooth_alpha must be in [0, 1) (got "
                         f"{attrs['smooth_alpha']!r})")
    _so_plan("SoftmaxOutput", attrs, shapes[0], shapes[1])
    return [tuple(shapes[0])]


def _so_inputs(attrs, shapes):
    # label: one class index per softmax row (data without its class axis)
    data = shapes[0]
    if data is not None and shapes[1] is None and len(data) >= 1:
        if attrs["preserve_shape"]:
            shapes[1] = tuple(data[:-1])
        elif attrs["multi_output"]:
            shapes[1] = (data[0],) + tuple(data[2:])
        else:
            shapes[1] = (data[0],)
    return shapes


def _softmax_rows(x, view):
    """Softmax along axis 1 of ``x`` seen as ``view`` (float32 for float16)."""
    xv = x.reshape(view)
    if xv.dtype == np.float16:
        xv = xv.astype(np.float32)
    e = np.exp(xv - xv.max(axis=1, keepdims=True)) if xv.size else xv.copy()
    if e.size:
        e /= e.sum(axis=1, keepdims=True)
    return e


def _softmax_output(attrs, ins, outs):
    x, label = ins
    view, _ = _so_plan("SoftmaxOutput", attrs, x.shape, label.shape)
    outs[0][...] = _softmax_rows(x, view).reshape(x.shape)


def _so_grad(attrs, inputs, outputs, out_grads):
    y, label = outputs[0], inputs[1]
    args = [y, label] + ([out_grads[0]] if attrs["out_grad"] else [])
    return [F._backward_SoftmaxOutput(*args, **attrs), None]


register(
    "SoftmaxOutput", aliases=("Softmax",), inputs=("data", "label"),
    attrs=SOFTMAX_OUTPUT_ATTRS, infer_shape=_so_shape, infer_type=_label_type("SoftmaxOutput"),
    infer_inputs=_so_inputs,
    compute=_softmax_output, gradient=_so_grad, grad_inputs=(1,), grad_outputs=(0,),
    ignores=(1,),
    doc="""Softmax with the cross-entropy gradient (MXNet's ``SoftmaxOutput``).

Forward: softmax of data over its classes: the flattened trailing axes of (batch, ...)
(label (batch,)); axis 1 with ``multi_output=True`` (data (batch, classes, d1, ...),
label (batch, d1, ...) or (batch, d1 * ...)); the last axis with ``preserve_shape=True``
(label data.shape[:-1]).  A label of data's own shape holds class probabilities.

Backward, ignoring the head gradient (unless ``out_grad=True``, which multiplies by it):
``(out - one_hot(label)) * grad_scale / count``; ``smooth_alpha`` smooths the target to
``1 - alpha`` on the label and ``alpha / (classes - 1)`` elsewhere; with ``use_ignore``
the positions whose label equals ``ignore_label`` get 0.  ``count`` is MXNet's:
``normalization`` 'null' 1, 'batch' the batch size (the rows of the softmax), 'valid' the
number of labels not equal to ``ignore_label`` (at least 1; counted with or without
use_ignore); with ``multi_output`` 'null' and 'batch' also divide by the positions per
example (d1 * ...).  Probability labels give ``(out - label) * grad_scale``, not
normalised (MXNet).  A class label outside [0, classes) (other than an ignored one)
raises ValueError in the backward.  The label gets no gradient.""")


def _so_backward_shape(attrs, shapes):
    if len(shapes) not in (2, 3):
        raise TypeError("_backward_SoftmaxOutput: takes 2 or 3 array inputs (out, label[, "
                        f"head]) (got {len(shapes)})")
    _so_plan("_backward_SoftmaxOutput", attrs, shapes[0], shapes[1])
    if len(shapes) == 3 and tuple(shapes[2]) != tuple(shapes[0]):
        raise ValueError(f"_backward_SoftmaxOutput: head must have shape "
                         f"{tuple(shapes[0])!r} (got {tuple(shapes[2])!r})")
    return [tuple(shapes[0])]


def _so_backward(attrs, ins, outs):
    op = "_backward_SoftmaxOutput"
    y, label = ins[0], ins[1]
    view, soft = _so_plan(op, attrs, y.shape, label.shape)
    n, k, cols = view
    acc = np.dtype(np.float32) if y.dtype == np.float16 else y.dtype
    p = y.reshape(view).astype(acc)
    alpha = attrs["smooth_alpha"]
    if soft:
        target = label.reshape(view).astype(acc)
    else:
        lab = label.reshape(n, cols)
        ignored = np.trunc(lab) == math.trunc(attrs["ignore_label"])
        keep = ~ignored if attrs["use_ignore"] else np.ones(lab.shape, bool)
        bad = keep & ~((lab >= 0) & (lab < k) & (np.trunc(lab) == lab))
        if bad.any():
            pos = tuple(int(i) for i in np.argwhere(bad)[0])
            raise ValueError(f"{op}: label must hold class indices in [0, {k}) (got "
                             f"{lab[pos].item()!r} at row {pos[0]})")
        idx = np.where(keep, lab, 0).astype(np.int64)
        target = np.zeros(view, acc)
        if alpha > 0 and k > 1:
            target += alpha / (k - 1)
        np.put_along_axis(target, idx[:, None, :], 1.0 - alpha if k > 1 else 1.0, axis=1)
    grad = p - target
    if not soft:
        if attrs["use_ignore"]:
            grad *= keep[:, None, :]
        # MXNet's scale: the batch or the labels not equal to ignore_label (counted with
        # or without use_ignore), and with multi_output also the positions per example
        # (except for 'valid')
        norm = attrs["normalization"]
        count = {"null": 1, "batch": n,
                 "valid": max(n * cols - int(ignored.sum()), 1)}[norm]
        if attrs["multi_output"] and norm != "valid":
            count *= cols
        scale = attrs["grad_scale"] / count
    else:
        scale = attrs["grad_scale"]
    grad *= acc.type(scale)
    if len(ins) == 3:
        grad *= ins[2].reshape(view)
    outs[0][...] = grad.reshape(y.shape)


register(
    "_backward_SoftmaxOutput", inputs=("out", "label", "head"), variadic=True,
    attrs=SOFTMAX_OUTPUT_ATTRS, infer_shape=_so_backward_shape,
    infer_type=_label_type("_backward_SoftmaxOutput"), compute=_so_backward,
    doc="""Hidden: SoftmaxOutput's data gradient from its output ``out`` and ``label``
(and the head gradient with out_grad=True).  Its own gradient is not implemented.""")


# -- regression outputs ------------------------------------------------------------------

def _reg_shape(op):
    def infer(attrs, shapes):
        ds, ls = tuple(shapes[0]), tuple(shapes[1])
        if not ds:
            raise ValueError(f"{op}: data must have at least 1 dimension (got shape ())")
        if not ls or ls[0] != ds[0] or shape_size(ls) != shape_size(ds):
            raise ValueError(f"{op}: label must have {ds[0]} rows and {shape_size(ds)} "
                             f"values, as data of shape {ds!r} (got {ls!r})")
        return [ds]
    return infer


def _reg_inputs(attrs, shapes):
    # graph mode: an unknown label takes data's shape (MXNet's regression outputs)
    if shapes[0] is not None and shapes[1] is None:
        shapes[1] = tuple(shapes[0])
    return shapes


def _reg_kernel(fn):
    def compute(attrs, ins, outs):
        fn(ins[0], out=outs[0])
    return compute


def _reg_grad(kind):
    def rule(attrs, inputs, outputs, out_grads):
        y, label = outputs[0], inputs[1]
        if y.size == 0:
            return [zeros(y), None]
        if np.dtype(label.dtype) != np.dtype(y.dtype):
            label = F.cast(label, dtype=y.dtype)
        if label.shape != y.shape:
            label = label.reshape(y.shape)
        # MXNet: grad_scale / num_output, num_output the label's size per example
        scale = attrs["grad_scale"] / max(shape_size(y.shape[1:]), 1)
        d = y - label
        return [(F.sign(d) if kind == "mae" else d) * scale, None]
    return rule


for _name, _fn, _kind, _what in (
        ("LinearRegressionOutput", np.copyto, "linear",
         "``out = data``; gradient ``(out - label) * grad_scale / num_output``"),
        ("LogisticRegressionOutput", sps.expit, "logistic",
         "``out = sigmoid(data)``; gradient ``(out - label) * grad_scale / num_output``"),
        ("MAERegressionOutput", np.copyto, "mae",
         "``out = data``; gradient ``sign(out - label) * grad_scale / num_output``")):
    register(
        _name, inputs=("data", "label"), attrs={"grad_scale": Attr("float", 1.0)},
        infer_shape=_reg_shape(_name), infer_inputs=_reg_inputs,
        infer_type=_label_type(_name),
        compute=_reg_kernel((lambda x, out: np.copyto(out, x)) if _fn is np.copyto else _fn),
        gradient=_reg_grad(_kind), grad_inputs=(1,), grad_outputs=(0,), ignores=(1,),
        doc=f"""MXNet's ``{_name}``: {_what}, where num_output is the label's size per
example (``label.size / label.shape[0]``).  The head gradient is ignored and the label
gets none (MXNet).  label has data's first dimension and size (MXNet: data's shape, or
(n,) for data (n, 1), or any such reshape).""")


# -- MakeLoss ----------------------------------------------------------------------------

def _make_loss_grad(attrs, inputs, outputs, out_grads):
    x = inputs[0]
    ones = zeros(x) + attrs["grad_scale"]
    norm = attrs["normalization"]
    if norm == "batch":
        return [ones / max(x.shape[0] if x.ndim else 1, 1)]
    if norm == "valid":
        count = F.sum(x > attrs["valid_thresh"])
        return [ones / F.maximum(count, F.ones_like(count))]
    return [ones]


register(
    "MakeLoss", aliases=("make_loss",),
    attrs={"grad_scale": Attr("float", 1.0), "valid_thresh": Attr("float", 0.0),
           "normalization": Attr("str", "null", choices=("null", "batch", "valid"))},
    infer_type=float_input("MakeLoss", "data"),
    compute=lambda attrs, ins, outs: np.copyto(outs[0], ins[0]), gradient=_make_loss_grad,
    grad_inputs=lambda attrs, n: (0,) if attrs["normalization"] == "valid" else (),
    inplace=[(0, 0)],
    doc="""Marks ``data`` as a loss (MXNet's ``MakeLoss``): the forward is the identity;
the backward ignores the head gradient and gives ``grad_scale`` everywhere, divided by
the batch size (``normalization='batch'``) or by the number of entries of data above
``valid_thresh`` (``'valid'``, at least 1).""")


# -- smooth_l1 ---------------------------------------------------------------------------

def _smooth_l1(attrs, ins, outs):
    x = ins[0]
    s2 = x.dtype.type(attrs["scalar"] ** 2)
    ax = np.abs(x)
    outs[0][...] = np.where(ax < 1 / s2, 0.5 * s2 * x * x, ax - 0.5 / s2)


def _smooth_l1_shape(attrs, shapes):
    if not attrs["scalar"] > 0:
        raise ValueError(f"smooth_l1: scalar must be > 0 (got {attrs['scalar']!r})")
    return [tuple(shapes[0])]


def _smooth_l1_grad(attrs, inputs, outputs, out_grads):
    x, g = inputs[0], out_grads[0]
    s2 = attrs["scalar"] ** 2
    inside = F.abs(x) < 1 / s2
    return [g * (inside * x * s2 + (1 - inside) * F.sign(x))]


register(
    "smooth_l1", attrs={"scalar": Attr("float", 1.0)}, infer_shape=_smooth_l1_shape,
    infer_type=float_input("smooth_l1", "data"), compute=_smooth_l1,
    gradient=_smooth_l1_grad, grad_inputs=(0,),
    doc="""Smooth L1 (MXNet's ``smooth_l1``), with ``sigma = scalar``: ``0.5 * (sigma *
x) ** 2`` where ``|x| < 1 / sigma ** 2``, else ``|x| - 0.5 / sigma ** 2``.""")
