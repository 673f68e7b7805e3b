"""Batched dense linear algebra: MXNet's ``nd.linalg`` (``_linalg_*`` operators, aliases
``linalg_*``).

Every operator works on the last two axes and batches over the leading ones, in float32
or float64, as MXNet's ``la_op``.  Kernels are NumPy's (``np.linalg``, ``np.matmul``), which
CuPy also implements, so the same kernels run on the GPU.  Triangular inputs (``potrf``'s
matrix, ``potri``/``trmm``/``trsm``'s factor) are read on one triangle only, as LAPACK
reads them; their gradients are the gradients of that read (zero on the other triangle),
which agree with MXNet's symmetric ones along every symmetric direction.

Gradient rules of ``gemm``, ``gemm2``, ``syrk``, ``inverse``, ``det`` and ``slogdet`` are made
of ``gemm2`` and elementwise ops (differentiable again); ``potrf``, ``potri``, ``trmm``,
``trsm`` and ``sumlogdiag`` have hidden backward operators (``_backward_linalg_*``).
"""

import numpy as np

from runtime.ops._call import F
from runtime.ops.registry import Attr, register, same_dtype


def _float(name):
    def infer(attrs, dtypes):
        d = same_dtype(name, dtypes)
        if d not in (np.float32, np.float64):
            raise TypeError(f"{name}: needs float32 or float64 inputs (got {d}); cast with "
                            "astype('float32')")
        return [d]
    return infer


def _matrix(name, what, shape, square=False):
    if len(shape) < 2:
        raise ValueError(f"{name}: {what} must have at least 2 dimensions (got shape "
                         f"{shape})")
    if square and shape[-1] != shape[-2]:
        raise ValueError(f"{name}: {what} must hold square matrices in its last two axes "
                         f"(got shape {shape})")


def _same_batch(name, shapes, whats):
    batch = shapes[0][:-2]
    for s, w in zip(shapes[1:], whats[1:]):
        if s[:-2] != batch:
            raise ValueError(f"{name}: {whats[0]} and {w} must have the same leading (batch) "
                             f"axes (got shapes {shapes[0]} and {s})")


def _t(a, flag):
    return np.swapaxes(a, -1, -2) if flag else a


def _mT(x):
    """NDArray transpose of the last two axes (a registry op, so it is recorded)."""
    axes = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
    return F.transpose(x, axes=axes)


def _mm(a, b, ta=False, tb=False, alpha=1.0):
    return F.linalg_gemm2(a, b, transpose_a=ta, transpose_b=tb, alpha=alpha)


# -- gemm, gemm2 ----------------------------------------------------------------------------

_GEMM2 = {"transpose_a": Attr("bool", False), "transpose_b": Attr("bool", False),
          "alpha": Attr("float", 1.0), "axis": Attr("int", -2)}
_GEMM = {"transpose_a": Attr("bool", False), "transpose_b": Attr("bool", False),
         "alpha": Attr("float", 1.0), "beta": Attr("float", 1.0), "axis": Attr("int", -2)}


def _product_shape(name, attrs, a, b):
    if attrs["axis"] not in (-2, len(a) - 2):
        raise ValueError(f"{name}: only axis=-2 (rows in the second-to-last axis) is "
                         f"supported (got axis={attrs['axis']})")
    _matrix(name, "A", a)
    _matrix(name, "B", b)
    _same_batch(name, [a, b], ["A", "B"])
    n, k = (a[-1], a[-2]) if attrs["transpose_a"] else (a[-2], a[-1])
    k2, m = (b[-1], b[-2]) if attrs["transpose_b"] else (b[-2], b[-1])
    if k != k2:
        raise ValueError(f"{name}: op(A) is {n}x{k} and op(B) is {k2}x{m}: the inner sizes "
                         f"must agree (transpose_a={attrs['transpose_a']}, "
                         f"transpose_b={attrs['transpose_b']})")
    return a[:-2] + (n, m)


