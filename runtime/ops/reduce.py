"""Reductions: sum, mean, prod, max, min, norm, argmax, argmin, logsumexp, moments; the
sparse kernels of sum and mean (csr, one axis) and of norm (csr / row_sparse, every axis).

``axis`` is None (all axes), an int or a tuple; ``keepdims`` keeps reduced axes as 1;
``exclude=True`` reduces over every axis *not* listed (MXNet).  Reducing every axis
gives shape (1,) as MXNet does (not a 0-d array), unless keepdims.  Results keep the
input's dtype (MXNet; integer sums and products wrap around on overflow).

Reductions over zero-size axes follow NumPy: sum gives 0, prod 1, mean NaN, logsumexp
-inf, norm 0; max, min, argmax and argmin raise ``ValueError`` (no identity).
"""

import numpy as np

from runtime import _sparse_arith as K
from runtime._infer import reduced_axes as _reduced_axes
from runtime._ndarray import from_numpy, shape_size, storage_host
from runtime.ops._call import F, broadcast, zeros
from runtime.ops._sparse_kernels import Dense, csr_np, dtype_check, floats_only, work_dtype
from runtime.ops.registry import Attr, float_input, no_bool, normalize_axis, register

REDUCE_ATTRS = {"axis": Attr("axes"), "keepdims": Attr("bool", False),
                "exclude": Attr("bool", False)}


def reduction_axis(op, axis, ndim):
    """``normalize_axis`` for reductions, which in NumPy and MXNet also take axis 0 or -1
    of a 0-d array (and reduce its single value): 0 for those."""
    if ndim == 0 and axis in (0, -1):
        return 0
    return normalize_axis(op, axis, ndim)


def reduced_axes(op, attrs, ndim):
    """The sorted tuple of axes to reduce, after ``exclude`` and negative axes.

    A 0-d array has no axes: ``axis`` 0 or -1 (see :func:`reduction_axis`) reduces its
    single value.
    """
    return _reduced_axes(op, attrs["axis"], attrs.get("exclude", False), ndim)


def _shape_after(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if i in axes else s for i, s in enumerate(shape))
    out = tuple(s for i, s in enumerate(shape) if i not in axes)
    return out if out else (1,)


def reduced_shape(op, attrs, shape):
    return _shape_after(shape, reduced_axes(op, attrs, len(shape)), attrs["keepdims"])


def _infer(op, nonempty=False):
    def infer(attrs, shapes):
        shape = shapes[0]
        axes = reduced_axes(op, attrs, len(shape))
        if nonempty and any(shape[a] == 0 for a in axes):
            raise ValueError(f"{op}: cannot reduce over a zero-size axis (shape {shape!r}, "
                             f"axis {attrs['axis']!r}): the reduction has no identity")
        return [_shape_after(shape, axes, attrs["keepdims"])]
    return infer


def _kernel(fn, axes_of=None):
    """A dense kernel computing ``fn(x, axis=axes, keepdims=True)`` into outs[0]."""
    axes_of = axes_of or (lambda attrs, ndim: reduced_axes("", attrs, ndim))

    def compute(attrs, ins, outs):
        x = ins[0]
        r = fn(x, axis=axes_of(attrs, x.ndim), keepdims=True)
        outs[0][...] = r.reshape(outs[0].shape)
    return compute


def _fold(uf, fn):
    """The dense kernel of a reduction that folds with ufunc ``uf`` (``np.sum`` is
    ``np.add.reduce``): written straight into outs[0].  ``fn`` (``_kernel``) serves
    arrays other than NumPy's (CuPy)."""
    other = _kernel(fn)
    reduce, ndarray = uf.reduce, np.ndarray

    def compute(attrs, ins, outs):
        x = ins[0]
        if type(x) is not ndarray:
            return other(attrs, ins, outs)
        out, ndim = outs[0], x.ndim
        axes = _reduced_axes("", attrs["axis"], attrs["exclude"], ndim)
        # reduce(x, axis, dtype, out, keepdims): out has the kept shape when it has x's
        # rank, NumPy's shape when it has the rank left; else every axis is reduced and
        # MXNet's (1,) is NumPy's ().
        if attrs["keepdims"] or out.ndim == ndim:
            reduce(x, axes, x.dtype, out, True)
        elif out.ndim == ndim - len(axes):
            reduce(x, axes, x.dtype, out, False)
        else:
            reduce(x, axes, x.dtype, out.reshape(()), False)
    return compute


