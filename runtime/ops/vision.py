"""Vision operators (MXNet 1.x names, signatures, defaults and semantics): ROIPooling,
``_contrib_ROIAlign``, ``_contrib_BilinearResize2D``, ``_contrib_AdaptiveAvgPooling2D``,
``_contrib_box_iou``, ``_contrib_box_nms`` (alias
``_contrib_box_non_maximum_suppression``) and ``GridGenerator``.  Layout NCHW; rois are rows
``[batch_index, x1, y1, x2, y2]`` in input-image coordinates (times ``spatial_scale``).

Kernels (NumPy; on a GPU context the inputs are copied to the host and the result back):

- ROIPooling: the window of each output bin is a rectangle of the feature map, computed
  here (MXNet's rounding and clipping); float32/float64 data are scanned by a compiled
  kernel (runtime/_vision_kernels), other dtypes by NumPy: a max along the width first,
  then along the height, one vectorised pass per window offset over all rois, channels
  and bins at once.  Both keep the flat argmax of MXNet's row-major scan with a strict
  ``>`` from -FLT_MAX (the first maximum wins).
- ROIAlign, BilinearResize2D, AdaptiveAvgPooling2D are linear in the data and separable:
  each output is ``A @ x @ B.T`` for a (rows x H) matrix ``A`` and a (cols x W) matrix
  ``B`` built from the sizes (and, for ROIAlign, each roi's grid of bilinear samples), so
  forward and backward are GEMMs (ROIAlign: per batch image, over all of its rois).
- box_iou: one broadcast over all pairs; box_nms: greedy suppression in score order, one
  vectorised step per rank over every batch (MXNet's own loop structure).

Hidden helpers, so that every gradient rule is made of registry ops:
``_backward_ROIPooling`` (scatter of the head gradient to each bin's argmax) and its
adjoint ``_roi_pooling_pick``; ``_backward_ROIAlign``,
``_backward_contrib_BilinearResize2D``, ``_backward_contrib_AdaptiveAvgPooling2D`` (the
transposed linear maps; their gradient is the forward op again);
``_backward_contrib_box_nms`` (MXNet's routing of kept rows back to their input rows) and
its adjoint ``_box_nms_pick``.
"""

import numpy as np

from runtime import _vision_kernels
from runtime._ndarray import from_numpy
from runtime._device import store, to_host
from runtime.ops._call import F, zeros
from runtime.ops.registry import Attr, float_input, register

_FLT_MAX = 3.4028234663852886e38


def _calc_dtype(dtype):
    """The precision MXNet's kernels compute coordinates in for data of ``dtype``."""
    return np.dtype(np.float64) if dtype == np.float64 else np.dtype(np.float32)


def _data4(op, shape, what="data"):
    if len(shape) != 4:
        raise ValueError(f"{op}: {what} must be 4-D (N, C, H, W) (got shape {shape!r})")


def _pooled(op, attrs):
    ps = attrs["pooled_size"]
    if len(ps) != 2 or min(ps) <= 0:
        raise ValueError(f"{op}: pooled_size must be 2 positive ints (height, width) (got "
                         f"pooled_size={ps!r})")
    return ps


def _check_scale(op, attrs):
    s = attrs["spatial_scale"]
    if not (np.isfinite(s) and s > 0):
        raise ValueError(f"{op}: spatial_scale must be finite and > 0 (got {s!r})")


def _rois_shape(op, data, rois):
    _data4(op, data)
    if len(rois) != 2 or rois[1] != 5:
        raise ValueError(f"{op}: rois must have shape (num_rois, 5), rows [batch_index, "
                         f"x1, y1, x2, y2] (got {rois!r})")


def _same_float(op):
    def infer(attrs, dtypes):
        float_input(op)(attrs, dtypes)
        for d in dtypes[1:]:
            if d != dtypes[0]:
                raise TypeError(f"{op}: inputs must have one floating dtype (got "
                                f"{', '.join(str(x) for x in dtypes)})")
        return [dtypes[0]]
    return infer


def _batch_index(op, rois, n, allow_negative=False):
    """The rois' batch indices (C's truncation of the float column), checked against the
    batch size ``n`` (ROIAlign skips rois with a negative index, as MXNet); every value
    of ``rois`` must be finite."""
    bad = ~np.isfinite(rois).all(axis=1)
    if bad.any():
        row = int(np.argmax(bad))
        raise ValueError(f"{op}: rois must be finite (got row {row}: {rois[row].tolist()})")
    col = rois[:, 0]
    t = np.trunc(col)                   # checked as floats: 1e30 has no int64
    bad = (t >= n) | ((t < 0) & (not allow_negative))
    if bad.any():
        lo = "" if allow_negative else "0 <= "
        raise ValueError(f"{op}: rois' batch index must be {lo}index < {n} (data's batch "
                         f"size) (got {float(col[bad][0])!r} in row {int(np.argmax(bad))})")
    return np.maximum(t, -1).astype(np.int64)


# -- ROIPooling -----------------------------------------------------------------------------

_ROIPOOL_ATTRS = {"pooled_size": Attr("shape", required=True),
                  "spatial_scale": Attr("float", required=True)}


def _cround(v):
    """C's round(): halves away from zero."""
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def _roi_pool_windows(op, rois, shape, attrs, dtype):
    """Batch index (R,), row windows [hs, he) (R, PH) and column windows [ws, we) (R, PW)
    of each bin, as MXNet's ROIPoolForward computes them."""
    n, _, h, w = shape
    ph, pw = _pooled(op, attrs)
    dt = _calc_dtype(dtype)
    r = rois.astype(dt)
    b = _batch_index(op, r, n)
    s = dt.type(np.float32(attrs["spatial_scale"]))   # MXNet: a float parameter
    x1, y1, x2, y2 = (_cround(r[:, k] * s).astype(np.int64) for k in range(1, 5))
    bin_h = np.maximum(y2 - y1 + 1, 1).astype(dt) / dt.type(ph)
    bin_w = np.maximum(x2 - x1 + 1, 1).astype(dt) / dt.type(pw)

    def window(bins, count, start, size):
        p = np.arange(count, dtype=dt)[None]
        lo = np.floor(p * bins[:, None]).astype(np.int64) + start[:, None]
        hi = np.ceil((p + 1) * bins[:, None]).astype(np.int64) + start[:, None]
        return np.clip(lo, 0, size), np.clip(hi, 0, size)
    return (b,) + window(bin_h, ph, y1, h) + window(bin_w, pw, x1, w)