def _gemm2_shape(attrs, shapes):
    return [_product_shape("_linalg_gemm2", attrs, *shapes)]


def _gemm_shape(attrs, shapes):
    out = _product_shape("_linalg_gemm", attrs, shapes[0], shapes[1])
    if shapes[2] != out:
        raise ValueError(f"_linalg_gemm: C must have the shape of op(A) op(B), {out} (got "
                         f"{shapes[2]})")
    return [out]


def _gemm2(attrs, ins, outs):
    a, b = _t(ins[0], attrs["transpose_a"]), _t(ins[1], attrs["transpose_b"])
    np.matmul(a, b, out=outs[0])
    if attrs["alpha"] != 1.0:
        outs[0] *= attrs["alpha"]


def _gemm(attrs, ins, outs):
    _gemm2(attrs, ins, outs)
    outs[0] += attrs["beta"] * ins[2]


def _product_grads(attrs, a, b, g, needs):
    """(dA, dB) of alpha * op(A) op(B) for head gradient g."""
    ta, tb, alpha = attrs["transpose_a"], attrs["transpose_b"], attrs["alpha"]
    da = db = None
    if needs[0]:    # d op(A) = alpha g op(B)^T
        da = _mm(b, g, ta=tb, tb=True, alpha=alpha) if ta else \
            _mm(g, b, ta=False, tb=not tb, alpha=alpha)
    if needs[1]:    # d op(B) = alpha op(A)^T g
        db = _mm(g, a, ta=True, tb=ta, alpha=alpha) if tb else \
            _mm(a, g, ta=not ta, tb=False, alpha=alpha)
    return da, db


def _gemm2_grad(attrs, inputs, outputs, out_grads, needs=(True, True)):
    return list(_product_grads(attrs, inputs[0], inputs[1], out_grads[0], needs))


def _gemm_grad(attrs, inputs, outputs, out_grads, needs=(True, True, True)):
    da, db = _product_grads(attrs, inputs[0], inputs[1], out_grads[0], needs)
    dc = out_grads[0] * attrs["beta"] if needs[2] else None
    return [da, db, dc]


register("_linalg_gemm2", inputs=("A", "B"), attrs=_GEMM2, aliases=("linalg_gemm2",),
         infer_shape=_gemm2_shape, infer_type=_float("_linalg_gemm2"), compute=_gemm2,
         gradient=_gemm2_grad, grad_inputs=(0, 1),
         doc="""``alpha * op(A) @ op(B)`` over the last two axes, batched over the
leading ones (op transposes when ``transpose_a`` / ``transpose_b``).  ``axis`` must be -2.""")
register("_linalg_gemm", inputs=("A", "B", "C"), attrs=_GEMM, aliases=("linalg_gemm",),
         infer_shape=_gemm_shape, infer_type=_float("_linalg_gemm"), compute=_gemm,
         gradient=_gemm_grad, grad_inputs=(0, 1),
         doc="""``alpha * op(A) @ op(B) + beta * C`` over the last two axes, batched.""")


# -- syrk -------------------------------------------------------------------------------------

def _syrk_shape(attrs, shapes):
    a = shapes[0]
    _matrix("_linalg_syrk", "A", a)
    n = a[-1] if attrs["transpose"] else a[-2]
    return [a[:-2] + (n, n)]


def _syrk(attrs, ins, outs):
    a = ins[0]
    np.matmul(_t(a, attrs["transpose"]), _t(a, not attrs["transpose"]), out=outs[0])
    if attrs["alpha"] != 1.0:
        outs[0] *= attrs["alpha"]


def _syrk_grad(attrs, inputs, outputs, out_grads):
    a, g = inputs[0], out_grads[0]
    s = g + _mT(g)
    if attrs["transpose"]:                  # alpha A^T A: dA = alpha A (g + g^T)
        return [_mm(a, s, alpha=attrs["alpha"])]
    return [_mm(s, a, alpha=attrs["alpha"])]   # alpha A A^T: dA = alpha (g + g^T) A


