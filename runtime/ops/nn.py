"""Neural-network operators: softmax, log_softmax, softmax_cross_entropy, Dropout,
Embedding (MXNet 1.x names, defaults and semantics).

Hidden helpers, used by the gradient rules so that those are made of registry ops only:
``_label_one_hot`` (the one-hot matrix of class labels), ``_embedding_grad`` (dense
scatter-add of head gradients into weight rows) and ``_embedding_grad_rsp`` (the same
as a row_sparse array holding only the rows that were looked up).

float16 inputs are computed in float32 and rounded once at the end (MXNet's
accumulation type).
"""

import numpy as np

from runtime import _loss_kernels as LK
from runtime import _storage
from runtime import _rng as _random
from runtime._device import like
from runtime._imperative import is_recording, is_training
from runtime._ndarray import from_numpy, storage_host
from runtime.ops._call import F
from runtime.ops.registry import Attr, float_input, normalize_axis, register


def _indices(op, a, n, what):
    """``a`` (class labels / row indices) as int64; ValueError naming the first value
    that is not an integer in [0, n), before anything is written."""
    if type(a) is np.ndarray and a.size:
        # host arrays: the extremes and, for floats, one comparison with the cast answer
        # for the common valid case; the element-wise test below finds the culprit
        lo, hi = _min_reduce(a, None), _max_reduce(a, None)
        if lo >= 0 and hi < n:                      # False for NaN
            if a.dtype.kind != "f":
                return a if a.dtype == np.int64 else a.astype(np.int64)
            idx = a.astype(np.int64)
            if not _or_reduce(_ne(idx, a), None):
                return idx
    if a.dtype.kind == "f":
        bad = ~((a >= 0) & (a < n) & (np.trunc(a) == a))     # NaN is bad too
    else:
        bad = (a < 0) | (a >= n)
    if a.size and bool(bad.any()):
        pos = int(np.flatnonzero(bad)[0])
        where = pos if a.ndim == 1 else tuple(int(i) for i in np.unravel_index(pos, a.shape))
        value = a.reshape(-1)[pos].item()
        raise ValueError(f"{op}: {what} must hold integers in [0, {n}) (got {value!r} at "
                         f"position {where!r})")
    return a.astype(np.int64)


_min_reduce, _max_reduce, _add_reduce = np.minimum.reduce, np.maximum.reduce, np.add.reduce
_ne, _or_reduce = np.not_equal, np.logical_or.reduce
_ROWS_OF = {}       # n -> np.arange(n), the row indices of label picks (host)


def _rows(x, n):
    """``arange(n)`` on the device of ``x``; host ones are kept per n."""
    if type(x) is not np.ndarray:
        return like(x, np.arange(n))
    r = _ROWS_OF.get(n)
    if r is None:
        r = np.arange(n)
        r.flags.writeable = False
        if len(_ROWS_OF) < 64:
            _ROWS_OF[n] = r
    return r


def _clipped_rows(op, a, n):
    """Row indices ``a`` as int64, clipped into [0, n) as MXNet's Embedding does (an
    index too large addresses the last row, a negative one the first; floats are
    truncated); a NaN or infinite index is an IndexError, as in ``take``."""
    if a.dtype.kind == "f":
        bad = (a != a) | (abs(a) == np.inf)
        if a.size and bool(bad.any()):
            pos = int(bad.ravel().argmax())
            raise IndexError(f"{op}: index {float(a.ravel()[pos])} at position {pos} is "
                             "not a finite number")
        a = np.trunc(a)
    return np.clip(a, 0, n - 1).astype(np.int64)


def _index_type(op, what):
    def check(dtype):
        if dtype.kind not in "iuf":
            raise TypeError(f"{op}: {what} must hold integer or floating-point indices "
                            f"(got {dtype})")
    return check


# -- softmax, log_softmax ---------------------------------------------------------------

# MXNet's SoftmaxParam, in its documented order (softmax's array inputs are data, length).
SOFTMAX_ATTRS = {"axis": Attr("int", -1), "temperature": Attr("any", None),
                 "dtype": Attr("dtype_or_none", None,
                               choices=("float16", "float32", "float64")),
                 "use_length": Attr("bool", False)}


