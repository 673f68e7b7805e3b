"""MXNet's ``linalg`` operators (matrix products of ``dot``/``FullyConnected``:
runtime.ops.dot): ``_linalg_gemm``, ``_linalg_gemm2``, ``_linalg_potrf``,
``_linalg_potri``, ``_linalg_trsm``, ``_linalg_trmm``, ``_linalg_syrk``,
``_linalg_inverse``, ``_linalg_det``, ``_linalg_slogdet``, ``_linalg_sumlogdiag``,
``_linalg_gelqf`` (aliases ``linalg_gemm`` ...; ``runtime.nd.linalg`` offers them as
``gemm`` ...).

As MXNet: float32 and float64 only; the matrices are the last two axes and every leading
axis is a batch axis, which all inputs share exactly (no broadcasting); ``gemm`` and
``gemm2`` take the rows from ``axis`` instead (swapaxes, gemm, swapaxes).  Triangular
inputs (``potri``'s factor, ``trsm``/``trmm``'s A, and ``potrf``'s A, of which LAPACK reads
one triangle) are read from the lower triangle, or the upper with ``lower=False``; the
other triangle is ignored, and gets no gradient.

Gradients are registry ops (gemm2, trsm, inverse ...), so gradients of gradients work.
One difference from MXNet: the gradient of potrf is the derivative with respect to the
entries it reads (the lower triangle; off the diagonal twice the symmetric gradient
MXNet returns, which spreads it over both triangles); both give the same directional
derivative along symmetric perturbations.
"""

import math

import numpy as np

from runtime._ndarray import NDArray, from_numpy
from runtime.ops._call import F
from runtime.ops.registry import Attr, normalize_axis, register

_FLOATS = ("float32", "float64")


def _float_type(op, n=None):
    def infer(attrs, dtypes):
        for d in dtypes:
            if d.name not in _FLOATS:
                raise TypeError(f"{op}: inputs must be float32 or float64, as MXNet's linalg "
                                f"operators (got {d})")
        if any(d != dtypes[0] for d in dtypes):
            raise TypeError(f"{op}: inputs must have one dtype (got "
                            f"{', '.join(str(d) for d in dtypes)})")
        return [dtypes[0]] * (n or 1)
    return infer


def _matrix(op, name, shape, square=False):
    if len(shape) < 2:
        raise ValueError(f"{op}: {name} must have at least 2 dimensions (got shape "
                         f"{shape!r})")
    if square and shape[-1] != shape[-2]:
        raise ValueError(f"{op}: {name} must hold square matrices (got shape {shape!r})")


def _same_batch(op, shapes, names):
    first = shapes[0][:-2]
    for s, n in zip(shapes[1:], names[1:]):
        if s[:-2] != first:
            raise ValueError(f"{op}: {names[0]} {shapes[0]!r} and {n} {s!r} must have one "
                             "batch shape (the axes before the last two)")


def _t(x):
    return np.swapaxes(x, -1, -2)


def _op(x, transpose):
    return _t(x) if transpose else x


def _batch_shape(shape):
    """The result shape of a per-matrix scalar: the batch shape, (1,) for one matrix."""
    return shape[:-2] or (1,)


def _mask(like, lower, diag=1.0, strict=False):
    """A constant 0/1 array (as ``like``'s last two axes) selecting the lower (or upper)
    triangle, the diagonal scaled by ``diag`` (0 with ``strict``)."""
    n = like.shape[-1]
    m = np.tril(np.ones((n, n))) if lower else np.triu(np.ones((n, n)))
    np.fill_diagonal(m, 0.0 if strict else diag)
    return from_numpy(m.astype(np.dtype(like.dtype)), like.ctx)


def _tri(x, lower):
    return np.tril(x) if lower else np.triu(x)


def _singular(op, what="A"):
    return ValueError(f"{op}: {what} must be non-singular (a matrix of the batch is "
                      "singular)")


# -- gemm, gemm2 ------------------------------------------------------------------------------

def _rows(op, attrs, ndim):
    a = normalize_axis(op, attrs["axis"], ndim)
    if a == ndim - 1:
        raise ValueError(f"{op}: axis must not be the last axis, which holds the columns "
                         f"(got {attrs['axis']})")
    return a