register("_linalg_syrk", inputs=("A",), aliases=("linalg_syrk",),
         attrs={"transpose": Attr("bool", False), "alpha": Attr("float", 1.0)},
         infer_shape=_syrk_shape, infer_type=_float("_linalg_syrk"), compute=_syrk,
         gradient=_syrk_grad, grad_inputs=(0,),
         doc="""``alpha * A @ A.T`` (``transpose=True``: ``alpha * A.T @ A``), batched.""")


# -- triangular: potrf, potri, trmm, trsm -------------------------------------------------------

def _tri(a, lower):
    return np.tril(a) if lower else np.triu(a)


def _square_shape(name):
    def infer(attrs, shapes):
        _matrix(name, "A", shapes[0], square=True)
        return [shapes[0]]
    return infer


def _potrf(attrs, ins, outs):
    a = ins[0]
    # NumPy reads the lower triangle; the upper factor U of A = U^T U is L^T of the same
    # matrix read from its upper triangle
    src = a if attrs["lower"] else np.swapaxes(a, -1, -2)
    try:
        low = np.linalg.cholesky(src)
    except np.linalg.LinAlgError:
        raise ValueError("_linalg_potrf: A must be symmetric positive definite (the "
                         "Cholesky factorisation failed)") from None
    if not bool(np.isfinite(low).all()):     # CuPy gives NaNs instead of raising
        raise ValueError("_linalg_potrf: A must be symmetric positive definite (the "
                         "Cholesky factorisation failed)")
    outs[0][...] = low if attrs["lower"] else np.swapaxes(low, -1, -2)


def _potrf_grad(attrs, inputs, outputs, out_grads):
    return [F._backward_linalg_potrf(outputs[0], out_grads[0], lower=attrs["lower"])]


def _potrf_backward(attrs, ins, outs):
    """A = L L^T: S = L^-T Phi(L^T dL) L^-1 (Phi: lower triangle, diagonal halved); the
    gradient of the lower-triangle read is tril(S + S^T) - diag(S)."""
    f, g = ins
    low, gl = (f, g) if attrs["lower"] else (np.swapaxes(f, -1, -2), np.swapaxes(g, -1, -2))
    p = np.tril(np.matmul(np.swapaxes(low, -1, -2), gl))
    n = p.shape[-1]
    idx = np.arange(n)
    p[..., idx, idx] *= 0.5
    inv = np.linalg.inv(low)
    s = np.matmul(np.matmul(np.swapaxes(inv, -1, -2), p), inv)
    d = np.tril(s + np.swapaxes(s, -1, -2))
    d[..., idx, idx] = s[..., idx, idx]
    outs[0][...] = d if attrs["lower"] else np.swapaxes(d, -1, -2)


def _potri(attrs, ins, outs):
    f = _tri(ins[0], attrs["lower"])
    try:
        inv = np.linalg.inv(f)
    except np.linalg.LinAlgError:
        raise ValueError("_linalg_potri: A must be a Cholesky factor with a non-zero "
                         "diagonal (it is singular)") from None
    # (L L^T)^-1 = L^-T L^-1; (U^T U)^-1 = U^-1 U^-T
    if attrs["lower"]:
        np.matmul(np.swapaxes(inv, -1, -2), inv, out=outs[0])
    else:
        np.matmul(inv, np.swapaxes(inv, -1, -2), out=outs[0])


def _potri_grad(attrs, inputs, outputs, out_grads):
    return [F._backward_linalg_potri(inputs[0], outputs[0], out_grads[0],
                                     lower=attrs["lower"])]


def _potri_backward(attrs, ins, outs):
    """out = (L L^T)^-1 = Y: dY/dA = -Y g Y (Y symmetric); A = L L^T gives
    dL = (dA + dA^T) L, read on L's triangle (U: dU = U (dA + dA^T))."""
    f, y, g = ins
    da = -np.matmul(np.matmul(y, g), y)
    s = da + np.swapaxes(da, -1, -2)
    f = _tri(f, attrs["lower"])
    outs[0][...] = _tri(np.matmul(s, f) if attrs["lower"] else np.matmul(f, s),
                        attrs["lower"])