def _expand_axes(g, x, axes):
    """Reshape the reduced ``g`` so that it broadcasts against ``x`` (reduced axes -> 1)."""
    shape = tuple(1 if i in axes else s for i, s in enumerate(x.shape))
    if g.shape == shape:
        return g
    if 0 not in shape:
        return g.reshape(shape)
    # A zero-size dimension: NDArray.reshape reads 0 as "keep" (MXNet), so insert the
    # reduced axes one by one instead.
    for a in axes:
        g = F.expand_dims(g, axis=a)
    return g


def _expand(g, x, attrs):
    return _expand_axes(g, x, reduced_axes("", attrs, x.ndim))


# -- sum, mean, prod ---------------------------------------------------------------------

def _sum_grad(a, i, o, g):
    return [broadcast(_expand(g[0], i[0], a), i[0].shape)]


def _mean_grad(a, i, o, g):
    axes = reduced_axes("mean", a, i[0].ndim)
    n = shape_size(tuple(i[0].shape[k] for k in axes))
    return [broadcast(_expand(g[0], i[0], a), i[0].shape) / max(n, 1)]


def _prod_grad(a, i, o, g):
    # Exact with zeros, made of registry ops: in each reduced slice, with P the product
    # of the nonzero entries and Z the number of zeros, d prod / d x_j is
    #   P / x_j          when Z == 0,
    #   P at the zero    when Z == 1 (0 elsewhere),
    #   0                when Z >= 2.
    x = i[0]
    axes = reduced_axes("prod", a, x.ndim)
    zero = x == 0                                   # 1/0 in x's dtype
    nonzero = x + zero                              # zeros replaced by 1
    if axes:
        p = _expand_axes(F.prod(nonzero, axis=axes, keepdims=True), x, axes)
        z = _expand_axes(F.sum(zero, axis=axes, keepdims=True), x, axes)
    else:        # nothing reduced (axis=() would mean every axis, as MXNet)
        p, z = nonzero, zero
    ge = _expand(g[0], x, a)
    return [(p / nonzero * (z == 0) + p * zero * (z == 1)) * ge]


def _sum(x, axis, keepdims):
    return np.sum(x, axis=axis, keepdims=keepdims, dtype=x.dtype)


def _mean(x, axis, keepdims):
    return np.mean(x, axis=axis, keepdims=keepdims, dtype=x.dtype)


def _prod(x, axis, keepdims):
    return np.prod(x, axis=axis, keepdims=keepdims, dtype=x.dtype)


# the sparse kernel of sum and mean: csr over one axis

def _csr_axis(op):
    def stypes(attrs, st):
        if st[0] != "csr":
            return None
        return ["default"] if len(reduced_axes(op, attrs, 2)) == 1 else None
    return stypes


def _csr_reduce(op, mean):
    def compute(attrs, inputs):
        x = inputs[0]
        work = work_dtype(x)
        (axis,) = reduced_axes(op, attrs, 2)
        n = x.shape[axis]
        scale = (1.0 / n if n else float("nan")) if mean else 1.0
        out = Dense(reduced_shape(op, attrs, x.shape), x.dtype, x.ctx, work)
        K.csr_sum(*csr_np(x, work), axis, out.view.reshape(-1), scale)
        return [out.done()]
    return compute


