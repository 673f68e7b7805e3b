"""Elementwise operators: unary math, binary with broadcasting, scalar forms,
comparisons, where, clip, cast, copies, add_n; the fused backward kernels of tanh and relu
(``_backward_tanh``, ``_backward_relu``); the sparse kernels of ``add``, ``subtract``,
``multiply`` (and their ``elemwise_`` forms), ``divide`` (csr / dense), ``where`` (csr
condition), ``add_n`` (row_sparse) and ``cast``.

Dtype rules are MXNet's: binary operands share one dtype, results keep it (comparisons
too: 1 and 0 in the input's dtype), scalars are cast to the array's dtype.  Kernels are
NumPy ufuncs writing into the output views; with CuPy arrays (GPU) the same calls
dispatch to CuPy.
"""

import math

import numpy as np
import scipy.special as sps

from runtime import _sparse_arith as K
from runtime import _storage
from runtime._ndarray import from_numpy, storage_host
from runtime.ops._call import F, unbroadcast, zeros
from runtime.ops._sparse_kernels import (Sparse, csr_np, data_np, dense_np, dtype_check,
                                         floats_only, rows2d, work_dtype)
from runtime.ops.registry import (OPS, Attr, broadcast_shapes, dtype_scalar, equal_shapes,
                                   fill_equal_shapes, float_input, no_bool, register,
                                   same_dtype, scalar_type)

# MXNet's zero-preserving unary ops: on row_sparse and csr inputs they map the stored
# values and keep the storage type.
ZERO_PRESERVING = {"abs", "sign", "square", "sqrt", "relu", "sin", "tan", "arcsin",
                   "arctan", "sinh", "tanh", "arcsinh", "arctanh", "expm1", "log1p",
                   "negative", "floor", "ceil", "round", "rint", "trunc", "fix", "cbrt",
                   "degrees", "radians"}


def _sparse_map(fn):
    """Sparse kernel of a zero-preserving op: ``fn`` on the stored values only."""
    def compute(attrs, inputs):
        x = inputs[0]
        data = np.empty(x.chunk.storage_shape, np.dtype(x.dtype))
        fn(attrs, [storage_host(x, -1)], [data])
        aux = [storage_host(x, i) for i in range(len(x.chunk.aux_shapes))]
        return [_storage.from_parts(x.stype, x.shape, np.dtype(x.dtype), x.ctx, data, aux,
                                    check=False)]
    return compute


def _keep_stype(attrs, stypes):
    return [stypes[0]] if stypes[0] in ("csr", "row_sparse") else None


def _zero_grad(a, i, o, g):
    return [zeros(i[0])]


NO_BOOL = {"negative", "sign", "square", "reciprocal"}


# Math ops that, as MXNet's (mshadow's float math functions), take integer inputs:
# computed in float32 and truncated toward zero into the input's dtype.
INT_IN_FLOAT = {"exp", "log", "sqrt", "sigmoid"}
INT_IN_FLOAT_DOC = """Integer inputs are computed in float32 and the result truncated toward zero into
the input's dtype, as MXNet's float math does (``exp`` of int32 ``[0, 1, 2]`` gives
``[1, 2, 7]``); a result an integer cannot hold (``log(0)``, ``sqrt(-1)``) goes through
the platform's float-to-integer conversion.  Bool inputs are refused."""


def _via_float32(fn):
    def call(x, out):
        if x.dtype.kind not in "iu":
            return fn(x, out=out)
        with np.errstate(all="ignore"):
            r = fn(x.astype(np.float32), out=None)
            return np.copyto(out, r, casting="unsafe")
    return call


def unary(name, fn, grad=None, aliases=(), float_only=False, grad_inputs=(0,),
          grad_outputs=(), doc=""):
    """Register an elementwise unary op whose kernel is ``fn(x, out=o)``."""
    kernel = _via_float32(fn) if name in INT_IN_FLOAT else fn

    def compute(attrs, ins, outs):
        kernel(ins[0], out=outs[0])
    sparse = name in ZERO_PRESERVING
    if name in INT_IN_FLOAT:
        float_only, doc = False, doc + INT_IN_FLOAT_DOC
    return register(
        name, aliases=aliases, compute=compute,
        infer_type=(float_input(name) if float_only
                    else no_bool(name) if name in NO_BOOL | INT_IN_FLOAT else None),
        compute_sparse=_sparse_map(compute) if sparse else None,
        sparse_stypes=_keep_stype if sparse else None,
        gradient=grad, grad_inputs=grad_inputs, grad_outputs=grad_outputs,
        inplace=[(0, 0)], grad_donates=grad is not None,
        ufunc=fn if isinstance(fn, np.ufunc) else None, doc=doc)


def _np(f, **kw):
    """A ufunc-like callable with extra keywords (e.g. casting)."""
    def call(x, out):
        return f(x, out=out, **kw)
    return call


def _sigmoid(x, out):
    return sps.expit(x, out=out)


def _relu(x, out):
    return np.maximum(x, x.dtype.type(0), out=out)


def _softrelu(x, out):
    return np.logaddexp(x.dtype.type(0), x, out=out)


def _rsqrt(x, out):
    np.sqrt(x, out=out)
    return np.reciprocal(out, out=out)


def _reciprocal(x, out):
    return np.divide(x.dtype.type(1), x, out=out)


def _sign(x, out):
    return np.sign(x, out=out)


def _rcbrt(x, out):
    np.cbrt(x, out=out)
    return np.reciprocal(out, out=out)


def _softsign(x, out):
    return np.divide(x, np.abs(x) + x.dtype.type(1), out=out)


def _log_sigmoid(x, out):
    np.logaddexp(x.dtype.type(0), -x, out=out)
    return np.negative(out, out=out)


def _mish(x, out):
    return np.multiply(x, np.tanh(np.logaddexp(x.dtype.type(0), x)), out=out)


def _mish_grad(x):
    t = F.tanh(F.softrelu(x))
    return t + x * F.sigmoid(x) * (1.0 - t * t)


LN2, LN10 = math.log(2.0), math.log(10.0)


# -- fused backward kernels: _backward_tanh, _backward_relu ----------------------------------
# MXNet's hidden ``_backward_<op>`` operators.  On dense arrays the gradient rules of tanh
# and relu call one of these instead of composing three or two elementwise ops:
# ``_backward_tanh(ograd, y) = ograd * (1 - y*y)`` and ``_backward_relu(ograd, y) = ograd
# * (y > 0)``, ``y`` the forward's output.  The kernel runs in blocks through a small
# scratch buffer, so it makes no temporary the size of its operands, and it may write into
# ``ograd`` itself (``inplace`` (0, 0)): the backward executor donates an out-grad that no
# one else reads, and the invoker then writes the result into it.  A 50-deep tanh chain so
# keeps one gradient buffer beside the 50 saved outputs, the least possible.  The
# arithmetic is that of the composed rule, in the same order, so the results are the same
# bit for bit.  Each op has a gradient rule of its own, so that ``create_graph`` works
# through it.