def _roi_pool_argmax(op, x, rois, attrs, with_arg=True, compiled=True):
    """MXNet's ROIPooling of NumPy ``x``: (maxima, flat argmax within the image plane or
    -1, or None without ``with_arg``), both (R, C, PH, PW); by the compiled kernel for
    float32/float64 (unless ``compiled=False``), else by NumPy passes."""
    n, c, h, w = x.shape
    b, hs, he, ws, we = _roi_pool_windows(op, rois, x.shape, attrs, x.dtype)
    nr, ph, pw = len(b), hs.shape[1], ws.shape[1]
    # MXNet starts every bin from -FLT_MAX (float16 cannot hold it: -inf)
    lowest = np.array(-_FLT_MAX if x.dtype.itemsize >= 4 else -np.inf, x.dtype)
    if compiled and x.dtype in (np.float32, np.float64):
        best = np.empty((nr, c, ph, pw), x.dtype)
        arg = np.empty(best.shape, np.int32)
        _vision_kernels.roi_pool_max(np.ascontiguousarray(x), b, hs, he, ws, we, best, arg,
                                     lowest)
        return best, arg if with_arg else None
    best = np.full((nr, ph, pw, c), lowest, x.dtype)
    arg = np.full(best.shape, -1, np.int32) if with_arg else None
    if nr and c and h and w:
        # the rows each roi's bins cover: top, and how many (the same count for all rois)
        top = hs[:, :1]
        span = int((he[:, -1:] - top).max(initial=0))
        rows = np.minimum(top + np.arange(span)[None], h - 1)          # (R, S)
        # along the width: the first maximum of each row of each column window, over
        # contiguous (rows, C) blocks
        best1 = np.full((nr, pw, span, c), lowest, x.dtype)
        arg1 = np.full(best1.shape, -1, np.int32) if with_arg else None
        xt = np.ascontiguousarray(x.transpose(0, 3, 2, 1))              # (N, W, H, C)
        for k in range(int((we - ws).max(initial=0))):
            col = ws + k
            v = xt[b[:, None, None], np.minimum(col, w - 1)[:, :, None], rows[:, None, :]]
            upd = (col < we)[:, :, None, None] & (v > best1)            # (R, PW, S, C)
            np.copyto(best1, v, where=upd)
            if with_arg:
                np.copyto(arg1, col[:, :, None, None].astype(np.int32), where=upd)
        # along the height: the first row whose maximum beats the ones above
        ridx = np.arange(nr)[:, None]
        b1 = np.ascontiguousarray(best1.transpose(0, 2, 1, 3))        # (R, S, PW, C)
        a1 = np.ascontiguousarray(arg1.transpose(0, 2, 1, 3)) if with_arg else None
        del best1, arg1
        for k in range(int((he - hs).max(initial=0))):
            row = hs + k
            rel = np.minimum(row - top, span - 1)
            v = b1[ridx, rel]                                          # (R, PH, PW, C)
            upd = (row < he)[:, :, None, None] & (v > best)
            np.copyto(best, v, where=upd)
            if with_arg:
                np.copyto(arg, (row[:, :, None, None] * w + a1[ridx, rel]).astype(np.int32),
                          where=upd)
    empty = (he <= hs)[:, :, None] | (we <= ws)[:, None, :]
    best[empty] = 0
    if with_arg:
        arg[empty] = -1
        arg = arg.transpose(0, 3, 1, 2)
    return best.transpose(0, 3, 1, 2), arg


def _roi_flat(arg, b, c, hw):
    """Flat positions in (N, C, H, W) of the argmax ``arg`` (R, C, PH, PW), and where it
    is set."""
    base = (b[:, None] * c + np.arange(c)[None]) * hw
    return base[:, :, None, None] + arg, arg >= 0


def _roipool_shape(attrs, shapes):
    op = "ROIPooling"
    _rois_shape(op, shapes[0], shapes[1])
    _check_scale(op, attrs)
    ph, pw = _pooled(op, attrs)
    return [(shapes[1][0], shapes[0][1], ph, pw)]


def _roipool(attrs, ins, outs):
    x, rois = to_host(ins[0]), to_host(ins[1])
    val, _ = _roi_pool_argmax("ROIPooling", x, rois, attrs, with_arg=False)
    store(outs[0], val)


def _roi_attrs(attrs):
    return {"pooled_size": attrs["pooled_size"], "spatial_scale": attrs["spatial_scale"]}


register(
    "ROIPooling", inputs=("data", "rois"), attrs=_ROIPOOL_ATTRS,
    infer_shape=_roipool_shape, infer_type=_same_float("ROIPooling"), compute=_roipool,
    gradient=lambda attrs, inputs, outputs, g: [
        F._backward_ROIPooling(g[0], inputs[0], inputs[1], **_roi_attrs(attrs)), None],
    grad_inputs=(0, 1),
    doc="""Region-of-interest max pooling (MXNet's ``ROIPooling``, Fast R-CNN): each roi
row ``[batch_index, x1, y1, x2, y2]`` is scaled by ``spatial_scale`` and its corners
rounded (halves away from zero); the roi, at least 1 x 1, is cut into ``pooled_size``
(height, width) bins, bin ``i`` covering rows ``floor(i * bin_h)`` to ``ceil((i + 1) *
bin_h)`` (clipped to the map), and each bin gives its maximum; an empty bin gives 0.
Output (num_rois, C, PH, PW).  Gradient: to data through each bin's first maximum (in
row-major order); none to rois.  A batch index outside [0, N) is a ValueError.""")


def _broipool_shape(attrs, shapes):
    op = "_backward_ROIPooling"
    g, d, r = shapes
    _rois_shape(op, d, r)
    _check_scale(op, attrs)
    want = (r[0], d[1]) + _pooled(op, attrs)
    if g != want:
        raise ValueError(f"{op}: grad must have shape {want!r} (got {g!r})")
    return [d]


def _broipool(attrs, ins, outs):
    g, x, rois = (to_host(a) for a in ins)
    op = "_backward_ROIPooling"
    _, arg = _roi_pool_argmax(op, x, rois, attrs)
    n, c, h, w = x.shape
    b = _batch_index(op, rois, n)
    flat, on = _roi_flat(arg, b, c, h * w)
    acc = np.bincount(flat[on], weights=g[on], minlength=x.size)
    store(outs[0], acc.reshape(x.shape))


register(
    "_backward_ROIPooling", inputs=("grad", "data", "rois"), attrs=_ROIPOOL_ATTRS,
    infer_shape=_broipool_shape, infer_type=_same_float("_backward_ROIPooling"),
    compute=_broipool,
    gradient=lambda attrs, inputs, outputs, g: [
        F._roi_pooling_pick(inputs[1], inputs[2], g[0], **_roi_attrs(attrs)), None, None],
    grad_inputs=(1, 2),
    doc="""Hidden: ROIPooling's data gradient (data's shape): each head gradient added at
its bin's argmax in ``data``.  Linear in ``grad`` (its gradient is
``_roi_pooling_pick``); none to data (the argmax is piecewise constant) or rois.""")


def _pick_shape(attrs, shapes):
    op = "_roi_pooling_pick"
    d, r, v = shapes
    _rois_shape(op, d, r)
    _check_scale(op, attrs)
    if v != d:
        raise ValueError(f"{op}: values must have data's shape {d!r} (got {v!r})")
    return [(r[0], d[1]) + _pooled(op, attrs)]


def _pick(attrs, ins, outs):
    x, rois, v = (to_host(a) for a in ins)
    op = "_roi_pooling_pick"
    _, arg = _roi_pool_argmax(op, x, rois, attrs)
    n, c, h, w = x.shape
    flat, on = _roi_flat(arg, _batch_index(op, rois, n), c, h * w)
    store(outs[0], np.where(on, v.reshape(-1)[np.where(on, flat, 0)], 0))


register(
    "_roi_pooling_pick", inputs=("data", "rois", "values"), attrs=_ROIPOOL_ATTRS,
    infer_shape=_pick_shape, infer_type=_same_float("_roi_pooling_pick"), compute=_pick,
    gradient=lambda attrs, inputs, outputs, g: [
        None, None, F._backward_ROIPooling(g[0], inputs[0], inputs[1], **_roi_attrs(attrs))],
    grad_inputs=(0, 1),
    doc="""Hidden: ``values`` (data's shape) read at ROIPooling's argmax of ``data`` (0
where a bin has none): the adjoint of ``_backward_ROIPooling``, whose gradient it is.""")


# -- ROIAlign ---------------------------------------------------------------------------------

_ROIALIGN_ATTRS = {"pooled_size": Attr("shape", required=True),
                   "spatial_scale": Attr("float", required=True),
                   "sample_ratio": Attr("int", -1),
                   "position_sensitive": Attr("bool", False),
                   "aligned": Attr("bool", False)}


