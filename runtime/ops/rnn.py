"""Recurrent layers: MXNet 1.x's fused ``RNN`` operator and its hidden gradient
``_backward_RNN`` (src/operator/rnn.cc, rnn-inl.h, rnn_impl.h).

``RNN(data, parameters, state[, state_cell][, sequence_length])``: vanilla RNN (relu,
tanh), LSTM (gates i, f, g, o) and GRU (gates r, z, n), ``num_layers`` deep, optionally
bidirectional, over ``data`` (T, N, I) in the TNC layout; ``state`` (and the LSTM's
``state_cell``) (L*D, N, H), layer ``l``, direction ``d`` at ``l*D + d``.  MXNet's layout
of the flat ``parameters``: first every weight, per layer and direction (forward, then
backward): ``i2h (G*H, I_l)`` then ``h2h (G*H, H)``, row-major; then every bias in the
same order, ``i2h (G*H,)`` then ``h2h (G*H,)`` (``I_0`` = I, ``I_l`` = D*H above).

The kernel runs on the host (device arrays are copied there and back), in float32 for
float16 data.  Per layer and direction: one GEMM projects the inputs of every time
step; each step then runs one GEMM for the recurrent part and the compiled passes of
``runtime._rnn_kernels`` (gate nonlinearities, cell update).  Everything the gradient
reads (gates after their nonlinearities, every hidden and cell state, tanh of the LSTM's
cells, GRU's ``W_hn h + b_hn``, each upper layer's input and dropout mask) goes into one
flat *reserve* array from the pool, kept in the call's state (``prepare``), as MXNet's
reserve space.  Backward (``_backward_RNN``) walks time in reverse with one fused pass
and one recurrent GEMM per step, then computes each layer's weight gradients and its
input gradient as one GEMM each over all steps.

With ``use_sequence_length``, the input ``sequence_length`` (N,) gives each sample's
length (integers in [1, T]): outputs past it are 0 and the state is held there, so the
final state is the one at the length and the backward direction starts at the sample's
last valid step (MXNet's cuDNN implementation).  The passes compute every row; the rows
of samples past their length are then restored (forward: the previous state; backward:
the gradient passed through unchanged, zero gate gradients).

With ``lstm_state_clip_min/max`` each new LSTM cell is clipped to the range (NaN to the
minimum with ``lstm_state_clip_nan``), the clip's derivative (1 inside the range, 0
outside or NaN) kept in the reserve.

Not fused (this operator refuses it; ``nd.RNN`` runs it as a composition of registry
operators, runtime/nd/_rnn.py): ``projection_size`` (LSTMP).
"""

import numpy as np

from runtime import _rnn_kernels as _k
from runtime import _rng as _random
from runtime._blas import matmul as _blas_matmul
from runtime._device import like, to_host
from runtime._imperative import is_training
from runtime._ndarray import empty, from_numpy, storage_view
from runtime.context import cpu
from runtime.ops._call import F
from runtime.ops.registry import Attr, register

GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}

RNN_ATTRS = {
    "state_size": Attr("int", required=True),
    "num_layers": Attr("int", required=True),
    "bidirectional": Attr("bool", False),
    "mode": Attr("str", required=True, choices=tuple(GATES)),
    "p": Attr("float", 0.0),
    "state_outputs": Attr("bool", False),
    "projection_size": Attr("int", None),
    "lstm_state_clip_min": Attr("float", None),
    "lstm_state_clip_max": Attr("float", None),
    "lstm_state_clip_nan": Attr("bool", False),
    "use_sequence_length": Attr("bool", False),
}


def rnn_param_size(mode, input_size, state_size, num_layers, bidirectional=False,
                   projection_size=None):
    """The length of the flat ``parameters`` vector (MXNet's ``GetRnnParamSize``): the
    sum over layers and directions of ``G*H*(I_l + R) + 2*G*H``, with ``R`` the
    recurrent width (``H``, or ``P`` with a projection, which adds ``P*H`` for each
    ``h2r`` weight)."""
    g, h, d = GATES[mode], state_size, 2 if bidirectional else 1
    r = h if projection_size is None else projection_size
    size = 0
    for layer in range(num_layers):
        i = input_size if layer == 0 else d * r
        size += d * (g * h * (i + r) + 2 * g * h)
        if projection_size is not None:
            size += d * r * h
    return size