_TRI = {"transpose": Attr("bool", False), "rightside": Attr("bool", False),
        "lower": Attr("bool", True), "alpha": Attr("float", 1.0)}


def _tri_shape(name):
    def infer(attrs, shapes):
        a, b = shapes
        _matrix(name, "A", a, square=True)
        _matrix(name, "B", b)
        _same_batch(name, [a, b], ["A", "B"])
        k = b[-1] if attrs["rightside"] else b[-2]
        if a[-1] != k:
            side = "columns" if attrs["rightside"] else "rows"
            raise ValueError(f"{name}: A is {a[-2]}x{a[-1]} but B has {k} {side} "
                             f"(rightside={attrs['rightside']})")
        return [b]
    return infer


def _trmm(attrs, ins, outs):
    m = _t(_tri(ins[0], attrs["lower"]), attrs["transpose"])
    if attrs["rightside"]:
        np.matmul(ins[1], m, out=outs[0])
    else:
        np.matmul(m, ins[1], out=outs[0])
    if attrs["alpha"] != 1.0:
        outs[0] *= attrs["alpha"]


def _trsm(attrs, ins, outs):
    m = _t(_tri(ins[0], attrs["lower"]), attrs["transpose"])
    b = ins[1]
    try:
        if attrs["rightside"]:     # X M = B  <=>  M^T X^T = B^T
            x = np.swapaxes(np.linalg.solve(np.swapaxes(m, -1, -2), np.swapaxes(b, -1, -2)),
                            -1, -2)
        else:
            x = np.linalg.solve(m, b)
    except np.linalg.LinAlgError:
        raise ValueError("_linalg_trsm: A must have a non-zero diagonal (it is "
                         "singular)") from None
    outs[0][...] = x * attrs["alpha"] if attrs["alpha"] != 1.0 else x


def _tri_grad(name):
    def rule(attrs, inputs, outputs, out_grads):
        back = F._backward_linalg_trmm if name == "trmm" else F._backward_linalg_trsm
        res = back(inputs[0], inputs[1], out_grads[0], **attrs)
        return list(res)
    return rule


def _trmm_backward(attrs, ins, outs):
    a, b, g = ins
    ta, right, lower, alpha = (attrs["transpose"], attrs["rightside"], attrs["lower"],
                               attrs["alpha"])
    m = _t(_tri(a, lower), ta)
    if right:       # out = alpha B M
        dm = alpha * np.matmul(np.swapaxes(b, -1, -2), g)
        db = alpha * np.matmul(g, np.swapaxes(m, -1, -2))
    else:           # out = alpha M B
        dm = alpha * np.matmul(g, np.swapaxes(b, -1, -2))
        db = alpha * np.matmul(np.swapaxes(m, -1, -2), g)
    outs[0][...] = _tri(_t(dm, ta), lower)
    outs[1][...] = db


def _trsm_backward(attrs, ins, outs):
    a, b, g = ins
    ta, right, lower, alpha = (attrs["transpose"], attrs["rightside"], attrs["lower"],
                               attrs["alpha"])
    m = _t(_tri(a, lower), ta)
    mt = np.swapaxes(m, -1, -2)
    if right:       # X = alpha B M^-1: dB = alpha g M^-T, dM = -X^T g M^-T
        gm = np.swapaxes(np.linalg.solve(m, np.swapaxes(g, -1, -2)), -1, -2)   # g M^-T
        x = np.swapaxes(np.linalg.solve(mt, np.swapaxes(b, -1, -2)), -1, -2) * alpha
        dm = -np.matmul(np.swapaxes(x, -1, -2), gm)
        db = alpha * gm
    else:           # X = alpha M^-1 B: dB = alpha M^-T g, dM = -M^-T g X^T
        mg = np.linalg.solve(mt, g)                                            # M^-T g
        x = np.linalg.solve(m, b) * alpha
        dm = -np.matmul(mg, np.swapaxes(x, -1, -2))
        db = alpha * mg
    outs[0][...] = _tri(_t(dm, ta), lower)
    outs[1][...] = db


