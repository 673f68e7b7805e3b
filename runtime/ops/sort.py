"""Ordering and NaN-skipping reductions: topk, sort, argsort, argmax_channel, nansum,
nanprod (MXNet's names, attribute order and defaults).

Sorting is stable: ties keep their order along the axis, ascending or descending (as
MXNet's CPU kernels, which sort with ``std::stable_sort``).  The gradients of ``sort``
and of ``topk``'s values scatter the output gradient back to the positions the values
came from, with ``_backward_gather_nd`` (runtime.ops.index), so that gradients of
gradients work.
"""

import numpy as np

from runtime._ndarray import from_numpy, shape_size
from runtime.ops._call import F, broadcast, zeros
from runtime.ops.reduce import REDUCE_ATTRS, _expand, _prod_grad, reduced_axes, reduced_shape
from runtime.ops.registry import Attr, no_bool, normalize_axis, register

_INDEX_DTYPES = ("float16", "float32", "float64", "int32", "int64", "uint8")
# the largest index each dtype holds exactly
_EXACT = {"float16": 2 ** 11, "float32": 2 ** 24, "float64": 2 ** 53, "uint8": 255,
          "int32": 2 ** 31 - 1, "int64": 2 ** 63 - 1}


def _sort_axis(op, attrs, ndim):
    """The axis sorted along, or None for the flattened array."""
    axis = attrs["axis"]
    return None if axis is None else normalize_axis(op, axis, ndim)


def _order(x, axis, ascend):
    """Stable argsort of ``x`` along ``axis`` (None: flattened), int64."""
    if axis is None:
        x, axis = x.reshape(-1), 0
    if not ascend:
        # a strictly decreasing key keeps stable ties: -x for floats, ~x for integers
        x = np.invert(x) if x.dtype.kind in "iu" else np.negative(x)
    return np.argsort(x, axis=axis, kind="stable").astype(np.int64, copy=False)


def _index_dtype(op, attrs, n):
    d = attrs["dtype"]
    if d.name not in _INDEX_DTYPES:
        raise TypeError(f"{op}: dtype must be one of {', '.join(_INDEX_DTYPES)} (got {d})")
    if n > 0 and n - 1 > _EXACT[d.name]:
        raise ValueError(f"{op}: dtype {d} cannot hold the indices up to {n - 1} exactly "
                         "(MXNet's rule); choose a wider dtype")
    return d


def _scatter_back(g, idx, axis, shape):
    """``g`` (shape of ``idx``) added into zeros of ``shape`` at positions ``idx`` along
    ``axis`` (None: of the flattened array): the gradient of gathering along an axis."""
    if axis is None:
        flat = _scatter_back(g.reshape((shape_size(idx.shape),)),
                             idx.reshape((shape_size(idx.shape),)), 0, (shape_size(shape),))
        return flat.reshape(shape) if 0 not in shape else zeros(g, shape)
    coords = from_numpy(np.indices(idx.shape, dtype=np.int64), idx.ctx)
    pos = F.expand_dims(F.cast(idx, dtype="int64"), axis=0)
    full = F._slice_assign(coords, pos, begin=(axis,), end=(axis + 1,))
    return F._backward_gather_nd(g, full, shape=shape)


# -- topk ---------------------------------------------------------------------------------

_RET_TYPES = ("both", "indices", "mask", "value")


def _topk_k(attrs, shape):
    axis = _sort_axis("topk", attrs, len(shape))
    n = shape_size(shape) if axis is None else shape[axis]
    k = attrs["k"]
    if k < 1:                  # MXNet: a global sort
        k = n
    if k > n:
        raise ValueError(f"topk: k must be <= {n}, the size of the axis searched in shape "
                         f"{shape!r} (got k={attrs['k']})")
    return axis, n, k


def _topk_shape(attrs, shapes):
    shape = shapes[0]
    if not shape:
        raise ValueError("topk: data must have at least one dimension (got shape ())")
    axis, n, k = _topk_k(attrs, shape)
    if attrs["ret_typ"] in ("indices", "both"):
        _index_dtype("topk", attrs, n)
    if attrs["ret_typ"] == "mask":
        return [shape]
    out = (k,) if axis is None else shape[:axis] + (k,) + shape[axis + 1:]
    return [out, out] if attrs["ret_typ"] == "both" else [out]


