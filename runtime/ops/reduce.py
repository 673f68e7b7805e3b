"""Reductions: sum, mean, prod, max, min, norm, argmax, argmin, logsumexp.

``axis`` is None (all axes), an int or a tuple; ``keepdims`` keeps reduced axes as 1;
``exclude=True`` reduces over every axis *not* listed (MXNet).  Reducing every axis
gives shape (1,) as MXNet does (not a 0-d array), unless keepdims.
"""

import numpy as np

from runtime.ops._call import F
from runtime.ops.registry import Attr, normalize_axis, register

REDUCE_ATTRS = {"axis": Attr("axes"), "keepdims": Attr("bool", False),
                "exclude": Attr("bool", False)}


def reduced_axes(op, attrs, ndim):
    """The sorted tuple of axes to reduce, after ``exclude`` and negative axes."""
    axis = attrs["axis"]
    if axis is None:
        axes = tuple(range(ndim))
        return () if attrs["exclude"] else axes
    axes = tuple(normalize_axis(op, a, ndim) for a in axis)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{op}: axis {axis!r} repeats an axis")
    if attrs["exclude"]:
        axes = tuple(a for a in range(ndim) if a not in axes)
    return tuple(sorted(axes))


def reduced_shape(op, attrs, shape):
    axes = reduced_axes(op, attrs, len(shape))
    if attrs["keepdims"]:
        return tuple(1 if i in axes else s for i, s in enumerate(shape))
    out = tuple(s for i, s in enumerate(shape) if i not in axes)
    return out if out else (1,)


def _infer(op):
    def infer(attrs, shapes):
        return [reduced_shape(op, attrs, shapes[0])]
    return infer


def _kernel(fn):
    def compute(attrs, ins, outs):
        x = ins[0]
        axes = reduced_axes("", attrs, x.ndim)
        r = fn(x, axis=axes, keepdims=True)
        outs[0][...] = r.reshape(outs[0].shape)
    return compute


def _expand(g, x, attrs):
    """Reshape a reduced gradient so that it broadcasts against ``x``."""
    axes = reduced_axes("", attrs, x.ndim)
    shape = tuple(1 if i in axes else s for i, s in enumerate(x.shape))
    return g.reshape(shape) if g.shape != shape else g


def _sum_grad(a, i, o, g):
    return [F.broadcast_to(_expand(g[0], i[0], a), shape=i[0].shape)]


def _mean_grad(a, i, o, g):
    axes = reduced_axes("mean", a, i[0].ndim)
    n = int(np.prod([i[0].shape[k] for k in axes], dtype=np.int64))
    return [F.broadcast_to(_expand(g[0], i[0], a), shape=i[0].shape) / max(n, 1)]


def _sum(x, axis, keepdims):
    return np.sum(x, axis=axis, keepdims=keepdims, dtype=x.dtype)


def _mean(x, axis, keepdims):
    return np.mean(x, axis=axis, keepdims=keepdims, dtype=x.dtype)


register("sum", aliases=("sum_axis",), attrs=REDUCE_ATTRS, infer_shape=_infer("sum"),
         compute=_kernel(_sum), gradient=_sum_grad, grad_inputs=(0,))
register("mean", attrs=REDUCE_ATTRS, infer_shape=_infer("mean"), compute=_kernel(_mean),
         gradient=_mean_grad, grad_inputs=(0,))