def _temperature(op, attrs):
    t = attrs["temperature"]
    if t is None:
        return 1.0
    if isinstance(t, (bool, np.bool_)) or not isinstance(t, (int, float, np.integer,
                                                            np.floating)):
        raise TypeError(f"{op}: temperature must be a number or None (got {t!r})")
    if t == 0 or not np.isfinite(t):
        raise ValueError(f"{op}: temperature must be a finite non-zero number (got {t!r})")
    return float(t)


def _softmax_shape(op):
    def infer(attrs, shapes):
        _temperature(op, attrs)
        if attrs["use_length"] and op != "softmax":
            raise ValueError(f"{op}: use_length=True needs a length input, which "
                             f"MXNet's {op} does not take (use softmax)")
        if len(shapes) > 2:
            raise TypeError(f"{op}: takes the array inputs data and length (got "
                            f"{len(shapes)})")
        if attrs["use_length"] != (len(shapes) == 2):
            raise ValueError(f"{op}: a length input goes with use_length=True (got "
                             f"use_length={attrs['use_length']} and "
                             f"{'a' if len(shapes) == 2 else 'no'} length)")
        # A 0-d input is treated as one value along its only axis (0 or -1).
        shape = shapes[0]
        axis = normalize_axis(op, attrs["axis"], max(len(shape), 1))
        if len(shapes) == 2:
            want = shape[:axis] + shape[axis + 1:]
            if shapes[1] != want:
                raise ValueError(f"{op}: length must have the shape of data without axis "
                                 f"{attrs['axis']}, {want!r} (got {shapes[1]!r})")
        return [shape]
    return infer


def _softmax_type(op):
    check = float_input(op)

    def infer(attrs, dtypes):
        check(attrs, dtypes[:1])
        if len(dtypes) == 2 and dtypes[1].kind not in "iu":
            raise TypeError(f"{op}: length must hold integers (got {dtypes[1]})")
        return [attrs["dtype"] or dtypes[0]]
    return infer


def _masked_softmax(x, length, axis, t, y):
    """softmax of ``x / t`` over the first ``length`` entries along ``axis`` into ``y``;
    0 beyond them (MXNet's use_length)."""
    n = x.shape[axis]
    shape = [1] * x.ndim
    shape[axis] = n
    mask = np.arange(n).reshape(shape) < np.expand_dims(length, axis)
    np.divide(x, t, out=y)
    y[~np.broadcast_to(mask, y.shape)] = -np.inf
    m = np.max(y, axis=axis, keepdims=True)
    np.subtract(y, np.where(np.isfinite(m), m, 0), out=y)
    np.exp(y, out=y)
    s = np.sum(y, axis=axis, keepdims=True)
    np.divide(y, np.where(s == 0, 1, s), out=y)


_ndarray = np.ndarray
_ROWS_TYPES = frozenset((np.dtype(np.float32), np.dtype(np.float64)))


def _softmax_kernel(log):
    def compute(attrs, ins, outs):
        x, out = ins[0], outs[0]
        t = _temperature("", attrs)
        if x.ndim == 0:
            x, out = x.reshape(1), out.reshape(1)
        axis = normalize_axis("", attrs["axis"], x.ndim)
        if x.size == 0:
            return
        if (log and t == 1.0 and len(ins) == 1 and axis == x.ndim - 1 and x.shape[-1] > 0
                and type(x) is _ndarray and x.dtype in _ROWS_TYPES and out.dtype == x.dtype):
            # rows of class scores: one compiled pass per row
            k = x.shape[-1]
            LK.log_softmax_rows(x.reshape(-1, k), out.reshape(-1, k))
            return
        y = out if out.dtype != np.float16 else np.empty(x.shape, dtype=np.float32)
        if len(ins) == 2:
            _masked_softmax(x, ins[1], axis, t, y)
        elif t == 1.0:
            np.subtract(x, np.max(x, axis=axis, keepdims=True), out=y)
        else:
            np.divide(x, t, out=y)
            np.subtract(y, np.max(y, axis=axis, keepdims=True), out=y)
        if len(ins) == 2:
            pass                     # _masked_softmax gave the result
        elif log:
            s = np.sum(np.exp(y), axis=axis, keepdims=True)
            np.subtract(y, np.log(s, out=s), out=y)
        else:
            np.exp(y, out=y)
            np.divide(y, np.sum(y, axis=axis, keepdims=True), out=y)
        if y is not out:
            np.copyto(out, y, casting="unsafe")
    return compute