BLOCK = 1 << 16      # elements per block: the scratch stays in the L2 cache


def _types(name, floating):
    def infer(attrs, dtypes):
        same_dtype(name, dtypes)
        return float_input(name, "lhs")(attrs, dtypes) if floating else [dtypes[0]]
    return infer


def _blocked(first, last, scratch_dtype, nan_of_y=False):
    """A kernel ``out = last(g, first(y))`` run block by block through one scratch
    buffer (NumPy); on CuPy arrays, one expression.  With ``nan_of_y`` (a boolean
    scratch) the result is NaN wherever ``y`` is, as MXNet's relu_grad gives NaN for a
    NaN: one ``isnan`` pass per block, a copy only in a block that holds one."""
    def compute(attrs, ins, outs):
        g, y = ins
        out = outs[0]
        if type(out) is not np.ndarray:
            out[...] = last(g, first(y, None), None)
            if nan_of_y and y.dtype.kind == "f":
                np.copyto(out, y, where=np.isnan(y))     # CuPy takes both calls
            return
        n = out.size
        fix = nan_of_y and y.dtype.kind == "f"
        if n <= BLOCK:                    # one block: no flat views, no slicing
            t = np.empty(out.shape, scratch_dtype or out.dtype)
            first(y, t)
            last(g, t, out)
            if fix:
                _nan_of(y, t, out)
            return
        g, y, out = g.reshape(-1), y.reshape(-1), out.reshape(-1)
        t = np.empty(min(n, BLOCK), scratch_dtype or out.dtype)
        for s in range(0, n, BLOCK):
            e = min(s + BLOCK, n)
            tt = t[:e - s]
            first(y[s:e], tt)
            last(g[s:e], tt, out[s:e])     # reads g's block before writing it
            if fix:
                _nan_of(y[s:e], tt, out[s:e])
    return compute


def _nan_of(y, t, out):
    """NaN into ``out`` wherever ``y`` is NaN (``t`` a boolean scratch of y's size)."""
    np.isnan(y, out=t)
    if t.any():
        np.copyto(out, y, where=t)


def _one_minus_square(y, t):
    if t is None:
        return 1 - y * y
    np.multiply(y, y, out=t)
    return np.subtract(1, t, out=t)


def _positive(y, t):
    return y > 0 if t is None else np.greater(y, 0, out=t)


def _times(g, t, out):
    return g * t if out is None else np.multiply(g, t, out=out)


def _backward_tanh_grad(attrs, inputs, outputs, out_grads):
    # d/d ograd: (1 - y^2) * g; d/dy: -2 * ograd * y * g
    dy, y = inputs
    g = out_grads[0]
    return [F._backward_tanh(g, y), g * dy * y * -2.0]


def _backward_relu_grad(attrs, inputs, outputs, out_grads):
    # d/d ograd: (y > 0) * g; the step in y has derivative 0 wherever it is defined
    return [F._backward_relu(out_grads[0], inputs[1]), zeros(inputs[1])]


register(
    "_backward_tanh", inputs=("lhs", "rhs"), infer_shape=equal_shapes("_backward_tanh", "lhs and rhs"),
    infer_type=_types("_backward_tanh", True),
    compute=_blocked(_one_minus_square, _times, None),
    gradient=_backward_tanh_grad, grad_inputs=(0, 1), inplace=[(0, 0)],
    doc="""Hidden: the gradient of tanh, ``lhs * (1 - rhs * rhs)`` with ``lhs`` the
out-grad and ``rhs`` tanh's output (same shape and floating dtype); no temporary the
size of the operands.""")

register(
    "_backward_relu", inputs=("lhs", "rhs"), infer_shape=equal_shapes("_backward_relu", "lhs and rhs"),
    infer_type=_types("_backward_relu", False),
    compute=_blocked(_positive, _times, np.bool_, nan_of_y=True),
    gradient=_backward_relu_grad, grad_inputs=(1,), inplace=[(0, 0)],
    doc="""Hidden: the gradient of relu, ``lhs * (rhs > 0)`` with ``lhs`` the out-grad and
``rhs`` relu's output (same shape and dtype), NaN where ``rhs`` is NaN (MXNet's
relu_grad passes a NaN on); no temporary the size of the operands.""")


def _fused(name, composed):
    """The rule ``[F.<name>(g, y)]`` (a fused backward kernel above, ``y`` the
    output) on dense arrays; ``composed`` on sparse ones, whose ops keep the storage."""
    def rule(a, i, o, g):
        if g[0].stype == "default" and o[0].stype == "default":
            return [getattr(F, name)(g[0], o[0])]
        return composed(a, i, o, g)
    return rule

# name, kernel, gradient(attrs, inputs, outputs, out_grads), reads (inputs, outputs)
unary("negative", np.negative, lambda a, i, o, g: [-g[0]], grad_inputs=())
unary("abs", np.absolute, lambda a, i, o, g: [g[0] * F.sign(i[0])])
unary("sign", _sign, _zero_grad, grad_inputs=())
unary("exp", np.exp, lambda a, i, o, g: [g[0] * o[0]], grad_inputs=(), grad_outputs=(0,),
      float_only=True)
unary("expm1", np.expm1, lambda a, i, o, g: [g[0] * (o[0] + 1.0)], grad_inputs=(),
      grad_outputs=(0,), float_only=True)
unary("log", np.log, lambda a, i, o, g: [g[0] / i[0]], float_only=True)
unary("log1p", np.log1p, lambda a, i, o, g: [g[0] / (i[0] + 1.0)], float_only=True)
unary("log2", np.log2, lambda a, i, o, g: [g[0] / (i[0] * LN2)], float_only=True)
unary("log10", np.log10, lambda a, i, o, g: [g[0] / (i[0] * LN10)], float_only=True)
unary("sqrt", np.sqrt, lambda a, i, o, g: [g[0] / (o[0] * 2.0)], grad_inputs=(),
      grad_outputs=(0,), float_only=True)
unary("rsqrt", _rsqrt, lambda a, i, o, g: [g[0] * o[0] * o[0] * o[0] * -0.5],
      grad_inputs=(), grad_outputs=(0,), float_only=True)