register("sum", aliases=("sum_axis",), attrs=REDUCE_ATTRS, infer_shape=_infer("sum"),
         compute=_fold(np.add, _sum), gradient=_sum_grad, ufunc=np.add,
         compute_sparse=_csr_reduce("sum", False), sparse_stypes=_csr_axis("sum"),
         sparse_check=dtype_check,
         doc="""Sum over ``axis`` (MXNet's sum).

The result keeps the input dtype and is accumulated in it (MXNet), where NumPy sums bool
and small integers in int64: an integer sum wraps around on overflow (int8 ``[100, 100]``
gives -56) and a bool sum is a logical or, not a count (``[True, True]`` gives
``[True]``).  Cast first (``x.astype('int64').sum()``) for NumPy's result.""")
register("mean", attrs=REDUCE_ATTRS, infer_shape=_infer("mean"), compute=_kernel(_mean),
         gradient=_mean_grad, ufunc=np.add, compute_sparse=_csr_reduce("mean", True),
         sparse_stypes=_csr_axis("mean"), sparse_check=dtype_check,
         doc="""Mean over ``axis`` (MXNet's mean).

The result keeps the input dtype (MXNet), where NumPy gives float64: on integers the sum
is accumulated in the input dtype, wrapping around, and the quotient truncated toward
zero, so int8 ``[100, 100, 100]`` gives 14 (300 wraps to 44, and 44 / 3 truncates to
14) and int32 ``[1, 2]`` gives 1; a bool mean is True when any element is.  Cast to a
float dtype first for NumPy's result.""")
register("prod", attrs=REDUCE_ATTRS, infer_shape=_infer("prod"),
         compute=_fold(np.multiply, _prod), gradient=_prod_grad, grad_inputs=(0,),
         ufunc=np.multiply,
         doc="Product over ``axis`` (MXNet's prod); the result keeps the input dtype and is "
             "accumulated in it (integer products wrap around on overflow; a bool product "
             "is a logical and).\n\n"
             "The gradient is the product of the other entries of each slice, exact also "
             "where the input holds zeros (MXNet divides the output by the input, which "
             "gives NaN at zeros).")


# -- max, min ----------------------------------------------------------------------------

def _extremum_grad(a, i, o, g):
    # MXNet: the gradient goes to every position equal to the extremum (ties: all).
    x = i[0]
    return [F.equal(x, _expand(o[0], x, a)) * _expand(g[0], x, a)]


for _name, _fn, _uf in (("max", np.max, np.maximum), ("min", np.min, np.minimum)):
    register(_name, aliases=(_name + "_axis",), attrs=REDUCE_ATTRS,
             infer_shape=_infer(_name, nonempty=True), compute=_fold(_uf, _fn),
             gradient=_extremum_grad, grad_inputs=(0,), grad_outputs=(0,), ufunc=_uf,
             doc=f"{_name.capitalize()}imum over ``axis`` (MXNet's {_name}).  A zero-size "
                 "reduced axis raises ValueError.  The gradient flows to every position "
                 "equal to the result (all tied positions, as MXNet).")


# -- norm --------------------------------------------------------------------------------

def _norm_axes(attrs, ndim):
    axis = attrs["axis"]
    if ndim == 0 or axis is None:
        if axis is not None:
            for a in axis:
                reduction_axis("norm", a, ndim)
        return tuple(range(ndim))
    if len(axis) not in (1, 2):
        raise ValueError(f"norm: axis must be an int or a 2-tuple of ints (got {axis!r})")
    axes = tuple(normalize_axis("norm", a, ndim) for a in axis)
    if len(set(axes)) != len(axes):
        raise ValueError(f"norm: axis {axis!r} repeats an axis")
    return tuple(sorted(axes))


def _check_ord(attrs):
    if attrs["ord"] not in (1, 2):
        raise ValueError(f"norm: ord must be 1 or 2 (got {attrs['ord']})")


def _norm_shape(attrs, shapes):
    _check_ord(attrs)
    shape = shapes[0]
    return [_shape_after(shape, _norm_axes(attrs, len(shape)), attrs["keepdims"])]


