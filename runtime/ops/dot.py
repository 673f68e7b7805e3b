"""Matrix products: dot, batch_dot, matmul, FullyConnected (and its fused
``_backward_FullyConnected``); MXNet's LAPACK-style ``linalg`` operators are in
runtime.ops.linalg.

Every kernel hands the output view to the product (``runtime._blas``: MKL where it is
installed, else NumPy's BLAS-backed ``np.matmul``; ``np.dot`` for small ones and CuPy's)
as its destination (the invoker's outputs are C-contiguous and of the result dtype), so
a product makes no temporary and no copy.  Operands must share one dtype (MXNet); integer dtypes work
through NumPy's non-BLAS loops.

Gradient rules are themselves ``dot`` / ``batch_dot`` calls with transpose flags on
zero-copy reshapes, so no transpose is ever materialised, and higher-order gradients
compose.  FullyConnected's rule is one call of the hidden ``_backward_FullyConnected``
(dX, dW and db in one kernel, the ones not asked for skipped), whose own rule is made of
``dot`` again.  ``dot``'s sparse kernel (csr / row_sparse operands; the result storage
types are tabled in runtime.ops.sparse) is declared here with it.
"""

import math

import numpy as np

from runtime import _sparse_arith as K
from runtime._blas import matmul as _blas_matmul
from runtime._imperative import invoke_parsed, is_recording
from runtime._ndarray import shape_size, storage_host
from runtime._sparse_common import row_size
from runtime.ops._call import F, unbroadcast, zeros
from runtime.ops import registry
from runtime.ops._sparse_kernels import (Dense, Sparse, csr_np, data_np, dense_np, dtype_check,
                                         rowmap, work_dtype)
from runtime.ops.registry import Attr, register, same_dtype

_STYPES = (None, "default", "csr", "row_sparse")
# MXNet's DotParam, in its documented order
_FLAGS = {"transpose_a": Attr("bool", False), "transpose_b": Attr("bool", False),
          "forward_stype": Attr("str", None, choices=_STYPES)}


def _forward_stype(name):
    """``infer_storage`` honouring MXNet's ``forward_stype`` hint: the output gets that
    storage type; where no kernel gives it, the dense kernel runs and its result is cast
    (MXNet's storage fallback)."""
    def infer(attrs, stypes):
        op = registry.get(name)
        outs, mode = op._default_storage(attrs, stypes)
        want = attrs.get("forward_stype")
        if want is None or outs[0] == want:
            return outs, mode
        return [want], "fallback"
    return infer


def _flags(attrs):
    # The sparse kernels may see an attribute dict without the flags (callers of
    # invoke_parsed): read them with their defaults.
    return attrs.get("transpose_a", False), attrs.get("transpose_b", False)


_ndarray = np.ndarray


def _mm(a, b, out):
    """``out[...] = a @ b`` for 2-D operands: ``_blas.matmul`` on large host products
    (MKL on ndrt's thread team, or NumPy's matmul: runtime/_blas), ``np.dot`` on small
    ones (a call costs about 0.3 us more; OpenBLAS runs them on the calling thread) and
    on CuPy's."""
    if type(out) is _ndarray and (out.size > 4096 or out.size * a.shape[1] >= 1 << 18):
        _blas_matmul(a, b, out)
    else:
        np.dot(a, b, out)


def _prod(shape):
    return shape_size(tuple(shape))


def _reshape(x, shape):
    """A zero-copy NDArray view of ``x`` with ``shape`` (``shape`` has no 0: callers
    handle zero-size cases before, since MXNet's reshape reads 0 as 'keep this axis')."""
    shape = tuple(shape)
    return x if x.shape == shape else x.reshape(shape)


def _same_type(name):
    def infer(attrs, dtypes):
        return [same_dtype(name, dtypes)]
    return infer


def _flag_note(ta, tb):
    note = ", ".join(f"{n}=True" for n, v in (("transpose_a", ta), ("transpose_b", tb)) if v)
    return f" ({note})" if note else ""


# -- dot ------------------------------------------------------------------------------

