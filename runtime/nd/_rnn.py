"""MXNet 1.x's ``RNN`` operator as ``nd.RNN``: vanilla RNN (relu, tanh), LSTM and GRU,
multi-layer and bidirectional, over data in the TNC layout.

The call runs the fused registry operator ``RNN`` (runtime/ops/rnn.py: compiled per-step
kernels, one tape node, the fused ``_backward_RNN`` as its gradient), except for the
option that operator does not fuse, ``projection_size`` (LSTMP).  Those calls are a
composition
of registry operators (FullyConnected, split, stack, concat, slice_axis, reshape,
sigmoid/tanh/relu, elementwise arithmetic, clip, where, Dropout) stepped here per time
step, so that autograd records each of them and every gradient comes from their rules.

MXNet's layout of the flat ``parameters`` vector (src/operator/rnn-inl.h, rnn_impl.h):
first every weight, per layer and per direction (forward, then backward): the input-to-
hidden weight ``(G*H, I_l)`` then the hidden-to-hidden weight ``(G*H, H)``, each row-major;
then every bias in the same order: ``i2h_bias (G*H,)`` then ``h2h_bias (G*H,)``.  ``G`` is
the number of gates (1 for rnn_relu/rnn_tanh, 4 for lstm in the order i, f, g, o, 3 for
gru in the order r, z, n), ``H`` is ``state_size``, ``I_0`` the feature size of ``data``
and ``I_l = D*H`` for the layers above (``D`` = 2 when bidirectional).  States are
``(L*D, N, H)`` with layer ``l``, direction ``d`` at index ``l*D + d``.

With ``projection_size`` ``P`` (LSTM only; MXNet runs it through cuDNN's LSTMP): the
hidden state is ``h_t = W_hr (o * tanh(c_t))`` of size ``P``, so ``h2h`` weights are
``(4H, P)``, ``I_l = D*P`` above the first layer, and each layer and direction has a third
weight ``h2r (P, H)`` after its ``h2h`` (no bias); ``state`` and the output's features are
``P`` wide (``D*P``), ``state_cell`` stays ``H`` wide.
"""

import numpy as np

from runtime._ndarray import NDArray, from_numpy
from runtime.nd._ops import make_function
from runtime.ops import registry
from runtime.ops.rnn import GATES as _GATES
from runtime.ops.rnn import rnn_param_size


def _fn(name):
    return make_function(registry.get(name))


_fc = _fn("FullyConnected")
_split = _fn("split")
_stack = _fn("stack")
_concat = _fn("concat")
_slice_axis = _fn("slice_axis")
_reshape = _fn("reshape")
_squeeze = _fn("squeeze")
_sigmoid = _fn("sigmoid")
_tanh = _fn("tanh")
_relu = _fn("relu")
_add = _fn("elemwise_add")
_sub = _fn("elemwise_sub")
_mul = _fn("elemwise_mul")
_bmul = _fn("broadcast_mul")
_clip = _fn("clip")
_where = _fn("where")
_dropout = _fn("Dropout")
_not_equal = _fn("_not_equal")
_copy = _fn("_copy")
_fused = _fn("RNN")


def _positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"RNN: {name} must be a positive integer (got {name}={value!r})")
    return int(value)


def _array(name, value):
    if not isinstance(value, NDArray):
        raise TypeError(f"RNN: {name} must be an NDArray (got {type(value).__name__})")
    if value.stype != "default":
        raise TypeError(f"RNN: {name} must be a dense NDArray (got stype={value.stype!r})")
    return value


def _pieces(arr, n, axis, squeeze=True):
    """``split`` of ``arr`` into ``n`` pieces along ``axis``, always as a list; with
    ``squeeze``, the axis is dropped when the pieces are single steps (time steps,
    layers' states), never for gates (which are single columns when state_size is 1)."""
    squeeze = squeeze and arr.shape[axis] == n
    if n == 1:
        return [_squeeze(arr, axis=axis)] if squeeze else [arr]
    return list(_split(arr, num_outputs=n, axis=axis, squeeze_axis=squeeze))


