"""MXNet 1.x's contrib operators (``mx.nd.contrib.<name>``, registered as
``_contrib_<name>``): boolean_mask, index_copy, index_array, arange_like, div_sqrt_dim,
quadratic, gradientmultiplier, allclose, fft, ifft and count_sketch.

``_contrib_boolean_mask``'s output length depends on the values of its index, which
shape inference (shapes only) cannot see: the op takes it as the attribute ``size``,
which ``runtime.nd.contrib.boolean_mask`` counts from the index before the call, and the
kernel checks it against the index (ValueError when they differ).  Its gradient is the
hidden ``_backward_contrib_boolean_mask`` (MXNet's name): the output gradient scattered
back into zeros of the data's shape, itself differentiable through boolean_mask.
"""

import math

import numpy as np

from runtime.ops._call import F, zeros
from runtime.ops.registry import (Attr, dtype_scalar, float_input, no_bool, normalize_axis,
                                   register, scalar_type)
from runtime.ops.shape import _indices


# -- boolean_mask --------------------------------------------------------------------------------

def _mask_axis(op, attrs, data, index):
    """The normalised axis of ``data`` (a shape) that ``index`` (a shape) selects along."""
    if not data:
        raise ValueError(f"{op}: data must have at least one dimension (got shape ())")
    axis = normalize_axis(op, attrs["axis"], len(data))
    if len(index) != 1 or index[0] != data[axis]:
        raise ValueError(f"{op}: index must be 1-D with one entry per position of data's "
                         f"axis {axis} (got index shape {index!r} for data shape {data!r})")
    return axis


def _mask_size(op, attrs, n):
    size = attrs["size"]
    if size is None:
        raise ValueError(f"{op}: size, the number of nonzero entries of index, must be given "
                         "(nd.contrib.boolean_mask counts it)")
    if not 0 <= size <= n:
        raise ValueError(f"{op}: size must be in [0, {n}], the length of index (got "
                         f"size={size})")
    return size


def _mask_positions(op, index, size, what="size"):
    """The positions of the nonzero entries of ``index``, checked to number ``size``."""
    pos = np.flatnonzero(index)
    if pos.size != size:
        raise ValueError(f"{op}: {what} must equal the number of nonzero entries of index "
                         f"({pos.size}) (got {size})")
    return pos


def _mask_type(op):
    def infer(attrs, dtypes):
        if dtypes[1].kind not in "biuf":
            raise TypeError(f"{op}: index must be numbers or bools (got {dtypes[1]})")
        return [dtypes[0]]
    return infer


def _boolean_mask_shape(attrs, shapes):
    op = "_contrib_boolean_mask"
    data, index = shapes
    axis = _mask_axis(op, attrs, data, index)
    size = _mask_size(op, attrs, data[axis])
    return [data[:axis] + (size,) + data[axis + 1:]]


def _boolean_mask(attrs, ins, outs):
    data, index = ins
    axis = normalize_axis("", attrs["axis"], data.ndim)
    pos = _mask_positions("_contrib_boolean_mask", index, attrs["size"])
    outs[0][...] = np.take(data, pos, axis=axis)


register("_contrib_boolean_mask", aliases=("boolean_mask",), inputs=("data", "index"),
         attrs={"axis": Attr("int", 0), "size": Attr("int", None)},
         infer_shape=_boolean_mask_shape, infer_type=_mask_type("_contrib_boolean_mask"),
         compute=_boolean_mask, grad_inputs=(1,),
         gradient=lambda a, i, o, g: [F._backward_contrib_boolean_mask(
             g[0], i[1], axis=a["axis"], shape=i[0].shape), None],
         doc="""The slices of ``data`` along ``axis`` where ``index`` (1-D, one entry per
slice; any nonzero value selects) is nonzero, in order (MXNet's contrib.boolean_mask).
``size`` is the number of nonzero entries of ``index``: ``nd.contrib.boolean_mask``
counts it; given here it is checked against the index.  MXNet 1.x takes only axis 0;
any axis is taken here.  The gradient of ``data`` is the output gradient placed at the
selected slices, zero elsewhere; ``index`` has none.""")