def _dot_plan(attrs, ls, rs):
    """MXNet's 2-D views of ``dot``: (lhs view, rhs view, out view, out shape, k)."""
    ta, tb = _flags(attrs)
    if not ls or not rs:
        raise ValueError(f"dot: inputs must have at least 1 dimension (got shapes {ls!r} "
                         f"and {rs!r})")
    if len(ls) == 1 and len(rs) == 1 and (ta or tb):
        raise ValueError("dot: cannot transpose 1-D inputs (both inputs are vectors)"
                         + _flag_note(ta, tb))
    # transpose_a: lhs is the matrix (ls[0], prod(ls[1:])), transposed; it contracts its
    # FIRST axis and keeps ls[1:] in order.  Otherwise the last axis is contracted.
    lk, lkeep = (ls[0], ls[1:]) if ta else (ls[-1], ls[:-1])
    rk, rkeep = (rs[-1], rs[:-1]) if tb else (rs[0], rs[1:])
    if lk != rk:
        raise ValueError(f"dot: shapes {ls!r} and {rs!r} are not aligned" + _flag_note(ta, tb))
    m, n = _prod(lkeep), _prod(rkeep)
    lview = (lk, m) if ta else (m, lk)
    rview = (n, rk) if tb else (rk, n)
    out = lkeep + rkeep
    return lview, rview, (m, n), out if out else (1,), lk


def _dot_shape(attrs, shapes):
    return [_dot_plan(attrs, shapes[0], shapes[1])[3]]


def _dot(attrs, ins, outs):
    a, b = ins
    out = outs[0]
    if a.ndim == 2 == b.ndim and not attrs["transpose_a"] and not attrs["transpose_b"]:
        _mm(a, b, out)                  # the plain matrix product: no views to plan
        return
    ta, tb = _flags(attrs)
    lview, rview, oview, _, _ = _dot_plan(attrs, a.shape, b.shape)
    a2, b2 = a.reshape(lview), b.reshape(rview)
    _mm(a2.T if ta else a2, b2.T if tb else b2, out.reshape(oview))


def _dot_grad(attrs, inputs, outputs, out_grads, needs=(True, True)):
    # ``needs`` (from the backward executor): which inputs want a gradient; the others
    # get None and their product is never computed (the request null).
    x, y = inputs
    g = out_grads[0]
    ta, tb = _flags(attrs)
    lview, rview, oview, _, k = _dot_plan(attrs, x.shape, y.shape)
    if g.size == 0 or k == 0:
        return [F.zeros_like(x) if needs[0] else None, F.zeros_like(y) if needs[1] else None]
    a, b, g2 = _reshape(x, lview), _reshape(y, rview), _reshape(g, oview)
    if not ta and not tb:        # out = a b
        da = lambda: F.dot(g2, b, transpose_b=True)
        db = lambda: F.dot(a, g2, transpose_a=True)
    elif ta and not tb:          # out = a.T b
        da = lambda: F.dot(b, g2, transpose_b=True)
        db = lambda: F.dot(a, g2)
    elif tb and not ta:          # out = a b.T
        da = lambda: F.dot(g2, b)
        db = lambda: F.dot(g2, a, transpose_a=True)
    else:                        # out = a.T b.T
        da = lambda: F.dot(b, g2, transpose_a=True, transpose_b=True)
        db = lambda: F.dot(g2, a, transpose_a=True, transpose_b=True)
    return [_reshape(da(), x.shape) if needs[0] else None,
            _reshape(db(), y.shape) if needs[1] else None]


# -- the sparse kernel of dot (csr / row_sparse operands) ---------------------------------

def _dot_stypes(attrs, stypes):
    ta, tb = _flags(attrs)
    lhs, rhs = stypes
    if lhs == "csr" and rhs in ("default", "row_sparse") and not tb:
        return ["row_sparse" if ta else "default"]
    if lhs == "default" and rhs == "csr" and not ta:
        return ["default" if tb else "csr"]
    return None