def _align_channels(op, attrs, c):
    if not attrs["position_sensitive"]:
        return c
    ph, pw = _pooled(op, attrs)
    if c % (ph * pw):
        raise ValueError(f"{op}: with position_sensitive=True data's channels must be a "
                         f"multiple of pooled_size's product {ph * pw} (got {c})")
    return c // (ph * pw)


def _interp_weights(start, bins, grid, count, size, dt):
    """(R, count, size): for each roi and bin, the bilinear weights of its ``grid`` samples
    along one axis on the ``size`` cells, averaged (MXNet's bilinear_interpolate; a sample
    beyond [-1, size] weighs nothing)."""
    nr = len(start)
    if nr == 0 or size == 0:
        return np.zeros((nr, count, size), dt)
    i = np.arange(int(grid.max(initial=1)), dtype=dt)[None, None]
    p = np.arange(count, dtype=dt)[None, :, None]
    g = grid.astype(dt)[:, None, None]
    bb = bins[:, None, None]
    pos = start[:, None, None] + p * bb + (i + dt.type(0.5)) * bb / g
    valid = (i < g) & (pos >= -1) & (pos <= size)
    pos = np.maximum(pos, 0)
    low = np.trunc(pos).astype(np.int64)
    edge = low >= size - 1
    low = np.where(edge, size - 1, low)
    high = np.where(edge, size - 1, low + 1)
    frac = np.where(edge, 0, pos - low)
    base = (np.arange(nr)[:, None, None] * count + np.arange(count)[None, :, None]) * size
    valid = np.broadcast_to(valid, pos.shape)
    n = nr * count * size
    m = (np.bincount((base + low)[valid], (1 - frac)[valid], n)
         + np.bincount((base + high)[valid], frac[valid], n))
    return (m.reshape(nr, count, size) / g).astype(dt)


def _align_plan(op, rois, shape, attrs, dtype):
    """(batch index (R,), valid (R,), A (R, PH, H), B (R, PW, W)) for MXNet's ROIAlign."""
    n, _, h, w = shape
    ph, pw = _pooled(op, attrs)
    dt = _calc_dtype(dtype)
    r = rois.astype(dt)
    b = _batch_index(op, r, n, allow_negative=True)
    s = dt.type(np.float32(attrs["spatial_scale"]))   # MXNet: a float parameter
    off = dt.type(0.5 if attrs["aligned"] else 0)
    x1, y1, x2, y2 = (r[:, k] * s - off for k in range(1, 5))
    rw, rh = x2 - x1, y2 - y1
    if attrs["aligned"]:
        bad = ~((rw > 0) & (rh > 0))
        if bad.any():
            raise ValueError(f"{op}: with aligned=True every roi must have a positive "
                             f"scaled width and height (got row {int(np.argmax(bad))}: "
                             f"{rois[int(np.argmax(bad))].tolist()})")
    else:
        rw, rh = np.maximum(rw, 1), np.maximum(rh, 1)
    bin_h, bin_w = rh / dt.type(ph), rw / dt.type(pw)
    sr = attrs["sample_ratio"]
    gh = np.full(len(b), sr) if sr > 0 else np.ceil(rh / dt.type(ph)).astype(np.int64)
    gw = np.full(len(b), sr) if sr > 0 else np.ceil(rw / dt.type(pw)).astype(np.int64)
    # MXNet samples every grid point; beyond this many per roi and axis the sampling
    # would not fit in memory (a roi many times the map's size): refused
    limit = 1 << 20
    if max(int(gh.max(initial=0)) * ph, int(gw.max(initial=0)) * pw) > limit:
        raise ValueError(f"{op}: a roi's sampling grid exceeds {limit} points per axis "
                         f"(rois larger than the map by orders of magnitude; give "
                         f"sample_ratio)")
    a = _interp_weights(y1, bin_h, np.maximum(gh, 1), ph, h, dt)
    bm = _interp_weights(x1, bin_w, np.maximum(gw, 1), pw, w, dt)
    return b, b >= 0, a, bm


def _align_shape(attrs, shapes):
    op = "_contrib_ROIAlign"
    _rois_shape(op, shapes[0], shapes[1])
    _check_scale(op, attrs)
    ph, pw = _pooled(op, attrs)
    return [(shapes[1][0], _align_channels(op, attrs, shapes[0][1]), ph, pw)]


def _align_groups(b, valid):
    for n in np.unique(b[valid]):
        yield n, np.nonzero(valid & (b == n))[0]


def _align(attrs, ins, outs):
    op = "_contrib_ROIAlign"
    x, rois = to_host(ins[0]), to_host(ins[1])
    b, valid, a, bm = _align_plan(op, rois, x.shape, attrs, x.dtype)
    out = np.zeros(outs[0].shape, np.result_type(x.dtype, a.dtype))
    ps = attrs["position_sensitive"]
    for n, sel in _align_groups(b, valid):
        if ps:
            ph, pw = a.shape[1], bm.shape[1]
            xs = x[n].reshape(-1, ph, pw, x.shape[2], x.shape[3])
            out[sel] = np.einsum("rph,cpqhw,rqw->rcpq", a[sel], xs, bm[sel], optimize=True)
        else:
            t = np.tensordot(a[sel], x[n], axes=([2], [1]))          # (r, PH, C, W)
            out[sel] = np.matmul(t, bm[sel].transpose(0, 2, 1)[:, None]).transpose(0, 2, 1, 3)
    store(outs[0], out)


def _align_attrs(attrs):
    return {k: attrs[k] for k in _ROIALIGN_ATTRS}


register(
    "_contrib_ROIAlign", inputs=("data", "rois"), attrs=_ROIALIGN_ATTRS,
    infer_shape=_align_shape, infer_type=_same_float("_contrib_ROIAlign"), compute=_align,
    gradient=lambda attrs, inputs, outputs, g: [
        F._backward_ROIAlign(g[0], inputs[1], data_shape=inputs[0].shape,
                             **_align_attrs(attrs)), None],
    grad_inputs=(1,),
    doc="""Region-of-interest align (MXNet's ``contrib.ROIAlign``, Mask R-CNN): each roi
``[batch_index, x1, y1, x2, y2]`` is scaled by ``spatial_scale`` without rounding (minus
0.5 with ``aligned=True``, where a roi must have a positive size; otherwise it is at least
1 x 1), cut into ``pooled_size`` bins, and each bin averages a grid of bilinear samples
(``sample_ratio`` per axis, or ``ceil(roi size / pooled size)`` when it is <= 0); samples
beyond one cell outside the map count as 0.  ``position_sensitive=True`` (R-FCN) reads bin
(i, j) of output channel c from input channel ``(c * PH + i) * PW + j`` (C must be a
multiple of PH * PW).  Output (num_rois, C', PH, PW).  A roi with a negative batch index
gives zeros (MXNet leaves it unset); one >= N is a ValueError.  Gradient: to data (the
transposed sampling); none to rois (MXNet's zeros).""")


def _balign_shape(attrs, shapes):
    op = "_backward_ROIAlign"
    g, r = shapes
    ds = attrs["data_shape"]
    _rois_shape(op, ds, r)
    _check_scale(op, attrs)
    want = (r[0], _align_channels(op, attrs, ds[1])) + _pooled(op, attrs)
    if g != want:
        raise ValueError(f"{op}: grad must have shape {want!r} for data_shape={ds!r} "
                         f"(got {g!r})")
    return [tuple(ds)]


