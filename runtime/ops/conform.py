"""MXNet 1.x operators that ported scripts and MXNet's own tests call and no other area
declares: ``hard_sigmoid``, the sequence operators ``SequenceMask``, ``SequenceLast``,
``SequenceReverse`` (RNN scripts: time-major data, per-sequence lengths), ``moments``,
``depth_to_space``/``space_to_depth``, and the legacy ``fill_element_0index``
(test_ndarray.py's test_ndarray_fill).  Each follows MXNet's
documented signature, defaults and semantics; gradients are made of registry ops.
"""

import numpy as np

from runtime.ops._call import F, zeros
from runtime.ops.reduce import reduced_axes, reduced_shape
from runtime.ops.registry import Attr, float_input, normalize_axis, register

# -- hard_sigmoid ---------------------------------------------------------------------------


def _hard_sigmoid(attrs, ins, outs):
    x, out = ins[0], outs[0]
    np.multiply(x, x.dtype.type(attrs["alpha"]), out=out)
    np.add(out, out.dtype.type(attrs["beta"]), out=out)
    np.clip(out, 0, 1, out=out)


def _hard_sigmoid_grad(attrs, inputs, outputs, out_grads):
    y = outputs[0]
    inside = (y > 0.0) * (y < 1.0)
    return [out_grads[0] * inside * attrs["alpha"]]


register("hard_sigmoid", attrs={"alpha": Attr("float", 0.2), "beta": Attr("float", 0.5)},
         infer_type=float_input("hard_sigmoid"), compute=_hard_sigmoid,
         gradient=_hard_sigmoid_grad, grad_outputs=(0,), inplace=[(0, 0)],
         doc="""``max(0, min(1, alpha * x + beta))`` (MXNet's hard_sigmoid; alpha 0.2,
beta 0.5 by default).  The gradient is ``alpha`` where the output is strictly between 0
and 1, zero elsewhere.""")


# -- SequenceMask, SequenceLast, SequenceReverse ---------------------------------------------

SEQ_ATTRS = {"use_sequence_length": Attr("bool", False), "axis": Attr("int", 0)}


def _seq_axes(op, attrs, shape):
    """(time axis, batch axis) of data of ``shape`` (MXNet: axis 0 time-major, 1
    batch-major)."""
    if len(shape) < 2:
        raise ValueError(f"{op}: data must have at least 2 dimensions (time and batch) (got "
                         f"shape {shape!r})")
    axis = normalize_axis(op, attrs["axis"], len(shape))
    if axis not in (0, 1):
        raise ValueError(f"{op}: axis must be 0 or 1 (got {attrs['axis']})")
    if op == "SequenceReverse" and axis != 0:
        raise ValueError(f"{op}: only axis 0 is supported, as in MXNet (got "
                         f"{attrs['axis']})")
    return axis, 1 - axis


def _seq_inputs(op, attrs, shapes):
    use = attrs["use_sequence_length"]
    if len(shapes) > 2:
        raise TypeError(f"{op}: takes the array inputs data and sequence_length (got "
                        f"{len(shapes)})")
    if use and len(shapes) != 2:
        raise ValueError(f"{op}: use_sequence_length=True needs a sequence_length input")
    t, b = _seq_axes(op, attrs, shapes[0])
    if len(shapes) == 2 and use and shapes[1] != (shapes[0][b],):
        raise ValueError(f"{op}: sequence_length must have shape ({shapes[0][b]},), one "
                         f"length per batch entry of data {shapes[0]!r} (got {shapes[1]!r})")
    return t, b


def _seq_type(op):
    check = float_input(op, "data")

    def infer(attrs, dtypes):
        if len(dtypes) == 2 and dtypes[1].kind not in "iuf":
            raise TypeError(f"{op}: sequence_length must hold numbers (got {dtypes[1]})")
        return check(attrs, dtypes[:1])
    return infer