def _check_lengths(sequence_length, t, n):
    _array("sequence_length", sequence_length)
    if sequence_length.shape != (n,):
        raise ValueError(f"RNN: sequence_length must have shape (batch,) = ({n},) (got "
                         f"{sequence_length.shape})")
    lengths = sequence_length.asnumpy()
    if not np.all(np.isfinite(lengths)) or np.any(lengths != np.round(lengths)) \
            or np.any(lengths < 1) or np.any(lengths > t):
        raise ValueError(f"RNN: sequence_length must hold integers in [1, {t}] (the "
                         f"sequence length of data) (got {lengths.tolist()})")
    return lengths.astype(np.int64)


def RNN(data, parameters, state, state_cell=None, sequence_length=None, state_size=None,
        num_layers=None, bidirectional=False, mode=None, p=0.0, state_outputs=False,
        projection_size=None, lstm_state_clip_min=None, lstm_state_clip_max=None,
        lstm_state_clip_nan=False, use_sequence_length=False, out=None, name=None):
    """Recurrent layers over ``data`` (MXNet 1.x's ``nd.RNN``).

    Modes (``W_*`` and ``b_*`` the slices of ``parameters``, see below):

    - ``rnn_relu`` / ``rnn_tanh``: ``h_t = act(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)``.
    - ``lstm`` (gates i, f, g, o): ``i, f, o = sigmoid(.)``, ``g = tanh(.)`` of
      ``W_i* x_t + b_i* + W_h* h_{t-1} + b_h*``; ``c_t = f*c_{t-1} + i*g``,
      ``h_t = o*tanh(c_t)``.
    - ``gru`` (gates r, z, n): ``r, z = sigmoid(W_i* x_t + b_i* + W_h* h_{t-1} + b_h*)``,
      ``n = tanh(W_in x_t + b_in + r*(W_hn h_{t-1} + b_hn))``,
      ``h_t = (1 - z)*n + z*h_{t-1}``.

    Parameters
    ----------
    data : NDArray
        ``(T, N, I)`` (sequence, batch, features), a floating dtype.
    parameters : NDArray
        1-D, every weight then every bias in MXNet's packing order (module docstring);
        its size must be :func:`rnn_param_size`.
    state : NDArray
        Initial hidden state ``(L*D, N, H)``.
    state_cell : NDArray, optional
        Initial cell state ``(L*D, N, H)``; required for ``lstm``, refused otherwise.
    sequence_length : NDArray, optional
        ``(N,)`` valid lengths (integers in [1, T]), used with ``use_sequence_length``:
        outputs past a sample's length are 0 and its final state is that at its length
        (the backward direction starts at the sample's last valid step), as MXNet's
        cuDNN implementation.
    state_size, num_layers : int
        ``H`` and ``L`` (required).
    bidirectional : bool
        A backward direction beside the forward one in each layer (``D = 2``); the
        layer's output is ``concat(forward, backward)`` on the feature axis.
    mode : {'rnn_relu', 'rnn_tanh', 'lstm', 'gru'}
        Required.
    p : float
        Dropout rate on the output of every layer but the last, in [0, 1); active only in
        training mode (``autograd.record()``/``train_mode()``), as MXNet's.
    state_outputs : bool
        Return the final states too.
    projection_size : int, optional
        LSTM with a projection (LSTMP, module docstring): the hidden state, ``state`` and
        the output are ``projection_size`` wide.
    lstm_state_clip_min, lstm_state_clip_max : float, optional
        Clip the LSTM cell state to [min, max] after each step (both or neither).
    lstm_state_clip_nan : bool
        With clipping, NaN cell states become ``lstm_state_clip_min`` instead of
        propagating (cuDNN's clip without NaN propagation); ignored without clipping.
    use_sequence_length : bool
        Take ``sequence_length`` into account.
    out : NDArray or list of NDArrays, optional
        Where to write the results: one array for ``out`` alone, a list of all of them
        with ``state_outputs``, each of the result's shape and dtype (checked before
        anything is computed).
    name : str, optional
        Accepted and ignored, as in MXNet's imperative mode.

    Returns
    -------
    NDArray or list of NDArrays
        ``out`` ``(T, N, D*H)``; with ``state_outputs`` the list ``[out, h_n]`` (``[out,
        h_n, c_n]`` for lstm), the final states of shape ``(L*D, N, H)``.

    Raises
    ------
    TypeError
        An input that is not a dense NDArray.
    ValueError
        A bad ``mode``, ``state_size``, ``num_layers``, ``p``, clip range or
        ``projection_size``; ``data`` not 3-D; a ``parameters`` size other than MXNet's
        (the message names the expected size); state shapes other than ``(L*D, N, H)``;
        mixed dtypes; a missing or extra ``state_cell`` / ``sequence_length``; an ``out``
        that does not match the results.
    """
    if mode not in _GATES:
        raise ValueError(f"RNN: mode must be one of 'rnn_relu', 'rnn_tanh', 'lstm', 'gru' "
                         f"(got mode={mode!r})")
    h = _positive_int("state_size", state_size)
    layers = _positive_int("num_layers", num_layers)
    if projection_size is not None:
        if mode != "lstm":
            raise ValueError(f"RNN: projection_size applies to mode='lstm' only (got "
                             f"mode={mode!r})")
        projection_size = _positive_int("projection_size", projection_size)
    try:
        p = float(p)
    except (TypeError, ValueError):
        raise ValueError(f"RNN: p must be a number in [0, 1) (got p={p!r})") from None
    if not 0.0 <= p < 1.0:
        raise ValueError(f"RNN: p must be in [0, 1) (got p={p!r})")
    clip = (lstm_state_clip_min, lstm_state_clip_max)
    if (clip[0] is None) != (clip[1] is None):
        raise ValueError("RNN: lstm_state_clip_min and lstm_state_clip_max must be given "
                         f"together (got lstm_state_clip_min={clip[0]!r}, "
                         f"lstm_state_clip_max={clip[1]!r})")
    if clip[0] is not None:
        if mode != "lstm":
            raise ValueError(f"RNN: lstm_state_clip_min/max apply to mode='lstm' only "
                             f"(got mode={mode!r})")
        clip = (float(clip[0]), float(clip[1]))
        if not clip[0] <= clip[1]:
            raise ValueError(f"RNN: lstm_state_clip_min must be <= lstm_state_clip_max "
                             f"(got {clip[0]!r} > {clip[1]!r})")
    else:
        clip = None

    _array("data", data)
    _array("parameters", parameters)
    _array("state", state)
    if data.ndim != 3:
        raise ValueError(f"RNN: data must be 3-D (sequence, batch, features) in the TNC "
                         f"layout (got shape {data.shape})")
    if np.dtype(data.dtype).kind != "f":
        raise TypeError(f"RNN: data must have a floating dtype (got {np.dtype(data.dtype)})")
    t, n, i = data.shape
    d = 2 if bidirectional else 1
    g = _GATES[mode]
    r = h if projection_size is None else projection_size      # recurrent width
    expected = rnn_param_size(mode, i, h, layers, bool(bidirectional), projection_size)
    extra = "" if projection_size is None else f", projection_size={r}"
    if parameters.ndim != 1 or parameters.shape[0] != expected:
        raise ValueError(f"RNN: parameters must be a 1-D array of {expected} values for "
                         f"mode={mode!r}, input size {i}, state_size={h}, "
                         f"num_layers={layers}, bidirectional={bool(bidirectional)}{extra} "
                         f"(got shape {parameters.shape})")
    sshape = (layers * d, n, h)
    width = "state_size" if projection_size is None else "projection_size"
    if state.shape != (layers * d, n, r):
        raise ValueError(f"RNN: state must have shape (num_layers*directions, batch, "
                         f"{width}) = {(layers * d, n, r)} (got {state.shape})")
    if mode == "lstm":
        if state_cell is None:
            raise ValueError("RNN: state_cell is required for mode='lstm'")
        _array("state_cell", state_cell)
        if state_cell.shape != sshape:
            raise ValueError(f"RNN: state_cell must have shape (num_layers*directions, "
                             f"batch, state_size) = {sshape} (got {state_cell.shape})")
    elif state_cell is not None:
        raise ValueError(f"RNN: state_cell is an input of mode='lstm' only (got "
                         f"mode={mode!r})")
    for nm, a in (("parameters", parameters), ("state", state), ("state_cell", state_cell)):
        if a is not None and a.dtype != data.dtype:
            raise TypeError(f"RNN: {nm} must have data's dtype {np.dtype(data.dtype)} (got "
                            f"{np.dtype(a.dtype)})")
        if a is not None and a.ctx != data.ctx:
            raise ValueError(f"RNN: {nm} must be on data's context {data.ctx} (got {a.ctx})")
    shapes = [(t, n, d * r)] + ([(layers * d, n, r)] + [sshape] * (mode == "lstm")
                                if state_outputs else [])
    targets = _check_out(out, shapes, data.dtype)
    masks = None
    if use_sequence_length:
        if sequence_length is None:
            raise ValueError("RNN: use_sequence_length=True needs sequence_length")
        lengths = _check_lengths(sequence_length, t, n)
        if np.any(lengths < t):
            step = np.arange(t)[:, None] < lengths[None, :]        # (T, N)
            masks = [from_numpy(np.ascontiguousarray(m[:, None], dtype=data.dtype), data.ctx)
                     for m in step]                                # (N, 1) each
    elif sequence_length is not None:
        raise ValueError("RNN: sequence_length is given but use_sequence_length is False")
    if projection_size is None:
        ins = [data, parameters, state] + ([state_cell] if mode == "lstm" else []) + \
            ([sequence_length] if use_sequence_length else [])
        res = _fused(*ins, state_size=h, num_layers=layers, bidirectional=bool(bidirectional),
                     mode=mode, p=p, state_outputs=bool(state_outputs),
                     use_sequence_length=bool(use_sequence_length),
                     lstm_state_clip_min=None if clip is None else clip[0],
                     lstm_state_clip_max=None if clip is None else clip[1],
                     lstm_state_clip_nan=bool(lstm_state_clip_nan),
                     out=None if targets is None else
                     (targets if state_outputs else targets[0]))
        return list(res) if state_outputs else res

    if t == 0:
        # the empty output as a product of data and parameters (data's first feature
        # times a row of parameters; there are at least d*r), so that it is on the tape
        # with them: backward gives them zero gradients, not an error
        row = _reshape(_slice_axis(parameters, axis=0, begin=0, end=d * r),
                       shape=(1, 1, d * r))
        out = _bmul(_slice_axis(data, axis=2, begin=0, end=1), row)
        finals = [_copy(state)] + ([_copy(state_cell)] if mode == "lstm" else [])
        return _write([out] + finals if state_outputs else out, targets)

    # views of the flat parameter vector, in MXNet's packing order
    def take(begin, shape):
        size = int(np.prod(shape))
        return _reshape(_slice_axis(parameters, axis=0, begin=begin, end=begin + size),
                        shape=shape), begin + size

    weights, pos = [], 0
    for layer in range(layers):
        isz = i if layer == 0 else d * r
        for _ in range(d):
            wx, pos = take(pos, (g * h, isz))
            wh, pos = take(pos, (g * h, r))
            wr = None
            if projection_size is not None:
                wr, pos = take(pos, (r, h))
            weights.append([wx, wh, wr])
    for k in range(layers * d):
        bx, pos = take(pos, (g * h,))
        bh, pos = take(pos, (g * h,))
        weights[k] += [bx, bh]

    h0 = _pieces(state, layers * d, 0)
    c0 = _pieces(state_cell, layers * d, 0) if mode == "lstm" else [None] * (layers * d)
    hn, cn = [], []
    x = data
    for layer in range(layers):
        # -1, not n: reshape reads a 0 as "copy this dimension" (zero batches)
        xin = _reshape(x, shape=(-1, x.shape[2]))
        outs = []
        for direction in range(d):
            k = layer * d + direction
            wx, wh, wr, bx, bh = weights[k]
            proj = _reshape(_fc(xin, wx, bx, num_hidden=g * h), shape=(t, -1, g * h))
            steps = _pieces(proj, t, 0)
            ys, hl, cl = _run(mode, steps, wh, bh, wr, h0[k], c0[k], masks, clip,
                              lstm_state_clip_nan, reverse=direction == 1)
            outs.append(_stack(*ys, axis=0))
            hn.append(hl)
            cn.append(cl)
        x = outs[0] if d == 1 else _concat(*outs, dim=2)
        if p > 0 and layer < layers - 1:
            x = _dropout(x, p=p)
    if not state_outputs:
        return _write(x, targets)
    res = [x, _stack(*hn, axis=0)]
    if mode == "lstm":
        res.append(_stack(*cn, axis=0))
    return _write(res, targets)