def _backward_mask_shape(attrs, shapes):
    op = "_backward_contrib_boolean_mask"
    g, index = shapes
    shape = attrs["shape"]
    axis = _mask_axis(op, attrs, shape, index)
    if len(g) != len(shape) or any(g[k] != shape[k] for k in range(len(g)) if k != axis):
        raise ValueError(f"{op}: data {g!r} must match shape {shape!r} except on axis "
                         f"{axis}")
    return [shape]


def _backward_mask(attrs, ins, outs):
    g, index = ins
    axis = normalize_axis("", attrs["axis"], g.ndim)
    pos = _mask_positions("_backward_contrib_boolean_mask", index, g.shape[axis],
                         "data's length on the axis")
    res = np.zeros(attrs["shape"], g.dtype)
    where = [slice(None)] * g.ndim
    where[axis] = pos
    res[tuple(where)] = g
    outs[0][...] = res


register("_backward_contrib_boolean_mask", inputs=("data", "index"),
         attrs={"axis": Attr("int", 0), "shape": Attr("shape", required=True)},
         infer_shape=_backward_mask_shape,
         infer_type=_mask_type("_backward_contrib_boolean_mask"),
         compute=_backward_mask, grad_inputs=(1,),
         gradient=lambda a, i, o, g: [F._contrib_boolean_mask(
             g[0], i[1], axis=a["axis"], size=i[0].shape[
                 normalize_axis("", a["axis"], len(i[0].shape))]), None],
         doc="boolean_mask's gradient (MXNet's _backward_contrib_boolean_mask): ``data`` "
             "placed at the slices along ``axis`` where ``index`` is nonzero, in zeros of "
             "``shape``.")


# -- index_copy ----------------------------------------------------------------------------------

def _index_copy_shape(attrs, shapes):
    old, index, new = shapes
    if not old:
        raise ValueError("_contrib_index_copy: old_tensor must have at least one dimension "
                         "(got shape ())")
    if len(index) != 1:
        raise ValueError(f"_contrib_index_copy: index_vector must be 1-D (got shape "
                         f"{index!r})")
    if new != index + old[1:]:
        raise ValueError(f"_contrib_index_copy: new_tensor must have shape {index + old[1:]!r} "
                         f"(one row of old_tensor {old!r} per index) (got {new!r})")
    return [old]


def _index_copy_type(attrs, dtypes):
    if dtypes[1].kind not in "iuf":
        raise TypeError(f"_contrib_index_copy: index_vector must be integers or floats (got "
                        f"{dtypes[1]})")
    if dtypes[0] != dtypes[2]:
        raise TypeError(f"_contrib_index_copy: old_tensor and new_tensor must have one dtype "
                        f"(got {dtypes[0]} and {dtypes[2]})")
    return [dtypes[0]]


def _index_copy(attrs, ins, outs):
    old, index, new = ins
    rows = _indices("_contrib_index_copy", index, old.shape[0], "raise", 0)
    res = old.copy()
    res[rows] = new
    outs[0][...] = res


def _index_copy_grad(attrs, i, o, g):
    old, index, new = i
    return [F._contrib_index_copy(g[0], index, zeros(new)), None,
            F.take(g[0], index, axis=0, mode="raise")]


register("_contrib_index_copy", aliases=("index_copy",),
         inputs=("old_tensor", "index_vector", "new_tensor"),
         infer_shape=_index_copy_shape, infer_type=_index_copy_type, compute=_index_copy,
         grad_inputs=(1,), gradient=_index_copy_grad,
         doc="""A copy of ``old_tensor`` whose rows ``index_vector`` (1-D) are replaced
by the rows of ``new_tensor`` in order (MXNet's contrib.index_copy): new_tensor has shape
index_vector.shape + old_tensor.shape[1:].  Float indices are truncated; negative ones
count from the end; others out of range raise IndexError.  Where an index repeats, the
last row wins.  Gradients: old_tensor gets the output gradient with the replaced rows
zeroed, new_tensor the output gradient's rows at index_vector (as MXNet, also for the
rows that a repeated index overwrote); index_vector none.""")