def _lengths(op, attrs, ins, x, t, b):
    """Each batch entry's length as int64 (all the full time axis without
    use_sequence_length); ValueError for a length outside [1, time] (0 too for
    SequenceMask), before anything is written."""
    n = x.shape[t]
    if not attrs["use_sequence_length"]:
        return np.full(x.shape[b], n, np.int64)
    raw = ins[1]
    raw = raw.get() if not isinstance(raw, np.ndarray) else raw     # CuPy: lengths on host
    lens = np.trunc(raw).astype(np.int64) if raw.dtype.kind == "f" else raw.astype(np.int64)
    low = 0 if op == "SequenceMask" else 1
    bad = np.flatnonzero((lens < low) | (lens > n) | ~np.isfinite(raw))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"{op}: sequence_length must hold integers in [{low}, {n}] (got "
                         f"{raw[i].item()!r} at position {i})")
    return lens


def _time_mask(x, lens, t, b):
    """Boolean array broadcasting against ``x``: True where time < length."""
    steps = np.arange(x.shape[t])
    m = steps[:, None] < lens[None, :] if t == 0 else lens[:, None] > steps[None, :]
    m = m.reshape(m.shape + (1,) * (x.ndim - 2))
    if not isinstance(x, np.ndarray):
        import cupy
        m = cupy.asarray(m)
    return m


def _mask_shape(attrs, shapes):
    _seq_inputs("SequenceMask", attrs, shapes)
    return [shapes[0]]


def _sequence_mask(attrs, ins, outs):
    x, out = ins[0], outs[0]
    t, b = _seq_axes("SequenceMask", attrs, x.shape)
    lens = _lengths("SequenceMask", attrs, ins, x, t, b)
    xp = np if isinstance(x, np.ndarray) else __import__("cupy")
    xp.copyto(out, xp.where(_time_mask(x, lens, t, b), x, x.dtype.type(attrs["value"])))


def _sequence_mask_grad(attrs, inputs, outputs, out_grads):
    g = out_grads[0]
    if not attrs["use_sequence_length"]:
        return [g] + [None] * (len(inputs) - 1)
    return [F.SequenceMask(g, inputs[1], use_sequence_length=True, value=0.0,
                           axis=attrs["axis"]), None]


register("SequenceMask", inputs=("data", "sequence_length"), variadic=True,
         attrs={"use_sequence_length": Attr("bool", False), "value": Attr("float", 0.0),
                "axis": Attr("int", 0)},
         infer_shape=_mask_shape, infer_type=_seq_type("SequenceMask"),
         compute=_sequence_mask, gradient=_sequence_mask_grad,
         grad_inputs=lambda attrs, n: (1,) if n == 2 else (),
         doc="""``data`` with every step at or beyond its sequence's length set to
``value`` (MXNet's SequenceMask).  ``data`` is (time, batch, ...) for axis 0 (default) or
(batch, time, ...) for axis 1; ``sequence_length`` (batch,) holds the lengths (integers
in [0, time]; float values are truncated) and is read only with
``use_sequence_length=True`` (otherwise the output is ``data``).  No gradient for
``sequence_length``.""")


def _last_shape(attrs, shapes):
    t, _ = _seq_inputs("SequenceLast", attrs, shapes)
    shape = shapes[0]
    return [shape[:t] + shape[t + 1:]]


def _sequence_last(attrs, ins, outs):
    x, out = ins[0], outs[0]
    t, b = _seq_axes("SequenceLast", attrs, x.shape)
    if x.shape[t] == 0:
        return
    lens = _lengths("SequenceLast", attrs, ins, x, t, b)
    rows = np.arange(x.shape[b])
    if not isinstance(x, np.ndarray):
        import cupy
        lens, rows = cupy.asarray(lens), cupy.asarray(rows)
    out[...] = x[lens - 1, rows] if t == 0 else x[rows, lens - 1]


def _sequence_last_grad(attrs, inputs, outputs, out_grads):
    x, g = inputs[0], out_grads[0]
    t = normalize_axis("SequenceLast", attrs["axis"], len(x.shape))
    n = x.shape[t]
    g = F.expand_dims(g, axis=t)
    if not attrs["use_sequence_length"]:          # the last step: zeros before it
        before = list(x.shape)
        before[t] = n - 1
        return [F.concat(zeros(x, tuple(before)), g, dim=t)] + [None] * (len(inputs) - 1)
    hot = F.one_hot(inputs[1] - 1, depth=n, dtype=x.dtype)          # (batch, time)
    if t == 0:
        hot = F.transpose(hot)                                      # (time, batch)
    hot = F.reshape(hot, shape=hot.shape + (1,) * (len(x.shape) - 2))
    return [g * hot, None]