def _to_rows(x, a):
    """``x`` with axis ``a`` (the rows) swapped into position -2."""
    return x if a == x.ndim - 2 else np.swapaxes(x, a, x.ndim - 2)


def _gemm2_shape(op, attrs, sa, sb):
    _matrix(op, "A", sa)
    _matrix(op, "B", sb)
    if len(sa) != len(sb):
        raise ValueError(f"{op}: A {sa!r} and B {sb!r} must have one number of dimensions")
    a = _rows(op, attrs, len(sa))
    swap = list(range(len(sa)))
    swap[a], swap[-2] = swap[-2], swap[a]
    ma, mb = tuple(sa[k] for k in swap), tuple(sb[k] for k in swap)
    _same_batch(op, [ma, mb], ["A", "B"])
    ra, ca = (ma[-1], ma[-2]) if attrs["transpose_a"] else (ma[-2], ma[-1])
    rb, cb = (mb[-1], mb[-2]) if attrs["transpose_b"] else (mb[-2], mb[-1])
    if ca != rb:
        raise ValueError(f"{op}: op(A) of shape {(ra, ca)!r} and op(B) of shape {(rb, cb)!r} "
                         f"(matrices of A {sa!r}, B {sb!r}) are not aligned")
    out = list(ma[:-2] + (ra, cb))
    out[a], out[-2] = out[-2], out[a]
    return tuple(out)


def _product(attrs, a, b):
    ax = _rows("", attrs, a.ndim)
    p = np.matmul(_op(_to_rows(a, ax), attrs["transpose_a"]),
                  _op(_to_rows(b, ax), attrs["transpose_b"]))
    return _to_rows(p * p.dtype.type(attrs["alpha"]), ax)


def _gemm2_grad(at, i, o, g):
    A, B, G = i[0], i[1], g[0]
    ta, tb = at["transpose_a"], at["transpose_b"]
    kw = {"alpha": at["alpha"], "axis": at["axis"]}
    ga = (F._linalg_gemm2(B, G, transpose_a=tb, transpose_b=True, **kw) if ta
          else F._linalg_gemm2(G, B, transpose_b=not tb, **kw))
    gb = (F._linalg_gemm2(G, A, transpose_a=True, transpose_b=ta, **kw) if tb
          else F._linalg_gemm2(A, G, transpose_a=not ta, **kw))
    return [ga, gb]


_GEMM_FLAGS = {"transpose_a": Attr("bool", False), "transpose_b": Attr("bool", False),
               "alpha": Attr("float", 1.0)}

register("_linalg_gemm2", aliases=("linalg_gemm2",), inputs=("A", "B"),
         attrs={**_GEMM_FLAGS, "axis": Attr("int", -2)},
         infer_shape=lambda a, s: [_gemm2_shape("_linalg_gemm2", a, s[0], s[1])],
         infer_type=_float_type("_linalg_gemm2"),
         compute=lambda a, ins, outs: np.copyto(outs[0], _product(a, ins[0], ins[1])),
         gradient=_gemm2_grad, grad_inputs=(0, 1),
         doc="alpha * op(A) @ op(B) for each matrix of the batch (MXNet's linalg.gemm2): "
             "op transposes with ``transpose_a``/``transpose_b``; the rows are on ``axis`` "
             "(default -2) and the columns on the last axis.")


def _gemm_shape(attrs, shapes):
    out = _gemm2_shape("_linalg_gemm", attrs, shapes[0], shapes[1])
    if shapes[2] != out:
        raise ValueError(f"_linalg_gemm: C has shape {shapes[2]!r}, op(A) @ op(B) has "
                         f"{out!r}")
    return [out]


def _gemm(attrs, ins, outs):
    a, b, c = ins
    np.copyto(outs[0], _product(attrs, a, b) + c * c.dtype.type(attrs["beta"]))


def _gemm_grad(at, i, o, g):
    kw = {k: at[k] for k in ("transpose_a", "transpose_b", "alpha", "axis")}
    ga, gb = _gemm2_grad(kw, i, o, g)
    return [ga, gb, g[0] * at["beta"]]