# -- index_array ---------------------------------------------------------------------------------

def _index_array_axes(attrs, ndim):
    axes = attrs["axes"]
    if axes is None:
        return tuple(range(ndim))
    return tuple(normalize_axis("_contrib_index_array", a, ndim) for a in axes)


def _index_array(attrs, ins, outs):
    shape = ins[0].shape
    axes = _index_array_axes(attrs, len(shape))
    grids = np.indices(shape, dtype=np.int64) if shape else np.zeros((0,), np.int64)
    outs[0][...] = np.stack([grids[a] for a in axes], axis=-1) if axes else 0


register("_contrib_index_array", aliases=("index_array",),
         attrs={"axes": Attr("axes")},
         infer_shape=lambda a, s: [s[0] + (len(_index_array_axes(a, len(s[0]))),)],
         infer_type=lambda a, d: [np.dtype(np.int64)], compute=_index_array,
         ignores=(0,), differentiable=False,
         doc="""The index of every element of ``data`` (MXNet's contrib.index_array):
int64 of shape data.shape + (k,), out[i0, ..., iN-1, j] = i_axes[j], for the axes
``axes`` (default: every axis, k = data.ndim; negative ones count from the end).  Only
data's shape is read; no gradient.""")


# -- arange_like ---------------------------------------------------------------------------------

def _arange_like_shape(attrs, shapes):
    op = "_contrib_arange_like"
    if attrs["repeat"] < 1:
        raise ValueError(f"{op}: repeat must be >= 1 (got repeat={attrs['repeat']})")
    data = shapes[0]
    if attrs["axis"] is None:
        return [data]
    return [(data[normalize_axis(op, attrs["axis"], len(data))],)]


def _no_bool_scalars(op, *names):
    """An ``infer_type`` refusing bool data and scalar attributes ``names`` that data's
    dtype cannot hold (registry.scalar_type); it keeps data's dtype."""
    scalars = scalar_type(op, *names)

    def infer(attrs, dtypes):
        no_bool(op)(attrs, dtypes)
        return scalars(attrs, dtypes)
    return infer


def _arange_like(attrs, ins, outs):
    out = outs[0]
    d = out.dtype
    start = dtype_scalar("_contrib_arange_like", "start", attrs["start"], d)
    step = dtype_scalar("_contrib_arange_like", "step", attrs["step"], d)
    k = np.arange(out.size, dtype=np.int64) // attrs["repeat"]
    with np.errstate(over="ignore"):    # arithmetic in data's dtype, as MXNet's kernel
        out[...] = (start + k.astype(d) * step).reshape(out.shape)


register("_contrib_arange_like", aliases=("arange_like",),
         attrs={"start": Attr("float", 0.0), "step": Attr("float", 1.0),
                "repeat": Attr("int", 1), "ctx": Attr("any"), "axis": Attr("axis")},
         infer_shape=_arange_like_shape,
         infer_type=_no_bool_scalars("_contrib_arange_like", "start", "step"),
         compute=_arange_like, ignores=(0,), differentiable=False,
         doc="""start, start + step, ... (each value ``repeat`` times) in the shape of
``data`` (``axis`` None, the default) or along its axis ``axis`` (a 1-D result of length
data.shape[axis]) (MXNet's contrib.arange_like), in data's dtype.  Only data's shape is
read; ``ctx`` is accepted and ignored (the result lives where data does); no gradient.""")


# -- div_sqrt_dim, quadratic, gradientmultiplier -------------------------------------------------

def _div_sqrt_dim_shape(attrs, shapes):
    if not shapes[0]:
        raise ValueError("_contrib_div_sqrt_dim: data must have at least one dimension (got "
                         "shape ())")
    return [shapes[0]]


