"""Connectionist temporal classification: MXNet 1.x's ``CTCLoss`` (aliases ``ctc_loss``,
``_contrib_CTCLoss``, ``_contrib_ctc_loss``; src/operator/nn/ctc_loss.cc).

``CTCLoss(data, label, data_lengths, label_lengths)``: ``data`` (T, N, alphabet)
unnormalised activations (softmax is applied inside), ``label`` (N, L); the output, shape
(N,), is ``-log p(label | data)`` summed over every alignment of the label with the T
frames (blanks between and around the symbols, repeats merged unless a blank separates
them).  The two length inputs are present only when ``use_data_lengths`` /
``use_label_lengths`` say so (MXNet's input list then reads ``data, label[,
data_lengths][, label_lengths]``).

The kernel runs on the host (device arrays are copied there and the results back).  The
forward-backward recursion runs in log space over the extended label (a blank
before, between and after the symbols), vectorised over the batch with one NumPy step
per frame.  While autograd records, the forward also runs the backward (beta) pass and
keeps the data gradient per unit of head gradient in the per-call state, as MXNet's
forward writes its hidden gradient output; the gradient rule then only scales it.
Without that state (or under ``create_graph``) the rule computes it again with the
hidden ``_ctc_loss_grad`` operator, which has no gradient of its own.
"""

import numpy as np

from runtime._imperative import is_recording
from runtime._device import like, to_host
from runtime._ndarray import from_numpy
from runtime.ops._call import F
from runtime.ops.registry import Attr, register

_OP = "CTCLoss"

CTC_ATTRS = {"use_data_lengths": Attr("bool", False),
             "use_label_lengths": Attr("bool", False),
             "blank_label": Attr("str", "first", choices=("first", "last"))}


def _positions(attrs):
    """The input positions of data_lengths and label_lengths (None when absent)."""
    dl = 2 if attrs["use_data_lengths"] else None
    ll = 2 + attrs["use_data_lengths"] if attrs["use_label_lengths"] else None
    return dl, ll


def _check_shapes(op, attrs, shapes):
    want = 2 + attrs["use_data_lengths"] + attrs["use_label_lengths"]
    if len(shapes) != want:
        names = ["data", "label"] + (["data_lengths"] if attrs["use_data_lengths"] else []) \
            + (["label_lengths"] if attrs["use_label_lengths"] else [])
        raise ValueError(f"{op}: takes {want} array inputs ({', '.join(names)}) with "
                         f"use_data_lengths={attrs['use_data_lengths']} and "
                         f"use_label_lengths={attrs['use_label_lengths']} (got "
                         f"{len(shapes)})")
    ds, ls = shapes[0], shapes[1]
    if len(ds) != 3:
        raise ValueError(f"{op}: data must be 3-D (sequence_length, batch, alphabet_size) "
                         f"(got shape {ds!r})")
    if len(ls) != 2:
        raise ValueError(f"{op}: label must be 2-D (batch, label_length) (got shape "
                         f"{ls!r})")
    if ls[0] != ds[1]:
        raise ValueError(f"{op}: label must have data's batch size {ds[1]} on axis 0 (got "
                         f"label of shape {ls!r} for data of shape {ds!r})")
    if ds[2] < 1:
        raise ValueError(f"{op}: data's alphabet_size (axis 2) must be at least 1, the "
                         f"blank (got shape {ds!r})")
    if ls[1] > ds[0]:
        raise ValueError(f"{op}: the label length (label's axis 1) cannot exceed the "
                         f"sequence length (data's axis 0) (got label of shape {ls!r} for "
                         f"data of shape {ds!r})")
    dl, ll = _positions(attrs)
    for name, pos in (("data_lengths", dl), ("label_lengths", ll)):
        if pos is not None and shapes[pos] != (ds[1],):
            raise ValueError(f"{op}: {name} must have shape {(ds[1],)!r} (one per batch "
                             f"entry) (got {shapes[pos]!r})")


def _ctc_shape(attrs, shapes):
    _check_shapes(_OP, attrs, shapes)
    return [(shapes[0][1],)]


def _grad_shape(attrs, shapes):
    _check_shapes("_ctc_loss_grad", attrs, shapes)
    return [shapes[0]]