register("_linalg_gemm", aliases=("linalg_gemm",), inputs=("A", "B", "C"),
         attrs={**_GEMM_FLAGS, "beta": Attr("float", 1.0), "axis": Attr("int", -2)},
         infer_shape=_gemm_shape, infer_type=_float_type("_linalg_gemm"), compute=_gemm,
         gradient=_gemm_grad, grad_inputs=(0, 1),
         doc="alpha * op(A) @ op(B) + beta * C for each matrix of the batch (MXNet's "
             "linalg.gemm; ``axis`` as for gemm2).")


# -- potrf, potri ---------------------------------------------------------------------------------

def _square_shape(op):
    def infer(attrs, shapes):
        _matrix(op, "A", shapes[0], square=True)
        return [shapes[0]]
    return infer


def _potrf(attrs, ins, outs):
    # lower=False: U of A = U^T U from A's upper triangle, the transpose of L for A^T
    a = ins[0] if attrs["lower"] else _t(ins[0])
    low = np.tril(a)
    try:
        f = np.linalg.cholesky(low + _t(np.tril(a, -1)))
    except np.linalg.LinAlgError:
        raise ValueError("_linalg_potrf: A must be symmetric positive definite (the "
                         "Cholesky factorization of a matrix of the batch failed)") from None
    outs[0][...] = f if attrs["lower"] else _t(f)


def _swap(x):
    """The transpose of an NDArray's matrices; an ArrayDesc (a square input the rule only
    sees described) as it is."""
    return F.swapaxes(x, dim1=-1, dim2=-2) if isinstance(x, NDArray) else x


def _upper_by_transpose(rule):
    """The rule of a ``lower`` op for ``lower=False``: the op on transposed inputs gives the
    transposed outputs, so the gradient is the transposed gradient of the transposes."""
    def wrapped(a, i, o, g):
        if a["lower"]:
            return rule(a, i, o, g)
        return [_swap(d) for d in rule(a, [_swap(x) for x in i], [_swap(x) for x in o],
                                       [_swap(x) for x in g])]
    return wrapped


@_upper_by_transpose
def _potrf_grad(a, i, o, g):
    L, G = o[0], g[0]
    phi = F._linalg_gemm2(L, G, transpose_a=True) * _mask(L, True, 0.5)
    s = F._linalg_trsm(L, F._linalg_trsm(L, phi, transpose=True), rightside=True)
    # d/dA of the lower triangle: the symmetric gradient (s + s^T) / 2, counted twice off
    # the diagonal (each entry stands for A[i, j] and A[j, i])
    full = s + F.swapaxes(s, dim1=-1, dim2=-2)
    eye = from_numpy(np.eye(L.shape[-1], dtype=np.dtype(L.dtype)), L.ctx)
    return [full * _mask(L, True, strict=True) + s * eye]


register("_linalg_potrf", aliases=("linalg_potrf",), inputs=("A",),
         attrs={"lower": Attr("bool", True)}, infer_shape=_square_shape("_linalg_potrf"), infer_type=_float_type("_linalg_potrf"),
         compute=_potrf, gradient=_potrf_grad, grad_outputs=(0,),
         doc="The lower Cholesky factor L (A = L @ L.T) of each symmetric positive definite "
             "matrix (MXNet's linalg.potrf), read from A's lower triangle; lower=False: the "
             "upper factor U (A = U.T @ U), read from the upper triangle.  A matrix that "
             "is not positive definite raises ValueError.")


def _tri_inverse(op, x, lower=True):
    try:
        return np.linalg.inv(_tri(x, lower))
    except np.linalg.LinAlgError:
        raise _singular(op) from None


def _potri(attrs, ins, outs):
    # lower=False: (U^T U)^-1 from U, which is (L L^T)^-1 for L = U^T
    inv = _tri_inverse("_linalg_potri", ins[0] if attrs["lower"] else _t(ins[0]))
    outs[0][...] = np.matmul(_t(inv), inv)


@_upper_by_transpose
def _potri_grad(a, i, o, g):
    mask, M, G = _mask(i[0], True), o[0], g[0]
    L = i[0] * mask                                  # the factor: A's lower triangle
    sym = G + F.swapaxes(G, dim1=-1, dim2=-2)
    d = F._linalg_gemm2(F._linalg_gemm2(M, sym), F._linalg_gemm2(M, L), alpha=-1.0)
    return [d * mask]