def _div_sqrt_dim(attrs, ins, outs):
    x = ins[0]
    np.divide(x, x.dtype.type(math.sqrt(x.shape[-1])), out=outs[0])


register("_contrib_div_sqrt_dim", aliases=("div_sqrt_dim",),
         infer_shape=_div_sqrt_dim_shape, infer_type=float_input("_contrib_div_sqrt_dim"),
         compute=_div_sqrt_dim, inplace=((0, 0),), grad_donates=True,
         gradient=lambda a, i, o, g: [F._contrib_div_sqrt_dim(g[0])],
         doc="""data / sqrt(data.shape[-1]) (MXNet's contrib.div_sqrt_dim, the scaling of
dot-product attention).  Floating-point data only; a last axis of length 0 gives an
empty result.""")


def _quadratic(attrs, ins, outs):
    x, out = ins[0], outs[0]
    a, b, c = (dtype_scalar("_contrib_quadratic", k, attrs[k], x.dtype) for k in "abc")
    with np.errstate(over="ignore"):
        out[...] = (a * x + b) * x + c


def _quadratic_grad(attrs, i, o, g):
    slope = F._contrib_quadratic(i[0], a=0.0, b=2.0 * attrs["a"], c=attrs["b"])
    return [F.elemwise_mul(g[0], slope)]


register("_contrib_quadratic", aliases=("quadratic",),
         attrs={"a": Attr("float", 0.0), "b": Attr("float", 0.0), "c": Attr("float", 0.0)},
         infer_type=_no_bool_scalars("_contrib_quadratic", "a", "b", "c"), compute=_quadratic,
         inplace=((0, 0),), grad_inputs=(0,), gradient=_quadratic_grad,
         doc="""a * data**2 + b * data + c elementwise (MXNet's contrib.quadratic), the
coefficients cast to data's dtype (an integer dtype truncates them).  Gradient:
(2a * data + b) times the output gradient.""")


def _gradientmultiplier(attrs, ins, outs):
    outs[0][...] = ins[0]


register("_contrib_gradientmultiplier", aliases=("gradientmultiplier",),
         attrs={"scalar": Attr("float", 1.0)},
         infer_type=scalar_type("_contrib_gradientmultiplier", "scalar"),
         compute=_gradientmultiplier, inplace=((0, 0),), grad_donates=True,
         gradient=lambda a, i, o, g: [F._mul_scalar(g[0], scalar=a["scalar"])],
         doc="""The identity forward, the output gradient times ``scalar`` backward
(MXNet's contrib.gradientmultiplier; a negative scalar makes a gradient reversal layer;
the default 1.0 is MXNet 1.8's).
``scalar`` is cast to data's dtype as MXNet's backward does (an integer dtype refuses
one it cannot hold).""")


# -- allclose ------------------------------------------------------------------------------------

def _tolerance(name, v):
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise TypeError(f"_contrib_allclose: {name} must be a number (got {v!r})")
    if not (math.isfinite(v) and v >= 0):
        raise ValueError(f"_contrib_allclose: {name} must be finite and >= 0 (got {v!r})")
    return float(v)


def _allclose_shape(attrs, shapes):
    _tolerance("rtol", attrs["rtol"])
    _tolerance("atol", attrs["atol"])
    if shapes[0] != shapes[1]:
        raise ValueError(f"_contrib_allclose: a and b must have one shape (got {shapes[0]!r} "
                         f"and {shapes[1]!r})")
    return [()]


def _allclose_type(attrs, dtypes):
    if dtypes[0] != dtypes[1]:
        raise TypeError(f"_contrib_allclose: a and b must have one dtype (got {dtypes[0]} and "
                        f"{dtypes[1]})")
    return [np.dtype(np.uint8)]