def _to_input_dtype(dx, x):
    return dx if dx.dtype == x.dtype else F.cast(dx, dtype=x.dtype)


def _softmax_grad(attrs, inputs, outputs, out_grads):
    y, g = outputs[0], out_grads[0]
    length = [None] * (len(inputs) - 1)
    if y.ndim == 0:                  # softmax of one value is the constant 1
        return [_to_input_dtype(F.zeros_like(g), inputs[0])] + length
    gy = g * y
    dx = gy - y * F.sum(gy, axis=attrs["axis"], keepdims=True)
    t = _temperature("softmax", attrs)
    return [_to_input_dtype(dx if t == 1.0 else dx / t, inputs[0])] + length


def _log_softmax_grad(attrs, inputs, outputs, out_grads):
    y, g = outputs[0], out_grads[0]
    if y.ndim == 0:                  # log_softmax of one value is the constant 0
        return [_to_input_dtype(F.zeros_like(g), inputs[0])]
    dx = g - F.exp(y) * F.sum(g, axis=attrs["axis"], keepdims=True)
    t = _temperature("log_softmax", attrs)
    return [_to_input_dtype(dx if t == 1.0 else dx / t, inputs[0])]


register(
    "softmax", inputs=("data", "length"), variadic=True, attrs=SOFTMAX_ATTRS,
    infer_shape=_softmax_shape("softmax"), infer_type=_softmax_type("softmax"),
    compute=_softmax_kernel(False), gradient=_softmax_grad, grad_outputs=(0,),
    inplace=[(0, 0)],
    doc="""``exp(x / T) / sum(exp(x / T), axis)`` along ``axis`` (default -1), computed
stably (the maximum is subtracted first).  ``temperature`` T: None means 1.0.  As
MXNet: ``dtype`` (None, 'float16', 'float32', 'float64') is the output dtype (None: the
input's); with ``use_length=True`` the integer input ``length`` (data's shape without
``axis``) limits each softmax to its first ``length`` entries, the others are 0.""")
register(
    "log_softmax", attrs=SOFTMAX_ATTRS, infer_shape=_softmax_shape("log_softmax"),
    infer_type=_softmax_type("log_softmax"), compute=_softmax_kernel(True),
    gradient=_log_softmax_grad, grad_outputs=(0,), inplace=[(0, 0)],
    doc="""``log(softmax(x, axis, temperature))``, computed stably as ``x / T - max -
log(sum(exp(x / T - max)))``.  ``dtype`` is the output dtype as in softmax; MXNet's
log_softmax takes no length input (``use_length=True`` raises).""")


def _softmin(attrs, ins, outs):
    _SOFTMAX(attrs, [-ins[0]], outs)


_SOFTMAX = _softmax_kernel(False)


def _softmin_grad(attrs, inputs, outputs, out_grads):
    dx, = _softmax_grad(attrs, inputs, outputs, out_grads)
    return [-dx]


register(
    "softmin", attrs=SOFTMAX_ATTRS, infer_shape=_softmax_shape("softmin"),
    infer_type=_softmax_type("softmin"), compute=_softmin, gradient=_softmin_grad,
    grad_outputs=(0,),
    doc="""``softmax(-x, axis, temperature)`` (MXNet's softmin): ``exp(-x / T) /
sum(exp(-x / T), axis)``, largest for the smallest values.  ``dtype`` as in softmax; no
length input (``use_length=True`` raises).""")


# -- softmax_cross_entropy --------------------------------------------------------------

def _ce_shape(op):
    def infer(attrs, shapes):
        ds, ls = shapes
        if len(ds) != 2:
            raise ValueError(f"{op}: data must be 2-D (batch, classes) (got shape {ds!r})")
        if ls != ds[:1]:
            raise ValueError(f"{op}: label must have shape {ds[:1]!r} for data of shape "
                             f"{ds!r} (got {ls!r})")
        return [(1,) if op == "softmax_cross_entropy" else ds]
    return infer


def _ce_type(op):
    check = _index_type(op, "label")

    def infer(attrs, dtypes):
        check(dtypes[1])
        return float_input(op, "data")(attrs, dtypes)
    return infer