def _acc_dtype(dt):
    """The accumulation dtype: float32 for float16, float64 for integers."""
    if dt == np.float16:
        return np.float32
    return dt if dt.kind == "f" else np.float64


def _norm(attrs, ins, outs):
    _check_ord(attrs)
    x = ins[0]
    axes = _norm_axes(attrs, x.ndim)
    a = np.abs(x.astype(_acc_dtype(x.dtype), copy=False))
    if attrs["ord"] == 1:
        r = np.sum(a, axis=axes, keepdims=True)
    elif any(x.shape[k] == 0 for k in axes):
        r = np.sum(a, axis=axes, keepdims=True)                  # zeros
    else:
        # Scaled by the largest magnitude (as mshadow's nrm2), so that squares of large
        # or tiny values neither overflow nor underflow.
        m = np.max(a, axis=axes, keepdims=True)
        scale = np.where((m > 0) & np.isfinite(m), m, 1)
        r = np.sqrt(np.sum(np.square(a / scale), axis=axes, keepdims=True)) * scale
    outs[0][...] = r.reshape(outs[0].shape)


def _norm_grad(a, i, o, g):
    x = i[0]
    axes = _norm_axes(a, x.ndim)
    ge = _expand_axes(g[0], x, axes)
    if ge.dtype != x.dtype:          # out_dtype
        ge = F.cast(ge, dtype=x.dtype)
    if a["ord"] == 1:
        return [F.sign(x) * ge]
    n = _expand_axes(o[0], x, axes)
    if n.dtype != x.dtype:
        n = F.cast(n, dtype=x.dtype)
    # x / ||x|| * g, with 0 (not MXNet's NaN) where the norm is 0 (then x is 0 too).
    return [x * (ge / (n + (n == 0)))]


def _norm_reads(attrs, n_out):
    return (0,) if attrs["ord"] == 2 else ()       # ord=1: sign(x) * g


def _norm_type(attrs, dtypes):
    return [attrs["out_dtype"] or _no_bool_norm(attrs, dtypes)[0]]


_no_bool_norm = no_bool("norm")


def _norm_sparse_stypes(attrs, stypes):
    if stypes[0] in ("csr", "row_sparse") and attrs["axis"] is None:
        return ["default"]
    return None


def _norm_sparse(attrs, inputs):
    x = inputs[0]
    values = storage_host(x, -1).reshape(-1)
    out = np.empty((1,), values.dtype)
    _norm({**attrs, "axis": None, "keepdims": False}, [values], [out])
    shape = (1,) * x.ndim if attrs["keepdims"] else (1,)
    return [from_numpy(out.reshape(shape), x.ctx)]


register("norm", attrs={"ord": Attr("int", 2), "axis": Attr("axes"),
                        "out_dtype": Attr("dtype_or_none", None, choices=(
                            "float16", "float32", "float64", "int32", "int64", "int8")),
                        "keepdims": Attr("bool", False)},
         infer_shape=_norm_shape, infer_type=_norm_type, compute=_norm,
         compute_sparse=_norm_sparse, sparse_stypes=_norm_sparse_stypes,
         sparse_check=floats_only, gradient=_norm_grad, grad_inputs=(0,), grad_outputs=_norm_reads,
         doc="The L1 (``ord=1``: sum of |x|) or L2 (``ord=2``: sqrt of the sum of squares) "
             "norm over ``axis`` (None: all elements, shape (1,); an int; or a 2-tuple, "
             "then entrywise over both axes — Frobenius for ord=2 — as MXNet computes it, "
             "not NumPy's matrix 1-norm).  The L2 norm is scaled by the largest magnitude "
             "(no overflow); float16 accumulates in float32, integers in float64 and the "
             "result is truncated to the input dtype (or cast to ``out_dtype``, as MXNet).  "
             "Gradient: sign(x) * g (ord=1), "
             "x / norm * g (ord=2), and 0 where the norm is 0 (MXNet gives NaN there).  "
             "Sparse kernel (csr, row_sparse; float32/float64; every axis): the norm of "
             "the stored values alone, dense as MXNet's: shape (1,), or all ones with "
             "keepdims.")