unary("cbrt", np.cbrt, lambda a, i, o, g: [g[0] / (o[0] * o[0] * 3.0)], grad_inputs=(),
      grad_outputs=(0,), float_only=True)
unary("square", np.square, lambda a, i, o, g: [g[0] * i[0] * 2.0])
unary("reciprocal", _reciprocal, lambda a, i, o, g: [-g[0] * o[0] * o[0]], grad_inputs=(),
      grad_outputs=(0,), float_only=True)
unary("sin", np.sin, lambda a, i, o, g: [g[0] * F.cos(i[0])], float_only=True)
unary("cos", np.cos, lambda a, i, o, g: [-g[0] * F.sin(i[0])], float_only=True)
unary("tan", np.tan, lambda a, i, o, g: [g[0] * (o[0] * o[0] + 1.0)], grad_inputs=(),
      grad_outputs=(0,), float_only=True)
unary("arcsin", np.arcsin, lambda a, i, o, g: [g[0] * F.rsqrt(1.0 - i[0] * i[0])],
      float_only=True)
unary("arccos", np.arccos, lambda a, i, o, g: [-g[0] * F.rsqrt(1.0 - i[0] * i[0])],
      float_only=True)
unary("arctan", np.arctan, lambda a, i, o, g: [g[0] / (i[0] * i[0] + 1.0)], float_only=True)
unary("sinh", np.sinh, lambda a, i, o, g: [g[0] * F.cosh(i[0])], float_only=True)
unary("cosh", np.cosh, lambda a, i, o, g: [g[0] * F.sinh(i[0])], float_only=True)
unary("tanh", np.tanh,
      _fused("_backward_tanh", lambda a, i, o, g: [g[0] * (1.0 - o[0] * o[0])]),
      grad_inputs=(), grad_outputs=(0,), float_only=True)
unary("arcsinh", np.arcsinh, lambda a, i, o, g: [g[0] * F.rsqrt(i[0] * i[0] + 1.0)],
      float_only=True)
unary("arctanh", np.arctanh, lambda a, i, o, g: [g[0] / (1.0 - i[0] * i[0])],
      float_only=True)
unary("sigmoid", _sigmoid, lambda a, i, o, g: [g[0] * o[0] * (1.0 - o[0])], grad_inputs=(),
      grad_outputs=(0,), float_only=True)
# sign(y) of relu's output y is MXNet's relu_grad: 1 above 0, 0 at 0, NaN at NaN
unary("relu", _relu, _fused("_backward_relu", lambda a, i, o, g: [g[0] * F.sign(o[0])]),
      grad_inputs=(), grad_outputs=(0,))
unary("softrelu", _softrelu, lambda a, i, o, g: [g[0] * F.sigmoid(i[0])], float_only=True)
unary("erf", _np(sps.erf), lambda a, i, o, g: [
    g[0] * F.exp(-(i[0] * i[0])) * (2.0 / math.sqrt(math.pi))], float_only=True)
unary("gamma", _np(sps.gamma), lambda a, i, o, g: [g[0] * o[0] * F.digamma(i[0])],
      grad_outputs=(0,), float_only=True)
unary("gammaln", _np(sps.gammaln), lambda a, i, o, g: [g[0] * F.digamma(i[0])],
      float_only=True)
unary("digamma", _np(sps.psi), None, float_only=True)
# (not the ufunc itself: its probe values are outside [1, inf), so NaN, and a probe that
# compares NaN with NaN cannot tell a broken loop; the general path serves it)
unary("arccosh", _np(np.arccosh), lambda a, i, o, g: [g[0] * F.rsqrt(i[0] * i[0] - 1.0)],
      float_only=True)
unary("degrees", np.degrees, lambda a, i, o, g: [g[0] * (180.0 / math.pi)], grad_inputs=(),
      float_only=True)
unary("radians", np.radians, lambda a, i, o, g: [g[0] * (math.pi / 180.0)], grad_inputs=(),
      float_only=True)
unary("erfinv", _np(sps.erfinv), lambda a, i, o, g: [
    g[0] * F.exp(o[0] * o[0]) * (math.sqrt(math.pi) / 2.0)], grad_inputs=(),
    grad_outputs=(0,), float_only=True)
unary("rcbrt", _rcbrt, lambda a, i, o, g: [g[0] * o[0] / (i[0] * -3.0)], grad_outputs=(0,),
      float_only=True)
unary("softsign", _softsign, lambda a, i, o, g: [g[0] / F.square(F.abs(i[0]) + 1.0)],
      float_only=True, doc="``x / (1 + |x|)`` (MXNet's softsign).")
unary("log_sigmoid", _log_sigmoid, lambda a, i, o, g: [g[0] * F.sigmoid(-i[0])],
      float_only=True, doc="``log(sigmoid(x))``, computed as ``-softrelu(-x)``.")
unary("mish", _mish, lambda a, i, o, g: [g[0] * _mish_grad(i[0])], float_only=True,
      doc="``x * tanh(softrelu(x))`` (MXNet's mish).")
def _rounding(fn):
    """Rounding is the identity on integers and bools (NumPy's rint refuses them)."""
    def call(x, out):
        if x.dtype.kind in "biu":
            return np.copyto(out, x)
        return fn(x, out=out)
    return call


def _round_half_away(x, out):
    """MXNet's ``round``: halves away from zero (2.5 -> 3, -2.5 -> -3); NumPy's round
    takes halves to even."""
    t = np.trunc(x)
    half = np.abs(x - t) >= 0.5              # x - trunc(x) is exact in floating point
    return np.add(t, np.sign(x) * half, out=out, casting="unsafe")


def _rint_half_down(x, out):
    """MXNet's ``rint``: the nearer of floor(x) and ceil(x), floor(x) at a tie (1.5 ->
    1, -1.5 -> -2, 2.5 -> 2), as mshadow's rint; NumPy's rint takes halves to even."""
    f = np.floor(x)
    c = np.ceil(x)
    return np.copyto(out, np.where(x - f <= c - x, f, c), casting="unsafe")


for _name, _fn in (("floor", np.floor), ("ceil", np.ceil), ("round", _round_half_away),
                   ("rint", _rint_half_down), ("trunc", np.trunc), ("fix", np.trunc)):
    unary(_name, _rounding(_fn), _zero_grad, grad_inputs=(), doc=_fn.__doc__ if _name in (
        "round", "rint") else "")


# -- binary, with NumPy broadcasting --------------------------------------------------------

def _bshape(name):
    def infer(attrs, shapes):
        return [broadcast_shapes(name, shapes[0], shapes[1])]
    return infer


def _btype(name):
    def infer(attrs, dtypes):
        return [same_dtype(name, dtypes)]
    return infer