class _CEState:
    """Per call of softmax_cross_entropy: the softmax its forward computed on the host
    (None elsewhere), which the gradient then reads instead of computing it again."""
    __slots__ = ("prob",)

    def __init__(self):
        self.prob = None


def _ce_prepare(attrs):
    return _CEState()


_CE_LABELS = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64))


def _ce_compiled(x, label, n):
    """True when runtime._loss_kernels takes these kernel arrays: host float32/float64
    logits with rows, labels of a dtype it is built for."""
    return (n and type(x) is _ndarray and x.dtype in _ROWS_TYPES and label.dtype in _CE_LABELS
            and label.ndim == 1)


def _softmax_ce(attrs, ins, outs, state=None):
    x, label = ins
    n, k = x.shape
    if _ce_compiled(x, label, n):
        # one compiled pass per row: the row's loss and its softmax, kept for the gradient
        rows = np.empty(n, x.dtype)
        prob = np.empty_like(x) if state is not None else None
        if LK.softmax_ce(x, label, rows, prob) < 0:
            if state is not None:
                state.prob = prob
            outs[0][...] = _add_reduce(rows)
            return
    idx = _indices("softmax_cross_entropy", label, k, "label")   # raises, naming it
    if n == 0:
        outs[0][...] = 0
        return
    if type(x) is np.ndarray and x.dtype != np.float16:
        # the same arithmetic through the ufuncs' own methods; exp(x - max) divided by
        # its sums is the softmax, _softmax_rows's steps: kept for the gradient
        m = _max_reduce(x, 1, None, None, True)
        e = np.subtract(x, m)
        s = _add_reduce(np.exp(e, out=e), 1, None, None, True)
        if state is not None:
            state.prob = np.divide(e, s, out=e)
        lse = np.add(np.log(s, out=s), m, out=s)[:, 0]
        outs[0][...] = _add_reduce(np.subtract(lse, x[_rows(x, n), idx], out=lse))
        return
    if x.dtype == np.float16:
        x = x.astype(np.float32)
    m = np.max(x, axis=1, keepdims=True)
    lse = np.log(np.sum(np.exp(x - m), axis=1)) + m[:, 0]
    picked = x[like(x, np.arange(n)), idx]
    outs[0][...] = np.sum(lse - picked)


def _softmax_ce_grad(attrs, inputs, outputs, out_grads, state=None):
    x, label = inputs
    if state is not None and state.prob is not None and not is_recording():
        # the forward's softmax (under create_graph the gradient must reach x through
        # data: then the softmax is computed again from it)
        prob = from_numpy(state.prob, ctx=x.ctx)
        return [F._backward_softmax_ce_prob(out_grads[0], prob, label), None]
    return [F._backward_softmax_cross_entropy(out_grads[0], x, label), None]


register(
    "softmax_cross_entropy", inputs=("data", "label"),
    infer_shape=_ce_shape("softmax_cross_entropy"),
    infer_type=_ce_type("softmax_cross_entropy"), compute=_softmax_ce,
    prepare=_ce_prepare, gradient=_softmax_ce_grad, grad_inputs=(0, 1),
    doc="""Cross-entropy of softmax(data) against class labels, SUMMED over the batch
(MXNet): ``sum_i -log softmax(data)[i, label[i]]``, shape (1,).  ``data`` (n, k)
logits, ``label`` (n,) class indices (integers, or floats holding integers); a label
outside [0, k) raises ValueError naming it.  The gradient is ``(softmax(data) -
one_hot(label)) * head_grad`` for data; label gets none.""")


_ROWS = {"axis": 1, "temperature": None}
_softmax_rows = _softmax_kernel(False)


def _bce_infer(op, what):
    """(infer_shape, infer_type) of a hidden cross-entropy gradient ``op`` whose inputs
    are ``ograd`` (1,) and ``what`` (n, k) of one dtype, then the labels."""
    def shape(attrs, shapes):
        if shapes[0] != (1,):
            raise ValueError(f"{op}: ograd must have shape (1,) (got {shapes[0]!r})")
        return _ce_shape(op)(attrs, shapes[1:])

    def dtype(attrs, dtypes):
        if dtypes[0] != dtypes[1]:
            raise TypeError(f"{op}: ograd must have {what}'s dtype {dtypes[1]} (got "
                            f"{dtypes[0]})")
        return _ce_type(op)(attrs, dtypes[1:])
    return shape, dtype