def _dims(attrs, op="RNN"):
    """(mode, G, H, L, D) of checked attributes (``op`` names the operator in errors)."""
    for name in ("state_size", "num_layers"):
        if attrs[name] < 1:
            raise ValueError(f"{op}: {name} must be a positive integer (got "
                             f"{name}={attrs[name]!r})")
    p = attrs["p"]
    if not 0.0 <= p < 1.0:
        raise ValueError(f"{op}: p must be in [0, 1) (got p={p!r})")
    if attrs["projection_size"] is not None:
        raise NotImplementedError(
            f"{op}: projection_size must be None in the fused operator (got "
            f"{attrs['projection_size']!r}); nd.RNN runs LSTMP as a composition of "
            "operators, graph mode cannot")
    mode = attrs["mode"]
    lo, hi = attrs["lstm_state_clip_min"], attrs["lstm_state_clip_max"]
    if (lo is None) != (hi is None):
        raise ValueError(f"{op}: lstm_state_clip_min and lstm_state_clip_max must be given "
                         f"together (got lstm_state_clip_min={lo!r}, "
                         f"lstm_state_clip_max={hi!r})")
    if lo is not None and mode != "lstm":
        raise ValueError(f"{op}: lstm_state_clip_min/max apply to mode='lstm' only (got "
                         f"mode={mode!r})")
    if lo is not None and not lo <= hi:
        raise ValueError(f"{op}: lstm_state_clip_min must be <= lstm_state_clip_max (got "
                         f"{lo!r} > {hi!r})")
    return (mode, GATES[mode], attrs["state_size"], attrs["num_layers"],
            2 if attrs["bidirectional"] else 1)


def _check_inputs(op, attrs, shapes):
    """(T, N, I) of data after checking the shapes of data, parameters, state and
    state_cell (the first three or four of ``shapes``)."""
    mode, g, h, layers, d = _dims(attrs, op)
    ds = tuple(shapes[0])
    if len(ds) != 3:
        raise ValueError(f"{op}: data must be 3-D (sequence, batch, features) in the TNC "
                         f"layout (got shape {ds})")
    t, n, i = ds
    want = rnn_param_size(mode, i, h, layers, d == 2)
    if tuple(shapes[1]) != (want,):
        raise ValueError(f"{op}: parameters must be a 1-D array of {want} values for "
                         f"mode={mode!r}, input size {i}, state_size={h}, "
                         f"num_layers={layers}, bidirectional={d == 2} (got shape "
                         f"{tuple(shapes[1])})")
    sshape = (layers * d, n, h)
    names = ("state", "state_cell") if mode == "lstm" else ("state",)
    for name, s in zip(names, shapes[2:]):
        if tuple(s) != sshape:
            raise ValueError(f"{op}: {name} must have shape (num_layers*directions, batch, "
                             f"state_size) = {sshape} (got {tuple(s)})")
    return t, n, i


def _check_lengths_shape(op, shape, n):
    if tuple(shape) != (n,):
        raise ValueError(f"{op}: sequence_length must have shape (batch,) = ({n},) (got "
                         f"{tuple(shape)})")


def _rnn_shape(attrs, shapes):
    lstm = attrs["mode"] == "lstm"
    want = 3 + lstm + attrs["use_sequence_length"]
    if len(shapes) != want:
        names = "data, parameters, state" + (", state_cell" if lstm else "") + \
            (", sequence_length" if attrs["use_sequence_length"] else "")
        raise ValueError(f"RNN: takes {want} array inputs ({names}) with "
                         f"mode={attrs['mode']!r}, use_sequence_length="
                         f"{attrs['use_sequence_length']} (got {len(shapes)})")
    t, n, _ = _check_inputs("RNN", attrs, shapes)
    if attrs["use_sequence_length"]:
        _check_lengths_shape("RNN", shapes[-1], n)
    mode, _, h, layers, d = _dims(attrs)
    out = [(t, n, d * h)]
    if attrs["state_outputs"]:
        out += [(layers * d, n, h)] * (2 if mode == "lstm" else 1)
    return out


def _rnn_inputs(attrs, shapes):
    # from data (T, N, I): the flat parameters' length and the states' (L*D, N, H)
    # (MXNet's RNN fills them so, which symbolic programs rely on: an RNN cell's begin
    # state is sym.zeros of an unknown batch size)
    data = shapes[0]
    if data is None or len(data) != 3:
        return shapes
    mode, _, h, layers, d = _dims(attrs)
    shapes[1] = shapes[1] or (rnn_param_size(mode, data[2], h, layers, d == 2),)
    for k in range(2, min(len(shapes), 4 if mode == "lstm" else 3)):
        shapes[k] = shapes[k] or (layers * d, data[1], h)
    return shapes