def _types(op):
    def infer(attrs, dtypes):
        if dtypes[0].kind != "f":
            raise TypeError(f"{op}: needs a floating-point data (got {dtypes[0]}); cast "
                            "with astype('float32')")
        dl, ll = _positions(attrs)
        for name, pos in (("label", 1), ("data_lengths", dl), ("label_lengths", ll)):
            if pos is not None and dtypes[pos].kind not in "iuf":
                raise TypeError(f"{op}: {name} must hold integers (an integer or "
                                f"floating-point dtype) (got {dtypes[pos]})")
        return [dtypes[0]]
    return infer


def _integers(op, name, a, lo, hi, rule):
    """``a`` (a host array) as int64, checked to hold integers in [lo, hi]."""
    a = np.asarray(a)
    bad = ~np.isfinite(a) | (np.trunc(a) != a) | (a < lo) | (a > hi) if a.dtype.kind == "f" \
        else (a < lo) | (a > hi)
    if bad.any():
        pos = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{op}: {name} must hold {rule} (got {a[pos].item()!r} at "
                         f"{pos!r})")
    return a.astype(np.int64)


def _setup(op, attrs, ins):
    """The labels, their lengths, the sequence lengths and the blank, checked:
    (labels (N, L) int64 with padding replaced by the blank, label_lengths (N,),
    data_lengths (N,), blank)."""
    x, label = ins[0], to_host(ins[1])
    t_max, n, c = x.shape
    width = label.shape[1]
    first = attrs["blank_label"] == "first"
    blank = 0 if first else c - 1
    dl, ll = _positions(attrs)
    if dl is not None:
        tl = _integers(op, "data_lengths", to_host(ins[dl]), 0, t_max,
                       f"integers in [0, {t_max}] (the sequence length)")
    else:
        tl = np.full(n, t_max, np.int64)
    if ll is not None:
        lens = _integers(op, "label_lengths", to_host(ins[ll]), 0, width,
                         f"integers in [0, {width}] (label's axis 1)")
    else:   # up to the first padding value: 0 with blank 'first', -1 with 'last'
        pad = label == (0 if first else -1)
        first_pad = pad.argmax(axis=1) if width else np.zeros(n, np.int64)
        lens = np.where(pad.any(axis=1), first_pad, width).astype(np.int64)
    inside = np.arange(width) < lens[:, None]
    # as MXNet (warp-ctc), a symbol equal to the blank within the length is taken: its
    # path position emits the blank class and is never entered by a skip
    rule = (f"symbols in [0, {c - 1}] within its length (alphabet_size {c}, blank_label="
            f"'{attrs['blank_label']}')")
    vals = np.where(inside, label, 0)
    labels = _integers(op, "label", vals, 0, c - 1, rule)
    labels[~inside] = blank
    return labels, lens, tl, blank


def _log_softmax(x):
    """log softmax over the last axis, in float32 for float16 data."""
    w = x.astype(np.float32) if x.dtype == np.float16 else x
    m = w.max(axis=2, keepdims=True)
    z = w - m
    lse = np.log(np.exp(z).sum(axis=2, keepdims=True))
    z -= lse
    return z


def _logsumexp3(a, b, c):
    """log(exp(a) + exp(b) + exp(c)) elementwise, -inf where all three are (the
    maximum subtracted first; three exps and a log run several times faster than two
    ``np.logaddexp``)."""
    m = np.maximum(a, b)
    np.maximum(m, c, out=m)
    m[np.isneginf(m)] = 0
    r = np.exp(a - m)
    r += np.exp(b - m)
    r += np.exp(c - m)
    np.log(r, out=r)
    r += m
    return r