_bce_shape, _bce_type = _bce_infer("_backward_softmax_cross_entropy", "data")


def _softmax_ce_backward(attrs, ins, outs):
    og, x, label = ins
    n, k = x.shape
    out = outs[0]
    if _ce_compiled(x, label, n):
        # the forward's compiled arithmetic: the same bits as from the softmax it keeps
        if LK.softmax_ce_grad(x, label, np.repeat(og, n), out) < 0:
            return
    idx = _indices("_backward_softmax_cross_entropy", label, k, "label")  # raises if bad
    if n == 0:
        return
    if type(x) is np.ndarray and x.dtype != np.float16:   # _softmax_rows's steps, direct
        np.subtract(x, _max_reduce(x, 1, None, None, True), out=out)
        np.exp(out, out=out)
        np.divide(out, _add_reduce(out, 1, None, None, True), out=out)
    else:
        _softmax_rows(_ROWS, [x], [out])
    out[_rows(out, n), idx] -= 1
    np.multiply(out, og, out=out)


def _softmax_ce_backward_grad(attrs, inputs, outputs, out_grads):
    # out = (p - onehot) * og with p = softmax(x): d/d og = sum(g * (p - onehot));
    # d/dx = og * p * (g - sum(g * p, axis=1))  (the softmax Jacobian, transposed)
    og, x, label = inputs
    g = out_grads[0]
    p = F.softmax(x, axis=1)
    gp = g * p
    dx = (gp - p * F.sum(gp, axis=1, keepdims=True)) * og
    dog = F.sum(g * (p - F._label_one_hot(x, label))).reshape((1,))
    return [dog, dx, None]


register(
    "_backward_softmax_cross_entropy", inputs=("ograd", "data", "label"),
    infer_shape=_bce_shape, infer_type=_bce_type, compute=_softmax_ce_backward,
    gradient=_softmax_ce_backward_grad, grad_inputs=(0, 1, 2),
    doc="""Hidden: the gradient of softmax_cross_entropy for data, ``(softmax(data) -
one_hot(label)) * ograd`` (``ograd`` of shape (1,)), in one kernel.""")


_PCE = "_backward_softmax_ce_prob"
_pce_shape, _pce_type = _bce_infer(_PCE, "prob")


def _ce_prob_backward(attrs, ins, outs):
    og, p, label = ins
    n, k = p.shape
    idx = _indices(_PCE, label, k, "label")
    out = outs[0]
    if n == 0:
        return
    out[...] = p
    out[_rows(out, n), idx] -= 1
    np.multiply(out, og, out=out)


def _ce_prob_backward_grad(attrs, inputs, outputs, out_grads):
    # out = (p - onehot) * og: d/d og = sum(g * (p - onehot)); d/dp = g * og
    og, p, label = inputs
    g = out_grads[0]
    dog = F.sum(g * (p - F._label_one_hot(p, label))).reshape((1,))
    return [dog, g * og, None]


register(
    _PCE, inputs=("ograd", "prob", "label"), infer_shape=_pce_shape,
    infer_type=_pce_type, compute=_ce_prob_backward, gradient=_ce_prob_backward_grad,
    grad_inputs=(0, 1, 2),
    doc="""Hidden: ``(prob - one_hot(label)) * ograd`` (``ograd`` of shape (1,)), the
gradient of softmax_cross_entropy for data from the softmax ``prob`` that its forward
computed (the rule uses it outside create_graph); the arithmetic of
_backward_softmax_cross_entropy after its softmax, so the results are the same.""")


def _one_hot(attrs, ins, outs):
    x, label = ins
    n, k = x.shape
    idx = _indices("_label_one_hot", label, k, "label")
    out = outs[0]
    out[...] = 0
    out[like(out, np.arange(n)), idx] = 1


register(
    "_label_one_hot", inputs=("data", "label"), infer_shape=_ce_shape("_label_one_hot"),
    infer_type=_ce_type("_label_one_hot"), compute=_one_hot, ignores=(0,),
    differentiable=False,
    doc="""Hidden: the (n, k) one-hot matrix of ``label`` in ``data``'s dtype (the values
of ``data`` are not read).  Used by the gradient of softmax_cross_entropy.""")