def _rhs_rows(b, work):
    """D as (rows, n) and its rowmap (None for a dense D) for the products."""
    n = row_size(b.shape)
    if b.stype == "default":
        return dense_np(b, work).reshape(b.shape[0], n), None
    idx = storage_host(b, 0)
    return data_np(b, work).reshape(idx.shape[0], n), rowmap(idx, b.shape[0])


def _csr_dot(a, b, work):
    """csr @ (dense | row_sparse) -> dense."""
    m = a.shape[0]
    d, rowmap = _rhs_rows(b, work)
    out = Dense((m,) + b.shape[1:], a.dtype, a.ctx, work)
    K.csr_dot_dense(*csr_np(a, work), d, out.view.reshape(m, d.shape[1]), rowmap)
    return out.done()


def _csr_t_dot(a, b, work):
    """csr.T @ (dense | row_sparse) -> row_sparse: the rows are the used columns of a."""
    k = a.shape[1]
    indptr, indices, data = csr_np(a, work)
    d, rowmap = _rhs_rows(b, work)
    plan = K.csr_column_plan(indptr, indices, k, rowmap)
    nused = plan.nused
    rest = b.shape[1:]
    out = Sparse("row_sparse", (k,) + rest, a.dtype, a.ctx, work, (nused,) + rest,
                  [(nused,)])
    K.csr_t_dot_dense(indptr, indices, data, d, plan, out.aux[0],
                      out.data.reshape(nused, d.shape[1]), rowmap)
    return out.done()


def _dense_dot_csr(a, b, tb, work):
    """dense @ csr -> csr (MXNet's CPU result: every row stores every column that b uses),
    dense @ csr.T -> dense."""
    indptr, indices, data = csr_np(b, work)
    if tb:
        m = shape_size(a.shape[:-1])
        a2 = dense_np(a, work).reshape(m, b.shape[1])
        out = Dense(a.shape[:-1] + (b.shape[0],), a.dtype, a.ctx, work)
        K.dense_dot_csr_t(a2, indptr, indices, data, out.view.reshape(m, b.shape[0]))
        return out.done()
    if a.ndim != 2:
        raise ValueError(f"dot: dot(default, csr) gives a csr array and needs a 2-D lhs (got "
                         f"shape {a.shape!r}); reshape lhs or convert rhs to default")
    m, n = a.shape[0], b.shape[1]
    # out.T = b.T @ a.T: the rows of that row_sparse product are the used columns of b.
    at = np.ascontiguousarray(dense_np(a, work).T)
    plan = K.csr_column_plan(indptr, indices, n)
    nused = plan.nused
    cols = np.empty(nused, np.int64)
    prod = np.empty((nused, m), work)
    K.csr_t_dot_dense(indptr, indices, data, at, plan, cols, prod)
    out = Sparse("csr", (m, n), a.dtype, a.ctx, work, (m * nused,), [(m + 1,), (m * nused,)])
    out.aux[0][...] = np.arange(m + 1, dtype=np.int64) * nused
    out.aux[1].reshape(m, nused)[...] = cols
    out.data.reshape(m, nused)[...] = prod.T
    return out.done()


def _dot_sparse(attrs, inputs):
    a, b = inputs
    ta, tb = _flags(attrs)
    work = work_dtype(a)
    if a.stype == "csr":
        return [_csr_t_dot(a, b, work) if ta else _csr_dot(a, b, work)]
    return [_dense_dot_csr(a, b, tb, work)]