register("SequenceLast", inputs=("data", "sequence_length"), variadic=True,
         attrs=SEQ_ATTRS, infer_shape=_last_shape, infer_type=_seq_type("SequenceLast"),
         compute=_sequence_last, gradient=_sequence_last_grad,
         grad_inputs=lambda attrs, n: (1,) if n == 2 else (),
         doc="""The last step of each sequence (MXNet's SequenceLast): ``data`` (time,
batch, ...) for axis 0 (default) or (batch, time, ...) for axis 1 gives (batch, ...),
each entry the step at its length - 1 with ``use_sequence_length=True``
(``sequence_length`` (batch,), integers in [1, time]; floats truncated), else the last
step.  No gradient for ``sequence_length``.""")


def _reverse_shape(attrs, shapes):
    _seq_inputs("SequenceReverse", attrs, shapes)
    return [shapes[0]]


def _reversed_positions(lens, n):
    """(time, batch) source step of each output step: the first ``len`` steps reversed,
    the rest in place."""
    steps = np.arange(n)[:, None]
    return np.where(steps < lens[None, :], lens[None, :] - 1 - steps, steps)


def _sequence_reverse(attrs, ins, outs):
    x, out = ins[0], outs[0]
    _seq_axes("SequenceReverse", attrs, x.shape)
    lens = _lengths("SequenceReverse", attrs, ins, x, 0, 1)
    src = _reversed_positions(lens, x.shape[0])
    rows = np.broadcast_to(np.arange(x.shape[1])[None, :], src.shape)
    if not isinstance(x, np.ndarray):
        import cupy
        src, rows = cupy.asarray(src), cupy.asarray(rows)
    out[...] = x[src, rows]


def _sequence_reverse_grad(attrs, inputs, outputs, out_grads):
    g = out_grads[0]
    if len(inputs) == 2:
        return [F.SequenceReverse(g, inputs[1], **attrs), None]
    return [F.SequenceReverse(g, **attrs)]


register("SequenceReverse", inputs=("data", "sequence_length"), variadic=True,
         attrs=SEQ_ATTRS, infer_shape=_reverse_shape,
         infer_type=_seq_type("SequenceReverse"), compute=_sequence_reverse,
         gradient=_sequence_reverse_grad,
         grad_inputs=lambda attrs, n: (1,) if n == 2 else (),
         doc="""Each sequence's steps reversed (MXNet's SequenceReverse): ``data`` (time,
batch, ...) (axis 0 only, as MXNet); with ``use_sequence_length=True`` only the first
``sequence_length[b]`` steps of sequence b are reversed (integers in [1, time]; floats
truncated), the others stay in place.  No gradient for ``sequence_length``.""")


# -- fill_element_0index -------------------------------------------------------------------

def _fill_shape(attrs, shapes):
    lhs, mhs, rhs = shapes
    if len(lhs) != 2 or mhs != lhs[:1] or rhs != lhs[:1]:
        raise ValueError(f"fill_element_0index: lhs must be 2-D (rows, columns) and mhs, "
                         f"rhs of shape (rows,) (got {lhs!r}, {mhs!r}, {rhs!r})")
    return [lhs]


def _fill_type(attrs, dtypes):
    if dtypes[1] != dtypes[0]:
        raise TypeError(f"fill_element_0index: mhs must have lhs's dtype {dtypes[0]} (got "
                        f"{dtypes[1]})")
    if dtypes[2].kind not in "iuf":
        raise TypeError(f"fill_element_0index: rhs must hold indices (got {dtypes[2]})")
    return [dtypes[0]]


def _fill_columns(rhs, n):
    raw = rhs.get() if not isinstance(rhs, np.ndarray) else rhs
    cols = np.trunc(raw).astype(np.int64) if raw.dtype.kind == "f" else raw.astype(np.int64)
    bad = np.flatnonzero((cols < 0) | (cols >= n))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"fill_element_0index: rhs must hold column indices in [0, {n}) "
                         f"(got {raw[i].item()!r} at position {i})")
    return cols