def _check_lengths_type(op, dtype):
    if np.dtype(dtype).kind not in "iuf":
        raise TypeError(f"{op}: sequence_length must hold numbers (got {np.dtype(dtype)})")


def _rnn_type(attrs, dtypes):
    dt = np.dtype(dtypes[0])
    if dt.kind != "f":
        raise TypeError(f"RNN: data must have a floating dtype (got {dt})")
    lengths = attrs["use_sequence_length"]
    same = dtypes[1:len(dtypes) - lengths]
    for name, other in zip(("parameters", "state", "state_cell"), same):
        if np.dtype(other) != dt:
            raise TypeError(f"RNN: {name} must have data's dtype {dt} (got "
                            f"{np.dtype(other)})")
    if lengths:
        _check_lengths_type("RNN", dtypes[-1])
    return [dt] * (1 + attrs["state_outputs"] * (1 + (attrs["mode"] == "lstm")))


def _dead(op, attrs, lengths, t):
    """(T, N) bool, True at the steps past each sample's length (None without lengths,
    or when every length is T); ``lengths`` checked to hold integers in [1, T]."""
    if not attrs["use_sequence_length"]:
        return None
    lens = to_host(lengths)
    if lens.dtype.kind == "f":
        bad = ~np.isfinite(lens) | (lens != np.round(lens))
    else:
        bad = np.zeros(lens.shape, bool)
    bad |= (lens < 1) | (lens > t)
    if bad.any():
        raise ValueError(f"{op}: sequence_length must hold integers in [1, {t}] (the "
                         f"sequence length of data) (got {lens.tolist()})")
    dead = np.arange(t)[:, None] >= lens.astype(np.int64)[None, :]
    return dead if dead.any() else None


def _work(dtype):
    """The dtype the kernel computes in: float32 for float16."""
    dt = np.dtype(dtype)
    return np.dtype(np.float32) if dt == np.float16 else dt


def _host(a, dtype):
    return np.ascontiguousarray(to_host(a), dtype=dtype)


def _direct(out, dtype):
    """Whether the kernel may compute into output ``out`` itself: a C-contiguous host
    array of the working dtype (else it computes into a buffer and copies)."""
    return type(out) is np.ndarray and out.dtype == dtype and out.flags.c_contiguous


# -- views of the flat parameters and of the reserve ------------------------------------

def param_slices(mode, input_size, state_size, num_layers, bidirectional=False):
    """``(layer, direction, group, gate, kind, start, shape)`` of every gate's weight and
    bias in the flat ``parameters``, in MXNet's packing order (see the module doc):
    ``group`` 'i2h' or 'h2h', ``gate`` its index among the mode's gates, ``kind``
    'weight' or 'bias', ``direction`` 0 (forward) or 1 (backward)."""
    g, h, d = GATES[mode], state_size, 2 if bidirectional else 1
    out, pos = [], 0
    for layer in range(num_layers):
        width = input_size if layer == 0 else d * h
        for direction in range(d):
            for group, cols in (("i2h", width), ("h2h", h)):
                for gate in range(g):
                    out.append((layer, direction, group, gate, "weight", pos, (h, cols)))
                    pos += h * cols
    for layer in range(num_layers):
        for direction in range(d):
            for group in ("i2h", "h2h"):
                for gate in range(g):
                    out.append((layer, direction, group, gate, "bias", pos, (h,)))
                    pos += h
    return out


def _param_views(flat, mode, i, h, layers, d):
    """Per layer and direction ``[i2h weight, h2h weight, i2h bias, h2h bias]``: views
    of the flat ``parameters`` (or of its gradient), MXNet's packing order."""
    g = GATES[mode]
    views, pos = [], 0
    for layer in range(layers):
        isz = i if layer == 0 else d * h
        for _ in range(d):
            wx = flat[pos:pos + g * h * isz].reshape(g * h, isz)
            pos += g * h * isz
            wh = flat[pos:pos + g * h * h].reshape(g * h, h)
            pos += g * h * h
            views.append([wx, wh])
    for k in range(layers * d):
        views[k] += [flat[pos:pos + g * h], flat[pos + g * h:pos + 2 * g * h]]
        pos += 2 * g * h
    return views