register("_linalg_potri", aliases=("linalg_potri",), inputs=("A",),
         attrs={"lower": Attr("bool", True)}, infer_shape=_square_shape("_linalg_potri"), infer_type=_float_type("_linalg_potri"),
         compute=_potri, gradient=_potri_grad, grad_inputs=(0,), grad_outputs=(0,),
         doc="(L @ L.T)^-1 from each lower triangular Cholesky factor L (MXNet's "
             "linalg.potri: the inverse of the matrix potrf factored), read from A's lower "
             "triangle; lower=False: (U.T @ U)^-1 from the upper triangle.  A singular "
             "factor raises ValueError.")


# -- trsm, trmm ---------------------------------------------------------------------------------

_TRI_ATTRS = {"transpose": Attr("bool", False), "rightside": Attr("bool", False),
              "lower": Attr("bool", True), "alpha": Attr("float", 1.0)}


def _tri_shape(op):
    def infer(attrs, shapes):
        sa, sb = shapes
        _matrix(op, "A", sa, square=True)
        _matrix(op, "B", sb)
        _same_batch(op, [sa, sb], ["A", "B"])
        k = sb[-1] if attrs["rightside"] else sb[-2]
        if k != sa[-1]:
            side = "columns" if attrs["rightside"] else "rows"
            raise ValueError(f"{op}: B {sb!r} must have as many {side} as A {sa!r} has")
        return [sb]
    return infer


def _trsm(attrs, ins, outs):
    a, b = ins
    t = _op(_tri(a, attrs["lower"]), attrs["transpose"])
    rhs = b * b.dtype.type(attrs["alpha"])
    try:
        x = (_t(np.linalg.solve(_t(t), _t(rhs))) if attrs["rightside"]
             else np.linalg.solve(t, rhs))
    except np.linalg.LinAlgError:
        raise _singular("_linalg_trsm") from None
    outs[0][...] = x


def _trsm_grad(at, i, o, g):
    A, X, G = i[0], o[0], g[0]
    tr, right, low = at["transpose"], at["rightside"], at["lower"]
    y = F._linalg_trsm(A, G, transpose=not tr, rightside=right, lower=low)
    if right:
        ga = F._linalg_gemm2(y, X, transpose_a=True) if tr else \
            F._linalg_gemm2(X, y, transpose_a=True)
    else:
        ga = F._linalg_gemm2(X, y, transpose_b=True) if tr else \
            F._linalg_gemm2(y, X, transpose_b=True)
    return [-ga * _mask(A, low), y * at["alpha"]]


register("_linalg_trsm", aliases=("linalg_trsm",), inputs=("A", "B"), attrs=_TRI_ATTRS,
         infer_shape=_tri_shape("_linalg_trsm"), infer_type=_float_type("_linalg_trsm"),
         compute=_trsm, gradient=_trsm_grad, grad_inputs=(0,), grad_outputs=(0,),
         doc="X with op(A) @ X = alpha * B (``rightside``: X @ op(A) = alpha * B) for each "
             "triangular A of the batch (MXNet's linalg.trsm): op transposes with "
             "``transpose``; A is read from its lower triangle (``lower=False``: upper).  "
             "A singular A raises ValueError.")


def _trmm(attrs, ins, outs):
    a, b = ins
    t = _op(_tri(a, attrs["lower"]), attrs["transpose"])
    p = np.matmul(b, t) if attrs["rightside"] else np.matmul(t, b)
    outs[0][...] = p * p.dtype.type(attrs["alpha"])


def _trmm_grad(at, i, o, g):
    A, B, G = i[0], i[1], g[0]
    tr, right, low, alpha = at["transpose"], at["rightside"], at["lower"], at["alpha"]
    gb = F._linalg_trmm(A, G, transpose=not tr, rightside=right, lower=low, alpha=alpha)
    if right:
        ga = F._linalg_gemm2(G, B, transpose_a=True, alpha=alpha) if tr else \
            F._linalg_gemm2(B, G, transpose_a=True, alpha=alpha)
    else:
        ga = F._linalg_gemm2(B, G, transpose_b=True, alpha=alpha) if tr else \
            F._linalg_gemm2(G, B, transpose_b=True, alpha=alpha)
    return [ga * _mask(A, low), gb]


