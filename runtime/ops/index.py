"""More indexing and shape operators of MXNet 1.x: gather_nd, scatter_nd, batch_take,
slice_like, broadcast_axis, swapaxes, moveaxis, pad, split_v2, diag, shape_array,
size_array, the logical family (``logical_not``, ``broadcast_logical_and/or/xor``),
``fill_element_0index`` (legacy), ``depth_to_space``/``space_to_depth``, and
``ravel_multi_index``/``unravel_index``.

Hidden helpers of the gradient rules are registry ops too, so that gradients of
gradients work: ``_backward_gather_nd`` (MXNet's: the scatter-add of gather_nd's output
gradient), ``_pad_grad`` (the adjoint of pad) and ``_diag_grad`` (a diagonal's gradient
placed into zeros).
"""

import numpy as np

from runtime._device import like, store, to_host
from runtime._ndarray import shape_size
from runtime.ops._call import F, zeros
from runtime.ops.elemwise import binary
from runtime.ops.registry import Attr, dtype_scalar, normalize_axis, register, scalar_type
from runtime.ops.shape import _axes_of, _index_dtype, _indices


# -- gather_nd, scatter_nd, _backward_gather_nd ---------------------------------------------

def _nd_shape(op, data, indices, what="data"):
    """The shape gather_nd gives for ``data`` (a shape) and ``indices`` (a shape)."""
    if not indices:
        raise ValueError(f"{op}: indices must have at least one dimension (got shape ())")
    m = indices[0]
    if not 1 <= m <= len(data):
        raise ValueError(f"{op}: indices.shape[0] must be in [1, {len(data)}], the number of "
                         f"dimensions of {what} {data!r} (got {m})")
    return (indices[1:] + data[m:]) or (1,)


def _nd_index(op, ind, shape):
    """The tuple of integer arrays that ``ind`` (M, ...) selects in an array of ``shape``:
    float indices truncated, negative ones counted from the end, others out of range
    raise IndexError."""
    try:
        return tuple(_indices(op, ind[k], shape[k], "raise", k) for k in range(ind.shape[0]))
    except IndexError as e:            # take's message names its mode; these have none
        raise IndexError(str(e).replace(" (mode='raise')", "")) from None


def _nd_type(op):
    def infer(attrs, dtypes):
        _index_dtype(op, dtypes[1])
        return [dtypes[0]]
    return infer


def _gather_nd(attrs, ins, outs):
    data, ind = ins
    outs[0][...] = data[_nd_index("gather_nd", ind, data.shape)].reshape(outs[0].shape)


register("gather_nd", inputs=("data", "indices"),
         infer_shape=lambda a, s: [_nd_shape("gather_nd", s[0], s[1])],
         infer_type=_nd_type("gather_nd"), compute=_gather_nd, grad_inputs=(1,),
         gradient=lambda a, i, o, g: [F._backward_gather_nd(g[0], i[1], shape=i[0].shape),
                                      None],
         doc="""Elements or slices of ``data`` at the positions ``indices`` (M, Y0, ...)
gives: output[y0, ...] = data[indices[0, y0, ...], ..., indices[M-1, y0, ...]], of shape
indices.shape[1:] + data.shape[M:] (MXNet's gather_nd; (1,) when that is empty).  Float
indices are truncated; negative ones count from the end; others out of range raise
IndexError.  No gradient for ``indices``.""")


def _scatter_shape(op):
    def infer(attrs, shapes):
        data, ind = shapes
        shape = attrs["shape"]
        want = _nd_shape(op, shape, ind, "shape")
        if data != want:
            raise ValueError(f"{op}: data has shape {data!r}, indices {ind!r} into shape "
                             f"{shape!r} need {want!r}")
        return [shape]
    return infer


def _scatter(op, accumulate):
    def compute(attrs, ins, outs):
        data, ind = ins
        shape = attrs["shape"]
        idx = _nd_index(op, ind, shape)
        res = np.zeros(shape, data.dtype)
        src = data.reshape(ind.shape[1:] + shape[ind.shape[0]:])
        if accumulate:
            np.add.at(res, idx, src)
        else:
            res[idx] = src
        outs[0][...] = res
    return compute