def _allclose(attrs, ins, outs):
    a, b = (x.astype(np.float64) for x in ins)
    # MXNet's tolerances are float32 attributes
    rtol = float(np.float32(_tolerance("rtol", attrs["rtol"])))
    atol = float(np.float32(_tolerance("atol", attrs["atol"])))
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    with np.errstate(invalid="ignore"):
        close = (a == b) | (np.abs(a - b) <= atol + rtol * np.abs(b))
    close = np.where(nan_a | nan_b, attrs["equal_nan"] & nan_a & nan_b, close)
    outs[0][...] = int(bool(close.all()))


register("_contrib_allclose", aliases=("allclose",), inputs=("a", "b"),
         attrs={"rtol": Attr("any", 1e-05), "atol": Attr("any", 1e-08),
                "equal_nan": Attr("bool", True)},
         infer_shape=_allclose_shape, infer_type=_allclose_type, compute=_allclose,
         differentiable=False,
         doc="""1 when every a == b or |a - b| <= atol + rtol * |b| (a and b of one shape
and dtype), else 0 (MXNet's contrib.allclose).  As MXNet's kernel, the rule is applied
to infinities as IEEE arithmetic gives it (unlike numpy.allclose: +inf and -inf are close
when rtol > 0, a finite value is close to an infinite ``b``); NaNs are close to each
other only when ``equal_nan`` (True by default, as in MXNet).  The tolerances are
rounded to float32 as MXNet's attributes are, and must be finite and >= 0.  The result
is a 0-d uint8 array, as MXNet 1.9.1's.  Empty arrays are close.  No gradient.""")


# -- fft, ifft -------------------------------------------------------------------------------------

def _fft_dims(op, shape):
    if len(shape) not in (2, 4):
        raise ValueError(f"{op}: data must have 2 or 4 dimensions, (N, d) or (N1, N2, N3, d), "
                         f"as MXNet's (got shape {shape!r})")


def _fft_check(op, attrs):
    if attrs["compute_size"] < 1:
        raise ValueError(f"{op}: compute_size must be >= 1 (got "
                         f"compute_size={attrs['compute_size']})")


def _fft_shape(attrs, shapes):
    _fft_check("_contrib_fft", attrs)
    _fft_dims("_contrib_fft", shapes[0])
    return [shapes[0][:-1] + (2 * shapes[0][-1],)]