register("_linalg_potrf", inputs=("A",), aliases=("linalg_potrf",),
         attrs={"lower": Attr("bool", True)},
         infer_shape=_square_shape("_linalg_potrf"), infer_type=_float("_linalg_potrf"),
         compute=_potrf, gradient=_potrf_grad, grad_outputs=(0,),
         doc="""Cholesky factor of symmetric positive definite ``A`` (batched): ``L`` with
``A = L @ L.T`` (``lower=True``, read from A's lower triangle) or ``U`` with ``A = U.T @ U``
(``lower=False``, read from the upper triangle).  A matrix that is not positive definite
is a ValueError.""")
register("_backward_linalg_potrf", inputs=("L", "dL"), attrs={"lower": Attr("bool", True)},
         infer_shape=lambda attrs, shapes: [shapes[0]], infer_type=_float("_linalg_potrf"),
         compute=_potrf_backward, doc="Gradient of linalg_potrf (hidden).")
register("_linalg_potri", inputs=("A",), aliases=("linalg_potri",),
         attrs={"lower": Attr("bool", True)},
         infer_shape=_square_shape("_linalg_potri"), infer_type=_float("_linalg_potri"),
         compute=_potri, gradient=_potri_grad, grad_inputs=(0,), grad_outputs=(0,),
         doc="""``(L @ L.T)^-1`` from the Cholesky factor ``L`` that ``potrf`` gives (lower
triangle read; ``lower=False``: ``(U.T @ U)^-1`` from ``U``): the inverse of the original
matrix.""")
register("_backward_linalg_potri", inputs=("A", "out", "dout"),
         attrs={"lower": Attr("bool", True)},
         infer_shape=lambda attrs, shapes: [shapes[0]], infer_type=_float("_linalg_potri"),
         compute=_potri_backward, doc="Gradient of linalg_potri (hidden).")
register("_linalg_trmm", inputs=("A", "B"), aliases=("linalg_trmm",), attrs=_TRI,
         infer_shape=_tri_shape("_linalg_trmm"), infer_type=_float("_linalg_trmm"),
         compute=_trmm, gradient=_tri_grad("trmm"), grad_inputs=(0, 1),
         doc="""``alpha * op(A) @ B`` (``rightside=True``: ``alpha * B @ op(A)``) for
triangular ``A`` (its lower triangle, or upper with ``lower=False``), batched.""")
register("_linalg_trsm", inputs=("A", "B"), aliases=("linalg_trsm",), attrs=_TRI,
         infer_shape=_tri_shape("_linalg_trsm"), infer_type=_float("_linalg_trsm"),
         compute=_trsm, gradient=_tri_grad("trsm"), grad_inputs=(0, 1),
         doc="""Solves ``op(A) @ X = alpha * B`` (``rightside=True``: ``X @ op(A) = alpha *
B``) for triangular ``A`` (lower triangle, or upper with ``lower=False``), batched.""")
for _name, _kernel in (("trmm", _trmm_backward), ("trsm", _trsm_backward)):
    register(f"_backward_linalg_{_name}", inputs=("A", "B", "dout"), num_outputs=2,
             attrs=_TRI, infer_shape=lambda attrs, shapes: [shapes[0], shapes[1]],
             infer_type=lambda attrs, dtypes, n=_name: _float(f"_linalg_{n}")(attrs, dtypes) * 2,
             compute=_kernel,
             doc=f"Gradient of linalg_{_name} (hidden).")


# -- sumlogdiag, inverse, det, slogdet ----------------------------------------------------------

def _batch_shape(name):
    """The batch axes; (1,) for a single matrix, as MXNet (``det(A) = [-5.]``)."""
    def infer(attrs, shapes):
        _matrix(name, "A", shapes[0], square=True)
        return [shapes[0][:-2] or (1,)]
    return infer