def _ctc(attrs, ins, want_grad, op):
    """(loss (N,), the data gradient per unit head gradient (T, N, C) or None), in the
    working dtype (float32 for float16 data)."""
    labels, lens, tl, blank = _setup(op, attrs, ins)
    x = to_host(ins[0])
    t_max, n, c = x.shape
    lp = _log_softmax(x)
    wd = lp.dtype
    ninf = wd.type(-np.inf)
    loss = np.zeros(n, wd)
    grad = np.zeros((t_max, n, c), wd) if want_grad else None
    if n == 0 or t_max == 0:
        return loss, grad
    # the extended label: blank, l1, blank, l2, ..., blank; its length 2 * len + 1
    s = 2 * labels.shape[1] + 1
    ext = np.full((n, s), blank, np.int64)
    ext[:, 1::2] = labels
    sl = 2 * lens + 1
    same2 = np.zeros((n, s), bool)
    same2[:, 2:] = ext[:, 2:] == ext[:, :-2]
    skip = (ext != blank) & ~same2           # s - 2 -> s allowed
    skip[:, :2] = False
    repeats = np.sum((labels[:, 1:] == labels[:, :-1])
                     & (np.arange(1, labels.shape[1]) < lens[:, None]), axis=1)
    # MXNet (warp-ctc's CPU kernel): no alignment fits -> loss 0 and no gradient
    possible = lens + repeats <= tl
    rows = np.arange(n)[:, None]
    emit = lp[:, rows, ext]                  # (T, N, S) log-probabilities on the path
    valid = np.arange(s) < sl[:, None]
    alpha = np.full((t_max, n, s), ninf, wd)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        a = np.full((n, s), ninf, wd)
        a[:, 0] = emit[0, :, 0]
        if s > 1:
            a[:, 1] = np.where(sl > 1, emit[0, :, 1], ninf)
        a[~valid] = ninf
        alpha[0] = a
        shifted = np.full((n, s), ninf, wd)
        shifted2 = np.full((n, s), ninf, wd)
        for t in range(1, t_max):
            prev = alpha[t - 1]
            shifted[:, 1:] = prev[:, :-1]
            shifted2[:, 2:] = np.where(skip[:, 2:], prev[:, :-2], ninf)
            acc = _logsumexp3(prev, shifted, shifted2)
            acc += emit[t]
            acc[~valid] = ninf
            live = (t < tl)[:, None]
            alpha[t] = np.where(live, acc, prev)
        last = alpha[np.maximum(tl - 1, 0), np.arange(n)]       # (N, S)
        end1 = last[np.arange(n), sl - 1]
        end2 = np.where(sl > 1, last[np.arange(n), np.maximum(sl - 2, 0)], ninf)
        ll = np.logaddexp(end1, end2)
        ll = np.where(tl == 0, wd.type(0), ll)      # no frames, empty label: p = 1
        # no path at all (p = 0) although the lengths allow one: a symbol equal to the
        # blank that no path can reach (labels [1, 3] with 4 classes, blank_label=
        # 'last', in two frames), where warp-ctc's loss is inf and its gradient NaN:
        # unalignable too, loss 0 and no gradient
        possible &= ~np.isneginf(ll)
        loss[:] = np.where(possible, -ll, wd.type(0))
        if not want_grad:
            return loss, None
        # beta (emission at t included), and the occupancy alpha * beta / p
        beta = np.full((n, s), ninf, wd)
        shifted[:] = ninf
        shifted2[:] = ninf
        init = np.full((n, s), ninf, wd)
        ends = valid & (np.arange(s) >= sl[:, None] - 2)
        norm = np.where(possible & (tl > 0), ll, wd.type(0))
        prob = np.exp(lp)
        occ = np.empty((t_max, n, s), wd)
        for t in range(t_max - 1, -1, -1):
            nxt = beta
            shifted[:, :-1] = nxt[:, 1:]
            shifted2[:, :-2] = np.where(skip[:, 2:], nxt[:, 2:], ninf)
            acc = _logsumexp3(nxt, shifted, shifted2)
            acc += emit[t]
            init[:] = np.where(ends, emit[t], ninf)
            beta = np.where((t == tl - 1)[:, None], init,
                            np.where((t < tl - 1)[:, None], acc, ninf))
            beta[~valid] = ninf
            occ[t] = alpha[t] + beta - emit[t]
        occ -= norm[None, :, None]
        np.exp(occ, out=occ)
        live = (np.arange(t_max)[:, None] < tl[None, :]) & possible[None, :]   # (T, N)
        occ[~live] = 0      # not a product: frames past data_lengths may hold NaN
        # the occupancy of each symbol: the sum over the path positions holding it
        idx = (np.arange(t_max * n).reshape(t_max, n, 1) * c + ext[None]).ravel()
        hits = np.bincount(idx, occ.ravel(), minlength=t_max * n * c).reshape(t_max, n, c)
        prob[~live] = 0
        np.subtract(prob, hits.astype(wd, copy=False), out=grad)
    return loss, grad