def _ifft_shape(attrs, shapes):
    _fft_check("_contrib_ifft", attrs)
    shape = shapes[0]
    _fft_dims("_contrib_ifft", shape)
    if shape[-1] % 2:
        raise ValueError(f"_contrib_ifft: the last axis must be even, interleaved (real, "
                         f"imaginary) pairs (got shape {shape!r})")
    return [shape[:-1] + (shape[-1] // 2,)]


def _fft(attrs, ins, outs):
    x, out = ins[0], outs[0]
    if x.shape[-1] == 0:            # numpy.fft takes no empty transform
        return
    c = np.fft.fft(x.astype(np.float64), axis=-1)
    out[..., 0::2] = c.real
    out[..., 1::2] = c.imag


def _ifft(attrs, ins, outs):
    x, out = ins[0], outs[0]
    c = x[..., 0::2].astype(np.float64) + 1j * x[..., 1::2]
    d = out.shape[-1]
    out[...] = (np.fft.ifft(c, axis=-1) * d).real if d else 0


_FFT_ATTRS = {"compute_size": Attr("int", 128)}

register("_contrib_fft", aliases=("fft",), attrs=_FFT_ATTRS, infer_shape=_fft_shape,
         infer_type=float_input("_contrib_fft"), compute=_fft,
         gradient=lambda a, i, o, g: [F._contrib_ifft(g[0])],
         doc="""The 1-D discrete Fourier transform of the last axis of real ``data``
(MXNet's contrib.fft): (N, d) or (N1, N2, N3, d) gives (..., 2d), the complex results
interleaved [re0, im0, re1, im1, ...], unnormalised (X_k = sum_j x_j e^{-2 pi i jk/d}).
Computed with numpy.fft in float64, stored in data's (floating) dtype; ``compute_size``
(MXNet's cuFFT batch size) is accepted and does not change the result.  Gradient:
contrib.ifft of the output gradient (the adjoint).""")

register("_contrib_ifft", aliases=("ifft",), attrs=_FFT_ATTRS, infer_shape=_ifft_shape,
         infer_type=float_input("_contrib_ifft"), compute=_ifft,
         gradient=lambda a, i, o, g: [F._contrib_fft(g[0])],
         doc="""The real part of the unnormalised inverse DFT of the last axis of
``data`` holding interleaved complex numbers (MXNet's contrib.ifft): (..., 2d) gives
(..., d), x_j = Re(sum_k X_k e^{2 pi i jk/d}) (not divided by d, as MXNet, so that
ifft(fft(x)) = d x).  Gradient: contrib.fft of the output gradient (the adjoint).""")


# -- count_sketch ------------------------------------------------------------------------------

def _sketch_shape(attrs, shapes):
    op = "_contrib_count_sketch"
    data, h, s = shapes
    if attrs["out_dim"] < 1 or attrs["processing_batch_size"] < 1:
        raise ValueError(f"{op}: out_dim and processing_batch_size must be >= 1 (got "
                         f"out_dim={attrs['out_dim']}, processing_batch_size="
                         f"{attrs['processing_batch_size']})")
    if len(data) != 2 or h != (1, data[1]) or s != (1, data[1]):
        raise ValueError(f"{op}: data must be (N, in_dim) and h, s (1, in_dim) (got data "
                         f"{data!r}, h {h!r}, s {s!r})")
    return [(data[0], attrs["out_dim"])]


def _sketch_type(attrs, dtypes):
    if dtypes[0].kind != "f" or len(set(dtypes)) != 1:
        raise TypeError(f"_contrib_count_sketch: data, h and s must have one floating-point "
                        f"dtype (got {', '.join(str(d) for d in dtypes)})")
    return [dtypes[0]]


def _sketch_hash(h, out_dim):
    """``h`` (1, in_dim) as integer buckets in [0, out_dim) (floats truncated)."""
    if h.size and not (np.isfinite(h).all() and (h >= 0).all() and (h < out_dim).all()):
        bad = h.ravel()[~(np.isfinite(h.ravel()) & (h.ravel() >= 0) & (h.ravel() < out_dim))]
        raise IndexError(f"_contrib_count_sketch: h must hold buckets in [0, {out_dim}) "
                         f"(got {float(bad[0])!r})")
    return h.ravel().astype(np.int64)


def _count_sketch(attrs, ins, outs):
    data, h, s = ins
    buckets = _sketch_hash(h, attrs["out_dim"])
    res = np.zeros(outs[0].shape, data.dtype)
    np.add.at(res.T, buckets, (data * s.ravel()).T)
    outs[0][...] = res


def _count_sketch_grad(attrs, i, o, g):
    data, h, s = i
    picked = F.take(g[0], F.reshape(h, shape=(-1,)), axis=1, mode="clip")
    return [F.broadcast_mul(picked, s), None, None]


register("_contrib_count_sketch", aliases=("count_sketch",), inputs=("data", "h", "s"),
         attrs={"out_dim": Attr("int", required=True),
                "processing_batch_size": Attr("int", 32)},
         infer_shape=_sketch_shape, infer_type=_sketch_type, compute=_count_sketch,
         grad_inputs=(1, 2), gradient=_count_sketch_grad,
         doc="""Count sketch of the rows of ``data`` (N, in_dim) into (N, out_dim)
(MXNet's contrib.count_sketch): out[n, h[0, i]] += s[0, i] * data[n, i], with ``h``
(1, in_dim) the buckets in [0, out_dim) (floats truncated; others raise IndexError) and
``s`` (1, in_dim) the signs.  data, h and s share one floating-point dtype, as in MXNet;
``processing_batch_size`` (MXNet's GPU batch) does not change the result.  Gradient of
data: s * the output gradient at each input's bucket; h and s get none.""")