def _sumlogdiag(attrs, ins, outs):
    outs[0][...] = np.sum(np.log(np.diagonal(ins[0], axis1=-2, axis2=-1)), axis=-1)


def _sumlogdiag_backward(attrs, ins, outs):
    a, g = ins
    outs[0][...] = 0
    n = a.shape[-1]
    idx = np.arange(n)
    outs[0][..., idx, idx] = g.reshape(a.shape[:-2] + (1,)) / a[..., idx, idx]


def _inverse(attrs, ins, outs):
    try:
        outs[0][...] = np.linalg.inv(ins[0])
    except np.linalg.LinAlgError:
        raise ValueError("_linalg_inverse: A must be invertible (it is singular)") from None


def _inverse_grad(attrs, inputs, outputs, out_grads):
    y = outputs[0]      # d inv(A) = -Y^T g Y^T
    return [_mm(_mm(y, out_grads[0], ta=True), y, tb=True, alpha=-1.0)]


def _det(attrs, ins, outs):
    outs[0][...] = np.linalg.det(ins[0])


def _slogdet(attrs, ins, outs):
    sign, logdet = np.linalg.slogdet(ins[0])
    outs[0][...] = sign
    outs[1][...] = logdet


def _scaled_inverse_t(a, scale):
    """``scale[..., None, None] * inv(A)^T``, from registry ops."""
    s = F.reshape(scale, shape=a.shape[:-2] + (1, 1))
    return F.broadcast_mul(s, _mT(F.linalg_inverse(a)))


def _det_grad(attrs, inputs, outputs, out_grads):
    return [_scaled_inverse_t(inputs[0], out_grads[0] * outputs[0])]


def _slogdet_grad(attrs, inputs, outputs, out_grads):
    return [_scaled_inverse_t(inputs[0], out_grads[1])]


register("_linalg_sumlogdiag", inputs=("A",), aliases=("linalg_sumlogdiag",),
         infer_shape=_batch_shape("_linalg_sumlogdiag"), infer_type=_float("_linalg_sumlogdiag"),
         compute=_sumlogdiag,
         gradient=lambda attrs, i, o, g: [F._backward_linalg_sumlogdiag(i[0], g[0])],
         grad_inputs=(0,),
         doc="""Sum of the logarithms of the diagonal of each matrix (batched): with
``potrf``, ``2 * sumlogdiag(L)`` is ``log det A``.""")
register("_backward_linalg_sumlogdiag", inputs=("A", "dout"),
         infer_shape=lambda attrs, shapes: [shapes[0]],
         infer_type=_float("_linalg_sumlogdiag"), compute=_sumlogdiag_backward,
         doc="Gradient of linalg_sumlogdiag (hidden).")
register("_linalg_inverse", inputs=("A",), aliases=("linalg_inverse",),
         infer_shape=_square_shape("_linalg_inverse"), infer_type=_float("_linalg_inverse"),
         compute=_inverse, gradient=_inverse_grad, grad_outputs=(0,),
         doc="Inverse of each square matrix (batched); a singular one is a ValueError.")
register("_linalg_det", inputs=("A",), aliases=("linalg_det",),
         infer_shape=_batch_shape("_linalg_det"), infer_type=_float("_linalg_det"),
         compute=_det, gradient=_det_grad, grad_inputs=(0,), grad_outputs=(0,),
         doc="Determinant of each square matrix (batched).")
register("_linalg_slogdet", inputs=("A",), aliases=("linalg_slogdet",), num_outputs=2,
         infer_shape=lambda attrs, shapes: _batch_shape("_linalg_slogdet")(attrs, shapes) * 2,
         infer_type=lambda attrs, dtypes: _float("_linalg_slogdet")(attrs, dtypes) * 2,
         compute=_slogdet, gradient=_slogdet_grad, grad_inputs=(0,),
         doc="""``(sign, log|det|)`` of each square matrix (batched); the gradient flows
through ``log|det|`` (sign is piecewise constant).""")