register(
    "dot", inputs=("lhs", "rhs"), attrs=_FLAGS, infer_shape=_dot_shape,
    infer_storage=_forward_stype("dot"),
    infer_type=_same_type("dot"), compute=_dot, gradient=_dot_grad, grad_inputs=(0, 1),
    compute_sparse=_dot_sparse, sparse_stypes=_dot_stypes, sparse_check=dtype_check,
    doc="""Dot product of two arrays (MXNet's ``dot``; also the ``@`` operator).

- 1-D x 1-D: the inner product, with shape ``(1,)`` (MXNet; NumPy gives a 0-d array).
  Transposing vectors is an error.
- N-D x M-D: the last axis of ``lhs`` is contracted with the first axis of ``rhs``;
  the result has shape ``lhs.shape[:-1] + rhs.shape[1:]`` (NumPy's ``tensordot(lhs,
  rhs, 1)``; NumPy's own ``dot`` pairs axes differently for N-D ``rhs``).
- ``transpose_a=True``: MXNet views ``lhs`` as the matrix ``(lhs.shape[0],
  prod(lhs.shape[1:]))`` and transposes it, i.e. the FIRST axis of ``lhs`` is
  contracted and the result starts with ``lhs.shape[1:]`` in their original order (not
  reversed as ``lhs.T`` would).  ``transpose_b=True`` likewise contracts the LAST axis
  of ``rhs`` and keeps ``rhs.shape[:-1]``.  For 2-D inputs these are the usual
  transposes.

Operands must share one dtype.  Shape errors read ``dot: shapes (3, 4) and (5, 2) are
not aligned``.  ``forward_stype`` ('default', 'csr', 'row_sparse'; None: the kernel's
own) is the output's storage type, as MXNet: where no sparse kernel gives it, the dense
product is cast (a storage fallback).""")


# -- batch_dot --------------------------------------------------------------------------

def _batch_plan(attrs, ls, rs):
    ta, tb = _flags(attrs)
    if len(ls) < 3 or len(ls) != len(rs):
        raise ValueError(f"batch_dot: inputs must both be 3-D (or N-D with the same number "
                         f"of dimensions, N >= 3) (got shapes {ls!r} and {rs!r})")
    if ls[:-2] != rs[:-2]:
        raise ValueError(f"batch_dot: batch dimensions {ls[:-2]!r} and {rs[:-2]!r} differ "
                         f"(shapes {ls!r} and {rs!r})")
    (n, lk) = (ls[-1], ls[-2]) if ta else (ls[-2], ls[-1])
    (rk, m) = (rs[-1], rs[-2]) if tb else (rs[-2], rs[-1])
    if lk != rk:
        raise ValueError(f"batch_dot: shapes {ls!r} and {rs!r} are not aligned"
                         + _flag_note(ta, tb))
    return ls[:-2] + (n, m), lk


def _batch_shape(attrs, shapes):
    return [_batch_plan(attrs, shapes[0], shapes[1])[0]]


def _batch_dot(attrs, ins, outs):
    a, b = ins
    ta, tb = _flags(attrs)
    _blas_matmul(np.swapaxes(a, -1, -2) if ta else a, np.swapaxes(b, -1, -2) if tb else b,
                 outs[0])


def _batch_dot_grad(attrs, inputs, outputs, out_grads):
    a, b = inputs
    g = out_grads[0]
    ta, tb = _flags(attrs)
    if g.size == 0 or _batch_plan(attrs, a.shape, b.shape)[1] == 0:
        return [F.zeros_like(a), F.zeros_like(b)]
    if not ta and not tb:
        return [F.batch_dot(g, b, transpose_b=True), F.batch_dot(a, g, transpose_a=True)]
    if ta and not tb:
        return [F.batch_dot(b, g, transpose_b=True), F.batch_dot(a, g)]
    if tb and not ta:
        return [F.batch_dot(g, b), F.batch_dot(g, a, transpose_a=True)]
    return [F.batch_dot(b, g, transpose_a=True, transpose_b=True),
            F.batch_dot(g, a, transpose_a=True, transpose_b=True)]


register(
    "batch_dot", inputs=("lhs", "rhs"), attrs=_FLAGS, infer_shape=_batch_shape,
    infer_storage=_forward_stype("batch_dot"),
    infer_type=_same_type("batch_dot"), compute=_batch_dot, gradient=_batch_dot_grad,
    grad_inputs=(0, 1),
    doc="""Batched matrix product (MXNet's ``batch_dot``).

``lhs`` (B, n, k) and ``rhs`` (B, k, m) give (B, n, m); ``transpose_a`` /
``transpose_b`` transpose the last two axes of each operand first.  N-D operands with
identical leading (batch) dimensions are accepted too; batch dimensions are not
broadcast (use ``matmul`` for that).""")