def _clip(attrs):
    """(min, max, nan) of the LSTM's cell clipping, or None."""
    if attrs["lstm_state_clip_min"] is None:
        return None
    return (attrs["lstm_state_clip_min"], attrs["lstm_state_clip_max"],
            attrs["lstm_state_clip_nan"])


def _reserve(buf, mode, t, n, h, layers, d, drop, clip=False):
    """(per layer and direction a dict of views, per layer a dict of views, size): the
    reserve's layout over the flat ``buf`` (None: only the size).  Per layer and
    direction: ``gates`` (T, N, G*H) after their nonlinearities; ``h`` (T+1, N, H) the
    hidden states in time order with the initial one first (forward direction) or last
    (backward direction); LSTM: ``c`` (T+1, N, H) the cells likewise and ``tc`` (T, N,
    H) their tanh, and with ``clip`` ``keep`` (T, N, H), 1 where the new cell was inside
    the clipping range (the clip's derivative); GRU: ``hn`` (T, N, H),
    ``W_hn h_prev + b_hn``.  Per layer above the
    first: ``x`` (T, N, D*H) its input, and ``mask`` (T, N, D*H) the dropout mask that
    made it (scaled by 1 / (1 - p)) when ``drop``."""
    pos = 0

    def take(*shape):
        nonlocal pos
        size = int(np.prod(shape))
        v = None if buf is None else buf[pos:pos + size].reshape(shape)
        pos += size
        return v
    cells, layer_views = [], []
    g = GATES[mode]
    for layer in range(layers):
        lv = {}
        if layer > 0:
            lv["x"] = take(t, n, d * h)
            if drop:
                lv["mask"] = take(t, n, d * h)
        layer_views.append(lv)
        for _ in range(d):
            v = {"gates": take(t, n, g * h), "h": take(t + 1, n, h)}
            if mode == "lstm":
                v["c"], v["tc"] = take(t + 1, n, h), take(t, n, h)
                if clip:
                    v["keep"] = take(t, n, h)
            elif mode == "gru":
                v["hn"] = take(t, n, h)
            cells.append(v)
    return cells, layer_views, pos


# -- forward ------------------------------------------------------------------------------

def _layer_forward(mode, x2, wts, h0, c0, v, reverse, dead, clip):
    """One direction of one layer over the reserve views ``v`` (see :func:`_reserve`);
    ``dead`` (T, N) marks the steps past each sample's length, or is None; ``clip``
    is :func:`_clip`'s."""
    wx, wh, bx, bh = wts
    gates, hb = v["gates"], v["h"]
    t, n, gh = gates.shape
    _blas_matmul(x2, wx.T, gates.reshape(t * n, gh))
    first = t if reverse else 0
    hb[first] = h0
    if mode == "lstm":
        v["c"][first] = c0
    bias = bx + bh
    rec = np.empty((n, gh), gates.dtype)
    h = wh.shape[1]
    for k in range(t):
        s = t - 1 - k if reverse else k
        prev, cur = (s + 1, s) if reverse else (s, s + 1)
        _blas_matmul(hb[prev], wh.T, rec)
        gs = gates[s]
        if mode == "lstm":
            _k.lstm_preact(gs, rec, bias)
            np.tanh(gs, out=gs)
            c = v["c"]
            _k.lstm_cell(gs, c[prev], c[cur])
            if clip is not None:
                _clip_cell(c[cur], v["keep"][s], clip)
            np.tanh(c[cur], out=v["tc"][s])
            np.multiply(gs[:, 3 * h:], v["tc"][s], out=hb[cur])
        elif mode == "gru":
            _k.gru_forward(gs, rec, bx, bh, hb[prev], v["hn"][s], hb[cur])
        else:
            _k.rnn_preact(gs, rec, bias, hb[cur], mode == "rnn_relu")
            if mode == "rnn_tanh":
                np.tanh(hb[cur], out=hb[cur])
        if dead is not None and dead[s].any():      # past the length: the state is held
            rows = dead[s]
            hb[cur][rows] = hb[prev][rows]
            if mode == "lstm":
                v["c"][cur][rows] = v["c"][prev][rows]