def _check_out(out, shapes, dtype):
    """``out`` as a list of arrays matching ``shapes`` and ``dtype`` (None if not given)."""
    if out is None:
        return None
    outs = [out] if isinstance(out, NDArray) else out
    if not isinstance(outs, (list, tuple)) or len(outs) != len(shapes) or not all(
            isinstance(o, NDArray) for o in outs):
        raise TypeError(f"RNN: out must be {'an NDArray' if len(shapes) == 1 else 'a list'} "
                        f"of {len(shapes)} NDArray(s) (one per result) (got {out!r})")
    for k, (o, shape) in enumerate(zip(outs, shapes)):
        if o.shape != shape or o.dtype != dtype or o.stype != "default":
            raise ValueError(f"RNN: out[{k}] must be a dense array of shape {shape} and "
                             f"dtype {np.dtype(dtype)} (got shape {o.shape}, dtype "
                             f"{np.dtype(o.dtype)}, stype {o.stype!r})")
    return list(outs)


def _write(res, outs):
    """``res`` (an array or a list) copied into ``outs`` when given (and those
    returned instead)."""
    if outs is None:
        return res
    items = [_copy(r, out=o) for r, o in zip(res if isinstance(res, list) else [res], outs)]
    return items if isinstance(res, list) else items[0]