# -- Dropout ----------------------------------------------------------------------------

class _DropoutState:
    """The per-call state (``prepare``): whether this call drops, and the scaled mask it
    drew (set by the kernel), which the gradient multiplies by.  Truthy when it drops."""

    __slots__ = ("active", "mask")

    def __init__(self, active):
        self.active = active
        self.mask = None

    def __bool__(self):
        return self.active


def _dropout_prepare(attrs):
    """Whether this call drops (``mode='always'``, or training on this thread, with
    ``p > 0``).  The gradient uses the forward's decision and mask, not whatever
    ``is_training()`` says when backward runs."""
    return _DropoutState((attrs["mode"] == "always" or is_training()) and attrs["p"] > 0.0)


def _mask_shape(attrs, shape):
    axes = {normalize_axis("Dropout", a, len(shape), "axes") for a in attrs["axes"]}
    return tuple(1 if i in axes else s for i, s in enumerate(shape))


def _dropout_shape(attrs, shapes):
    p = attrs["p"]
    if not 0.0 <= p < 1.0:
        raise ValueError(f"Dropout: p must be in [0, 1) (got {p!r})")
    _mask_shape(attrs, shapes[0])
    return [shapes[0]]


def _dropout(attrs, ins, outs, state):
    x, out = ins[0], outs[0]
    if not state:
        np.copyto(out, x)
        return
    p = attrs["p"]
    u = _random.generator().random(_mask_shape(attrs, x.shape), dtype=np.float32)
    mask = (u >= np.float32(p)).astype(x.dtype)
    mask *= x.dtype.type(1.0 / (1.0 - p))
    state.mask = mask
    np.multiply(x, like(x, mask), out=out)


def _dropout_grad(attrs, inputs, outputs, out_grads, state=None):
    g = out_grads[0]
    if state is None:      # called without the forward's state: decide as a call now would
        state = _dropout_prepare(attrs)
    if not state:
        return [g]
    if state.mask is not None:    # the forward's own mask (right where data was 0 too)
        return [g * from_numpy(state.mask, g.ctx)]
    # a rule called without its forward (the operator suites): the mask from the output,
    # which is right wherever the input was not 0
    return [g * (outputs[0] != 0) * (1.0 / (1.0 - attrs["p"]))]


def _dropout_reads(attrs, n_out):
    # the tape passes the forward's state as attrs["_state"]: its mask makes the output
    # unneeded; without it (the operator suites) the output holds the mask
    state = attrs.get("_state")
    if state is None:
        state = _dropout_prepare(attrs)
    return (0,) if state and state.mask is None else ()


register(
    "Dropout",
    attrs={"p": Attr("float", 0.5), "mode": Attr("str", "training",
                                                   choices=("training", "always")),
           "axes": Attr("axes", ()), "cudnn_off": Attr("bool", False)},
    infer_shape=_dropout_shape, infer_type=float_input("Dropout"), compute=_dropout,
    prepare=_dropout_prepare, gradient=_dropout_grad, grad_outputs=_dropout_reads,
    inplace=[(0, 0)], needs_rng=True,
    doc="""Dropout (MXNet): in training, ``out = data * mask / (1 - p)`` with ``mask`` ~
Bernoulli(1 - p) drawn from ``runtime.random``'s generator (``runtime.random.seed``
makes it reproducible); otherwise the identity.  ``mode='training'`` drops only under
``autograd.train_mode()`` (``is_training()``), ``mode='always'`` always.  ``axes``
share one mask value along those axes (variational dropout).  ``p`` must be in [0, 1).
``cudnn_off`` is accepted and ignored.

Differences from MXNet: MXNet's Dropout has a hidden second output (the mask); here the
op has one output, and the mask is kept in the call's state (``prepare``) with the
decision whether the op was active: the tape hands both to the gradient,
``head_grad * mask / (1 - p)`` (right where the input is 0 too), so backward outside
``train_mode()`` still uses the forward's mask.  Called without its forward's state (the
operator suites), the rule takes the mask from the output, ``out != 0``.""")