def _clip_cell(c, keep, clip):
    """Clip the new cell ``c`` in place (NaN to the minimum with ``clip[2]``), keeping
    in ``keep`` the derivative: 1 where ``min <= c <= max`` (not NaN), else 0."""
    lo, hi = c.dtype.type(clip[0]), c.dtype.type(clip[1])
    keep[...] = (c >= lo) & (c <= hi)
    if clip[2]:
        np.copyto(c, lo, where=np.isnan(c))
    np.clip(c, lo, hi, out=c)


def _run(attrs, x, flat, h0, c0, buf, drop, dead, y_last=None):
    """The forward over host arrays in the working dtype; fills the reserve ``buf``
    and returns (output (T, N, D*H), final hidden states, final cells or None); the
    output is computed into ``y_last`` when given."""
    mode, g, h, layers, d = _dims(attrs)
    t, n, i = x.shape
    clip = _clip(attrs)
    cells, layer_views, _ = _reserve(buf, mode, t, n, h, layers, d, drop, clip is not None)
    wts = _param_views(flat, mode, i, h, layers, d)
    hy = np.empty((layers * d, n, h), x.dtype)
    cy = np.empty((layers * d, n, h), x.dtype) if mode == "lstm" else None
    xin = x
    for layer in range(layers):
        last = layer == layers - 1
        if not last:
            y = layer_views[layer + 1]["x"]
        else:
            y = np.empty((t, n, d * h), x.dtype) if y_last is None else y_last
        x2 = xin.reshape(t * n, xin.shape[2])
        for direction in range(d):
            k = layer * d + direction
            v = cells[k]
            reverse = direction == 1
            _layer_forward(mode, x2, wts[k], h0[k], None if c0 is None else c0[k], v,
                           reverse, dead, clip)
            ys = y[:, :, direction * h:(direction + 1) * h]
            ys[...] = v["h"][:t] if reverse else v["h"][1:]
            if dead is not None:
                ys[dead] = 0
            hy[k] = v["h"][0 if reverse else t]
            if cy is not None:
                cy[k] = v["c"][0 if reverse else t]
        if drop and not last:
            p = attrs["p"]
            u = _random.generator().random(y.shape, dtype=np.float32)
            mask = layer_views[layer + 1]["mask"]
            np.greater_equal(u, np.float32(p), out=mask, casting="unsafe")
            mask *= mask.dtype.type(1.0 / (1.0 - p))
            y *= mask
        xin = y
    return xin, hy, cy


class _RNNState:
    """Per call of RNN: whether it drops between layers (training with ``p > 0``), and
    the reserve (an NDArray from the host pool) its forward filled, which the
    gradient hands to ``_backward_RNN``."""

    __slots__ = ("drop", "reserve")

    def __init__(self, drop):
        self.drop = drop
        self.reserve = None


def _prepare(attrs):
    return _RNNState(is_training() and attrs["p"] > 0 and attrs["num_layers"] > 1)


def _forward(attrs, ins, outs, state):
    mode, _, h, layers, d = _dims(attrs)
    w = _work(ins[0].dtype)
    x, flat, h0 = (_host(a, w) for a in ins[:3])
    c0 = _host(ins[3], w) if mode == "lstm" else None
    t, n, _ = x.shape
    dead = _dead("RNN", attrs, ins[-1], t)
    size = _reserve(None, mode, t, n, h, layers, d, state.drop,
                    _clip(attrs) is not None)[2]
    reserve = empty((size,), ctx=cpu(), dtype=w)
    direct = _direct(outs[0], w)
    y, hy, cy = _run(attrs, x, flat, h0, c0, storage_view(reserve, -1), state.drop, dead,
                     outs[0] if direct else None)
    if not direct:
        outs[0][...] = like(outs[0], y)
    if attrs["state_outputs"]:
        outs[1][...] = like(outs[1], hy)
        if mode == "lstm":
            outs[2][...] = like(outs[2], cy)
    state.reserve = reserve


# -- backward -----------------------------------------------------------------------------