_SHAPE = {"shape": Attr("shape", required=True)}

register("scatter_nd", inputs=("data", "indices"), attrs=_SHAPE,
         infer_shape=_scatter_shape("scatter_nd"), infer_type=_nd_type("scatter_nd"),
         compute=_scatter("scatter_nd", False), grad_inputs=(1,),
         gradient=lambda a, i, o, g: [F.gather_nd(g[0], i[1]), None],
         doc="""Zeros of ``shape`` with ``data`` written at the positions ``indices`` gives
(the inverse of gather_nd, MXNet's scatter_nd): data.shape must be indices.shape[1:] +
shape[M:].  Where indices repeat, the last write wins (MXNet leaves it unspecified) and
the gradient is read at every copy.  No gradient for ``indices``.""")

register("_backward_gather_nd", inputs=("data", "indices"), attrs=_SHAPE,
         infer_shape=_scatter_shape("_backward_gather_nd"),
         infer_type=_nd_type("_backward_gather_nd"),
         compute=_scatter("_backward_gather_nd", True), grad_inputs=(1,),
         gradient=lambda a, i, o, g: [F.gather_nd(g[0], i[1]), None],
         doc="scatter_nd that adds where indices repeat (MXNet's _backward_gather_nd): the "
             "gradient of gather_nd.")


# -- batch_take ------------------------------------------------------------------------------

def _batch_take_shape(attrs, shapes):
    a, ind = shapes
    if len(a) < 2 or a[0] != shape_size(ind):
        raise ValueError(f"batch_take: a must have at least 2 dimensions and one row per "
                         f"index (got a {a!r}, indices {ind!r})")
    return [ind]


def _batch_take_type(attrs, dtypes):
    _index_dtype("batch_take", dtypes[1])
    return [dtypes[0]]


def _batch_take(attrs, ins, outs):
    a, ind = ins
    n = a.shape[0]
    if n == 0:
        return
    rows = a.reshape(n, -1)                       # MXNet: M = a.size / a.shape[0]
    if rows.shape[1] == 0:
        raise IndexError("batch_take: cannot take from rows of size 0 (a has shape "
                         f"{a.shape!r})")
    idx = _indices("batch_take", ind.reshape(-1), rows.shape[1], "clip", 1)
    outs[0][...] = rows[np.arange(n), idx].reshape(outs[0].shape)


