"""Sequence operators of RNN scripts: ``SequenceMask``, ``SequenceLast`` and
``SequenceReverse`` (MXNet 1.x's sequence_mask/last/reverse).  Data is time-major (axis 0)
or batch-major (axis 1); per-sequence lengths come from an optional ``sequence_length``
input read with ``use_sequence_length=True``.  Gradients are made of registry ops.
"""

import numpy as np

from runtime._device import array_module, like, to_host
from runtime.ops._call import F, zeros
from runtime.ops.registry import Attr, float_input, normalize_axis, register

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
    raw = to_host(ins[1])
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
    return like(x, m.reshape(m.shape + (1,) * (x.ndim - 2)))


def _mask_shape(attrs, shapes):
    _seq_inputs("SequenceMask", attrs, shapes)
    return [shapes[0]]


def _sequence_mask(attrs, ins, outs):
    x, out = ins[0], outs[0]
    t, b = _seq_axes("SequenceMask", attrs, x.shape)
    lens = _lengths("SequenceMask", attrs, ins, x, t, b)
    xp = array_module(x)
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
    lens, rows = like(x, lens), like(x, np.arange(x.shape[b]))
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
    out[...] = x[like(x, src), like(x, rows)]


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