def _fill_element_0index(attrs, ins, outs):
    lhs, mhs, rhs = ins
    out = outs[0]
    cols = _fill_columns(rhs, lhs.shape[1])
    rows = np.arange(lhs.shape[0])
    if not isinstance(lhs, np.ndarray):
        import cupy
        cols, rows = cupy.asarray(cols), cupy.asarray(rows)
    if out is not lhs:
        out[...] = lhs
    out[rows, cols] = mhs


def _fill_grad(attrs, inputs, outputs, out_grads):
    lhs, _, rhs = inputs
    g = out_grads[0]
    hot = F.one_hot(rhs, depth=lhs.shape[1], dtype=lhs.dtype)
    return [g * (1.0 - hot), F.pick(g, rhs, axis=1), None]


register("fill_element_0index", inputs=("lhs", "mhs", "rhs"), infer_shape=_fill_shape,
         infer_type=_fill_type, compute=_fill_element_0index, gradient=_fill_grad,
         grad_inputs=(2,), inplace=[(0, 0)],
         doc="""``lhs`` with row i's element at column ``rhs[i]`` replaced by ``mhs[i]``
(MXNet's legacy fill_element_0index; lhs 2-D, mhs and rhs of shape (rows,), rhs integers
in [0, columns), floats truncated).  Gradients: lhs gets the head gradient with those
elements zeroed, mhs the head gradient picked there.""")


# -- moments ----------------------------------------------------------------------------------

def _moments_axes(attrs, ndim):
    return reduced_axes("moments", {"axis": attrs["axes"]}, ndim)


def _moments_shape(attrs, shapes):
    shape = shapes[0]
    out = reduced_shape("moments", {"axis": attrs["axes"], "keepdims": attrs["keepdims"]},
                        shape)
    return [out, out]


def _moments(attrs, ins, outs):
    x = ins[0]
    axes = _moments_axes(attrs, x.ndim)
    work = x if x.dtype != np.float16 else x.astype(np.float32)
    mean = work.mean(axis=axes, keepdims=True)
    var = ((work - mean) ** 2).mean(axis=axes, keepdims=True)
    outs[0][...] = mean.reshape(outs[0].shape)
    outs[1][...] = var.reshape(outs[1].shape)


def _moments_grad(attrs, inputs, outputs, out_grads):
    x = inputs[0]
    axes = _moments_axes(attrs, len(x.shape))
    n = 1
    for a in axes:
        n *= x.shape[a]
    if n == 0:
        return [zeros(x)]
    kept = tuple(1 if i in axes else s for i, s in enumerate(x.shape))
    mean, gm, gv = (F.reshape(a, shape=kept) for a in (outputs[0], *out_grads))
    return [F.broadcast_to(gm, shape=x.shape) * (1.0 / n) + (x - mean) * gv * (2.0 / n)]


register("moments", num_outputs=2,
         attrs={"axes": Attr("axes"), "keepdims": Attr("bool", False)},
         infer_shape=_moments_shape, infer_type=lambda a, d: [
             float_input("moments")(a, d)[0]] * 2,
         compute=_moments, gradient=_moments_grad, grad_inputs=(0,), grad_outputs=(0,),
         doc="""The mean and the variance of ``data`` over ``axes`` (MXNet's moments; None:
every axis), two outputs of the reduced shape (the axes kept as 1 with ``keepdims``).  The
variance is the biased one, ``mean((x - mean)**2)``.""")


# -- depth_to_space, space_to_depth ---------------------------------------------------------

def _block(op, attrs, shape):
    b = attrs["block_size"]
    if b < 1:
        raise ValueError(f"{op}: block_size must be >= 1 (got block_size={b})")
    if len(shape) != 4:
        raise ValueError(f"{op}: data must be 4-D (N, C, H, W) (got shape {shape!r})")
    return b