def _balign(attrs, ins, outs):
    op = "_backward_ROIAlign"
    g, rois = to_host(ins[0]), to_host(ins[1])
    ds = attrs["data_shape"]
    b, valid, a, bm = _align_plan(op, rois, ds, attrs, g.dtype)
    dx = np.zeros(ds, np.result_type(g.dtype, a.dtype))
    ps = attrs["position_sensitive"]
    for n, sel in _align_groups(b, valid):
        if ps:
            ph, pw = a.shape[1], bm.shape[1]
            dx[n] += np.einsum("rph,rcpq,rqw->cpqhw", a[sel], g[sel], bm[sel],
                               optimize=True).reshape(ds[1:])
        else:
            u = np.matmul(g[sel], bm[sel][:, None])                   # (r, C, PH, W)
            dx[n] += np.tensordot(u, a[sel], axes=([0, 2], [0, 1])).transpose(0, 2, 1)
    store(outs[0], dx)


register(
    "_backward_ROIAlign", inputs=("grad", "rois"),
    attrs={**_ROIALIGN_ATTRS, "data_shape": Attr("shape", required=True)},
    infer_shape=_balign_shape, infer_type=_same_float("_backward_ROIAlign"),
    compute=_balign,
    gradient=lambda attrs, inputs, outputs, g: [
        F._contrib_ROIAlign(g[0], inputs[1], **_align_attrs(attrs)), None],
    grad_inputs=(1,),
    doc="""Hidden: ROIAlign's data gradient (shape ``data_shape``), the transposed
sampling of ``grad``; its gradient is ROIAlign itself (none to rois).""")


# -- BilinearResize2D, AdaptiveAvgPooling2D ---------------------------------------------------

_RESIZE_MODES = ("size", "odd_scale", "like", "to_even_down", "to_even_up", "to_odd_down",
                 "to_odd_up")


def _resize_matrix(n_in, n_out, align_corners, dtype):
    """(n_out, n_in) bilinear weights along one axis, as MXNet's CPU kernel (source
    positions in float32; without align_corners ``scale * (i + 0.5) - 0.5`` clamped at 0)."""
    m = np.zeros((n_out, n_in), np.float64)
    if n_out == 0 or n_in == 0:
        return m.astype(dtype)
    f = np.float32
    if n_out > 1:
        scale = f(n_in - 1) / f(n_out - 1) if align_corners else f(n_in) / f(n_out)
    else:
        scale = f(0)
    i = np.arange(n_out, dtype=f)
    src = scale * i if align_corners else np.maximum(scale * (i + f(0.5)) - f(0.5), f(0))
    low = src.astype(np.int64)
    step = (low < n_in - 1).astype(np.int64)
    lam = (src - low.astype(f)).astype(dtype)
    rows = np.arange(n_out)
    m = np.zeros((n_out, n_in), dtype)
    np.add.at(m, (rows, low), 1 - lam)
    np.add.at(m, (rows, low + step), lam)
    return m


def _resize_out(attrs, shapes):
    op = "_contrib_BilinearResize2D"
    mode = attrs["mode"]
    if len(shapes) != (2 if mode == "like" else 1):
        raise TypeError(f"{op}: takes a like input exactly with mode='like' (got "
                        f"{len(shapes)} array inputs with mode={mode!r})")
    _data4(op, shapes[0])
    h, w = shapes[0][2:]
    for name in ("height", "width"):
        if not 1 <= attrs[name] <= 10000:
            raise ValueError(f"{op}: {name} must be in [1, 10000] (got {attrs[name]})")
    sh, sw = attrs["scale_height"], attrs["scale_width"]
    for name, s in (("scale_height", sh), ("scale_width", sw)):
        if s is not None and not (np.isfinite(s) and s > 0):
            raise ValueError(f"{op}: {name} must be finite and > 0 (got {s!r})")
    f = np.float32      # MXNet's float scale times the size, truncated
    if mode == "size":
        return (int(f(sh) * f(h)) if sh is not None else attrs["height"],
                int(f(sw) * f(w)) if sw is not None else attrs["width"])
    if mode == "odd_scale":
        if sh is None or sw is None:
            raise ValueError(f"{op}: mode='odd_scale' needs scale_height and scale_width "
                             f"(got scale_height={sh!r}, scale_width={sw!r})")
        return tuple(int(f(s) * f(d)) if d % 2 == 0 else int(f(d - 1) * f(s)) + 1
                     for d, s in ((h, sh), (w, sw)))
    if mode == "like":
        _data4(op, shapes[1], "like")
        return shapes[1][2:]
    odd = mode.startswith("to_odd")
    up = 1 if mode.endswith("up") else -1
    return tuple(d if d % 2 == odd else d + up for d in (h, w))


def _resize_shape(attrs, shapes):
    oh, ow = _resize_out(attrs, shapes)
    n, c, h, w = shapes[0]
    if n * c and oh * ow and not h * w:
        raise ValueError(f"_contrib_BilinearResize2D: data must have a positive height and "
                         f"width (got shape {shapes[0]!r})")
    return [(n, c, oh, ow)]


def _separable(x, a, b, out):
    """``a @ x @ b.T`` over x's last two axes, into ``out``: one GEMM along the width
    over every row of every plane, then one per plane along the height."""
    planes = int(np.prod(x.shape[:-2]))
    h, w = x.shape[-2:]
    t = (np.ascontiguousarray(x).reshape(planes * h, w) @ b.T).reshape(planes, h, len(b))
    if isinstance(out, np.ndarray) and out.dtype == x.dtype and out.flags.c_contiguous:
        np.matmul(a, t, out=out.reshape(planes, len(a), len(b)))
    else:
        store(out, np.matmul(a, t).reshape(out.shape))


def _resize(attrs, ins, outs):
    x = to_host(ins[0])
    oh, ow = outs[0].shape[2:]
    ac = attrs["align_corners"]
    _separable(x, _resize_matrix(x.shape[2], oh, ac, x.dtype),
               _resize_matrix(x.shape[3], ow, ac, x.dtype), outs[0])


def _resize_grad(attrs, inputs, outputs, out_grads):
    g = F._backward_contrib_BilinearResize2D(out_grads[0], data_shape=inputs[0].shape,
                                             align_corners=attrs["align_corners"])
    return [g] + [None] * (len(inputs) - 1)


register(
    "_contrib_BilinearResize2D", inputs=("data", "like"), variadic=True,
    attrs={"height": Attr("int", 1), "width": Attr("int", 1),
           "scale_height": Attr("float", None), "scale_width": Attr("float", None),
           "mode": Attr("str", "size", choices=_RESIZE_MODES),
           "align_corners": Attr("bool", True)},
    infer_shape=_resize_shape, infer_type=float_input("_contrib_BilinearResize2D"),
    compute=_resize, gradient=_resize_grad,
    doc="""Bilinear resize of (N, C, H, W) data (MXNet's ``contrib.BilinearResize2D``).
Output size by ``mode``: 'size': ``height``/``width`` (1 to 10000), or ``int(scale * H)``
where ``scale_height``/``scale_width`` is given (MXNet's documented rule, per axis);
'odd_scale': ``int(H * scale)`` for even H, ``int((H - 1) * scale) + 1`` for odd H (both
scales required); 'like': the height and width of the second input ``like``;
'to_even_down'/'to_even_up'/'to_odd_down'/'to_odd_up': the nearest even/odd size below or
above (H itself when it already is).  ``align_corners=True`` (default) maps corner pixel
centres onto each other (source ``i * (H - 1) / (OH - 1)``); False maps the areas (source
``(i + 0.5) * H / OH - 0.5``, clamped at 0).  Gradient: the transposed interpolation to
data; none to ``like``.""")