def _layer_backward(mode, dy, off, x2, wts, dwts, v, dh_last, dc_last, reverse, dx2, first,
                    dead):
    """One direction of one layer backward: writes the weight and bias gradients
    ``dwts`` and the input gradient into ``dx2`` (``first``: write, else add; None:
    not wanted); returns the gradients of the initial hidden state and cell.  At the
    steps ``dead`` marks (past a sample's length) the state's gradient passes through
    and the gates get none."""
    wx, wh, bx, bh = wts
    dwx, dwh, dbx, dbh = dwts
    gates, hb = v["gates"], v["h"]
    t, n, gh = gates.shape
    h = wh.shape[1]
    dg = np.empty((t, n, gh), gates.dtype)
    dgh = np.empty_like(dg) if mode == "gru" else dg
    dhrec = np.array(dh_last, order="C")
    dc = np.array(dc_last, order="C") if mode == "lstm" else None
    carry = np.zeros((n, h), gates.dtype) if mode == "gru" else None
    for s in (range(t) if reverse else range(t - 1, -1, -1)):
        prev, cur = (s + 1, s) if reverse else (s, s + 1)
        rows = dead[s] if dead is not None and dead[s].any() else None
        if rows is not None:
            kept = [a[rows] for a in (dhrec, dc, carry) if a is not None]
        if mode == "lstm":
            _k.lstm_backward(gates[s], v["tc"][s], v["c"][prev], dy, s, off, dhrec, dc,
                             dg[s], v["keep"][s] if "keep" in v else None)
        elif mode == "gru":
            _k.gru_backward(gates[s], v["hn"][s], hb[prev], dy, s, off, dhrec, carry,
                            dg[s], dgh[s])
        else:
            _k.rnn_backward(hb[cur], dy, s, off, dhrec, dg[s], mode == "rnn_relu")
        if rows is not None:
            dg[s][rows] = 0
            dgh[s][rows] = 0
        _blas_matmul(dgh[s], wh, dhrec)
        if rows is not None:
            for a, k in zip([a for a in (dhrec, dc, carry) if a is not None], kept):
                a[rows] = k
    if carry is not None:
        dhrec += carry
    hprev = (hb[1:] if reverse else hb[:t]).reshape(t * n, h)
    dg2, dgh2 = dg.reshape(t * n, gh), dgh.reshape(t * n, gh)
    _blas_matmul(dg2.T, x2, dwx)
    _blas_matmul(dgh2.T, hprev, dwh)
    np.sum(dg2, axis=0, out=dbx)
    np.sum(dgh2, axis=0, out=dbh)
    if dx2 is not None:
        if first:
            _blas_matmul(dg2, wx, dx2)
        else:
            _blas_matmul(dg2, wx, dx2, add=True)
    return dhrec, (dc if dc is not None else dc_last)


def _positions(attrs):
    """Positions in _backward_RNN's inputs: (first head gradient, number of heads,
    first of state/state_cell or the reserve); sequence_length, with
    use_sequence_length, is last."""
    heads = 1 + attrs["state_outputs"] * (1 + (attrs["mode"] == "lstm"))
    return 2, heads, 2 + heads


def _backward(attrs, ins, outs):
    mode, _, h, layers, d = _dims(attrs)
    lstm = mode == "lstm"
    w = _work(ins[0].dtype)
    x, flat = _host(ins[0], w), _host(ins[1], w)
    t, n, i = x.shape
    g0, heads, rest = _positions(attrs)
    dy = _host(ins[g0], w)
    dead = _dead("_backward_RNN", attrs, ins[-1], t)
    sshape = (layers * d, n, h)
    dhy = _host(ins[g0 + 1], w) if heads > 1 else np.zeros(sshape, w)
    dcy = _host(ins[g0 + 2], w) if heads > 2 else np.zeros(sshape, w) if lstm else None
    clip = _clip(attrs) is not None
    if attrs["use_reserve"]:
        drop = attrs["p"] > 0 and layers > 1 and ins[rest].size > \
            _reserve(None, mode, t, n, h, layers, d, False, clip)[2]
        buf = _host(ins[rest], w)
    else:        # without the forward's reserve: the forward again, without dropout
        drop = False
        size = _reserve(None, mode, t, n, h, layers, d, False, clip)[2]
        buf = np.empty(size, w)
        _run(attrs, x, flat, _host(ins[rest], w),
             _host(ins[rest + 1], w) if lstm else None, buf, False, dead)
    cells, layer_views, _ = _reserve(buf, mode, t, n, h, layers, d, drop, clip)
    wts = _param_views(flat, mode, i, h, layers, d)
    direct = outs[1] is not None and _direct(outs[1], w)
    dflat = outs[1] if direct else np.empty(flat.shape, w)
    dwts = _param_views(dflat, mode, i, h, layers, d)
    dh0, dc0 = np.empty(sshape, w), np.empty(sshape, w)
    dx2 = None
    for layer in range(layers - 1, -1, -1):
        xin = x if layer == 0 else layer_views[layer]["x"]
        x2 = xin.reshape(t * n, xin.shape[2])
        want_dx = layer > 0 or outs[0] is not None
        dx2 = None
        if layer == 0 and want_dx and _direct(outs[0], w):
            dx2 = outs[0].reshape(x2.shape)
        elif want_dx:
            dx2 = np.empty(x2.shape, w)
        for direction in range(d):
            k = layer * d + direction
            dh0[k], dc = _layer_backward(mode, dy, direction * h, x2, wts[k], dwts[k],
                                         cells[k], dhy[k], dcy[k] if lstm else None,
                                         direction == 1, dx2, direction == 0, dead)
            if lstm:
                dc0[k] = dc
        if layer > 0:
            dy = dx2.reshape(t, n, d * h)
            if drop:
                dy *= layer_views[layer]["mask"]
    if outs[0] is not None and not _direct(outs[0], w):
        outs[0][...] = like(outs[0], dx2.reshape(x.shape))
    if outs[1] is not None and dflat is not outs[1]:
        outs[1][...] = like(outs[1], dflat)
    if outs[2] is not None:
        outs[2][...] = like(outs[2], dh0)
    if lstm and outs[3] is not None:
        outs[3][...] = like(outs[3], dc0)