# -- Embedding --------------------------------------------------------------------------

EMBED_ATTRS = {"input_dim": Attr("int", required=True),
               "output_dim": Attr("int", required=True)}


def _embed_dims(op, attrs):
    for name in ("input_dim", "output_dim"):
        if attrs[name] < 1:
            raise ValueError(f"{op}: {name} must be >= 1 (got {attrs[name]})")
    return attrs["input_dim"], attrs["output_dim"]


def _embedding_shape_of(op):
    def infer(attrs, shapes):
        n, d = _embed_dims(op, attrs)
        ds, ws = shapes
        if ws != (n, d):
            raise ValueError(f"{op}: weight must have shape {(n, d)!r} (input_dim, "
                             f"output_dim) (got {ws!r})")
        return [ds + (d,)]
    return infer


def _embedding_type_of(op):
    def infer(attrs, dtypes):
        _index_type(op, "data")(dtypes[0])
        if attrs["dtype"] is not None and dtypes[1] != attrs["dtype"]:
            raise TypeError(f"{op}: weight has dtype {dtypes[1]} but dtype is "
                            f"{attrs['dtype']}; pass dtype='{dtypes[1]}' or leave it out")
        return [dtypes[1]]
    return infer


def _embedding_of(op):
    def compute(attrs, ins, outs):
        data, w = ins
        idx = _clipped_rows(op, data, attrs["input_dim"])
        if isinstance(w, np.ndarray):
            np.take(w, idx, axis=0, out=outs[0])
        else:
            outs[0][...] = w[idx]
    return compute


def _embedding_stypes(attrs, stypes):
    """A row_sparse weight (what ``Parameter.row_sparse_data`` gives) has its own kernel,
    with a dense result."""
    return ["default"] if tuple(stypes) == ("default", "row_sparse") else None


def _embedding_rsp(attrs, inputs):
    """Embedding of a row_sparse weight: the rows it stores, zeros for the others (the
    values of its dense form), without densifying it."""
    data, w = inputs
    idx = _clipped_rows("Embedding", data.asnumpy(), attrs["input_dim"])
    rows, values = storage_host(w, 0), storage_host(w, -1)
    pos = np.minimum(np.searchsorted(rows, idx), max(rows.shape[0] - 1, 0))
    found = (rows[pos] == idx) if rows.shape[0] else np.zeros(idx.shape, bool)
    out = np.zeros(idx.shape + (attrs["output_dim"],), values.dtype)
    out[found] = values[pos[found]]
    return [from_numpy(out, w.context)]


def _embedding_grad_rule(attrs, inputs, outputs, out_grads):
    dims = {"input_dim": attrs["input_dim"], "output_dim": attrs["output_dim"]}
    name = "_embedding_grad_rsp" if attrs["sparse_grad"] else "_embedding_grad"
    return [None, getattr(F, name)(inputs[0], out_grads[0], **dims)]


def _embedding_inputs(attrs, shapes):
    shapes[1] = shapes[1] or (attrs["input_dim"], attrs["output_dim"])
    return shapes


register(
    "Embedding", inputs=("data", "weight"),
    attrs={**EMBED_ATTRS, "dtype": Attr("dtype_or_none", None),
           "sparse_grad": Attr("bool", False)},
    infer_shape=_embedding_shape_of("Embedding"), infer_type=_embedding_type_of("Embedding"),
    compute=_embedding_of("Embedding"), sparse_stypes=_embedding_stypes,
    compute_sparse=_embedding_rsp, gradient=_embedding_grad_rule, grad_inputs=(0,),
    infer_inputs=_embedding_inputs,
    doc="""Looks up rows of ``weight`` (input_dim, output_dim): the result has shape
``data.shape + (output_dim,)`` and weight's dtype (``dtype``, when given, must be it; as
MXNet, a float16 weight needs no ``dtype=``).  ``data`` holds row indices (integers, or
floats, truncated); as MXNet documents, an index too large is replaced by the last row
(input_dim - 1) and a negative one by row 0, in the gradient too; a NaN or infinite index
is refused (IndexError), as ``take`` refuses it.  The weight gradient is a dense scatter-add of the head gradients, or with
``sparse_grad=True`` a row_sparse array holding only the rows that were looked up.
``data`` gets no gradient.  A row_sparse weight (host memory) is read without densifying
it; a row it does not store reads as zeros.""")