def _bresize_shape(attrs, shapes):
    op = "_backward_contrib_BilinearResize2D"
    ds = tuple(attrs["data_shape"])
    _data4(op, ds, "data_shape")
    g = shapes[0]
    if len(g) != 4 or g[:2] != ds[:2]:
        raise ValueError(f"{op}: grad must be (N, C, OH, OW) with data_shape's N and C "
                         f"{ds[:2]!r} (got {g!r})")
    return [ds]


def _bresize(attrs, ins, outs):
    g = to_host(ins[0])
    ds = attrs["data_shape"]
    ac = attrs["align_corners"]
    a = _resize_matrix(ds[2], g.shape[2], ac, g.dtype)
    b = _resize_matrix(ds[3], g.shape[3], ac, g.dtype)
    _separable(g, a.T, b.T, outs[0])


def _bresize_grad(attrs, inputs, outputs, out_grads):
    h = out_grads[0]
    oh, ow = inputs[0].shape[2:]
    if not (oh and ow):
        return [zeros(h, inputs[0].shape)]
    return [F._contrib_BilinearResize2D(h, height=oh, width=ow,
                                        align_corners=attrs["align_corners"])]


register(
    "_backward_contrib_BilinearResize2D", inputs=("grad",),
    attrs={"data_shape": Attr("shape", required=True), "align_corners": Attr("bool", True)},
    infer_shape=_bresize_shape,
    infer_type=float_input("_backward_contrib_BilinearResize2D", "grad"),
    compute=_bresize, gradient=_bresize_grad,
    doc="""Hidden: BilinearResize2D's data gradient (shape ``data_shape``): the transposed
interpolation of ``grad``; its gradient is the resize to grad's size.""")


def _adaptive_out(op, attrs, shape):
    _data4(op, shape)
    o = attrs["output_size"]
    if len(o) == 0:
        o = (1, 1)
    elif len(o) == 1:
        o = (o[0], o[0])
    if len(o) != 2 or min(o) <= 0:
        raise ValueError(f"{op}: output_size must be () or 1 or 2 positive ints (got "
                         f"output_size={attrs['output_size']!r})")
    return o