def _ub(g, x):
    return unbroadcast(g, x.shape)


def _binary_grad(left, right):
    """The rule ``[left(a, i, o, g), right(a, i, o, g)]``, skipping the side that the
    backward executor says no one needs (``needs``: the request null)."""
    def rule(a, i, o, g, needs=(True, True)):
        return [left(a, i, o, g) if needs[0] else None,
                right(a, i, o, g) if needs[1] else None]
    return rule


# The dtype rules that surprise NumPy users, told in the docs of the ops they concern.
KEEP_DTYPE = """The result keeps the inputs' dtype (MXNet's rule; NumPy would promote):
integer results wrap around on overflow (int8 ``100 + 100`` gives -56), and on bool
arrays ``+`` is a logical or and ``*`` a logical and."""

INT_DIVIDE = """On integer dtypes the quotient is computed in float64 and cast back, truncating
toward zero: ``7 / 2`` gives 3 and ``-7 / 2`` gives -3 (C's rule, not NumPy's floor
``//``); int64 values beyond 2**53 lose precision.  Division by zero raises nothing: the
float quotient (inf, -inf or NaN) goes through the platform's float-to-integer
conversion, which on x86-64 gives INT_MIN for int32 and int64 (``5 / 0``, ``-5 / 0`` and
``0 / 0`` are all -2147483648 in int32) and 0 for int8 and uint8; NumPy's RuntimeWarning
(divide by zero) is the only sign."""

CSR_DIVIDE = """Sparse kernel: ``csr / dense`` with a dense array that broadcasts to the csr's
shape (a row, a column, a full matrix; float32/float64) gives a csr of the csr's structure,
each stored value divided by the dense value at its position (MXNet's ``broadcast_div(csr,
dense) = csr``: the unstored zeros stay zero, even where the dense value is 0)."""

INT_MOD = """The result has the sign of the divisor (NumPy's and Python's ``%``); ``x % 0``
gives 0, as MXNet (floating-point too, where NumPy gives NaN; on integers with NumPy's
RuntimeWarning)."""


def _mod(a, b, out, casting):
    """``a % b`` with MXNet's 0 where ``b`` is 0 (NumPy's float mod gives NaN there)."""
    if out.dtype.kind != "f":
        return np.mod(a, b, out=out, casting=casting)
    zero = np.equal(b, 0)                    # before out is written: out may be b
    with np.errstate(divide="ignore", invalid="ignore"):
        np.mod(a, b, out=out, casting=casting)
    return np.copyto(out, 0, where=zero)


def binary(name, fn, grad, scalar, expr, aliases=(), grad_inputs=(0, 1), grad_outputs=(),
           differentiable=True, notes=KEEP_DTYPE, **sparse):
    """Register a binary op whose kernel is ``fn`` (a ufunc: then also the op's ``ufunc``
    for the invoker's short road); ``scalar``: the names of its forms ``array <op>
    number`` and ``number <op> array``; ``sparse``: its sparse kernel's ``compute_sparse``,
    ``sparse_stypes`` and ``sparse_check``."""
    def compute(attrs, ins, outs):
        fn(ins[0], ins[1], out=outs[0], casting="unsafe")
    return register(name, inputs=("lhs", "rhs"), aliases=aliases, compute=compute,
                    infer_shape=_bshape(name), infer_type=_btype(name), gradient=grad,
                    grad_inputs=grad_inputs, grad_outputs=grad_outputs,
                    inplace=[(0, 0), (1, 0)], differentiable=differentiable,
                    ufunc=fn if isinstance(fn, np.ufunc) else None, scalar_forms=scalar,
                    **sparse,
                    doc=f"``{expr}`` elementwise, with NumPy broadcasting; both inputs must "
                        f"have one dtype.\n\n{notes}")


# -- the sparse kernels of add, subtract, multiply ----------------------------------------

def _binary_stypes(name):
    def stypes(attrs, st):
        lhs, rhs = st
        if lhs == rhs and lhs in ("csr", "row_sparse"):
            return [lhs]
        if name == "multiply" and {lhs, rhs} == {"row_sparse", "default"}:
            return ["row_sparse"]
        if name == "multiply" and {lhs, rhs} == {"csr", "default"}:
            return ["csr"]
        return None
    return stypes


def _csr_binary(name, a, b, work):
    ap, bp = csr_np(a, work), csr_np(b, work)
    indptr = np.empty(a.shape[0] + 1, np.int64)
    nnz = K.csr_binary_count(name, *ap, *bp, indptr)
    out = Sparse("csr", a.shape, a.dtype, a.ctx, work, (nnz,), [(a.shape[0] + 1,), (nnz,)])
    out.aux[0][...] = indptr
    K.csr_binary_fill(name, *ap, *bp, out.aux[0], out.aux[1], out.data)
    return out.done()


def _rsp_binary(name, a, b, work):
    ai, bi = storage_host(a, 0), storage_host(b, 0)
    n = K.rsp_binary_count(name, ai, bi)
    out = Sparse("row_sparse", a.shape, a.dtype, a.ctx, work, (n,) + a.shape[1:], [(n,)])
    K.rsp_binary(name, ai, rows2d(data_np(a, work), ai.shape[0], a.shape), bi,
                 rows2d(data_np(b, work), bi.shape[0], b.shape), out.aux[0],
                 rows2d(out.data, n, a.shape))
    return out.done()


def _rsp_mul_dense(x, d, work):
    idx = storage_host(x, 0)
    n = idx.shape[0]
    out = Sparse("row_sparse", x.shape, x.dtype, x.ctx, work, (n,) + x.shape[1:], [(n,)])
    out.aux[0][...] = idx
    K.rsp_mul_dense(idx, rows2d(data_np(x, work), n, x.shape),
                    rows2d(dense_np(d, work), x.shape[0], x.shape),
                    rows2d(out.data, n, x.shape))
    return out.done()


def _csr_mul_dense(x, d, work):
    """csr ``x`` times dense ``d`` of one shape: x's structure, each stored value times
    the dense value at its position (MXNet's elemwise_mul(csr, default) = csr)."""
    indptr, indices, data = csr_np(x, work)
    rows = np.repeat(np.arange(x.shape[0]), np.diff(indptr))
    nnz = data.shape[0]
    out = Sparse("csr", x.shape, x.dtype, x.ctx, work, (nnz,), [(x.shape[0] + 1,), (nnz,)])
    out.aux[0][...] = indptr
    out.aux[1][...] = indices
    np.multiply(data, dense_np(d, work)[rows, indices], out=out.data)
    return out.done()