def _topk_type(attrs, dtypes):
    no_bool("topk")(attrs, dtypes)
    ret, d = attrs["ret_typ"], dtypes[0]
    if ret in ("value", "mask"):
        return [d]
    idx = _index_dtype("topk", attrs, 0)
    return [d, idx] if ret == "both" else [idx]


def _topk_indices(attrs, x):
    axis, n, k = _topk_k(attrs, x.shape)
    order = _order(x, axis, attrs["is_ascend"])
    return axis, order[(slice(None),) * (0 if axis is None else axis) + (slice(0, k),)]


def _topk(attrs, ins, outs):
    x = ins[0]
    axis, idx = _topk_indices(attrs, x)
    ret = attrs["ret_typ"]
    src = x.reshape(-1) if axis is None else x
    ax = 0 if axis is None else axis
    if ret == "mask":
        mask = np.zeros_like(src)
        np.put_along_axis(mask, idx, 1, axis=ax)
        outs[0][...] = mask.reshape(outs[0].shape)
        return
    if ret in ("value", "both"):
        outs[0][...] = np.take_along_axis(src, idx, axis=ax)
    if ret in ("indices", "both"):
        outs[-1][...] = idx


def _topk_grad(a, i, o, g):
    x = i[0]
    ret = a["ret_typ"]
    if ret in ("indices", "mask"):
        return [zeros(x)]
    axis = _sort_axis("topk", a, x.ndim)
    idx = o[1] if ret == "both" else F.topk(x, axis=a["axis"], k=a["k"], ret_typ="indices",
                                            is_ascend=a["is_ascend"], dtype="int64")
    return [_scatter_back(g[0], idx, axis, x.shape)]


register("topk", attrs={"axis": Attr("axis", -1), "k": Attr("int", 1),
                        "ret_typ": Attr("str", "indices", choices=_RET_TYPES),
                        "is_ascend": Attr("bool", False), "dtype": Attr("dtype", "float32")},
         num_outputs=lambda a: 2 if a["ret_typ"] == "both" else 1,
         infer_shape=_topk_shape, infer_type=_topk_type, compute=_topk,
         gradient=_topk_grad,
         grad_inputs=lambda a, n: (0,) if a["ret_typ"] == "value" else (),
         grad_outputs=lambda a, n: (1,) if a["ret_typ"] == "both" else (),
         doc="""The top ``k`` elements along ``axis`` (None: of the flattened array), largest
first (``is_ascend``: smallest first), as MXNet's topk.

``ret_typ``: 'indices' (default; their positions along the axis, in ``dtype``, float32 by
default), 'value', 'both' (the list [values, indices]) or 'mask' (data's shape and dtype,
1 at the selected elements).  ``k`` < 1 sorts the whole axis; ``k`` larger than the axis
raises ValueError, as does an index ``dtype`` that cannot hold every index exactly (MXNet:
float16 up to 2048).  Ties keep their order along the axis.  Gradient: the values' output
gradient goes back to the positions they came from; 'indices' and 'mask' give zero.""")


# -- sort, argsort --------------------------------------------------------------------------

def _flat_or_same(op):
    def infer(attrs, shapes):
        shape = shapes[0]
        axis = _sort_axis(op, attrs, len(shape))
        if "dtype" in attrs:
            _index_dtype(op, attrs, shape_size(shape) if axis is None else shape[axis])
        return [(shape_size(shape),) if axis is None else shape]
    return infer


def _sort(attrs, ins, outs):
    x = ins[0]
    axis = _sort_axis("sort", attrs, x.ndim)
    order = _order(x, axis, attrs["is_ascend"])
    src = x.reshape(-1) if axis is None else x
    outs[0][...] = np.take_along_axis(src, order, axis=0 if axis is None else axis)


def _sort_grad(a, i, o, g):
    x = i[0]
    axis = _sort_axis("sort", a, x.ndim)
    idx = F.argsort(x, axis=a["axis"], is_ascend=a["is_ascend"], dtype="int64")
    return [_scatter_back(g[0], idx, axis, x.shape)]


register("sort", attrs={"axis": Attr("axis", -1), "is_ascend": Attr("bool", True)},
         infer_shape=_flat_or_same("sort"), infer_type=no_bool("sort"), compute=_sort,
         gradient=_sort_grad, grad_inputs=(0,),
         doc="The elements sorted along ``axis`` (None: the flattened array, 1-D), "
             "ascending unless ``is_ascend`` is False; stable (MXNet's sort).  Gradient: "
             "the output gradient goes back to each element's original position.")