def _adaptive_matrix(n_in, n_out, dtype):
    """(n_out, n_in): bin o averages cells floor(o * n_in / n_out) to ceil((o + 1) * n_in
    / n_out) (exclusive)."""
    o = np.arange(n_out)
    lo = (o * n_in) // n_out
    hi = -((-(o + 1) * n_in) // n_out)
    i = np.arange(n_in)
    inside = (i[None] >= lo[:, None]) & (i[None] < hi[:, None])
    return (inside / np.maximum(hi - lo, 1)[:, None]).astype(dtype)


def _adaptive_shape(attrs, shapes):
    op = "_contrib_AdaptiveAvgPooling2D"
    o = _adaptive_out(op, attrs, shapes[0])
    n, c, h, w = shapes[0]
    if n * c and not h * w:
        raise ValueError(f"{op}: data must have a positive height and width (got shape "
                         f"{shapes[0]!r})")
    return [(n, c) + o]


def _adaptive(attrs, ins, outs):
    x = to_host(ins[0])
    oh, ow = outs[0].shape[2:]
    _separable(x, _adaptive_matrix(x.shape[2], oh, x.dtype),
               _adaptive_matrix(x.shape[3], ow, x.dtype), outs[0])


register(
    "_contrib_AdaptiveAvgPooling2D", attrs={"output_size": Attr("shape", ())},
    infer_shape=_adaptive_shape, infer_type=float_input("_contrib_AdaptiveAvgPooling2D"),
    compute=_adaptive,
    gradient=lambda attrs, inputs, outputs, g: [F._backward_contrib_AdaptiveAvgPooling2D(
        g[0], data_shape=inputs[0].shape)],
    doc="""Adaptive average pooling of (N, C, H, W) data to ``output_size`` (MXNet's
``contrib.AdaptiveAvgPooling2D``: () means (1, 1), one int a square): output cell (i, j)
averages rows ``floor(i * H / OH)`` to ``ceil((i + 1) * H / OH)`` (exclusive) and the
columns likewise.  Gradient: each head gradient spread evenly over its cell.""")


def _badaptive_shape(attrs, shapes):
    op = "_backward_contrib_AdaptiveAvgPooling2D"
    ds = tuple(attrs["data_shape"])
    _data4(op, ds, "data_shape")
    g = shapes[0]
    if len(g) != 4 or g[:2] != ds[:2] or 0 in g[2:] or (ds[0] * ds[1] and 0 in ds[2:]):
        raise ValueError(f"{op}: grad must be (N, C, OH, OW) with data_shape's N and C "
                         f"{ds[:2]!r} and positive sizes (got {g!r})")
    return [ds]


def _badaptive(attrs, ins, outs):
    g = to_host(ins[0])
    ds = attrs["data_shape"]
    a = _adaptive_matrix(ds[2], g.shape[2], g.dtype)
    b = _adaptive_matrix(ds[3], g.shape[3], g.dtype)
    _separable(g, a.T, b.T, outs[0])


register(
    "_backward_contrib_AdaptiveAvgPooling2D", inputs=("grad",),
    attrs={"data_shape": Attr("shape", required=True)},
    infer_shape=_badaptive_shape,
    infer_type=float_input("_backward_contrib_AdaptiveAvgPooling2D", "grad"),
    compute=_badaptive,
    gradient=lambda attrs, inputs, outputs, g: [F._contrib_AdaptiveAvgPooling2D(
        g[0], output_size=inputs[0].shape[2:])],
    doc="""Hidden: AdaptiveAvgPooling2D's data gradient (shape ``data_shape``); its
gradient is the pooling to grad's size.""")


# -- box_iou, box_nms -------------------------------------------------------------------------

_FORMATS = ("corner", "center")


def _box_sides(box, fmt):
    """(left, top, right, bottom) of boxes (..., 4) in ``fmt``."""
    a, b, c, d = (box[..., k] for k in range(4))
    if fmt == "corner":
        return a, b, c, d
    return a - c / 2, b - d / 2, a + c / 2, b + d / 2


def _box_area(box, fmt):
    a, b, c, d = (box[..., k] for k in range(4))
    w, h = (c - a, d - b) if fmt == "corner" else (c, d)
    return np.where((w < 0) | (h < 0), 0, w * h)


def _box_iou(p, q, fmt):
    """IoU of boxes p and q (broadcast), MXNet's: 0 where they do not intersect."""
    pl, pt, pr, pb = _box_sides(p, fmt)
    ql, qt, qr, qb = _box_sides(q, fmt)
    iw = np.maximum(np.minimum(pr, qr) - np.maximum(pl, ql), 0)
    ih = np.maximum(np.minimum(pb, qb) - np.maximum(pt, qt), 0)
    inter = iw * ih
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = inter / (_box_area(p, fmt) + _box_area(q, fmt) - inter)
    return np.where(inter <= 0, 0, iou)


def _iou_shape(attrs, shapes):
    op = "_contrib_box_iou"
    for name, s in zip(("lhs", "rhs"), shapes):
        if len(s) < 2 or s[-1] != 4:
            raise ValueError(f"{op}: {name} must have 2 or more dimensions, the last of "
                             f"size 4 (got shape {s!r})")
    return [shapes[0][:-1] + shapes[1][:-1]]


def _iou(attrs, ins, outs):
    p, q = to_host(ins[0]), to_host(ins[1])
    p = p.reshape(p.shape[:-1] + (1,) * (q.ndim - 1) + (4,))
    store(outs[0], _box_iou(p, q, attrs["format"]))


register(
    "_contrib_box_iou", inputs=("lhs", "rhs"),
    attrs={"format": Attr("str", "corner", choices=_FORMATS)},
    infer_shape=_iou_shape, infer_type=_same_float("_contrib_box_iou"), compute=_iou,
    differentiable=False,
    doc="""Intersection over union of every box of ``lhs`` (..., 4) with every box of
``rhs`` (..., 4) (MXNet's ``contrib.box_iou``): output lhs.shape[:-1] + rhs.shape[:-1].
``format`` 'corner' is [xmin, ymin, xmax, ymax], 'center' is [x, y, width, height]; a box
of negative width or height has area 0, and boxes that do not intersect give 0.  No
gradient (MXNet's backward writes zeros).""")


_NMS_ATTRS = {
    "overlap_thresh": Attr("float", 0.5), "valid_thresh": Attr("float", 0.0),
    "topk": Attr("int", -1), "coord_start": Attr("int", 2), "score_index": Attr("int", 1),
    "id_index": Attr("int", -1), "background_id": Attr("int", -1),
    "force_suppress": Attr("bool", False),
    "in_format": Attr("str", "corner", choices=_FORMATS),
    "out_format": Attr("str", "corner", choices=_FORMATS)}


def _nms_check(op, attrs, shape):
    if len(shape) < 2:
        raise ValueError(f"{op}: data must have 2 or more dimensions (..., num_boxes, "
                         f"box_width) (got shape {shape!r})")
    width = shape[-1]
    cs, si, ii = attrs["coord_start"], attrs["score_index"], attrs["id_index"]
    if not (0 <= cs and cs + 3 < width):
        raise ValueError(f"{op}: coord_start must leave 4 coordinates inside the box width "
                         f"{width} (got coord_start={cs})")
    if not (0 <= si < width) or cs <= si <= cs + 3:
        raise ValueError(f"{op}: score_index must be in [0, {width}) and outside the "
                         f"coordinates [{cs}, {cs + 3}] (got score_index={si})")
    if ii != -1 and (not (0 <= ii < width) or cs <= ii <= cs + 3 or ii == si):
        raise ValueError(f"{op}: id_index must be -1 or in [0, {width}), outside the "
                         f"coordinates [{cs}, {cs + 3}] and not score_index (got "
                         f"id_index={ii})")
    if attrs["topk"] < -1:
        raise ValueError(f"{op}: topk must be -1 (all) or >= 0 (got {attrs['topk']})")


def _nms_record(data, attrs):
    """MXNet's box_nms on NumPy ``data`` (B, n, k): (sorted boxes (B, n, k), kept mask in
    score order (B, n), input row of each rank (B, n))."""
    nb, n, _ = data.shape
    cs, si, ii = attrs["coord_start"], attrs["score_index"], attrs["id_index"]
    score = data[..., si]
    valid = score > attrs["valid_thresh"]
    if ii >= 0 and attrs["background_id"] >= 0:
        valid &= data[..., ii] != attrs["background_id"]
    order = np.argsort(np.where(valid, -score, np.inf), axis=1, kind="stable")
    boxes = np.take_along_axis(data, order[..., None], axis=1)
    count = valid.sum(axis=1)
    if attrs["topk"] > 0:
        count = np.minimum(count, attrs["topk"])
    keep = np.arange(n)[None] < count[:, None]
    fmt = attrs["in_format"]
    coords = boxes[..., cs:cs + 4]
    same_class = ii >= 0 and not attrs["force_suppress"]
    ids = np.trunc(boxes[..., ii]) if same_class else None
    thresh = attrs["overlap_thresh"]
    top = int(count.max(initial=0))     # ranks past every batch's count are never kept
    for k in range(top - 1):
        active = keep[:, k]
        if not active.any():
            continue
        iou = _box_iou(coords[:, k:k + 1], coords[:, k + 1:top], fmt)
        gone = active[:, None] & (iou > thresh)
        if same_class:
            gone &= ids[:, k + 1:top] == ids[:, k:k + 1]
        keep[:, k + 1:top] &= ~gone
    return boxes, keep, order


def _nms_layout(data, attrs):
    """(output (B, n, k), record (B, n): the input row of each output row, -1 for the
    rows of -1)."""
    if data.dtype == np.float16:    # scores, IoUs and conversions in float32, as mshadow's half
        out, record = _nms_layout(data.astype(np.float32), attrs)
        return out.astype(np.float16), record
    nb, n, width = data.shape
    if attrs["topk"] == 0:      # MXNet: topk < 1 copies the input
        return data.copy(), np.broadcast_to(np.arange(n), (nb, n)).copy()
    boxes, keep, order = _nms_record(data, attrs)
    out = np.full(data.shape, -1, data.dtype)
    record = np.full((nb, n), -1, np.int64)
    bi, ji = np.nonzero(keep)
    rank = (np.cumsum(keep, axis=1) - 1)[bi, ji]
    out[bi, rank] = boxes[bi, ji]
    record[bi, rank] = order[bi, ji]
    if attrs["in_format"] != attrs["out_format"]:
        cs = attrs["coord_start"]
        c = out[bi, rank, cs:cs + 4]
        if attrs["out_format"] == "center":
            conv = [(c[:, 0] + c[:, 2]) / 2, (c[:, 1] + c[:, 3]) / 2,
                    c[:, 2] - c[:, 0], c[:, 3] - c[:, 1]]
        else:
            conv = [c[:, 0] - c[:, 2] / 2, c[:, 1] - c[:, 3] / 2,
                    c[:, 0] + c[:, 2] / 2, c[:, 1] + c[:, 3] / 2]
        out[bi, rank, cs:cs + 4] = np.stack(conv, axis=1)
    return out, record


def _as3(a):
    return a.reshape((int(np.prod(a.shape[:-2])),) + a.shape[-2:])


def _nms_type(op):
    def infer(attrs, dtypes):
        if any(d not in (np.float16, np.float32, np.float64) for d in dtypes):
            raise TypeError(f"{op}: needs float16, float32 or float64 inputs (got "
                            f"{', '.join(str(d) for d in dtypes)})")
        return _same_float(op)(attrs, dtypes)
    return infer


def _nms_shape(attrs, shapes):
    _nms_check("_contrib_box_nms", attrs, shapes[0])
    return [shapes[0]]


def _nms(attrs, ins, outs):
    x = to_host(ins[0])
    out, _ = _nms_layout(_as3(x), attrs)
    store(outs[0], out.reshape(x.shape))


def _nms_reads(k):
    """grad_inputs: the data at position ``k``, unless topk=0 (the identity)."""
    return lambda attrs, n: () if attrs["topk"] == 0 else (k,)


def _nms_attrs(attrs):
    return {k: attrs[k] for k in _NMS_ATTRS}


register(
    "_contrib_box_nms", aliases=("_contrib_box_non_maximum_suppression",),
    attrs=_NMS_ATTRS, infer_shape=_nms_shape, infer_type=_nms_type("_contrib_box_nms"),
    compute=_nms,
    gradient=lambda attrs, inputs, outputs, g: [g[0] if attrs["topk"] == 0 else
                                                 F._backward_contrib_box_nms(
                                                     g[0], inputs[0], **_nms_attrs(attrs))],
    grad_inputs=_nms_reads(0),
    doc="""Non-maximum suppression (MXNet's ``contrib.box_nms``, alias
``box_non_maximum_suppression``) of data (..., n, k): leading axes are batches of n boxes
of width k, a box holding its score at ``score_index``, 4 coordinates from
``coord_start`` (``in_format`` 'corner' [xmin, ymin, xmax, ymax] or 'center' [x, y, w,
h]) and, with ``id_index`` >= 0, a class id.  Boxes with score <= ``valid_thresh``, or
whose id is ``background_id`` (when both id_index and background_id are >= 0), are
dropped; the rest, in descending score order (ties in input order), are cut to the first
``topk`` (-1: all; 0 returns the input unchanged, as MXNet), then each kept box
suppresses the later ones whose IoU with it exceeds ``overlap_thresh`` (only those of its
own class unless ``force_suppress`` or id_index is -1).  Output: data's shape, the kept
boxes first in score order (coordinates converted to ``out_format``), the other rows
filled with -1 (MXNet's conversion kernel skips a row whose first coordinate is
negative, meant for the -1 rows, which also leaves a kept box with a negative xmin or x
unconverted; here every kept row is converted).  Gradient (MXNet's): each output row's
head gradient goes to the input row it came from, unchanged (the format conversion is not
differentiated); dropped rows get 0.  float16 data is compared and converted in float32
(MXNet's half arithmetic) and returned in float16.""")


def _nms_pair_shape(op, attrs, data, other, name):
    """[data] after checking ``other`` (the second array of box_nms's routing pair) has
    the data's shape."""
    _nms_check(op, attrs, data)
    if other != data:
        raise ValueError(f"{op}: {name} must have data's shape {data!r} (got {other!r})")
    return [data]


def _nms_routes(x, attrs):
    """(batch, output row, input row) of every row box_nms keeps for data x."""
    _, record = _nms_layout(_as3(x), attrs)
    bi, ri = np.nonzero(record >= 0)
    return bi, ri, record[bi, ri]


def _bnms_shape(attrs, shapes):
    return _nms_pair_shape("_backward_contrib_box_nms", attrs, shapes[1], shapes[0], "grad")


def _bnms(attrs, ins, outs):
    g, x = to_host(ins[0]), to_host(ins[1])
    bi, ri, src = _nms_routes(x, attrs)
    g3 = _as3(g)
    dx = np.zeros(g3.shape, g.dtype)
    dx[bi, src] = g3[bi, ri]
    store(outs[0], dx.reshape(x.shape))

register(
    "_backward_contrib_box_nms", inputs=("grad", "data"), attrs=_NMS_ATTRS,
    infer_shape=_bnms_shape, infer_type=_nms_type("_backward_contrib_box_nms"),
    compute=_bnms,
    gradient=lambda attrs, inputs, outputs, g: [
        g[0] if attrs["topk"] == 0 else F._box_nms_pick(inputs[1], g[0], **_nms_attrs(attrs)),
        None],
    grad_inputs=_nms_reads(1),
    doc="""Hidden: box_nms's data gradient: output row i's ``grad`` row written to the
input row it came from (0 elsewhere).  Linear in grad (its gradient is
``_box_nms_pick``); none to data.""")


def _pick_nms_shape(attrs, shapes):
    return _nms_pair_shape("_box_nms_pick", attrs, shapes[0], shapes[1], "values")


def _pick_nms(attrs, ins, outs):
    x, v = to_host(ins[0]), to_host(ins[1])
    bi, ri, src = _nms_routes(x, attrs)
    v3 = _as3(v)
    out = np.zeros(v3.shape, v.dtype)
    out[bi, ri] = v3[bi, src]
    store(outs[0], out.reshape(x.shape))


register(
    "_box_nms_pick", inputs=("data", "values"), attrs=_NMS_ATTRS,
    infer_shape=_pick_nms_shape, infer_type=_nms_type("_box_nms_pick"), compute=_pick_nms,
    gradient=lambda attrs, inputs, outputs, g: [None, g[0] if attrs["topk"] == 0 else
                                                 F._backward_contrib_box_nms(
                                                     g[0], inputs[0], **_nms_attrs(attrs))],
    grad_inputs=_nms_reads(0),
    doc="""Hidden: the rows of ``values`` (data's shape) in box_nms's output order of
``data`` (0 for the rows of -1): the adjoint of ``_backward_contrib_box_nms``, whose
gradient it is.""")


# -- GridGenerator ----------------------------------------------------------------------

_GRID_TYPES = ("affine", "warp")


def _grid_axes(h, w, dtype):
    """The normalised target coordinates: x in [-1, 1] along the width (columns), y
    along the height (rows)."""
    return (np.linspace(-1.0, 1.0, w).astype(dtype), np.linspace(-1.0, 1.0, h).astype(dtype))


def _grid_base(h, w, dtype):
    """(H * W, 3): each target pixel's normalised (x, y, 1), row-major over (H, W)."""
    x, y = _grid_axes(h, w, dtype)
    return np.stack([np.tile(x, h), np.repeat(y, w), np.ones(h * w, dtype)], axis=1)


def _grid_size(op, h, w, what):
    if h < 2 or w < 2:
        raise ValueError(f"{op}: {what} must have a height and width of at least 2 (got "
                         f"({h}, {w}))")


def _grid_shape(attrs, shapes):
    op, d = "GridGenerator", shapes[0]
    if attrs["transform_type"] == "affine":
        if len(d) != 2 or d[1] != 6:
            raise ValueError(f"{op}: affine data must be (N, 6) (got {d!r})")
        h, w = tuple(attrs["target_shape"])
        _grid_size(op, h, w, "target_shape")
        return [(d[0], 2, h, w)]
    if len(d) != 4 or d[1] != 2:
        raise ValueError(f"{op}: warp data must be a flow field (N, 2, H, W) (got {d!r})")
    _grid_size(op, d[2], d[3], "the flow field")
    return [d]


def _affine_grid(theta, target_shape):
    """The grid (N, 2, H, W) of the affine matrices ``theta`` (N, 6) for ``target_shape``."""
    n, (h, w) = theta.shape[0], tuple(target_shape)
    return (theta.reshape(n, 2, 3) @ _grid_base(h, w, theta.dtype).T).reshape(n, 2, h, w)


def _grid(attrs, ins, outs):
    d = to_host(ins[0])
    if attrs["transform_type"] == "affine":
        store(outs[0], _affine_grid(d, attrs["target_shape"]))
        return
    h, w = d.shape[2:]
    x, y = _grid_axes(h, w, d.dtype)
    out = np.empty_like(d)
    # the flow is in pixels: one pixel is 2 / (size - 1) in normalised coordinates
    out[:, 0] = d[:, 0] * d.dtype.type(2.0 / (w - 1)) + x
    out[:, 1] = d[:, 1] * d.dtype.type(2.0 / (h - 1)) + y[:, None]
    store(outs[0], out)


def _grid_grad(attrs, inputs, outputs, out_grads):
    g = out_grads[0]
    n, _, h, w = g.shape
    if attrs["transform_type"] == "affine":
        base = from_numpy(_grid_base(h, w, np.dtype(g.dtype)), g.ctx)
        rows = F.dot(F.reshape(g, shape=(n * 2, h * w)), base)
        return [F.reshape(rows, shape=(n, 6))]
    scale = np.array([2.0 / (w - 1), 2.0 / (h - 1)], np.dtype(g.dtype)).reshape(1, 2, 1, 1)
    return [F.broadcast_mul(g, from_numpy(scale, g.ctx))]


register(
    "GridGenerator", attrs={"transform_type": Attr("str", required=True, choices=_GRID_TYPES),
                            "target_shape": Attr("shape", (0, 0))},
    infer_shape=_grid_shape, infer_type=float_input("GridGenerator"), compute=_grid,
    gradient=_grid_grad, grad_inputs=(),
    doc="""Sampling grids for ``BilinearSampler`` (MXNet's ``GridGenerator``), (N, 2, H, W):
channel 0 the x (column) and channel 1 the y (row) coordinate of each target pixel,
normalised to [-1, 1] across the image.  'affine': ``data`` (N, 6) holds each row-major
2x3 matrix ``theta`` applied to the target pixels' normalised (x, y, 1), for a
``target_shape`` (H, W); 'warp': ``data`` is a flow field (N, 2, H, W) in pixels, added
to each pixel's own position (target_shape is ignored).  Both sizes must be at least 2
(the normalisation divides by size - 1).  The gradient is linear in the head gradient.""")


# -- BilinearSampler, SpatialTransformer --------------------------------------------------------

def _sampler_shape(op, data, grid):
    _data4(op, data)
    if len(grid) != 4 or grid[1] != 2 or grid[0] != data[0]:
        raise ValueError(f"{op}: grid must have shape (N, 2, H, W) with data's N={data[0]} "
                         f"(got {grid!r})")
    return (data[0], data[1], grid[2], grid[3])


def _corners(data_shape, grid):
    """The four neighbours of each sampling point: (rows, cols, weights), each (4, N, H, W),
    a weight zero where the neighbour lies outside the image (MXNet's zero padding)."""
    h, w = data_shape[2:]
    x = (grid[:, 0] + 1) * (w - 1) / 2
    y = (grid[:, 1] + 1) * (h - 1) / 2
    x0, y0 = np.floor(x), np.floor(y)
    wx, wy = x - x0, y - y0
    rows, cols, weights = [], [], []
    for dy, dx, weight in ((0, 0, (1 - wy) * (1 - wx)), (0, 1, (1 - wy) * wx),
                           (1, 0, wy * (1 - wx)), (1, 1, wy * wx)):
        r, c = y0 + dy, x0 + dx
        inside = (r >= 0) & (r < h) & (c >= 0) & (c < w)
        rows.append(np.clip(r, 0, h - 1).astype(np.intp))
        cols.append(np.clip(c, 0, w - 1).astype(np.intp))
        weights.append(np.where(inside, weight, 0))
    return np.stack(rows), np.stack(cols), np.stack(weights), wx, wy


def _gather(data, rows, cols):
    """data (N, C, H, W) at the points (rows, cols) of shape (N, Ho, Wo): (N, C, Ho, Wo)."""
    n = np.arange(data.shape[0])[:, None, None]
    return data[n, :, rows, cols].transpose(0, 3, 1, 2)


def _sample(data, grid):
    rows, cols, weights, _, _ = _corners(data.shape, grid)
    out = sum(_gather(data, r, c) * wgt[:, None] for r, c, wgt in zip(rows, cols, weights))
    return out.astype(data.dtype, copy=False)


def _bsampler(attrs, ins, outs):
    store(outs[0], _sample(to_host(ins[0]), to_host(ins[1])))


def _bsampler_backward(attrs, ins, outs):
    g, data, grid = (to_host(a) for a in ins)
    h, w = data.shape[2:]
    rows, cols, weights, wx, wy = _corners(data.shape, grid)
    n = np.arange(data.shape[0])[:, None, None]
    ddata = np.zeros(data.shape[:1] + data.shape[2:] + data.shape[1:2], np.float64)
    values = []
    for r, c, wgt in zip(rows, cols, weights):
        np.add.at(ddata, (n, r, c), (g * wgt[:, None]).transpose(0, 2, 3, 1))
        values.append(_gather(data, r, c) * (wgt != 0)[:, None])
    v00, v01, v10, v11 = values
    dx = (g * ((1 - wy)[:, None] * (v01 - v00) + wy[:, None] * (v11 - v10))).sum(axis=1)
    dy = (g * ((1 - wx)[:, None] * (v10 - v00) + wx[:, None] * (v11 - v01))).sum(axis=1)
    dgrid = np.stack([dx * (w - 1) / 2, dy * (h - 1) / 2], axis=1)
    store(outs[0], ddata.transpose(0, 3, 1, 2).astype(data.dtype))
    store(outs[1], dgrid.astype(grid.dtype))


_SAMPLER_ATTRS = {"cudnn_off": Attr("bool", None)}

register(
    "BilinearSampler", inputs=("data", "grid"), attrs=_SAMPLER_ATTRS,
    infer_shape=lambda a, s: [_sampler_shape("BilinearSampler", *s)],
    infer_type=_same_float("BilinearSampler"), compute=_bsampler,
    gradient=lambda attrs, inputs, outputs, g: list(
        F._backward_BilinearSampler(g[0], inputs[0], inputs[1])),
    grad_inputs=(0, 1), grad_outputs=(),
    doc="""``data`` (N, C, H, W) sampled bilinearly at ``grid`` (N, 2, Ho, Wo), MXNet's
``BilinearSampler``: channel 0 of the grid the x (column), channel 1 the y (row)
coordinate, normalised to [-1, 1] across the image (``GridGenerator`` makes such grids);
neighbours outside the image count as zeros.  Gradients to both inputs (the grid's is
zero where a point sits exactly on a pixel line, as MXNet's); ``cudnn_off`` is accepted
and changes nothing.""")


def _bsampler_backward_shape(attrs, shapes):
    g, data, grid = shapes
    want = _sampler_shape("_backward_BilinearSampler", data, grid)
    if g != want:
        raise ValueError(f"_backward_BilinearSampler: grad must have shape {want!r} (got "
                         f"{g!r})")
    return [data, grid]


register(
    "_backward_BilinearSampler", inputs=("grad", "data", "grid"), num_outputs=2,
    infer_shape=_bsampler_backward_shape,
    infer_type=lambda a, d: _same_float("_backward_BilinearSampler")(a, d) * 2,
    compute=_bsampler_backward,
    doc="""Hidden: BilinearSampler's gradients (to ``data``, to ``grid``) for the head
gradient ``grad``; no gradient of its own.""")


_ST_ATTRS = {"target_shape": Attr("shape", (0, 0)),
             "transform_type": Attr("str", "affine", choices=("affine",)),
             "sampler_type": Attr("str", "bilinear", choices=("bilinear",)),
             "cudnn_off": Attr("bool", None)}


def _st_grid(attrs, loc):
    return F.GridGenerator(loc, transform_type="affine", target_shape=attrs["target_shape"])


def _st_shape(attrs, shapes):
    data, loc = shapes
    _data4("SpatialTransformer", data)
    if len(loc) != 2 or loc[1] != 6 or loc[0] != data[0]:
        raise ValueError(f"SpatialTransformer: loc must have shape (N, 6) with data's "
                         f"N={data[0]} (got {loc!r})")
    h, w = tuple(attrs["target_shape"])
    _grid_size("SpatialTransformer", h, w, "target_shape")
    return [(data[0], data[1], h, w)]


def _st(attrs, ins, outs):
    data, loc = to_host(ins[0]), to_host(ins[1])
    store(outs[0], _sample(data, _affine_grid(loc, attrs["target_shape"])))


def _st_grad(attrs, inputs, outputs, g):
    grid = _st_grid(attrs, inputs[1])
    ddata, dgrid = F._backward_BilinearSampler(g[0], inputs[0], grid)
    return [ddata, _grid_grad({"transform_type": "affine"}, [inputs[1]], [grid], [dgrid])[0]]


register(
    "SpatialTransformer", inputs=("data", "loc"), attrs=_ST_ATTRS,
    infer_shape=_st_shape, infer_type=_same_float("SpatialTransformer"), compute=_st,
    gradient=_st_grad, grad_inputs=(0, 1), grad_outputs=(),
    doc="""MXNet's ``SpatialTransformer``: ``data`` (N, C, H, W) sampled bilinearly on the
grid that the affine matrices ``loc`` (N, 6) make for ``target_shape`` (H', W'), i.e.
``BilinearSampler(data, GridGenerator(loc, 'affine', target_shape))``, with gradients to
both inputs.""")