def _binary_check(attrs, shapes, dtypes):
    if shapes[0] != shapes[1]:
        return "broadcasting"
    return dtype_check(attrs, shapes, dtypes)


def _sparse_binary(name):
    """The sparse kernel of add, subtract or multiply, as register's keywords."""
    stypes = _binary_stypes(name)

    def compute(attrs, inputs):
        a, b = inputs
        work = work_dtype(a)
        if a.stype == b.stype == "csr":
            return [_csr_binary(name, a, b, work)]
        if a.stype == b.stype == "row_sparse":
            return [_rsp_binary(name, a, b, work)]
        x, d = (a, b) if a.stype != "default" else (b, a)
        if x.stype == "csr":
            return [_csr_mul_dense(x, d, work)]
        return [_rsp_mul_dense(x, d, work)]
    return {"compute_sparse": compute, "sparse_stypes": stypes,
            "sparse_check": _binary_check}


binary("add", np.add, _binary_grad(lambda a, i, o, g: _ub(g[0], i[0]),
                                   lambda a, i, o, g: _ub(g[0], i[1])),
       ("_plus_scalar", "_plus_scalar"),
       aliases=("broadcast_add", "broadcast_plus", "_plus", "_add"),
       grad_inputs=(), expr="lhs + rhs", **_sparse_binary("add"))
binary("subtract", np.subtract, _binary_grad(lambda a, i, o, g: _ub(g[0], i[0]),
                                             lambda a, i, o, g: _ub(-g[0], i[1])),
       ("_minus_scalar", "_rminus_scalar"),
       aliases=("broadcast_sub", "broadcast_minus", "_minus", "_sub", "sub"),
       grad_inputs=(), expr="lhs - rhs",
       notes=KEEP_DTYPE + "  Bool inputs are refused, as NumPy refuses them.",
       **_sparse_binary("subtract"))
binary("multiply", np.multiply,
       _binary_grad(lambda a, i, o, g: _ub(g[0] * i[1], i[0]),
                    lambda a, i, o, g: _ub(g[0] * i[0], i[1])),
       ("_mul_scalar", "_mul_scalar"),
       aliases=("broadcast_mul", "_mul", "mul"), expr="lhs * rhs", **_sparse_binary("multiply"))
def _csr_div_stypes(attrs, stypes):
    return ["csr"] if stypes[0] == "csr" and stypes[1] == "default" else None


def _csr_div_check(attrs, shapes, dtypes):
    lhs, rhs = shapes
    if len(rhs) > 2 or np.broadcast_shapes(lhs, rhs) != lhs:
        return "broadcasting to a larger shape"
    return floats_only(attrs, shapes, dtypes)