class _CTCState:
    """Per call of CTCLoss: the data gradient per unit head gradient that a recorded
    forward computed (None otherwise), which the gradient rule scales."""
    __slots__ = ("grad",)

    def __init__(self):
        self.grad = None


def _prepare(attrs):
    return _CTCState()


def _forward(attrs, ins, outs, state=None):
    want = state is not None and is_recording()
    loss, grad = _ctc(attrs, ins, want, _OP)
    if want:
        state.grad = grad.astype(ins[0].dtype, copy=False)
    outs[0][...] = like(outs[0], loss)


def _grad_kernel(attrs, ins, outs):
    _, grad = _ctc(attrs, ins, True, "_ctc_loss_grad")
    outs[0][...] = like(outs[0], grad)


def _reads(attrs, n):
    return tuple(range(n))


def _rule(attrs, inputs, outputs, out_grads, state=None):
    g = out_grads[0]
    if state is not None and state.grad is not None and not is_recording():
        unit = from_numpy(state.grad, ctx=g.ctx)
    else:
        unit = F._ctc_loss_grad(*inputs, use_data_lengths=attrs["use_data_lengths"],
                                use_label_lengths=attrs["use_label_lengths"],
                                blank_label=attrs["blank_label"])
    head = F.expand_dims(F.expand_dims(g, axis=0), axis=2)
    return [F.broadcast_mul(unit, head)] + [None] * (len(inputs) - 1)


_INPUTS = ("data", "label", "data_lengths", "label_lengths")

register(
    "CTCLoss", inputs=_INPUTS, variadic=True, flagged_inputs=True, attrs=CTC_ATTRS,
    aliases=("ctc_loss", "_contrib_CTCLoss", "_contrib_ctc_loss"),
    infer_shape=_ctc_shape, infer_type=_types(_OP), compute=_forward, prepare=_prepare,
    gradient=_rule, grad_inputs=_reads,
    doc="""Connectionist temporal classification loss (MXNet 1.x's ``CTCLoss``, aliases
``ctc_loss``, ``contrib.CTCLoss``, ``contrib.ctc_loss``): ``-log p(label | data)`` per
batch entry, shape (N,), data's dtype.  ``data`` (T, N, alphabet_size) unnormalised
activations (softmax is applied over the last axis inside); ``label`` (N, L) symbols
(integers, or floats holding integers).  ``blank_label='first'``: 0 is the blank, symbols
are 1 .. alphabet_size-1 and 0 pads the label; ``'last'``: alphabet_size-1 is the blank,
symbols are 0 .. alphabet_size-2 and -1 pads.  As in MXNet, the blank's own value within
a label's length (possible with ``label_lengths``, or with 'last') is taken as a symbol
that emits the blank class.  Without ``use_label_lengths`` a label ends
at its first padding value; with it the input ``label_lengths`` (N,) gives the lengths.
With ``use_data_lengths`` the input ``data_lengths`` (N,) gives each sequence's length
(frames beyond it are ignored and get a zero gradient).  The array inputs are ``data,
label[, data_lengths][, label_lengths]``, the lengths only when their flag is set.  L
may not exceed T.  As MXNet's CPU kernel (warp-ctc), an entry whose label cannot be
aligned (its length plus its repeated neighbours exceeds its sequence length) gets loss
0 and a zero gradient, not infinity; so does one that no path fits for another reason
(a symbol equal to the blank that no path can reach in time), where warp-ctc gives an
infinite loss and a NaN gradient.  NaN or infinite data still give NaN.  The gradient (data only) is ``(softmax(data) -
occupancy) * head_grad``, from the forward-backward recursion in log space.""")

register(
    "_ctc_loss_grad", inputs=_INPUTS, variadic=True, attrs=CTC_ATTRS,
    infer_shape=_grad_shape, infer_type=_types("_ctc_loss_grad"), compute=_grad_kernel,
    doc="""Hidden: CTCLoss's data gradient per unit head gradient, (T, N, alphabet_size):
``softmax(data) - occupancy`` (zero beyond data_lengths and for entries without an
alignment).  It has no gradient rule: CTCLoss has no second derivative here.""")