def _public(attrs):
    return {k: attrs[k] for k in RNN_ATTRS}


_REQ = {True: "write", False: "null"}


def _rnn_grad(attrs, inputs, outputs, out_grads, state=None, needs=None):
    lstm = attrs["mode"] == "lstm"
    n_in = 3 + lstm
    lengths = [inputs[-1]] if attrs["use_sequence_length"] else []
    reserve = None if state is None else state.reserve
    if reserve is None:
        if attrs["p"] > 0 and attrs["num_layers"] > 1 and is_training():
            raise ValueError("RNN: the gradient with dropout (p > 0 in training) needs "
                             "its forward's mask: compute it with backward() on the "
                             "recorded call (got a gradient without the forward's state)")
        rest = list(inputs[2:n_in])
    else:
        if reserve.ctx != inputs[0].ctx:
            reserve = from_numpy(storage_view(reserve, -1), inputs[0].ctx)
        rest = [reserve]
    req = None if needs is None else [_REQ[bool(b)] for b in needs[:n_in]]
    grads = F._backward_RNN(inputs[0], inputs[1], *out_grads, *rest, *lengths, req=req,
                            use_reserve=reserve is not None, **_public(attrs))
    return [gr if needs is None or needs[j] else None for j, gr in enumerate(grads)] \
        + [None] * (len(inputs) - n_in)


def _rnn_reads(attrs, n):
    state = attrs.get("_state")
    if state is not None and state.reserve is not None:
        return (0, 1, n - 1) if attrs["use_sequence_length"] else (0, 1)
    return tuple(range(n))


register(
    "RNN", inputs=("data", "parameters", "state", "state_cell", "sequence_length"),
    variadic=True, flagged_inputs=True, attrs=RNN_ATTRS,
    num_outputs=lambda attrs: 1 + attrs["state_outputs"] * (1 + (attrs["mode"] == "lstm")),
    infer_shape=_rnn_shape, infer_inputs=_rnn_inputs, infer_type=_rnn_type,
    compute=_forward, prepare=_prepare,
    gradient=_rnn_grad, grad_inputs=_rnn_reads, needs_rng=True,
    doc="""Recurrent layers over ``data`` (T, N, I) (MXNet 1.x's fused ``RNN``):
``mode`` 'rnn_relu' / 'rnn_tanh' (``h_t = act(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)``),
'lstm' (``i, f, o = sigmoid(.)``, ``g = tanh(.)``, ``c_t = f*c_{t-1} + i*g``,
``h_t = o*tanh(c_t)``) or 'gru' (``r, z = sigmoid(.)``, ``n = tanh(W_in x_t + b_in +
r*(W_hn h_{t-1} + b_hn))``, ``h_t = (1 - z)*n + z*h_{t-1}``).  Inputs ``data,
parameters, state[, state_cell]`` (state_cell for lstm only): ``parameters`` flat in
MXNet's packing order (runtime/ops/rnn.py), states (num_layers*D, N, state_size).
``bidirectional`` adds a backward direction in each layer (output features
``concat(forward, backward)``).  ``p``: dropout on the output of every layer but the
last, in training only.  Outputs ``out`` (T, N, D*state_size), and with
``state_outputs`` the final hidden states (and cells for lstm).  ``projection_size``,
``use_sequence_length`` takes the input ``sequence_length`` (N,) of integer lengths in
[1, T] (outputs past a length are 0, the final state is the one at the length, the
backward direction starts there).  ``lstm_state_clip_min/max`` (both or neither; lstm
only) clip each new cell state, NaN to the minimum with ``lstm_state_clip_nan``.
``projection_size`` is refused here (NotImplementedError): ``nd.RNN`` runs LSTMP as a
composition of operators.  The
gradient is the fused ``_backward_RNN`` over the reserve the forward kept; it has no
gradient of its own (no second derivative).""")