def _d2s_shape(attrs, shapes):
    b = _block("depth_to_space", attrs, shapes[0])
    n, c, h, w = shapes[0]
    if c % (b * b):
        raise ValueError(f"depth_to_space: the channels {c} must be a multiple of "
                         f"block_size**2 = {b * b} (shape {shapes[0]!r})")
    return [(n, c // (b * b), h * b, w * b)]


def _s2d_shape(attrs, shapes):
    b = _block("space_to_depth", attrs, shapes[0])
    n, c, h, w = shapes[0]
    if h % b or w % b:
        raise ValueError(f"space_to_depth: height {h} and width {w} must be multiples of "
                         f"block_size {b} (shape {shapes[0]!r})")
    return [(n, c * b * b, h // b, w // b)]


def _d2s(attrs, ins, outs):
    x, out = ins[0], outs[0]
    n, c, h, w = x.shape
    b = attrs["block_size"]
    out[...] = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2) \
        .reshape(out.shape)


def _s2d(attrs, ins, outs):
    x, out = ins[0], outs[0]
    n, c, h, w = x.shape
    b = attrs["block_size"]
    out[...] = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4) \
        .reshape(out.shape)


register("depth_to_space", attrs={"block_size": Attr("int", required=True)},
         infer_shape=_d2s_shape, compute=_d2s,
         gradient=lambda a, i, o, g: [F.space_to_depth(g[0], block_size=a["block_size"])],
         doc="""Moves (N, C, H, W) channel blocks into space (MXNet's depth_to_space):
(N, C / b**2, H * b, W * b) for ``block_size`` b, the channels read as (b, b, C / b**2)
(DCR order).  Its gradient is space_to_depth.""")
register("space_to_depth", attrs={"block_size": Attr("int", required=True)},
         infer_shape=_s2d_shape, compute=_s2d,
         gradient=lambda a, i, o, g: [F.depth_to_space(g[0], block_size=a["block_size"])],
         doc="""Moves b x b spatial blocks of (N, C, H, W) into channels (MXNet's
space_to_depth, the inverse of depth_to_space): (N, C * b**2, H / b, W / b).""")


# -- ravel_multi_index, unravel_index -----------------------------------------------------------

def _ravel_target(op, attrs):
    shape = attrs["shape"]
    if shape is None or any(s < 1 for s in shape):
        raise ValueError(f"{op}: shape must be a tuple of sizes >= 1 (got {shape!r})")
    return tuple(shape)


def _ravel_shape(attrs, shapes):
    target = _ravel_target("ravel_multi_index", attrs)
    data = shapes[0]
    if len(data) < 1 or data[0] != len(target):
        raise ValueError(f"ravel_multi_index: data must have {len(target)} rows, one per "
                         f"axis of shape {target!r} (got data of shape {data!r})")
    return [data[1:]]


def _host_ints(x):
    a = x.get() if not isinstance(x, np.ndarray) else x
    return np.trunc(a).astype(np.int64) if a.dtype.kind == "f" else a.astype(np.int64)


def _put(out, values):
    if isinstance(out, np.ndarray):
        out[...] = values
    else:
        import cupy
        out[...] = cupy.asarray(values)


def _check_range(op, idx, n, what):
    bad = np.flatnonzero((idx < 0) | (idx >= n))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"{op}: {what} must lie in [0, {n}) (got {idx.ravel()[i]} at "
                         f"position {i})")


def _ravel(attrs, ins, outs):
    target = _ravel_target("ravel_multi_index", attrs)
    idx = _host_ints(ins[0])
    for axis, n in enumerate(target):
        _check_range("ravel_multi_index", idx[axis], n, f"the indices of axis {axis}")
    _put(outs[0], np.ravel_multi_index(tuple(idx), target) if idx.size else
         np.zeros(outs[0].shape, np.int64))


def _unravel_shape(attrs, shapes):
    target = _ravel_target("unravel_index", attrs)
    return [(len(target),) + tuple(shapes[0])]


def _unravel(attrs, ins, outs):
    target = _ravel_target("unravel_index", attrs)
    flat = _host_ints(ins[0])
    size = 1
    for n in target:
        size *= n
    _check_range("unravel_index", flat, size, "the flat indices")
    _put(outs[0], np.stack(np.unravel_index(flat, target)) if flat.size else
         np.zeros(outs[0].shape, np.int64))


register("ravel_multi_index", aliases=("_ravel_multi_index",),
         attrs={"shape": Attr("shape", required=True)}, infer_shape=_ravel_shape, compute=_ravel,
         differentiable=False,
         doc="""Flat (C-order) indices into an array of ``shape`` from ``data`` of shape
(len(shape), ...), one row per axis (MXNet's ravel_multi_index); the result has data's
dtype and shape without its first axis.  Indices outside an axis raise ValueError
(float indices are truncated).""")
register("unravel_index", aliases=("_unravel_index",),
         attrs={"shape": Attr("shape", required=True)}, infer_shape=_unravel_shape, compute=_unravel,
         differentiable=False,
         doc="""The converse of ravel_multi_index (MXNet's unravel_index): flat indices
``data`` into an array of ``shape`` become (len(shape),) + data.shape coordinates, in
data's dtype.  Indices outside [0, prod(shape)) raise ValueError.""")


# -- LRN ------------------------------------------------------------------------------------

def _lrn_check(op, attrs, shape):
    n = attrs["nsize"]
    if n < 1 or n % 2 == 0:
        raise ValueError(f"{op}: nsize must be a positive odd number (got nsize={n})")
    if len(shape) < 2:
        raise ValueError(f"{op}: data must have a channel axis 1 (got shape {shape!r})")


def _window_sum(x, n):
    """Sum over the channel window [c - n // 2, c + n // 2] (clipped) along axis 1."""
    c = x.shape[1]
    cum = np.zeros((x.shape[0], c + 1) + x.shape[2:], dtype=x.dtype) if isinstance(
        x, np.ndarray) else __import__("cupy").zeros((x.shape[0], c + 1) + x.shape[2:],
                                                     dtype=x.dtype)
    cum[:, 1:] = x.cumsum(axis=1)
    lo = np.clip(np.arange(c) - n // 2, 0, c)
    hi = np.clip(np.arange(c) + n // 2 + 1, 0, c)
    return cum[:, hi] - cum[:, lo]


def _window_shape(attrs, shapes):
    _lrn_check("_lrn_window_sum", attrs, shapes[0])
    return [shapes[0]]


def _window(attrs, ins, outs):
    outs[0][...] = _window_sum(ins[0], attrs["nsize"])


register("_lrn_window_sum", attrs={"nsize": Attr("int", required=True)},
         infer_shape=_window_shape, infer_type=float_input("_lrn_window_sum"),
         compute=_window,
         gradient=lambda a, i, o, g: [F._lrn_window_sum(g[0], nsize=a["nsize"])],
         doc="""Sum of each channel's window of ``nsize`` channels centred on it (clipped at
the ends), along axis 1: LRN's denominator.  A symmetric linear map, its own gradient.""")


def _lrn_shape(attrs, shapes):
    _lrn_check("LRN", attrs, shapes[0])
    return [shapes[0]]


def _lrn(attrs, ins, outs):
    x = ins[0]
    n = attrs["nsize"]
    work = x if x.dtype != np.float16 else x.astype(np.float32)
    d = _window_sum(work * work, n) * (attrs["alpha"] / n) + attrs["knorm"]
    outs[0][...] = work * d ** (-attrs["beta"])


def _lrn_grad(attrs, inputs, outputs, out_grads):
    x, g = inputs[0], out_grads[0]
    n, alpha, beta = attrs["nsize"], attrs["alpha"], attrs["beta"]
    d = F._lrn_window_sum(x * x, nsize=n) * (alpha / n) + attrs["knorm"]
    inner = F._lrn_window_sum(g * x * d ** (-beta - 1.0), nsize=n)
    return [g * d ** (-beta) + x * inner * (-2.0 * beta * alpha / n)]


register("LRN", attrs={"alpha": Attr("float", 0.0001), "beta": Attr("float", 0.75),
                       "knorm": Attr("float", 2.0), "nsize": Attr("int", required=True)},
         infer_shape=_lrn_shape, infer_type=float_input("LRN"), compute=_lrn,
         gradient=_lrn_grad, grad_inputs=(0,),
         doc="""Local response normalisation across channels (MXNet's LRN, AlexNet's):
``x / (knorm + alpha / nsize * sum(x**2 over the nsize channels around c)) ** beta``
along axis 1, the window clipped at the ends.  ``nsize`` must be odd.""")
