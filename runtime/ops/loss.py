"""Fused per-sample losses behind ``runtime.gluon.loss`` (hidden operators: MXNet has no
such ops; Gluon composes them).  One kernel each way instead of four or five small ops,
with the numerically stable formulas:

- ``_softmax_ce_loss(data, label)``: ``logsumexp(data[i]) - data[i, label[i]]`` for
  (n, k) logits and (n,) class indices, shape (n,);
- ``_softmax_ce_loss_grad(data, label, ograd)``: its gradient,
  ``(softmax(data) - one_hot(label)) * ograd[:, None]``;
- ``_sigmoid_bce_loss(data, label)``: ``max(x, 0) - x * z + log(1 + exp(-|x|))``
  elementwise, evaluated as ``logaddexp(0, x) - x * z``;
- ``_sigmoid_bce_loss_grad(data, label, ograd)``: its data gradient,
  ``(sigmoid(data) - label) * ograd``.

float16 is computed in float32 and rounded once at the end (MXNet's accumulation type).
Host float32/float64 logits take the compiled kernels of ``runtime._loss_kernels`` (one
pass over each row); other cases the NumPy formulas.
"""

import numpy as np

from runtime import _loss_kernels as LK
from runtime._device import like
from runtime.ops._call import F
from runtime.ops.nn import _index_type, _indices
from runtime.ops.registry import float_input, register


def _ce_shapes(op, with_ograd):
    def infer(attrs, shapes):
        ds, ls = shapes[0], shapes[1]
        if len(ds) != 2:
            raise ValueError(f"{op}: data must be 2-D (batch, classes) (got shape {ds!r})")
        if ls != ds[:1]:
            raise ValueError(f"{op}: label must have shape {ds[:1]!r} for data of shape "
                             f"{ds!r} (got {ls!r})")
        if with_ograd and shapes[2] != ds[:1]:
            raise ValueError(f"{op}: ograd must have shape {ds[:1]!r} for data of shape "
                             f"{ds!r} (got {shapes[2]!r})")
        return [ds if with_ograd else ds[:1]]
    return infer


def _ce_types(op, with_ograd):
    check = _index_type(op, "label")
    floating = float_input(op, "data")

    def infer(attrs, dtypes):
        check(dtypes[1])
        out = floating(attrs, dtypes)
        if with_ograd and dtypes[2] != dtypes[0]:
            raise TypeError(f"{op}: ograd must have data's dtype {dtypes[0]} (got "
                            f"{dtypes[2]})")
        return out
    return infer


def _softmax_cols(x):
    """(shifted logits, their exp, its column sums) of ``x.T`` as a C-contiguous (k, n)
    copy: the stable pieces of softmax by row of ``x``.  The reductions then run across
    rows of k contiguous vectors, not along n rows of k values (NumPy's ``max(axis=1)``
    of a (256, 10) float32 array costs 30 times more than that of its transpose)."""
    xt = x.T.astype(np.float32 if x.dtype == np.float16 else x.dtype, order="C")
    xt -= xt.max(axis=0)
    e = np.exp(xt)
    return xt, e, e.sum(axis=0)


_LABEL_TYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64))
_FLOAT_TYPES = frozenset((np.dtype(np.float32), np.dtype(np.float64)))


def _compiled(x, label):
    """True when the compiled kernels take these kernel arrays: host float32/float64
    logits and a label dtype they are built for (the invoker's arrays are C-contiguous,
    ograd and out of x's dtype)."""
    return (type(x) is np.ndarray and x.dtype in _FLOAT_TYPES and label.dtype in _LABEL_TYPES
            and x.shape[0] > 0)


def _softmax_ce(attrs, ins, outs):
    x, label = ins
    n, k = x.shape
    out = outs[0]
    if _compiled(x, label):
        if LK.softmax_ce(x, label, out) >= 0:
            _indices("_softmax_ce_loss", label, k, "label")      # raises, naming it
        return
    idx = _indices("_softmax_ce_loss", label, k, "label")
    if n == 0:
        return
    z, _, s = _softmax_cols(x)
    outs[0][...] = np.log(s) - z[idx, like(x, np.arange(n))]


def _softmax_ce_grad_kernel(attrs, ins, outs):
    x, label, g = ins
    n, k = x.shape
    out = outs[0]
    if _compiled(x, label):
        if LK.softmax_ce_grad(x, label, g, out) >= 0:
            _indices("_softmax_ce_loss_grad", label, k, "label")  # raises, naming it
        return
    idx = _indices("_softmax_ce_loss_grad", label, k, "label")
    if n == 0:
        return
    _, e, s = _softmax_cols(x)
    e /= s
    e[idx, like(x, np.arange(n))] -= 1
    e *= g
    outs[0][...] = e.T


def _softmax_ce_rule(attrs, inputs, outputs, out_grads):
    x, label = inputs
    return [F._softmax_ce_loss_grad(x, label, out_grads[0]), None]


def _softmax_ce_grad_rule(attrs, inputs, outputs, out_grads, needs=(True, False, True)):
    # d/dx of sum(H * (p - y) * g[:, None]) is p * (q - sum(p * q)) with q = H * g[:, None];
    # d/dg is sum(H * (p - y), axis=1)
    x, label, g = inputs
    h = out_grads[0]
    p = F.softmax(x, axis=1)
    dx = dg = None
    if needs[0]:
        q = h * F.expand_dims(g, axis=1)
        dx = p * (q - F.sum(p * q, axis=1, keepdims=True))
    if needs[2]:
        dg = F.sum(h * (p - F._label_one_hot(x, label)), axis=1)
    return [dx, None, dg]