def _batch_take_grad(at, i, o, g):
    a, ind = i
    n = a.shape[0]
    if n == 0 or a.size == 0:
        return [zeros(a), None]
    rows = (n, a.size // n)
    grad = F._pick_grad(ind.reshape((n,)), g[0].reshape((n,)), axis=1, mode="clip",
                        shape=rows)
    return [grad.reshape(a.shape) if rows != a.shape else grad, None]


register("batch_take", inputs=("a", "indices"), infer_shape=_batch_take_shape,
         infer_type=_batch_take_type, compute=_batch_take, grad_inputs=(1,),
         gradient=_batch_take_grad,
         doc="output[i] = a[i, indices[i]] (MXNet's batch_take): ``a`` has one row per "
             "index (dimensions after the first are flattened into the row), the output "
             "has the indices' shape; indices are clipped to the row (MXNet), floats "
             "truncated.  MXNet has no gradient; here ``a`` gets the output gradient at "
             "the taken positions (``indices`` none).")


# -- slice_like --------------------------------------------------------------------------------

def _slice_like_axes(attrs, data, like):
    axes = attrs["axes"]
    if not axes:
        if len(data) != len(like):
            raise ValueError(f"slice_like: without axes, data {data!r} and shape_like "
                             f"{like!r} must have one number of dimensions")
        return tuple(range(len(data)))
    out = _axes_of("slice_like", axes, len(data), "axes")
    for a in out:
        if a >= len(like):
            raise ValueError(f"slice_like: axis {a} is out of range for shape_like {like!r}")
    return out


def _slice_like_range(attrs, data, like):
    axes = _slice_like_axes(attrs, data, like)
    for a in axes:
        if like[a] > data[a]:
            raise ValueError(f"slice_like: shape_like {like!r} is larger than data {data!r} "
                             f"on axis {a}")
    end = tuple(like[a] if a in axes else None for a in range(len(data)))
    return (0,) * len(data), end


def _slice_like_shape(attrs, shapes):
    data, like = shapes
    _, end = _slice_like_range(attrs, data, like)
    return [tuple(s if e is None else e for s, e in zip(data, end))]


def _slice_like(attrs, ins, outs):
    data, like = ins
    _, end = _slice_like_range(attrs, data.shape, like.shape)
    outs[0][...] = data[tuple(slice(0, e) for e in end)]


def _slice_like_grad(a, i, o, g):
    begin, end = _slice_like_range(a, i[0].shape, i[1].shape)
    return [F._slice_assign(zeros(i[0]), g[0], begin=begin, end=end), None]


register("slice_like", inputs=("data", "shape_like"), attrs={"axes": Attr("axes", ())},
         infer_shape=_slice_like_shape, infer_type=lambda a, d: [d[0]],
         compute=_slice_like, ignores=(1,), gradient=_slice_like_grad,
         doc="The leading part of ``data`` with the size of ``shape_like`` on ``axes`` (all "
             "axes when empty: then both must have one number of dimensions), as MXNet's "
             "slice_like.  ``shape_like`` gives only its shape.")


# -- broadcast_axis, swapaxes, moveaxis ------------------------------------------------------

def _broadcast_axes(attrs, shape):
    axis, size = attrs["axis"], attrs["size"]
    if len(axis) != len(size):
        raise ValueError(f"broadcast_axis: axis {axis!r} and size {size!r} must have one "
                         "length")
    axes = _axes_of("broadcast_axis", axis, len(shape))
    out = list(shape)
    for a, s in zip(axes, size):
        if shape[a] != 1:
            raise ValueError(f"broadcast_axis: axis {a} of shape {shape!r} must have size 1 "
                             f"(got {shape[a]})")
        if s < 1:
            raise ValueError(f"broadcast_axis: size must be positive (got {size!r})")
        out[a] = s
    return axes, tuple(out)


def _broadcast_axis(attrs, ins, outs):
    np.copyto(outs[0], np.broadcast_to(ins[0], outs[0].shape))


def _broadcast_axis_grad(a, i, o, g):
    axes, _ = _broadcast_axes(a, i[0].shape)
    return [F.sum(g[0], axis=axes, keepdims=True) if axes else g[0]]


register("broadcast_axis", aliases=("broadcast_axes",),
         attrs={"axis": Attr("shape", ()), "size": Attr("shape", ())},
         infer_shape=lambda a, s: [_broadcast_axes(a, s[0])[1]], compute=_broadcast_axis,
         gradient=_broadcast_axis_grad,
         doc="Broadcast the axes ``axis`` (each of size 1) to ``size`` (MXNet's "
             "broadcast_axis): x of shape (1, 2, 1) with axis=(0, 2), size=(2, 3) gives "
             "shape (2, 2, 3).")


def _swap(attrs, ndim):
    return (normalize_axis("swapaxes", attrs["dim1"], ndim, "dim1"),
            normalize_axis("swapaxes", attrs["dim2"], ndim, "dim2"))


def _swapaxes_shape(attrs, shapes):
    shape = list(shapes[0])
    a, b = _swap(attrs, len(shape))
    shape[a], shape[b] = shape[b], shape[a]
    return [tuple(shape)]


register("swapaxes", aliases=("SwapAxis",),
         attrs={"dim1": Attr("int", 0), "dim2": Attr("int", 0)},
         infer_shape=_swapaxes_shape,
         compute=lambda a, ins, outs: np.copyto(outs[0], np.swapaxes(
             ins[0], *_swap(a, ins[0].ndim))),
         gradient=lambda a, i, o, g: [F.swapaxes(g[0], dim1=a["dim1"], dim2=a["dim2"])],
         doc="Interchange axes ``dim1`` and ``dim2`` (MXNet's swapaxes, alias SwapAxis).")


def _move(attrs, ndim):
    src = _axes_of("moveaxis", attrs["source"], ndim, "source")
    dst = _axes_of("moveaxis", attrs["destination"], ndim, "destination")
    if len(src) != len(dst):
        raise ValueError(f"moveaxis: source {attrs['source']!r} and destination "
                         f"{attrs['destination']!r} must have one length")
    return src, dst


def _move_perm(attrs, ndim):
    """The axes of the input in the order of the output's (NumPy's moveaxis)."""
    src, dst = _move(attrs, ndim)
    order = [k for k in range(ndim) if k not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return tuple(order)


def _moveaxis_shape(attrs, shapes):
    return [tuple(shapes[0][k] for k in _move_perm(attrs, len(shapes[0])))]


register("moveaxis", inputs=("tensor",),
         attrs={"source": Attr("axes", required=True),
                "destination": Attr("axes", required=True)},
         infer_shape=_moveaxis_shape,
         compute=lambda a, ins, outs: np.copyto(outs[0], np.moveaxis(
             ins[0], *_move(a, ins[0].ndim))),
         gradient=lambda a, i, o, g: [F.moveaxis(g[0], source=a["destination"],
                                                 destination=a["source"])],
         doc="Move axes ``source`` to the positions ``destination`` (ints or tuples of "
             "one length), the others keeping their order: MXNet's nd.moveaxis (NumPy's).")


# -- pad, _pad_grad ------------------------------------------------------------------------

_PAD_MODES = ("constant", "edge", "reflect")


def _pads(op, attrs, shape, padded=False):
    """The (before, after) pairs of ``pad_width`` for an array of ``shape`` (the padded
    one when ``padded``), checked against MXNet's rules."""
    pw, mode = attrs["pad_width"], attrs["mode"]
    if len(shape) not in (4, 5):
        raise ValueError(f"{op}: data must be 4-D or 5-D, as MXNet requires (got shape "
                         f"{shape!r})")
    if len(pw) != 2 * len(shape):
        raise ValueError(f"{op}: pad_width must hold 2 values per dimension, "
                         f"{2 * len(shape)} for shape {shape!r} (got {pw!r})")
    if any(p < 0 for p in pw):
        raise ValueError(f"{op}: pad_width must be >= 0 (got {pw!r})")
    if any(pw[:4]):
        raise ValueError(f"{op}: pad_width must not pad the first two axes, as MXNet "
                         f"requires (got {pw!r})")
    pairs = list(zip(pw[::2], pw[1::2]))
    for a, (b, e) in enumerate(pairs):
        n = shape[a] - (b + e if padded else 0)
        if padded and n < 0:
            raise ValueError(f"{op}: ograd of shape {shape!r} is smaller than pad_width "
                             f"{pw!r}")
        if mode == "reflect" and max(b, e) > n - 1 and (b or e):
            raise ValueError(f"{op}: reflect padding needs pad widths below the size of the "
                             f"axis (axis {a} of size {n}, pad_width {pw!r})")
        if mode == "edge" and n == 0 and (b or e):
            raise ValueError(f"{op}: edge padding needs a non-empty axis (axis {a} of size 0, "
                             f"pad_width {pw!r})")
    return pairs


def _pad_shape(attrs, shapes):
    shape = shapes[0]
    pairs = _pads("pad", attrs, shape)
    return [tuple(n + b + e for n, (b, e) in zip(shape, pairs))]


def _pad(attrs, ins, outs):
    x = ins[0]
    pairs = _pads("pad", attrs, x.shape)
    if attrs["mode"] == "constant":
        v = dtype_scalar("pad", "constant_value", attrs["constant_value"], x.dtype)
        outs[0][...] = np.pad(x, pairs, mode="constant", constant_values=v)
    else:
        outs[0][...] = np.pad(x, pairs, mode=attrs["mode"])


def _pad_grad_shape(attrs, shapes):
    shape = shapes[0]
    pairs = _pads("_pad_grad", attrs, shape, padded=True)
    return [tuple(n - b - e for n, (b, e) in zip(shape, pairs))]


def _pad_grad(attrs, ins, outs):
    g = ins[0]
    pairs = _pads("_pad_grad", attrs, g.shape, padded=True)
    mode = attrs["mode"]
    for a, (b, e) in enumerate(pairs):
        n = g.shape[a] - b - e
        if mode == "constant":
            g = g[(slice(None),) * a + (slice(b, b + n),)]
            continue
        # the source position of every padded position, then their sum into each source
        src = np.pad(np.arange(n), (b, e), mode=mode)
        acc = np.zeros(g.shape[:a] + (n,) + g.shape[a + 1:], g.dtype)
        np.add.at(np.moveaxis(acc, a, 0), src, np.moveaxis(g, a, 0))
        g = acc
    outs[0][...] = g


register("pad", aliases=("Pad",),
         attrs={"mode": Attr("str", "constant", choices=_PAD_MODES),
                "pad_width": Attr("shape", required=True),
                "constant_value": Attr("float", 0.0)},
         infer_shape=_pad_shape, infer_type=scalar_type("pad", "constant_value"),
         compute=_pad,
         gradient=lambda a, i, o, g: [F._pad_grad(g[0], mode=a["mode"],
                                                  pad_width=a["pad_width"])],
         doc="""Pad a 4-D or 5-D array (MXNet's pad, alias Pad): ``pad_width`` is MXNet's
flat tuple (before_1, after_1, ..., before_N, after_N), with zeros for the first two
axes (MXNet pads only the spatial ones).  ``mode`` 'constant' (``constant_value``, cast to
the data's dtype), 'edge' (the border value repeated) or 'reflect' (mirrored without the
border, NumPy's 'reflect': pad widths must stay below the axis size).  The gradient sums
each padded position's gradient into the element it copies.""")

register("_pad_grad", attrs={"mode": Attr("str", "constant", choices=_PAD_MODES),
                             "pad_width": Attr("shape", required=True)},
         infer_shape=_pad_grad_shape, compute=_pad_grad,
         gradient=lambda a, i, o, g: [F.pad(g[0], mode=a["mode"], pad_width=a["pad_width"])],
         doc="The adjoint of pad: each padded position's value added into the element it "
             "copies (the gradient of pad).")


# -- split_v2 ---------------------------------------------------------------------------------

def _sections(attrs, n=None):
    """The (begin, end) bounds of each part along an axis of size ``n`` (None: only
    the count is checked)."""
    ios = attrs["indices_or_sections"]
    if isinstance(ios, (int, np.integer)) and not isinstance(ios, bool):
        k = int(ios)
        if k < 1:
            raise ValueError(f"split_v2: sections must be >= 1 (got {k})")
        if n is None:
            return [None] * k
        if n % k:
            raise ValueError(f"split_v2: an axis of size {n} cannot be split into {k} equal "
                             "sections")
        return [(j * (n // k), (j + 1) * (n // k)) for j in range(k)]
    if isinstance(ios, (tuple, list)) and all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in ios):
        cuts = [int(v) for v in ios]
        if any(b < a for a, b in zip(cuts, cuts[1:])) or any(c < 0 for c in cuts):
            raise ValueError(f"split_v2: indices must be >= 0 and non-decreasing (got "
                             f"{tuple(ios)!r})")
        if n is None:
            return [None] * (len(cuts) + 1)
        if cuts and cuts[-1] > n:
            raise ValueError(f"split_v2: indices {tuple(ios)!r} go beyond the axis of size "
                             f"{n}")
        bounds = [0] + cuts + [n]
        return list(zip(bounds, bounds[1:]))
    raise TypeError(f"split_v2: indices_or_sections must be an int or a tuple of ints (got "
                    f"{ios!r})")


def _split_v2_parts(attrs, shape):
    a = normalize_axis("split_v2", attrs["axis"], len(shape))
    parts = _sections(attrs, shape[a])
    if attrs["squeeze_axis"] and any(e - b != 1 for b, e in parts):
        raise ValueError(f"split_v2: squeeze_axis needs sections of size 1 (axis {a} of "
                         f"shape {shape!r}, indices_or_sections "
                         f"{attrs['indices_or_sections']!r})")
    return a, parts


def _split_v2_shape(attrs, shapes):
    shape = shapes[0]
    a, parts = _split_v2_parts(attrs, shape)
    if attrs["squeeze_axis"]:
        return [(shape[:a] + shape[a + 1:]) or (1,)] * len(parts)
    return [shape[:a] + (e - b,) + shape[a + 1:] for b, e in parts]


def _split_v2(attrs, ins, outs):
    x = ins[0]
    a, parts = _split_v2_parts(attrs, x.shape)
    for o, (b, e) in zip(outs, parts):
        o[...] = x[(slice(None),) * a + (slice(b, e),)].reshape(o.shape)


def _split_v2_grad(at, i, o, g):
    a = normalize_axis("split_v2", at["axis"], i[0].ndim)
    if at["squeeze_axis"]:
        return [F.stack(*g, axis=a).reshape(i[0].shape)]
    return [F.concat(*g, dim=a)]


register("split_v2", inputs=("ary",),
         attrs={"indices_or_sections": Attr("any", required=True), "axis": Attr("int", 0),
                "squeeze_axis": Attr("bool", False)},
         num_outputs=lambda a: len(_sections(a)), infer_shape=_split_v2_shape,
         infer_type=lambda a, d: [d[0]] * len(_sections(a)), compute=_split_v2,
         gradient=_split_v2_grad,
         doc="""Split along ``axis`` (default 0) as NumPy's split (MXNet's split_v2):
``indices_or_sections`` an int (that many equal parts; an uneven split raises ValueError)
or a tuple of non-decreasing split points (parts may be empty).  ``squeeze_axis`` drops
the axis (every part must have size 1).""")


# -- diag, _diag_grad ---------------------------------------------------------------------------

def _diag_axes(op, attrs, ndim):
    a1 = normalize_axis(op, attrs["axis1"], ndim, "axis1")
    a2 = normalize_axis(op, attrs["axis2"], ndim, "axis2")
    if a1 == a2:
        raise ValueError(f"{op}: axis1 and axis2 must differ (got {attrs['axis1']} and "
                         f"{attrs['axis2']})")
    return a1, a2


def _diag_len(shape, a1, a2, k):
    return max(0, min(shape[a1] - max(-k, 0), shape[a2] - max(k, 0)))


def _diagonal_shape(op, attrs, shape):
    a1, a2 = _diag_axes(op, attrs, len(shape))
    rest = tuple(s for j, s in enumerate(shape) if j not in (a1, a2))
    return rest + (_diag_len(shape, a1, a2, attrs["k"]),)


def _diag_shape(attrs, shapes):
    shape = shapes[0]
    if not shape:
        raise ValueError("diag: data must have at least one dimension (got shape ())")
    if len(shape) == 1:
        n = shape[0] + abs(attrs["k"])
        return [(n, n)]
    return [_diagonal_shape("diag", attrs, shape)]


def _diag(attrs, ins, outs):
    x, k = ins[0], attrs["k"]
    if x.ndim == 1:
        outs[0][...] = np.diag(x, k)
        return
    a1, a2 = _diag_axes("diag", attrs, x.ndim)
    outs[0][...] = np.diagonal(x, k, a1, a2)


def _diag_grad_rule(a, i, o, g):
    x = i[0]
    if x.ndim == 1:
        return [F.diag(g[0], k=a["k"])]
    return [F._diag_grad(g[0], k=a["k"], axis1=a["axis1"], axis2=a["axis2"],
                         shape=x.shape)]


_DIAG_ATTRS = {"k": Attr("int", 0), "axis1": Attr("int", 0), "axis2": Attr("int", 1)}

register("diag", attrs=_DIAG_ATTRS, infer_shape=_diag_shape, compute=_diag,
         gradient=_diag_grad_rule,
         doc="""MXNet's diag: a 1-D input gives the square matrix with it on diagonal ``k``
(above the main one for k > 0); an input of 2 or more dimensions gives its diagonal ``k``
in the plane of ``axis1`` and ``axis2``, as the last axis (NumPy's diagonal; empty when
``k`` is beyond the matrix).""")


def _diag_grad_shape(attrs, shapes):
    shape = attrs["shape"]
    if len(shape) < 2:
        raise ValueError(f"_diag_grad: shape must have at least two dimensions (got "
                         f"{shape!r})")
    want = _diagonal_shape("_diag_grad", attrs, shape)
    if shapes[0] != want:
        raise ValueError(f"_diag_grad: ograd has shape {shapes[0]!r}, expected {want!r}")
    return [shape]


def _diag_grad(attrs, ins, outs):
    g, shape, k = ins[0], attrs["shape"], attrs["k"]
    a1, a2 = _diag_axes("_diag_grad", attrs, len(shape))
    res = np.zeros(shape, g.dtype)
    n = g.shape[-1]
    view = np.moveaxis(res, (a1, a2), (-2, -1))
    view[..., np.arange(n) + max(-k, 0), np.arange(n) + max(k, 0)] = g
    outs[0][...] = res


register("_diag_grad", attrs={**_DIAG_ATTRS, **_SHAPE}, infer_shape=_diag_grad_shape,
         compute=_diag_grad,
         gradient=lambda a, i, o, g: [F.diag(g[0], k=a["k"], axis1=a["axis1"],
                                             axis2=a["axis2"])],
         doc="The gradient of diag's diagonal: ``ograd`` on diagonal ``k`` of zeros of "
             "``shape``.")


# -- shape_array, size_array --------------------------------------------------------------------

register("shape_array", infer_shape=lambda a, s: [(len(s[0]),)],
         infer_type=lambda a, d: [np.dtype(np.int64)],
         compute=lambda a, ins, outs: np.copyto(outs[0], np.array(ins[0].shape, np.int64)),
         ignores=(0,), differentiable=False,
         doc="The shape of ``data`` as a 1-D int64 array (MXNet's shape_array).")
register("size_array", infer_shape=lambda a, s: [(1,)],
         infer_type=lambda a, d: [np.dtype(np.int64)],
         compute=lambda a, ins, outs: np.copyto(outs[0], np.array([ins[0].size], np.int64)),
         ignores=(0,), differentiable=False,
         doc="The number of elements of ``data`` as an int64 array of shape (1,) (MXNet's "
             "size_array).")


# -- logical operators ---------------------------------------------------------------------------

_LOGICAL = ("The result is 1 where true and 0 elsewhere, in the inputs' dtype (MXNet); any "
            "nonzero value (NaN too) counts as true.  No gradient.")

for _name, _fn, _sym in (("and", np.logical_and, "lhs and rhs"),
                         ("or", np.logical_or, "lhs or rhs"),
                         ("xor", np.logical_xor, "lhs xor rhs")):
    binary(f"broadcast_logical_{_name}", _fn, None, None, aliases=(f"logical_{_name}",),
           differentiable=False, expr=_sym, notes=_LOGICAL)

register("logical_not", compute=lambda a, ins, outs: np.logical_not(ins[0], out=outs[0]),
         inplace=[(0, 0)], differentiable=False, ufunc=np.logical_not,
         doc="``not data`` elementwise: 1 where data is 0, else 0, in data's dtype "
             "(MXNet's logical_not).  No gradient.")


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
    raw = to_host(rhs)
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
    cols, rows = like(lhs, cols), like(lhs, np.arange(lhs.shape[0]))
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
    a = to_host(x)
    return np.trunc(a).astype(np.int64) if a.dtype.kind == "f" else a.astype(np.int64)


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
    store(outs[0], np.ravel_multi_index(tuple(idx), target) if idx.size else
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
    store(outs[0], np.stack(np.unravel_index(flat, target)) if flat.size else
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