def _backward_shape(attrs, shapes):
    _, heads, rest = _positions(attrs)
    lstm = attrs["mode"] == "lstm"
    lengths = attrs["use_sequence_length"]
    want = rest + (1 if attrs["use_reserve"] else 1 + lstm) + lengths
    op = "_backward_RNN"
    if len(shapes) != want:
        raise ValueError(f"{op}: takes {want} array inputs with these attributes (got "
                         f"{len(shapes)})")
    mode, _, h, layers, d = _dims(attrs, op)
    states = [] if attrs["use_reserve"] else list(shapes[rest:rest + 1 + lstm])
    t, n, i = _check_inputs(op, attrs, list(shapes[:2]) + states)
    if lengths:
        _check_lengths_shape(op, shapes[-1], n)
    sshape = (layers * d, n, h)
    outs = [(t, n, d * h)] + [sshape] * (heads - 1)
    for j, s in enumerate(shapes[2:2 + heads]):
        if tuple(s) != outs[j]:
            raise ValueError(f"{op}: the gradient of output {j} must have shape "
                             f"{outs[j]} (got {tuple(s)})")
    if attrs["use_reserve"]:
        r = shapes[rest]
        clip = _clip(attrs) is not None
        sizes = [_reserve(None, mode, t, n, h, layers, d, drop, clip)[2]
                 for drop in (False, True)]
        if len(r) != 1 or r[0] not in sizes:
            raise ValueError(f"{op}: reserve must be 1-D of {sizes[0]} or {sizes[1]} "
                             f"values (got shape {tuple(r)})")
    return [tuple(shapes[0]), tuple(shapes[1])] + [sshape] * (1 + lstm)


def _backward_type(attrs, dtypes):
    dt = np.dtype(dtypes[0])
    if dt.kind != "f":
        raise TypeError(f"_backward_RNN: data must have a floating dtype (got {dt})")
    lengths = attrs["use_sequence_length"]
    if lengths:
        _check_lengths_type("_backward_RNN", dtypes[-1])
    others = dtypes[1:len(dtypes) - lengths]
    for j, other in enumerate(others):
        want = _work(dt) if attrs["use_reserve"] and j == len(others) - 1 else dt
        if np.dtype(other) != want:
            raise TypeError(f"_backward_RNN: input {j + 1} must have dtype {want} (got "
                            f"{np.dtype(other)})")
    return [dt] * (3 + (attrs["mode"] == "lstm"))


register(
    "_backward_RNN",
    # the longest form's names; the inputs present follow from the attributes (the doc)
    inputs=("data", "parameters", "grad_out", "grad_state", "grad_state_cell", "state",
            "state_cell", "sequence_length"),
    variadic=True, attrs=dict(RNN_ATTRS, use_reserve=Attr("bool", True)),
    num_outputs=lambda attrs: 3 + (attrs["mode"] == "lstm"),
    infer_shape=_backward_shape, infer_type=_backward_type, compute=_backward,
    null_outputs=True,
    doc="""Hidden: RNN's gradient, fused: (d data, d parameters, d state[, d
state_cell]) from ``data``, ``parameters``, the head gradients of RNN's outputs
(``grad_out``, and with ``state_outputs`` those of the final states) and either the
forward's ``reserve`` (``use_reserve=True``) or, without it, ``state[, state_cell]``,
from which the forward is computed again (without dropout), then ``sequence_length``
with ``use_sequence_length``.  Outputs requested null
are not computed.  It has no gradient rule.""")