# -- matmul -----------------------------------------------------------------------------

def _matmul_plan(ls, rs):
    """(lhs as >= 2-D, rhs as >= 2-D, batch shape, out shape) with NumPy's rules."""
    if not ls or not rs:
        raise ValueError(f"matmul: inputs must have at least 1 dimension (got shapes {ls!r} "
                         f"and {rs!r})")
    l2 = ls if len(ls) >= 2 else (1,) + ls
    r2 = rs if len(rs) >= 2 else rs + (1,)
    if l2[-1] != r2[-2]:
        raise ValueError(f"matmul: shapes {ls!r} and {rs!r} are not aligned")
    try:
        batch = np.broadcast_shapes(l2[:-2], r2[:-2])
    except ValueError:
        raise ValueError(f"matmul: the batch dimensions of shapes {ls!r} and {rs!r} are not "
                         "broadcastable") from None
    out = batch + ((l2[-2],) if len(ls) >= 2 else ()) + ((r2[-1],) if len(rs) >= 2 else ())
    return l2, r2, batch, out


def _matmul_shape(attrs, shapes):
    return [_matmul_plan(shapes[0], shapes[1])[3]]


def _matmul(attrs, ins, outs):
    _blas_matmul(ins[0], ins[1], outs[0])


def _expand(x, shape):
    return x if x.shape == shape else F.broadcast_to(x, shape=shape)


def _matmul_grad(attrs, inputs, outputs, out_grads):
    x, y = inputs
    g = out_grads[0]
    l2, r2, batch, _ = _matmul_plan(x.shape, y.shape)
    (n, k), m = l2[-2:], r2[-1]
    if g.size == 0 or k == 0:
        return [F.zeros_like(x), F.zeros_like(y)]
    # Broadcast the operands to the full batch, run one batch_dot per operand, and undo
    # the broadcasting with sums (no size is 0 from here on).
    p = _prod(batch)
    a = _reshape(_expand(_reshape(x, l2), batch + (n, k)), (p, n, k))
    b = _reshape(_expand(_reshape(y, r2), batch + (k, m)), (p, k, m))
    g3 = _reshape(g, (p, n, m))
    da = _reshape(F.batch_dot(g3, b, transpose_b=True), batch + (n, k))
    db = _reshape(F.batch_dot(a, g3, transpose_a=True), batch + (k, m))
    return [_reshape(unbroadcast(da, l2), x.shape), _reshape(unbroadcast(db, r2), y.shape)]


register(
    "matmul", inputs=("lhs", "rhs"), infer_shape=_matmul_shape,
    infer_type=_same_type("matmul"), compute=_matmul, gradient=_matmul_grad,
    grad_inputs=(0, 1),
    doc="""Matrix product with NumPy's ``matmul`` semantics: the last two axes are the
matrices, leading (batch) axes broadcast; a 1-D ``lhs`` gets a leading 1 and a 1-D
``rhs`` a trailing 1, removed from the result (so 1-D x 1-D gives a 0-d array, unlike
``dot``).  Operands must share one dtype.""")


# -- FullyConnected ---------------------------------------------------------------------

def _fc_plan(attrs, shapes, name="FullyConnected"):
    """(batch shape, k) of FullyConnected after validating every input shape."""
    nh, no_bias, flatten = attrs["num_hidden"], attrs["no_bias"], attrs["flatten"]
    want = 2 if no_bias else 3
    if len(shapes) != want:
        names = "data, weight" if no_bias else "data, weight, bias"
        raise TypeError(f"{name}: takes {want} array inputs ({names}) with "
                        f"no_bias={no_bias} (got {len(shapes)})")
    if nh < 1:
        raise ValueError(f"{name}: num_hidden must be >= 1 (got {nh})")
    ds, ws = shapes[0], shapes[1]
    if not ds:
        raise ValueError(f"{name}: data must have at least 1 dimension (got shape ())")
    if flatten:
        batch, k = ds[:1], _prod(ds[1:])
    else:
        batch, k = ds[:-1], ds[-1]
    if ws != (nh, k):
        raise ValueError(f"{name}: weight must have shape {(nh, k)!r} for data of "
                         f"shape {ds!r}, num_hidden={nh} and flatten={flatten} (got {ws!r})")
    if not no_bias and shapes[2] != (nh,):
        raise ValueError(f"{name}: bias must have shape {(nh,)!r} (got {shapes[2]!r})")
    return batch, k