def _argsort_type(attrs, dtypes):
    no_bool("argsort")(attrs, dtypes)
    return [_index_dtype("argsort", attrs, 0)]


def _argsort(attrs, ins, outs):
    x = ins[0]
    axis = _sort_axis("argsort", attrs, x.ndim)
    outs[0][...] = _order(x, axis, attrs["is_ascend"])


register("argsort", attrs={"axis": Attr("axis", -1), "is_ascend": Attr("bool", True),
                           "dtype": Attr("dtype", "float32")},
         infer_shape=_flat_or_same("argsort"), infer_type=_argsort_type, compute=_argsort,
         differentiable=False,
         doc="The positions that sort the elements along ``axis`` (None: the flattened "
             "array), in ``dtype`` (float32 by default, as MXNet; one that cannot hold "
             "every index exactly raises ValueError); stable, ascending unless "
             "``is_ascend`` is False.  No gradient.")


# -- argmax_channel -----------------------------------------------------------------------

def _argmax_channel_shape(attrs, shapes):
    shape = shapes[0]
    if not shape or shape[-1] == 0:
        raise ValueError(f"argmax_channel: the last axis must be non-empty (got shape "
                         f"{shape!r})")
    return [shape[:-1] or (1,)]


def _argmax_channel(attrs, ins, outs):
    x = ins[0]
    if x.dtype.kind in "iu" and x.shape[-1] - 1 > np.iinfo(x.dtype).max:
        raise ValueError(f"argmax_channel: indices up to {x.shape[-1] - 1} do not fit in the "
                         f"output dtype {x.dtype} (the input's, as MXNet)")
    outs[0][...] = np.argmax(x, axis=-1).reshape(outs[0].shape)


register("argmax_channel", infer_shape=_argmax_channel_shape,
         infer_type=no_bool("argmax_channel"), compute=_argmax_channel,
         differentiable=False,
         doc="Index of the maximum along the last axis (MXNet's argmax_channel): shape "
             "data.shape[:-1] ((1,) for 1-D data), in the input's dtype; ties give the "
             "first.  No gradient.")


# -- nansum, nanprod ----------------------------------------------------------------------

def _nan_kernel(fn):
    def compute(attrs, ins, outs):
        x = ins[0]
        axes = reduced_axes("", attrs, x.ndim)
        r = fn(x, axis=axes, keepdims=True, dtype=x.dtype)
        outs[0][...] = r.reshape(outs[0].shape)
    return compute


def _nan_shape(op):
    return lambda attrs, shapes: [reduced_shape(op, attrs, shapes[0])]


def _not_nan(x):
    """1 where ``x`` is a number, 0 at NaN, in x's dtype."""
    return F.equal(x, x)


def _nansum_grad(a, i, o, g):
    x = i[0]
    if 0 in x.shape:
        return [zeros(x)]
    return [broadcast(_expand(g[0], x, a), x.shape) * _not_nan(x)]


def _nanprod_grad(a, i, o, g):
    x = i[0]
    if 0 in x.shape:
        return [zeros(x)]
    num = _not_nan(x)
    filled = F.where(num, x, F.ones_like(x))        # NaN -> 1, the product's identity
    return [_prod_grad(a, [filled], o, g)[0] * num]


register("nansum", attrs=REDUCE_ATTRS, infer_shape=_nan_shape("nansum"),
         infer_type=no_bool("nansum"), compute=_nan_kernel(np.nansum),
         gradient=_nansum_grad, grad_inputs=(0,),
         doc="Sum over ``axis`` treating NaN as 0 (MXNet's nansum; axis, keepdims and "
             "exclude as for sum, and the result keeps the input dtype).  Gradient: the "
             "output gradient at numbers, 0 at NaN.")
register("nanprod", attrs=REDUCE_ATTRS, infer_shape=_nan_shape("nanprod"),
         infer_type=no_bool("nanprod"), compute=_nan_kernel(np.nanprod),
         gradient=_nanprod_grad, grad_inputs=(0,),
         doc="Product over ``axis`` treating NaN as 1 (MXNet's nanprod; axis, keepdims "
             "and exclude as for prod, and the result keeps the input dtype).  Gradient: "
             "the product of the other numbers of the slice (exact with zeros, as prod's), "
             "0 at NaN.")