register("_linalg_trmm", aliases=("linalg_trmm",), inputs=("A", "B"), attrs=_TRI_ATTRS,
         infer_shape=_tri_shape("_linalg_trmm"), infer_type=_float_type("_linalg_trmm"),
         compute=_trmm, gradient=_trmm_grad, grad_inputs=(0, 1),
         doc="alpha * op(A) @ B (``rightside``: alpha * B @ op(A)) for each triangular A of "
             "the batch (MXNet's linalg.trmm), A read from its lower triangle "
             "(``lower=False``: upper).")


# -- syrk -----------------------------------------------------------------------------------------

def _syrk_shape(attrs, shapes):
    s = shapes[0]
    _matrix("_linalg_syrk", "A", s)
    n = s[-1] if attrs["transpose"] else s[-2]
    return [s[:-2] + (n, n)]


def _syrk(attrs, ins, outs):
    a = ins[0]
    p = np.matmul(_t(a), a) if attrs["transpose"] else np.matmul(a, _t(a))
    outs[0][...] = p * p.dtype.type(attrs["alpha"])


def _syrk_grad(at, i, o, g):
    A, G = i[0], g[0]
    sym = G + F.swapaxes(G, dim1=-1, dim2=-2)
    if at["transpose"]:
        return [F._linalg_gemm2(A, sym, alpha=at["alpha"])]
    return [F._linalg_gemm2(sym, A, alpha=at["alpha"])]


register("_linalg_syrk", aliases=("linalg_syrk",), inputs=("A",),
         attrs={"transpose": Attr("bool", False), "alpha": Attr("float", 1.0)},
         infer_shape=_syrk_shape, infer_type=_float_type("_linalg_syrk"), compute=_syrk,
         gradient=_syrk_grad, grad_inputs=(0,),
         doc="alpha * A @ A.T (``transpose``: alpha * A.T @ A) for each matrix of the batch "
             "(MXNet's linalg.syrk).")


# -- inverse, det, slogdet, sumlogdiag -------------------------------------------------------------

def _inverse(attrs, ins, outs):
    try:
        outs[0][...] = np.linalg.inv(ins[0])
    except np.linalg.LinAlgError:
        raise _singular("_linalg_inverse") from None


def _inverse_grad(a, i, o, g):
    m = F.swapaxes(o[0], dim1=-1, dim2=-2)
    return [-F._linalg_gemm2(F._linalg_gemm2(m, g[0]), m)]


register("_linalg_inverse", aliases=("linalg_inverse",), inputs=("A",),
         infer_shape=_square_shape("_linalg_inverse"),
         infer_type=_float_type("_linalg_inverse"), compute=_inverse,
         gradient=_inverse_grad, grad_outputs=(0,),
         doc="The inverse of each square matrix of the batch (MXNet's linalg.inverse); a "
             "singular one raises ValueError.  Gradient: -A^-T @ g @ A^-T.")


def _scalar_shape(op, n=1):
    def infer(attrs, shapes):
        _matrix(op, "A", shapes[0], square=True)
        return [_batch_shape(shapes[0])] * n
    return infer


def _per_matrix(g, like):
    """``g`` (one value per matrix) shaped to broadcast against the matrices ``like``."""
    return g.reshape(like.shape[:-2] + (1, 1))


def _det_grad(a, i, o, g):
    A = i[0]
    inv_t = F.swapaxes(F._linalg_inverse(A), dim1=-1, dim2=-2)
    return [inv_t * _per_matrix(g[0] * o[0], A)]


register("_linalg_det", aliases=("linalg_det",), inputs=("A",),
         infer_shape=_scalar_shape("_linalg_det"), infer_type=_float_type("_linalg_det"),
         compute=lambda a, ins, outs: np.copyto(
             outs[0], np.linalg.det(ins[0]).reshape(outs[0].shape)),
         gradient=_det_grad, grad_inputs=(0,), grad_outputs=(0,),
         doc="The determinant of each square matrix (MXNet's linalg.det): shape of the "
             "batch, (1,) for one matrix.  Gradient: g * det(A) * A^-T (a singular A has "
             "none: ValueError).")