register(
    "_softmax_ce_loss", inputs=("data", "label"),
    infer_shape=_ce_shapes("_softmax_ce_loss", False),
    infer_type=_ce_types("_softmax_ce_loss", False), compute=_softmax_ce,
    gradient=_softmax_ce_rule, grad_inputs=(0, 1),
    doc="""Hidden (``nn.loss.SoftmaxCrossEntropyLoss``): per-sample cross-entropy of
softmax(data) against class labels, ``logsumexp(data[i]) - data[i, label[i]]``, shape
(n,).  ``data`` (n, k) logits, ``label`` (n,) class indices (integers, or floats
holding integers); a label outside [0, k) raises ValueError naming it.  The gradient
of data is ``_softmax_ce_loss_grad``; label gets none.""")

register(
    "_softmax_ce_loss_grad", inputs=("data", "label", "ograd"),
    infer_shape=_ce_shapes("_softmax_ce_loss_grad", True),
    infer_type=_ce_types("_softmax_ce_loss_grad", True), compute=_softmax_ce_grad_kernel,
    gradient=_softmax_ce_grad_rule, grad_inputs=(0, 1, 2),
    doc="""Hidden: the data gradient of ``_softmax_ce_loss``, ``(softmax(data) -
one_hot(label)) * ograd[:, None]`` in one pass, shape (n, k).""")


def _bce_shape(attrs, shapes):
    if shapes[1] != shapes[0]:
        raise ValueError(f"_sigmoid_bce_loss: label must have data's shape {shapes[0]!r} "
                         f"(got {shapes[1]!r})")
    return [shapes[0]]


def _bce_type(attrs, dtypes):
    out = float_input("_sigmoid_bce_loss", "data")(attrs, dtypes)
    if dtypes[1] != dtypes[0]:
        raise TypeError(f"_sigmoid_bce_loss: label must have data's dtype {dtypes[0]} (got "
                        f"{dtypes[1]}); cast with astype()")
    return out


def _bce(attrs, ins, outs):
    x, z = ins
    if x.dtype == np.float16:
        x, z = x.astype(np.float32), z.astype(np.float32)
    loss = np.logaddexp(x.dtype.type(0), x)
    loss -= x * z
    outs[0][...] = loss


def _bce_rule(attrs, inputs, outputs, out_grads, needs=(True, True)):
    x, z = inputs
    g = out_grads[0]
    return [F._sigmoid_bce_loss_grad(x, z, g) if needs[0] else None,
            -(x * g) if needs[1] else None]


register(
    "_sigmoid_bce_loss", inputs=("data", "label"), infer_shape=_bce_shape,
    infer_type=_bce_type, compute=_bce, gradient=_bce_rule, grad_inputs=(0, 1),
    doc="""Hidden (``nn.loss.SigmoidBinaryCrossEntropyLoss``): elementwise binary
cross-entropy of sigmoid(data) against ``label``, ``max(x, 0) - x * z + log(1 +
exp(-|x|))`` (evaluated as ``logaddexp(0, x) - x * z``: no overflow for any x).
``label`` has data's shape and dtype.  Gradients: ``_sigmoid_bce_loss_grad`` (``(sigmoid(x)
- z) * g``) for data, ``-x * g`` for label.""")


def _bce_grad_shape(attrs, shapes):
    for name, shape in zip(("label", "ograd"), shapes[1:]):
        if shape != shapes[0]:
            raise ValueError(f"_sigmoid_bce_loss_grad: {name} must have data's shape "
                             f"{shapes[0]!r} (got {shape!r})")
    return [shapes[0]]


def _bce_grad_type(attrs, dtypes):
    out = float_input("_sigmoid_bce_loss_grad", "data")(attrs, dtypes)
    for name, dtype in zip(("label", "ograd"), dtypes[1:]):
        if dtype != dtypes[0]:
            raise TypeError(f"_sigmoid_bce_loss_grad: {name} must have data's dtype "
                            f"{dtypes[0]} (got {dtype}); cast with astype()")
    return out


def _bce_grad(attrs, ins, outs):
    x, z, g = ins
    if x.dtype == np.float16:
        x, z, g = (a.astype(np.float32) for a in (x, z, g))
    s = np.logaddexp(x.dtype.type(0), -x)     # sigmoid(x) = exp(-log(1 + exp(-x)))
    np.negative(s, out=s)
    np.exp(s, out=s)
    s -= z
    s *= g
    outs[0][...] = s


def _bce_grad_rule(attrs, inputs, outputs, out_grads, needs=(True, True, True)):
    x, z, g = inputs
    h = out_grads[0]
    s = F.sigmoid(x)
    return [h * g * s * (1.0 - s) if needs[0] else None,
            -(h * g) if needs[1] else None,
            h * (s - z) if needs[2] else None]


register(
    "_sigmoid_bce_loss_grad", inputs=("data", "label", "ograd"),
    infer_shape=_bce_grad_shape, infer_type=_bce_grad_type, compute=_bce_grad,
    gradient=_bce_grad_rule, grad_inputs=(0, 1, 2),
    doc="""Hidden: the data gradient of ``_sigmoid_bce_loss``, ``(sigmoid(data) -
label) * ograd`` in one pass.""")