def _sparse_embedding_grad_rule(attrs, inputs, outputs, out_grads):
    return _embedding_grad_rule({**attrs, "sparse_grad": True}, inputs, outputs, out_grads)


register(
    "_contrib_SparseEmbedding", inputs=("data", "weight"),
    attrs={**EMBED_ATTRS, "dtype": Attr("dtype_or_none", None),
           "deterministic": Attr("bool", False)},
    infer_shape=_embedding_shape_of("_contrib_SparseEmbedding"),
    infer_type=_embedding_type_of("_contrib_SparseEmbedding"),
    compute=_embedding_of("_contrib_SparseEmbedding"), sparse_stypes=_embedding_stypes,
    compute_sparse=_embedding_rsp, gradient=_sparse_embedding_grad_rule, grad_inputs=(0,),
    infer_inputs=_embedding_inputs,
    doc="""``Embedding`` with ``sparse_grad=True`` (MXNet's deprecated
``contrib.SparseEmbedding``): the same lookup, and a row_sparse weight gradient holding
only the rows looked up.  ``deterministic`` is accepted for MXNet's signature: ndrt's
gradient is always computed in one order.""")


def _embed_grad_shape(op):
    def infer(attrs, shapes):
        n, d = _embed_dims(op, attrs)
        ds, gs = shapes
        if gs != ds + (d,):
            raise ValueError(f"{op}: grad must have shape {ds + (d,)!r} for data of shape "
                             f"{ds!r} (got {gs!r})")
        return [(n, d)]
    return infer


def _embed_grad_type(op):
    check = _index_type(op, "data")

    def infer(attrs, dtypes):
        check(dtypes[0])
        return [dtypes[1]]
    return infer


def _embedding_grad(attrs, ins, outs):
    data, g = ins
    n, d = attrs["input_dim"], attrs["output_dim"]
    idx = _clipped_rows("_embedding_grad", data, n)
    out = outs[0]
    out[...] = 0
    np.add.at(out, idx.reshape(-1), g.reshape(-1, d))


def _embedding_grad_grad(attrs, inputs, outputs, out_grads):
    gg = out_grads[0]
    if gg.stype != "default":
        gg = gg.tostype("default")
    return [None, F.Embedding(inputs[0], gg, input_dim=attrs["input_dim"],
                              output_dim=attrs["output_dim"], dtype=gg.dtype)]


register(
    "_embedding_grad", inputs=("data", "grad"), attrs=EMBED_ATTRS,
    infer_shape=_embed_grad_shape("_embedding_grad"),
    infer_type=_embed_grad_type("_embedding_grad"), compute=_embedding_grad,
    gradient=_embedding_grad_grad, grad_inputs=(0,),
    doc="""Hidden: the dense weight gradient of Embedding, ``out[data[j]] += grad[j]``
into zeros of shape (input_dim, output_dim).""")


def _embedding_grad_rsp(attrs, inputs):
    data, g = inputs
    n, d = attrs["input_dim"], attrs["output_dim"]
    idx = _clipped_rows("_embedding_grad_rsp", data.asnumpy(), n).reshape(-1)
    rows, inverse = np.unique(idx, return_inverse=True)
    values = np.zeros((rows.size, d), np.dtype(g.dtype))
    np.add.at(values, inverse.reshape(-1), g.asnumpy().reshape(-1, d))
    return [_storage.from_parts("row_sparse", (n, d), np.dtype(g.dtype), g.ctx, values,
                                [rows], check=False)]


register(
    "_embedding_grad_rsp", inputs=("data", "grad"), attrs=EMBED_ATTRS,
    infer_shape=_embed_grad_shape("_embedding_grad_rsp"),
    infer_type=_embed_grad_type("_embedding_grad_rsp"),
    infer_storage=lambda attrs, stypes: (["row_sparse"], "sparse"),
    compute_sparse=_embedding_grad_rsp, gradient=_embedding_grad_grad, grad_inputs=(0,),
    doc="""Hidden: the weight gradient of Embedding(sparse_grad=True), a row_sparse
(input_dim, output_dim) array whose rows are the sorted unique indices of ``data`` and
whose values are the summed head gradients of each.""")