def _slogdet(attrs, ins, outs):
    sign, logabs = np.linalg.slogdet(ins[0])
    outs[0][...] = np.reshape(sign, outs[0].shape)
    outs[1][...] = np.reshape(logabs, outs[1].shape)


def _slogdet_grad(a, i, o, g):
    A = i[0]
    inv_t = F.swapaxes(F._linalg_inverse(A), dim1=-1, dim2=-2)
    return [inv_t * _per_matrix(g[1], A)]


register("_linalg_slogdet", aliases=("linalg_slogdet",), inputs=("A",), num_outputs=2,
         infer_shape=_scalar_shape("_linalg_slogdet", 2),
         infer_type=_float_type("_linalg_slogdet", 2), compute=_slogdet,
         gradient=_slogdet_grad, grad_inputs=(0,),
         doc="[sign, log|det|] of each square matrix (MXNet's linalg.slogdet; a singular "
             "matrix gives sign 0 and -inf).  Gradient of log|det|: g * A^-T; the sign has "
             "none.")


def _sumlogdiag(attrs, ins, outs):
    d = np.diagonal(ins[0], axis1=-2, axis2=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        outs[0][...] = np.sum(np.log(d), axis=-1).reshape(outs[0].shape)


def _sumlogdiag_grad(a, i, o, g):
    A = i[0]
    d = F.diag(A, axis1=-2, axis2=-1)
    v = g[0].reshape(A.shape[:-2] + (1,)) / d
    return [F._diag_grad(v, axis1=-2, axis2=-1, shape=A.shape)]


register("_linalg_sumlogdiag", aliases=("linalg_sumlogdiag",), inputs=("A",),
         infer_shape=_scalar_shape("_linalg_sumlogdiag"),
         infer_type=_float_type("_linalg_sumlogdiag"), compute=_sumlogdiag,
         gradient=_sumlogdiag_grad, grad_inputs=(0,),
         doc="The sum of the logarithms of each square matrix's diagonal (MXNet's "
             "linalg.sumlogdiag: log det of a Cholesky factor); shape of the batch, (1,) for "
             "one matrix.  Gradient: g / A[i, i] on the diagonal.")


# -- gelqf ------------------------------------------------------------------------------------

def _gelqf_shape(attrs, shapes):
    a = shapes[0]
    _matrix("_linalg_gelqf", "A", a)
    if a[-2] > a[-1]:
        raise ValueError(f"_linalg_gelqf: A must have at least as many columns as rows "
                         f"(got shape {a!r})")
    return [a, a[:-1] + (a[-2],)]


def _gelqf(attrs, ins, outs):
    # the LQ factors of A are the transposed QR factors of A^T (LAPACK's gelqf is geqrf
    # on the transpose), so Householder's signs are those of MXNet's LAPACK call
    q, r = np.linalg.qr(_t(ins[0]))
    outs[0][...] = _t(q)
    outs[1][...] = _t(r)


def _gelqf_grad(a, i, o, g):
    Q, L = o
    dQ, dL = g
    # dA = L^-T (dQ + copyltu(M) Q), M = L^T dL - dQ Q^T, copyltu: M's lower triangle
    # mirrored into the upper one
    M = F._linalg_gemm2(L, dL, transpose_a=True) - F._linalg_gemm2(dQ, Q, transpose_b=True)
    low = M * _mask(M, True)
    sym = low + F.swapaxes(M * _mask(M, True, strict=True), dim1=-1, dim2=-2)
    return [F._linalg_trsm(L, dQ + F._linalg_gemm2(sym, Q), transpose=True)]


register("_linalg_gelqf", aliases=("linalg_gelqf",), inputs=("A",), num_outputs=2,
         infer_shape=_gelqf_shape, infer_type=_float_type("_linalg_gelqf", 2),
         compute=_gelqf, gradient=_gelqf_grad, grad_outputs=(0, 1),
         doc="[Q, L], the LQ factorization A = L @ Q of each matrix with no more rows than "
             "columns (MXNet's linalg.gelqf): Q (m, n) with orthonormal rows, L (m, m) "
             "lower triangular.  Gradient: MXNet's, L^-T (dQ + copyltu(M) Q) with "
             "M = L^T dL - dQ Q^T.")