def _csr_div_dense(attrs, inputs):
    """csr / dense: the csr's structure, each stored value divided by the dense value at
    its position (MXNet's ``broadcast_div(csr, dense) = csr``; unstored zeros stay zero)."""
    x, d = inputs
    indptr, indices, values = (storage_host(x, i) for i in (0, 1, -1))
    rows = np.repeat(np.arange(x.shape[0]), np.diff(indptr))
    dense = np.broadcast_to(storage_host(d, -1).reshape(d.shape), x.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        data = np.divide(values, dense[rows, indices])
    return [_storage.from_parts("csr", x.shape, np.dtype(x.dtype), x.ctx, data,
                                [indptr, indices], check=False)]


binary("divide", np.divide,
       _binary_grad(lambda a, i, o, g: _ub(g[0] / i[1], i[0]),
                    lambda a, i, o, g: _ub(-g[0] * i[0] / (i[1] * i[1]), i[1])),
       ("_div_scalar", "_rdiv_scalar"),
       aliases=("broadcast_div", "_div", "div", "true_divide"),
       expr="lhs / rhs", notes=f"{KEEP_DTYPE}\n\n{INT_DIVIDE}\n\n{CSR_DIVIDE}",
       compute_sparse=_csr_div_dense, sparse_stypes=_csr_div_stypes,
       sparse_check=_csr_div_check)
binary("mod", _mod,
       lambda a, i, o, g: [_ub(g[0], i[0]), _ub(-g[0] * F.floor(i[0] / i[1]), i[1])],
       ("_mod_scalar", "_rmod_scalar"),
       aliases=("broadcast_mod", "_mod"), expr="lhs % rhs",
       notes=f"{KEEP_DTYPE}\n\n{INT_MOD}")
def _elemwise(name, base, sparse):
    """MXNet's ``elemwise_<op>``: ``base`` (add, subtract ...) on inputs of one shape
    (no broadcasting: unequal shapes raise), no scalar form; with ``sparse``, base's sparse
    kernel."""
    op = OPS[base]
    kernel = ({"compute_sparse": op.compute_sparse, "sparse_stypes": op.sparse_stypes,
               "sparse_check": op.sparse_check} if sparse else {})
    return register(name, inputs=("lhs", "rhs"), compute=op.compute, **kernel,
                    infer_shape=equal_shapes(name, hint=f"; broadcast_{name[9:]} broadcasts"), infer_type=_btype(name),
                    infer_inputs=fill_equal_shapes,
                    gradient=op.gradient, grad_inputs=op.grad_inputs,
                    grad_outputs=op.grad_outputs, inplace=[(0, 0), (1, 0)], ufunc=op.ufunc,
                    doc=f"``{base}`` of two arrays of one shape, as MXNet's ``{name}`` (no "
                        f"broadcasting: ``broadcast_{name[9:]}`` broadcasts).\n\n"
                        + op.doc.split("\n\n", 1)[1])


binary("power", np.power,
       lambda a, i, o, g: [_ub(g[0] * i[1] * i[0] ** (i[1] - 1.0), i[0]),
                           _ub(g[0] * o[0] * F.log(i[0]), i[1])],
       ("_power_scalar", "_rpower_scalar"),
       aliases=("broadcast_power", "_power", "pow"), grad_outputs=(0,), expr="lhs ** rhs",
       notes=KEEP_DTYPE + "  On integers a negative exponent raises ValueError (NumPy's "
                          "rule).")
binary("maximum", np.maximum,
       lambda a, i, o, g: [_ub(g[0] * (i[0] >= i[1]), i[0]), _ub(g[0] * (i[0] < i[1]), i[1])],
       ("_maximum_scalar", "_maximum_scalar"),
       aliases=("broadcast_maximum", "_maximum"), expr="maximum(lhs, rhs)")
binary("minimum", np.minimum,
       lambda a, i, o, g: [_ub(g[0] * (i[0] <= i[1]), i[0]), _ub(g[0] * (i[0] > i[1]), i[1])],
       ("_minimum_scalar", "_minimum_scalar"),
       aliases=("broadcast_minimum", "_minimum"), expr="minimum(lhs, rhs)")
binary("hypot", np.hypot,
       lambda a, i, o, g: [_ub(g[0] * i[0] / o[0], i[0]), _ub(g[0] * i[1] / o[0], i[1])],
       ("_hypot_scalar", "_hypot_scalar"),
       aliases=("broadcast_hypot", "_hypot"), grad_outputs=(0,), expr="hypot(lhs, rhs)")

COMPARE_DTYPE = ("The result is 1 where true and 0 elsewhere, in the inputs' dtype (MXNet; "
                 "not bool).")

# number <op> array flips the comparison: 2 < x is x > 2.
for _name, _fn, _sym, _rev, _al in (
        ("equal", np.equal, "==", "equal", ("broadcast_equal", "_equal")),
        ("not_equal", np.not_equal, "!=", "not_equal", ("broadcast_not_equal", "_not_equal")),
        ("greater", np.greater, ">", "lesser", ("broadcast_greater", "_greater")),
        ("greater_equal", np.greater_equal, ">=", "lesser_equal",
         ("broadcast_greater_equal", "_greater_equal")),
        ("lesser", np.less, "<", "greater", ("broadcast_lesser", "_lesser", "less")),
        ("lesser_equal", np.less_equal, "<=", "greater_equal",
         ("broadcast_lesser_equal", "_lesser_equal", "less_equal"))):
    binary(_name, _fn, None, (f"_{_name}_scalar", f"_{_rev}_scalar"), aliases=_al,
           differentiable=False, expr=f"lhs {_sym} rhs", notes=COMPARE_DTYPE)

for _name, _base in (("elemwise_add", "add"), ("elemwise_sub", "subtract"),
                     ("elemwise_mul", "multiply"), ("elemwise_div", "divide")):
    _elemwise(_name, _base, sparse=_base != "divide")


# -- scalar forms (MXNet's _plus_scalar ...) -----------------------------------------------

SCALAR_DTYPE = """The result keeps ``data``'s dtype (MXNet), so the scalar is made a value of
that dtype first.  It arrives as a float64 (a Python int too: ``x + 3`` runs
``_plus_scalar(x, scalar=3.0)``), which an integer dtype truncates toward zero and then
wraps around into its range, as MXNet's C++ cast does in practice (int8: 300 -> 44,
uint8: -2 -> 254; for ``+``, ``-`` and ``*`` that is what wrapping integer arithmetic
gives anyway).  On integer arrays ``x * 0.5`` therefore multiplies by 0, ``x ** 0.5``
raises to the power 0, ``x == 2.5`` compares with 2 and int8 ``x > 300`` compares with
44.  An integer scalar beyond 2**53 is rounded to the nearest float64 first, so int64
``[2**53] + (2**53 + 1)`` gives ``[2**54]`` where NumPy gives 2**54 + 1 (only the scalar
is rounded: the array's values stay exact).  A scalar that is NaN, an infinity or beyond
int64 (``2**63 - 1`` too, which rounds to 2**63) raises ValueError before anything is
written.  Integer results wrap around on overflow, as in the array form."""


_ndarray = np.ndarray


def _keep_stype_if_zero(attrs, stypes):
    return _keep_stype(attrs, stypes) if attrs["scalar"] == 0 else None


def scalar_op(name, fn, grad, expr, reverse=False, grad_inputs=(0,), grad_outputs=(),
              sparse=False, differentiable=True, notes=""):
    """``fn(x, s)`` (or ``fn(s, x)`` when ``reverse``) with the scalar cast to x's dtype.

    ``sparse``: True (zero-preserving for every scalar), "zero" (only for the scalar 0,
    as MXNet's ``_plus_scalar``/``_minus_scalar``: ``x + 0`` keeps x's storage type), or
    a storage rule ``rule(attrs, stypes)`` deciding per call."""
    def compute(attrs, ins, outs):
        x = ins[0]
        s = attrs["scalar"]
        # NumPy casts a Python float to a floating array's dtype itself (NEP 50), as
        # dtype_scalar would; integer dtypes need dtype_scalar's truncation and checks,
        # and CuPy arrays get the scalar of their dtype.
        if type(s) is not float or type(x) is not _ndarray or x.dtype.kind != "f":
            s = dtype_scalar(name, "scalar", s, x.dtype, wrap=True)
        if reverse:
            fn(s, x, out=outs[0], casting="unsafe")
        else:
            fn(x, s, out=outs[0], casting="unsafe")
    doc = f"``{expr}`` elementwise, ``scalar`` a number.\n\n{SCALAR_DTYPE}"
    return register(name, attrs={"scalar": Attr("float", required=True)}, compute=compute,
                    infer_type=scalar_type(name, "scalar", wrap=True),
                    doc=doc + (f"\n\n{notes}" if notes else ""),
                    gradient=grad, grad_inputs=grad_inputs, grad_outputs=grad_outputs,
                    inplace=[(0, 0)], differentiable=differentiable,
                    compute_sparse=_sparse_map(compute) if sparse else None,
                    sparse_stypes=sparse if callable(sparse) else
                    (_keep_stype_if_zero if sparse == "zero" else _keep_stype)
                    if sparse else None)


def _s(a):
    return a["scalar"]


_ZERO_KEEPS = ("On csr and row_sparse data the scalar 0 keeps the storage type (MXNet); "
               "another scalar gives a dense result.")
scalar_op("_plus_scalar", np.add, lambda a, i, o, g: [g[0]], "data + scalar",
          grad_inputs=(), sparse="zero", notes=_ZERO_KEEPS)
scalar_op("_minus_scalar", np.subtract, lambda a, i, o, g: [g[0]], "data - scalar",
          grad_inputs=(), sparse="zero", notes=_ZERO_KEEPS)
scalar_op("_rminus_scalar", np.subtract, lambda a, i, o, g: [-g[0]], "scalar - data",
          reverse=True, grad_inputs=())
scalar_op("_mul_scalar", np.multiply, lambda a, i, o, g: [g[0] * _s(a)], "data * scalar",
          grad_inputs=(), sparse=True)
scalar_op("_div_scalar", np.divide, lambda a, i, o, g: [g[0] / _s(a)], "data / scalar",
          grad_inputs=(), sparse=True, notes=INT_DIVIDE)
scalar_op("_rdiv_scalar", np.divide, lambda a, i, o, g: [-g[0] * o[0] / i[0]],
          "scalar / data", reverse=True, grad_outputs=(0,), notes=INT_DIVIDE)
scalar_op("_mod_scalar", _mod, lambda a, i, o, g: [g[0]], "data % scalar", grad_inputs=(),
          notes=INT_MOD)
scalar_op("_rmod_scalar", _mod, lambda a, i, o, g: [-g[0] * F.floor(_s(a) / i[0])],
          "scalar % data", reverse=True, notes=INT_MOD)
scalar_op("_power_scalar", np.power,
          lambda a, i, o, g: [g[0] * _s(a) * i[0] ** (_s(a) - 1.0)], "data ** scalar")
scalar_op("_rpower_scalar", np.power, lambda a, i, o, g: [g[0] * o[0] * math.log(_s(a))],
          "scalar ** data", reverse=True, grad_inputs=(), grad_outputs=(0,))
scalar_op("_maximum_scalar", np.maximum, lambda a, i, o, g: [g[0] * (i[0] >= _s(a))],
          "maximum(data, scalar)")
scalar_op("_minimum_scalar", np.minimum, lambda a, i, o, g: [g[0] * (i[0] <= _s(a))],
          "minimum(data, scalar)")
scalar_op("_hypot_scalar", np.hypot, lambda a, i, o, g: [g[0] * i[0] / o[0]],
          "hypot(data, scalar)", grad_outputs=(0,))
def _keep_stype_if_false_at_zero(fn):
    """The storage rule of a comparison with a scalar: sparse data stays sparse when
    ``fn(0, scalar)`` is false (the implicit zeros stay zeros: ``x == 2``, ``x > 1``),
    as MXNet's.  Only for a whole scalar in (-128, 128), which every dtype's cast of
    the scalar (truncation, wrap-around in int8/uint8) leaves with the same answer at 0;
    other scalars give a dense result."""
    def rule(attrs, stypes):
        s = attrs["scalar"]
        if float(s).is_integer() and abs(s) < 128 and not fn(0, s):
            return _keep_stype(attrs, stypes)
        return None
    return rule


_COMPARE_SPARSE = ("On csr and row_sparse data the result keeps the storage type when "
                   "the comparison is false at 0 for a whole scalar in (-128, 128) "
                   "(``x == 2``, ``x > 1``; MXNet also for other scalars); otherwise it "
                   "is dense.")
for _name, _fn, _sym in (("_equal_scalar", np.equal, "=="),
                         ("_not_equal_scalar", np.not_equal, "!="),
                         ("_greater_scalar", np.greater, ">"),
                         ("_greater_equal_scalar", np.greater_equal, ">="),
                         ("_lesser_scalar", np.less, "<"),
                         ("_lesser_equal_scalar", np.less_equal, "<=")):
    scalar_op(_name, _fn, None, f"data {_sym} scalar", differentiable=False,
              sparse=_keep_stype_if_false_at_zero(_fn),
              notes=COMPARE_DTYPE + "\n\n" + _COMPARE_SPARSE)


# -- where, clip, cast, copies ------------------------------------------------------------

def _mask(m, like):
    """A 0/1 mask in the dtype of ``like`` (the condition may have any dtype)."""
    return m if m.dtype == like.dtype else F.cast(m, dtype=like.dtype)


def _selects_rows(c, x, y):
    """MXNet's row form of where: a 1-D condition of x.shape[0] values with x and y of
    one shape (of 2 or more dimensions) picks whole rows."""
    return len(c) == 1 and len(x) > 1 and x == y and c[0] == x[0]


def _where_shape(attrs, shapes):
    c, x, y = shapes
    if _selects_rows(c, x, y):
        return [x]
    if len(c) == 1 and len(x) > 1 and x == y:
        # MXNet's row form, with a length that does not match: MXNet refuses it, and
        # broadcasting it along the last axis instead would silently pick columns
        raise ValueError(f"where: a 1-D condition selects rows of x and must have "
                         f"x.shape[0] = {x[0]} values (got shape {c!r})")
    return [broadcast_shapes("where", *shapes)]


def _where_inputs(attrs, shapes):
    # MXNet's where: x and y have one shape, and so has the condition unless it selects
    # rows; an unknown one of x and y takes the other's (ZoneoutCell's first step picks
    # from sym.zeros of unknown shape)
    c, x, y = shapes
    known = x if x is not None else y
    if known is not None:
        shapes[1] = shapes[1] or known
        shapes[2] = shapes[2] or known
        shapes[0] = shapes[0] or known
    return shapes


def _where_type(attrs, dtypes):
    return [same_dtype("where", dtypes[1:])]


def _as_rows(c, ndim):
    """A 1-D condition shaped (n, 1, ..., 1) to broadcast over rows."""
    return c.reshape((c.shape[0],) + (1,) * (ndim - 1))


def _where(attrs, ins, outs):
    c, x, y = ins
    if _selects_rows(c.shape, x.shape, y.shape):
        c = _as_rows(c, x.ndim)
    np.copyto(outs[0], np.where(c != 0, x, y))


def _where_grad(a, i, o, g):
    c, x, y = i
    g = g[0]
    if _selects_rows(c.shape, x.shape, y.shape):
        c = F.reshape(c, shape=(c.shape[0],) + (1,) * (g.ndim - 1))
    return [None, _ub(g * _mask(c != 0, g), x), _ub(g * _mask(c == 0, g), y)]


def _where_sparse_stypes(attrs, stypes):
    if stypes[0] == "csr" and stypes[1] == stypes[2] == "default":
        return ["default"]
    return None


def _where_sparse_check(attrs, shapes, dtypes):
    return None if shapes[0] == shapes[1] == shapes[2] else "broadcasting"


def _where_sparse(attrs, inputs):
    cond, x, y = inputs
    indptr, indices, values = (storage_host(cond, i) for i in (0, 1, -1))
    rows = np.repeat(np.arange(cond.shape[0]), np.diff(indptr))
    pick = values != 0
    res = np.array(storage_host(y, -1), copy=True).reshape(y.shape)
    r, c = rows[pick], indices[pick]
    res[r, c] = storage_host(x, -1).reshape(x.shape)[r, c]
    return [from_numpy(res, y.ctx)]


register("where", inputs=("condition", "x", "y"), compute=_where, infer_shape=_where_shape,
         infer_inputs=_where_inputs, infer_type=_where_type, grad_inputs=(0,), gradient=_where_grad,
         compute_sparse=_where_sparse, sparse_stypes=_where_sparse_stypes,
         sparse_check=_where_sparse_check,
         doc="""``x`` where ``condition`` is nonzero, else ``y`` (MXNet's ``where``).

As MXNet: a 1-D ``condition`` whose length is ``x.shape[0]``, with ``x`` and ``y`` of one
shape of 2 or more dimensions, selects whole rows (``where([1, 0], x, y)`` takes row 0
of x and row 1 of y); a 1-D condition of another length with such x and y is refused,
as in MXNet.  Otherwise the three shapes broadcast as NumPy's (MXNet requires equal
shapes there).  ``x`` and ``y`` share one dtype, the result's.

Sparse kernel: a csr ``condition`` with dense ``x`` and ``y`` of its shape gives ``y``
with ``x`` at the condition's stored nonzero entries (MXNet's ``where(csr, default,
default) = default``); broadcasting takes the storage fallback.""")


def _clip_type(attrs, dtypes):
    for name in ("a_min", "a_max"):
        dtype_scalar("clip", name, attrs[name], dtypes[0])
    if attrs["a_min"] > attrs["a_max"]:
        raise ValueError(f"clip: a_min must be <= a_max (got a_min={attrs['a_min']}, "
                         f"a_max={attrs['a_max']})")
    return [dtypes[0]]


def _clip(attrs, ins, outs):
    x = ins[0]
    np.clip(x, dtype_scalar("clip", "a_min", attrs["a_min"], x.dtype),
            dtype_scalar("clip", "a_max", attrs["a_max"], x.dtype), out=outs[0])


def _clip_stypes(attrs, stypes):
    """MXNet: clip(csr or row_sparse, a_min <= 0 <= a_max) keeps the storage type (zeros
    stay zeros); other bounds give a dense result."""
    if attrs["a_min"] <= 0 <= attrs["a_max"]:
        return _keep_stype(attrs, stypes)
    return None


register("clip", attrs={"a_min": Attr("float", required=True),
                        "a_max": Attr("float", required=True)},
         compute=_clip, infer_type=_clip_type, inplace=[(0, 0)], grad_inputs=(0,),
         compute_sparse=_sparse_map(_clip), sparse_stypes=_clip_stypes,
         gradient=lambda a, i, o, g: [g[0] * (i[0] >= a["a_min"]) * (i[0] <= a["a_max"])],
         doc="``data`` limited to [``a_min``, ``a_max``].  The bounds are cast to "
             "``data``'s dtype (MXNet), truncated toward zero for integers (``a_min=2.5`` "
             "clips at 2); a bound the dtype cannot hold (NaN, an infinity, out of range, "
             "e.g. 1e30 for int32) raises ValueError.  As MXNet, csr and row_sparse "
             "inputs keep their storage type when a_min <= 0 <= a_max (the stored values "
             "are clipped), and give a dense result otherwise.")


def _cast(attrs, ins, outs):
    np.copyto(outs[0], ins[0], casting="unsafe")


def _cast_sparse(attrs, inputs):
    """csr / row_sparse cast: the values cast, the layout kept."""
    x = inputs[0]
    aux = [storage_host(x, i) for i in range(len(x.chunk.aux_shapes))]
    return [_storage.from_parts(x.stype, x.shape, attrs["dtype"], x.ctx, storage_host(x, -1),
                                aux, check=False)]


register("cast", aliases=("Cast",), attrs={"dtype": Attr("dtype", required=True)},
         compute=_cast, infer_type=lambda a, d: [a["dtype"]], compute_sparse=_cast_sparse,
         sparse_stypes=lambda attrs, stypes: [stypes[0]],
         gradient=lambda a, i, o, g: [F.cast(g[0], dtype=i[0].dtype)])


def _copy(attrs, ins, outs):
    np.copyto(outs[0], ins[0])


register("copy", aliases=("identity", "_copy"), compute=_copy, inplace=[(0, 0)],
         gradient=lambda a, i, o, g: [g[0]])
register("stop_gradient", aliases=("BlockGrad",), compute=_copy, inplace=[(0, 0)],
         differentiable=False)
register("_identity_with_attr_like_rhs", inputs=("lhs", "rhs"), compute=_copy,
         ignores=(1,), infer_shape=equal_shapes("_identity_with_attr_like_rhs"),
         infer_inputs=fill_equal_shapes, infer_type=lambda a, d: [d[0]],
         gradient=lambda a, i, o, g: [g[0], None],
         doc="``lhs`` itself, with ``rhs`` of the same shape (MXNet's internal operator "
             "that ties a computed array's shape to another's, so graph-mode shape "
             "inference can fill either from the other); ``rhs`` gets no gradient.")


def _fill(value):
    def compute(attrs, ins, outs):
        outs[0][...] = value
    return compute


def _like_storage(attrs, stypes):
    return [stypes[0]] if stypes[0] != "default" else None


def _zeros_like_sparse(attrs, inputs):
    x = inputs[0]
    return [_storage.zeros(x.stype, x.shape, ctx=x.ctx, dtype=x.dtype)]


register("zeros_like", compute=_fill(0), ignores=(0,), differentiable=False,
         compute_sparse=_zeros_like_sparse, sparse_stypes=_like_storage)
register("ones_like", compute=_fill(1), ignores=(0,), differentiable=False)


def _add_n_shape(attrs, shapes):
    for s in shapes[1:]:
        if s != shapes[0]:
            raise ValueError(f"add_n: all inputs must have one shape (got "
                             f"{', '.join(map(repr, shapes))})")
    return [shapes[0]]


def _add_n(attrs, ins, outs):
    out = outs[0]
    if len(ins) == 1:
        np.copyto(out, ins[0])
        return
    np.add(ins[0], ins[1], out=out)
    for x in ins[2:]:
        np.add(out, x, out=out)


def _add_n_type(attrs, dtypes):
    return [same_dtype("add_n", dtypes)]


def _add_n_stypes(attrs, st):
    return ["row_sparse"] if all(s == "row_sparse" for s in st) else None


def _add_n_sparse(attrs, inputs):
    x = inputs[0]
    work = work_dtype(x)
    idx = [storage_host(v, 0) for v in inputs]
    n = K.rsp_union_count(idx)
    out = Sparse("row_sparse", x.shape, x.dtype, x.ctx, work, (n,) + x.shape[1:], [(n,)])
    K.rsp_add_n(idx, [rows2d(data_np(v, work), i.shape[0], x.shape)
                      for v, i in zip(inputs, idx)], out.aux[0], rows2d(out.data, n, x.shape))
    return [out.done()]


register("add_n", aliases=("ElementWiseSum",), inputs=("args",), variadic=True,
         compute=_add_n, infer_shape=_add_n_shape, infer_type=_add_n_type,
         compute_sparse=_add_n_sparse, sparse_stypes=_add_n_stypes, sparse_check=dtype_check,
         inplace=[(0, 0)], gradient=lambda a, i, o, g: [g[0]] * len(i))