def _run(mode, steps, wh, bh, wr, hprev, cprev, masks, clip, clip_nan, reverse):
    """One direction of one layer: the outputs of every step (in time order) and the final
    hidden and cell states.  ``steps[t]`` is the input projection ``W_ih x_t + b_ih``;
    ``wr`` the LSTM projection weight or None; ``masks[t]`` (N, 1) or None."""
    g = _GATES[mode]
    t = len(steps)
    ys = [None] * t
    for s in (range(t - 1, -1, -1) if reverse else range(t)):
        hh = _fc(hprev, wh, bh, num_hidden=wh.shape[0])
        c = None
        if mode == "rnn_tanh":
            hnew = _tanh(_add(steps[s], hh))
        elif mode == "rnn_relu":
            hnew = _relu(_add(steps[s], hh))
        elif mode == "lstm":
            gi, gf, gg, go = _pieces(_add(steps[s], hh), g, 1, squeeze=False)
            c = _add(_mul(_sigmoid(gf), cprev), _mul(_sigmoid(gi), _tanh(gg)))
            if clip is not None:
                if clip_nan:
                    nan = _not_equal(c, c)
                    c = _where(nan, _full_like(c, clip[0]), c)
                c = _clip(c, a_min=clip[0], a_max=clip[1])
            hnew = _mul(_sigmoid(go), _tanh(c))
            if wr is not None:
                hnew = _fc(hnew, wr, num_hidden=wr.shape[0], no_bias=True)
        else:   # gru
            xr, xz, xn = _pieces(steps[s], g, 1, squeeze=False)
            hr, hz, hn = _pieces(hh, g, 1, squeeze=False)
            r = _sigmoid(_add(xr, hr))
            z = _sigmoid(_add(xz, hz))
            cand = _tanh(_add(xn, _mul(r, hn)))
            hnew = _add(cand, _mul(z, _sub(hprev, cand)))
        if masks is not None:
            m = masks[s]
            ys[s] = _bmul(m, hnew)
            hnew = _add(hprev, _bmul(m, _sub(hnew, hprev)))
            if c is not None:
                c = _add(cprev, _bmul(m, _sub(c, cprev)))
        else:
            ys[s] = hnew
        hprev, cprev = hnew, c
    return ys, hprev, cprev


def _full_like(a, value):
    return from_numpy(np.full(a.shape, value, a.dtype), a.ctx)