def _fc_shape(attrs, shapes):
    batch, _ = _fc_plan(attrs, shapes)
    return [batch + (attrs["num_hidden"],)]


def _fc_inputs(attrs, shapes):
    # weight (num_hidden, k) and bias (num_hidden,) from data: k is its trailing size
    # (flatten=True: the product of its axes after the first)
    data = shapes[0]
    if data is not None and len(data) >= 1:
        k = math.prod(data[1:]) if attrs["flatten"] else data[-1]
        shapes[1] = shapes[1] or (attrs["num_hidden"], k)
    if len(shapes) > 2:
        shapes[2] = shapes[2] or (attrs["num_hidden"],)
    return shapes


def _fc(attrs, ins, outs):
    # the shapes were validated by inference: weight is (num_hidden >= 1, k)
    x, w = ins[0], ins[1]
    nh = attrs["num_hidden"]
    out = outs[0].reshape(outs[0].size // nh, nh)
    _mm(x.reshape(out.shape[0], w.shape[1]), w.T, out)
    if not attrs["no_bias"]:
        np.add(out, ins[2], out=out)


def _fc_grad(attrs, inputs, outputs, out_grads, needs=(True, True, True)):
    # one fused op computes the gradients asked for (``needs``, from the backward
    # executor; the others are None and never computed: requests null)
    # FullyConnected's parsed attributes are the fused op's (same names, kinds, defaults)
    n_in = 2 if attrs["no_bias"] else 3
    if all(needs[:n_in]) or is_recording():
        # (under create_graph every output is made: the tape records whole calls)
        req = None
    else:
        req = [_REQ[b] for b in needs[:n_in]]
    grads = invoke_parsed(_FCB, [out_grads[0], inputs[0], inputs[1]], attrs, None, req)
    return [g if b else None for g, b in zip(grads, needs)]


_REQ = {True: "write", False: "null"}


register(
    "FullyConnected", inputs=("data", "weight", "bias"), variadic=True,
    attrs={"num_hidden": Attr("int", required=True), "no_bias": Attr("bool", False),
           "flatten": Attr("bool", True)},
    infer_shape=_fc_shape, infer_type=_same_type("FullyConnected"), compute=_fc,
    infer_inputs=_fc_inputs,
    gradient=_fc_grad, grad_inputs=(0, 1),
    doc="""Dense layer (MXNet's ``FullyConnected``): ``out = data @ weight.T + bias``.

Inputs ``data``, ``weight`` (num_hidden, k) and ``bias`` (num_hidden,); with
``no_bias=True`` there are only two inputs.  ``flatten=True`` (default) reshapes data to
``(data.shape[0], -1)`` (the result is (n, num_hidden)); ``flatten=False`` applies the
layer to the last axis (the result is ``data.shape[:-1] + (num_hidden,)``).  All inputs
share one dtype.  Pass the arrays positionally:
``nd.FullyConnected(x, w, b, num_hidden=4)``.""")


# -- _backward_FullyConnected -------------------------------------------------------------

_add_reduce = np.add.reduce


def _fcb_plan(attrs, shapes):
    """(m, k) of the fused gradient after validating ograd against the layer's result."""
    name = "_backward_FullyConnected"
    if len(shapes) != 3:
        raise TypeError(f"{name}: takes 3 array inputs (ograd, data, weight) (got "
                        f"{len(shapes)})")
    nh = attrs["num_hidden"]
    layer = [shapes[1], shapes[2]] + ([] if attrs["no_bias"] else [(nh,)])
    batch, k = _fc_plan(attrs, layer, name)
    if shapes[0] != batch + (nh,):
        raise ValueError(f"{name}: ograd must have shape {batch + (nh,)!r}, the layer's "
                         f"result for data of shape {shapes[1]!r} (got {shapes[0]!r})")
    return _prod(batch), k


def _fcb_shape(attrs, shapes):
    _fcb_plan(attrs, shapes)
    return [shapes[1], shapes[2]] + ([] if attrs["no_bias"] else [(attrs["num_hidden"],)])


def _fcb_type(attrs, dtypes):
    d = same_dtype("_backward_FullyConnected", dtypes)
    return [d] * (2 if attrs["no_bias"] else 3)


def _fcb(attrs, ins, outs):
    """dX = g W, dW = g^T X, db = column sums of g, on the 2-D views; an output that is
    None (request null) is not computed."""
    g, x, w = ins
    nh, k = w.shape            # validated by inference: g is the layer's result's shape
    m = g.size // nh
    g2 = g.reshape(m, nh)
    dx, dw = outs[0], outs[1]
    # dW and db first, dX last (NumPy's order in a handwritten step): g2 and the layer's
    # input are then read while still in the cache, and dX, which the next gradient op
    # reads at once (relu's), is written last
    if dw is not None:
        if m == 0:
            dw[...] = 0
        else:
            _mm(g2.T, x.reshape(m, k), dw)
    if not attrs["no_bias"] and outs[2] is not None:
        if type(g2) is _ndarray:
            _add_reduce(g2, 0, None, outs[2])
        else:
            g2.sum(axis=0, out=outs[2])
    if dx is not None:
        _mm(g2, w, dx.reshape(m, k))


def _fcb_grad(attrs, inputs, outputs, out_grads, needs=(True, True, True)):
    # out = (g2 W, g2^T X2, sum_rows g2), linear in each input: with out-grads
    # (Gx, Gw, Gb): d/dg = Gx2 W^T + X2 Gw^T + Gb (each row); d/dX = g2 Gw;
    # d/dW = g2^T Gx2
    g, x, w = inputs
    nh = attrs["num_hidden"]
    m, k = _fcb_plan(attrs, [g.shape, x.shape, w.shape])
    gx, gw = out_grads[0], out_grads[1]
    if m == 0 or k == 0:
        return [zeros(g) if needs[0] else None, zeros(x) if needs[1] else None,
                zeros(w) if needs[2] else None]
    g2, x2, gx2 = _reshape(g, (m, nh)), _reshape(x, (m, k)), _reshape(gx, (m, k))
    dg = dx = dw = None
    if needs[0]:
        dg = F.dot(gx2, w, transpose_b=True) + F.dot(x2, gw, transpose_b=True)
        if not attrs["no_bias"]:
            dg = F.broadcast_add(dg, _reshape(out_grads[2], (1, nh)))
        dg = _reshape(dg, g.shape)
    if needs[1]:
        dx = _reshape(F.dot(g2, gw), x.shape)
    if needs[2]:
        dw = F.dot(g2, gx2, transpose_a=True)
    return [dg, dx, dw]


_FCB = register(
    "_backward_FullyConnected", inputs=("ograd", "data", "weight"),
    num_outputs=lambda attrs: 2 if attrs["no_bias"] else 3,
    attrs={"num_hidden": Attr("int", required=True), "no_bias": Attr("bool", False),
           "flatten": Attr("bool", True)},
    infer_shape=_fcb_shape, infer_type=_fcb_type, compute=_fcb, null_outputs=True,
    gradient=_fcb_grad, grad_inputs=(0, 1, 2),
    doc="""Hidden: the gradient of FullyConnected in one call (MXNet's
``_backward_FullyConnected``): from the out-grad ``ograd`` and the layer's ``data`` and
``weight``, the outputs ``ograd @ weight`` (data's shape), ``ograd.T @ data`` (weight's
shape) and, unless ``no_bias``, the column sums of ``ograd`` (the bias gradient), on the
2-D views that FullyConnected's attributes define.  An output requested ``null`` is not
computed.""")