# -- argmax, argmin ----------------------------------------------------------------------

def _arg_axis(op, attrs, ndim):
    """The axis searched, or None for the flattened array."""
    axis = attrs["axis"]
    if axis is None:
        return None
    axis = reduction_axis(op, axis, ndim)
    return None if ndim == 0 else axis


def _arg_infer(op):
    def infer(attrs, shapes):
        shape = shapes[0]
        axis = _arg_axis(op, attrs, len(shape))
        n = shape_size(shape) if axis is None else shape[axis]
        if n == 0:
            raise ValueError(f"{op}: cannot search a zero-size axis (shape {shape!r}, axis "
                             f"{attrs['axis']!r}): attempt to get {op} of an empty sequence")
        axes = tuple(range(len(shape))) if axis is None else (axis,)
        return [_shape_after(shape, axes, attrs["keepdims"])]
    return infer


def _arg_kernel(op, fn):
    def compute(attrs, ins, outs):
        x = ins[0]
        axis = _arg_axis(op, attrs, x.ndim)
        n = x.size if axis is None else x.shape[axis]
        if x.dtype.kind in "iu" and n - 1 > np.iinfo(x.dtype).max:
            raise ValueError(f"{op}: indices up to {n - 1} do not fit in the output dtype "
                             f"{x.dtype} (the input's, as MXNet); cast the input first")
        r = fn(x) if axis is None else fn(x, axis=axis)
        outs[0][...] = np.reshape(r, outs[0].shape)
    return compute


for _name, _fn in (("argmax", np.argmax), ("argmin", np.argmin)):
    register(_name, attrs={"axis": Attr("axis"), "keepdims": Attr("bool", False)},
             infer_shape=_arg_infer(_name), infer_type=no_bool(_name),
             compute=_arg_kernel(_name, _fn), differentiable=False,
             doc=f"Index of the {_name[3:]}imum along ``axis`` (None: of the flattened array, "
                 "shape (1,)); ties give the first.  As MXNet, the indices have the input's "
                 "dtype (floats for float input; float16 holds indices exactly only up to "
                 "2048), and the op has no gradient.")


# -- logsumexp ---------------------------------------------------------------------------

def _logsumexp(x, axis, keepdims):
    acc = _acc_dtype(x.dtype)
    xa = x.astype(acc, copy=False)
    if any(x.shape[k] == 0 for k in axis):
        return np.full_like(np.sum(xa, axis=axis, keepdims=True), -np.inf)
    m = np.max(xa, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.sum(np.exp(xa - m), axis=axis, keepdims=True)
        return np.log(s) + m


def _logsumexp_grad(a, i, o, g):
    # The softmax of x along the reduced axes, times g.
    x = i[0]
    return [F.exp(x - _expand(o[0], x, a)) * _expand(g[0], x, a)]


register("logsumexp", attrs=REDUCE_ATTRS, infer_shape=_infer("logsumexp"),
         infer_type=float_input("logsumexp"), compute=_kernel(_logsumexp),
         gradient=_logsumexp_grad, grad_inputs=(0,), grad_outputs=(0,),
         doc="log(sum(exp(x))) over ``axis``, computed stably (the maximum is subtracted "
             "first).  MXNet 1.x has no such operator: values follow "
             "scipy.special.logsumexp (-inf for an all -inf or empty slice, inf if any "
             "entry is inf, NaN propagates), shapes follow the other reductions here "
             "(shape (1,) for a full reduction, keepdims and exclude as for sum).  Floating "
             "inputs only; float16 accumulates in float32.  Gradient: softmax(x) * g.")


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
