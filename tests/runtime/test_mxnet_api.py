"""MXNet's calling conventions and documented semantics: attributes by
position in the order of MXNet's generated signatures, ``name=``, optional inputs, and
the cases from MXNet's documentation, with NumPy as the numeric reference."""

import numpy as np
import pytest

from runtime import base, nd
from runtime import random as rt_random
from runtime import symbol as sym
from runtime.nd import _ops
from runtime.ops import registry
from tests.runtime.conftest import dense_values, free_failing_tests
from tests.runtime.op_samples import SAMPLES

# Calls of every op by position include sparse samples that fall back to dense kernels
# (each fallback is tested where it is a feature: test_sparse_ops.py).
pytestmark = pytest.mark.filterwarnings("ignore::runtime.errors.StorageFallbackWarning")

# -- attributes by position ----------------------------------------------------------------

# MXNet 1.x's documented signatures (mx.nd.<op>(inputs..., attributes...)): the array
# inputs, then the attributes this runtime declares, in MXNet's order.
MXNET_SIGNATURES = {
    "sum": ("data", "axis", "keepdims", "exclude"),
    "mean": ("data", "axis", "keepdims", "exclude"),
    "prod": ("data", "axis", "keepdims", "exclude"),
    "max": ("data", "axis", "keepdims", "exclude"),
    "min": ("data", "axis", "keepdims", "exclude"),
    "argmax": ("data", "axis", "keepdims"),
    "argmin": ("data", "axis", "keepdims"),
    "norm": ("data", "ord", "axis", "out_dtype", "keepdims"),
    "one_hot": ("indices", "depth", "on_value", "off_value", "dtype"),
    "clip": ("data", "a_min", "a_max"),
    "reshape": ("data", "shape", "reverse", "target_shape", "keep_highest"),
    "transpose": ("data", "axes"),
    "expand_dims": ("data", "axis"),
    "squeeze": ("data", "axis"),
    "split": ("data", "num_outputs", "axis", "squeeze_axis"),
    "cast": ("data", "dtype"),
    "broadcast_to": ("data", "shape"),
    "broadcast_like": ("lhs", "rhs", "lhs_axes", "rhs_axes"),
    "reshape_like": ("lhs", "rhs", "lhs_begin", "lhs_end", "rhs_begin", "rhs_end"),
    "slice": ("data", "begin", "end", "step"),
    "slice_axis": ("data", "axis", "begin", "end"),
    "take": ("a", "indices", "axis", "mode"),
    "pick": ("data", "index", "axis", "keepdims", "mode"),
    "tile": ("data", "reps"),
    "repeat": ("data", "repeats", "axis"),
    "flip": ("data", "axis"),
    "dot": ("lhs", "rhs", "transpose_a", "transpose_b", "forward_stype"),
    "batch_dot": ("lhs", "rhs", "transpose_a", "transpose_b", "forward_stype"),
    "FullyConnected": ("data", "weight", "bias", "num_hidden", "no_bias", "flatten"),
    "Embedding": ("data", "weight", "input_dim", "output_dim", "dtype", "sparse_grad"),
    "softmax": ("data", "length", "axis", "temperature", "dtype", "use_length"),
    "log_softmax": ("data", "axis", "temperature", "dtype", "use_length"),
    "Dropout": ("data", "p", "mode", "axes", "cudnn_off"),
    "cast_storage": ("data", "stype"),
    "where": ("condition", "x", "y"),
}


@pytest.mark.parametrize("name", sorted(MXNET_SIGNATURES))
def test_declaration_order_is_mxnets(name):
    op = registry.get(name)
    assert op.inputs + tuple(op.attrs) == MXNET_SIGNATURES[name]


def _positional_cases():
    for name in sorted(SAMPLES):
        op = registry.get(name)
        if op.variadic and len(op.inputs) <= 1:
            continue                      # concat, add_n: every positional is an array
        for i, s in enumerate(SAMPLES[name]):
            if s.attrs:
                yield pytest.param(name, i, id=f"{name}-{i}")


@pytest.mark.parametrize("name, i", list(_positional_cases()))
def test_every_op_takes_its_attributes_by_position(name, i):
    """The generic check: each sample called with its attributes by position (the ones
    it leaves out in between at their defaults) gives what the keyword call gives."""
    op = registry.get(name)
    s = SAMPLES[name][i]
    order = list(op.attrs)
    last = max(order.index(k) for k in s.attrs)
    positional = [s.attrs[k] if k in s.attrs else op.attrs[k].default
                  for k in order[:last + 1]]
    fn = getattr(nd, name)
    arrays = s.build()
    arrays += [None] * (len(op.inputs) - len(arrays))    # optional inputs left out
    rt_random.seed(7)
    by_keyword = fn(*s.build(), **s.attrs)
    rt_random.seed(7)                                     # Dropout draws the same mask
    by_position = fn(*arrays, *positional)
    a = by_keyword if isinstance(by_keyword, list) else [by_keyword]
    b = by_position if isinstance(by_position, list) else [by_position]
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert (x.shape, x.dtype, x.stype) == (y.shape, y.dtype, y.stype)
        np.testing.assert_array_equal(dense_values(x), dense_values(y))


X = np.arange(1, 13, dtype=np.float32).reshape(3, 4)


def test_documented_positional_calls():
    x = nd.array(X)
    np.testing.assert_array_equal(nd.sum(x, 1).asnumpy(), X.sum(1))
    np.testing.assert_array_equal(nd.sum(x, 1, True).asnumpy(), X.sum(1, keepdims=True))
    np.testing.assert_array_equal(nd.sum(x, 1, False, True).asnumpy(), X.sum(0))
    np.testing.assert_array_equal(nd.one_hot(nd.array([0, 2]), 3).asnumpy(), np.eye(3)[[0, 2]])
    np.testing.assert_array_equal(nd.one_hot(nd.array([1]), 3, 5, -1, "int32").asnumpy(),
                                  np.array([[-1, 5, -1]], np.int32))
    np.testing.assert_array_equal(nd.clip(x, 2, 5).asnumpy(), np.clip(X, 2, 5))
    np.testing.assert_array_equal(nd.reshape(x, (4, 3)).asnumpy(), X.reshape(4, 3))
    np.testing.assert_array_equal(nd.transpose(x, (1, 0)).asnumpy(), X.T)
    parts = nd.split(x, 2, 1)
    np.testing.assert_array_equal(parts[1].asnumpy(), X[:, 2:])
    parts = nd.split(nd.array(X[:, :2]), 2, 1, True)
    assert parts[0].shape == (3,)
    assert nd.cast(x, "int32").dtype == np.int32
    w, b = nd.array(X[:2]), nd.array([1.0, -1.0])
    ref = X @ X[:2].T
    np.testing.assert_array_equal(nd.FullyConnected(x, w, b, 2).asnumpy(), ref + [1, -1])
    np.testing.assert_array_equal(nd.FullyConnected(x, w, None, 2, True).asnumpy(), ref)
    np.testing.assert_array_equal(
        nd.FullyConnected(x, w, None, 2, no_bias=True).asnumpy(), ref)
    np.testing.assert_array_equal(
        nd.FullyConnected(x, w, bias=None, num_hidden=2, no_bias=True).asnumpy(), ref)
    np.testing.assert_array_equal(
        nd.FullyConnected(data=x, weight=w, bias=b, num_hidden=2).asnumpy(), ref + [1, -1])
    e = nd.Embedding(nd.array([0, 4]), nd.array(X[:, :3].repeat(2, 0)[:5]), 5, 3)
    np.testing.assert_array_equal(e.asnumpy(), X[:, :3].repeat(2, 0)[[0, 4]])


def test_methods_take_attributes_by_position():
    x = nd.array(X)
    np.testing.assert_array_equal(x.sum(1).asnumpy(), X.sum(1))
    np.testing.assert_array_equal(x.max(0, True).asnumpy(), X.max(0, keepdims=True))
    np.testing.assert_array_equal(x.argmax(1).asnumpy(), X.argmax(1).astype(np.float32))
    np.testing.assert_array_equal(x.clip(0, 5).asnumpy(), np.clip(X, 0, 5))
    assert x.expand_dims(0).shape == (1, 3, 4)
    np.testing.assert_array_equal(x.transpose((1, 0)).asnumpy(), X.T)
    np.testing.assert_array_equal(x.one_hot(13).asnumpy()[1, 2], np.eye(13)[7])


def test_name_is_accepted_and_ignored():
    x = nd.array(X)
    np.testing.assert_array_equal(nd.sum(x, axis=0, name="s").asnumpy(), X.sum(0))
    np.testing.assert_array_equal(nd.relu(x, name="r").asnumpy(), X)
    np.testing.assert_array_equal(nd.add(x, x, name="a").asnumpy(), 2 * X)
    np.testing.assert_array_equal(nd.concat(x, x, dim=0, name="c").asnumpy(),
                                  np.concatenate([X, X]))
    np.testing.assert_array_equal(nd.sum(x, 0, name=None).asnumpy(), X.sum(0))


def test_argument_errors_name_the_op_and_the_argument():
    x = nd.array(X)
    w = nd.array(X[:2])
    with pytest.raises(TypeError, match=r"^sum: argument 'axis' \(position 2\) is an "
                                        r"attribute, not an array .*shape \(3, 4\)"):
        nd.sum(x, x)
    with pytest.raises(TypeError, match=r"^clip: argument 'a_max' \(position 3\)"):
        x.clip(0, x)
    with pytest.raises(TypeError, match=r"^take: input indices must be an NDArray \(got int "
                                        r"1\); attributes come after the array inputs"):
        nd.take(x, 1)
    with pytest.raises(TypeError, match=r"^FullyConnected: input bias must be an NDArray "
                                        r"\(got int 2\)"):
        nd.FullyConnected(x, w, 2, no_bias=True)
    with pytest.raises(TypeError, match=r"^sum: takes 1 array input\(s\) \(data\) and 3 "
                                        r"attribute\(s\) \(axis, keepdims, exclude\) by "
                                        r"position \(got 5\)"):
        nd.sum(x, 0, False, False, 1)
    with pytest.raises(TypeError, match=r"^exp: takes 1 array input\(s\) \(data\) \(got 2\)"):
        nd.exp(x, 1)
    with pytest.raises(TypeError, match=r"^sum: got multiple values for argument 'axis'"):
        nd.sum(x, 0, axis=1)
    with pytest.raises(TypeError, match=r"^FullyConnected: got multiple values for input "
                                        r"weight"):
        nd.FullyConnected(x, w, weight=w, num_hidden=2, no_bias=True)
    with pytest.raises(TypeError, match=r"^FullyConnected: input weight is missing before "
                                        r"input bias"):
        nd.FullyConnected(data=x, bias=nd.array([1.0, 2.0]), num_hidden=2)
    with pytest.raises(TypeError, match=r"^concat: input #1 must be an NDArray \(got int 1\)"):
        nd.concat(x, 1)


@pytest.mark.parametrize("name", ["sum", "FullyConnected", "concat", "softmax", "clip"])
def test_docstring_shows_the_positional_signature(name):
    op = registry.get(name)
    first = getattr(nd, name).__doc__.splitlines()[0]
    assert first == _ops.signature(op)
    assert first.startswith(f"{name}(")
    assert first.endswith("out=None, name=None)")


def test_docstring_signatures():
    assert nd.sum.__doc__.splitlines()[0] == (
        "sum(data, axis=None, keepdims=False, exclude=False, out=None, name=None)")
    assert nd.FullyConnected.__doc__.splitlines()[0] == (
        "FullyConnected(data, weight, bias=None, num_hidden=<required>, no_bias=False, "
        "flatten=True, out=None, name=None)")
    assert nd.concat.__doc__.splitlines()[0] == (
        "concat(*data, dim=1, num_args=None, out=None, name=None)")
    assert nd.clip.__doc__.splitlines()[0] == (
        "clip(data, a_min=<required>, a_max=<required>, out=None, name=None)")


# -- softmax(length, dtype, use_length), dot(forward_stype), norm(out_dtype) ----------------

def _np_softmax(x, axis=-1, t=1.0):
    e = np.exp((x - x.max(axis=axis, keepdims=True)) / t)
    return e / e.sum(axis=axis, keepdims=True)


def test_softmax_with_length_masks_as_mxnet():
    """MXNet's softmax(data, length, axis, temperature, dtype, use_length): each row's
    softmax over its first ``length`` entries, 0 after them."""
    x = np.random.default_rng(0).uniform(-2, 2, (3, 5))
    length = np.array([2, 5, 0])
    got = nd.softmax(nd.array(x, dtype="float64"), nd.array(length, dtype="int32"),
                     use_length=True).asnumpy()
    want = np.zeros_like(x)
    want[0, :2] = _np_softmax(x[0, :2])
    want[1] = _np_softmax(x[1])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    # along axis 0, with a temperature, by position
    got = nd.softmax(nd.array(x, dtype="float64"), nd.array([3, 1, 2, 0, 3], dtype="int64"),
                     0, 2.0, None, True).asnumpy()
    for j, n in enumerate([3, 1, 2, 0, 3]):
        col = np.zeros(3)
        col[:n] = _np_softmax(x[:n, j], t=2.0) if n else 0
        np.testing.assert_allclose(got[:, j], col, rtol=1e-12, atol=1e-15)


def test_softmax_with_length_gradient():
    from runtime import autograd
    x = np.random.default_rng(1).uniform(-2, 2, (2, 4))
    g = np.random.default_rng(2).uniform(-1, 1, (2, 4))
    length = np.array([3, 1])
    xa = nd.array(x, dtype="float64")
    xa.attach_grad()
    with autograd.record():
        y = nd.softmax(xa, nd.array(length, dtype="int32"), use_length=True)
    y.backward(nd.array(g, dtype="float64"))
    want = np.zeros_like(x)
    for i, n in enumerate(length):
        s = _np_softmax(x[i, :n])
        want[i, :n] = s * (g[i, :n] - (g[i, :n] * s).sum())
    np.testing.assert_allclose(xa.grad.asnumpy(), want, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("src, dtype", [("float16", "float32"), ("float32", "float64"),
                                        ("float64", "float16")])
def test_softmax_dtype_is_the_output_dtype(name, src, dtype):
    x = np.random.default_rng(3).uniform(-2, 2, (2, 3)).astype(src)
    y = getattr(nd, name)(nd.array(x, dtype=src), dtype=dtype)
    assert y.dtype == np.dtype(dtype)
    want = _np_softmax(x.astype(np.float64))
    if name == "log_softmax":
        want = np.log(want)
    tol = 2e-3 if "float16" in (src, dtype) else 1e-6
    np.testing.assert_allclose(y.asnumpy().astype(np.float64), want, rtol=tol, atol=tol)


def test_softmax_dtype_gradient_has_the_input_dtype():
    from runtime import autograd
    x = nd.array([[1.0, 2.0, 0.5]], dtype="float32")
    x.attach_grad()
    with autograd.record():
        y = nd.softmax(x, dtype="float64")
    y.backward(nd.array([[1.0, 0.0, 0.0]], dtype="float64"))
    assert x.grad.dtype == np.float32
    s = _np_softmax(np.array([[1.0, 2.0, 0.5]]))
    np.testing.assert_allclose(x.grad.asnumpy(), s * (np.eye(3)[0] - s[0, 0]), rtol=1e-6)


@pytest.mark.parametrize("stype", ["csr", "row_sparse", "default"])
def test_dot_forward_stype(stype):
    import scipy.sparse as sp
    a = np.array([[0.0, 2.0, 0.0], [0.0, 0.0, 0.0], [1.0, 0.0, 3.0]])
    b = np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 4.0]])
    got = nd.dot(nd.array(a), nd.array(b), forward_stype=stype)
    assert got.stype == stype
    np.testing.assert_allclose(dense_values(got), (sp.csr_matrix(a) @ b).astype(np.float32))
    c = nd.sparse.csr_matrix(a, dtype="float32")
    got = nd.dot(c, nd.array(b), False, False, stype)     # by position, as MXNet
    assert got.stype == stype
    np.testing.assert_allclose(dense_values(got), a @ b)


def test_norm_out_dtype():
    x = np.array([[3.0, -4.0], [1.0, 2.0]], np.float32)
    y = nd.norm(nd.array(x), out_dtype="float64")
    assert y.dtype == np.float64
    np.testing.assert_allclose(y.asnumpy(), [np.linalg.norm(x.astype(np.float64))], rtol=1e-7)
    y = nd.norm(nd.array(x), 1, 1, "float16", True)      # MXNet's positional order
    assert y.dtype == np.float16 and y.shape == (2, 1)
    np.testing.assert_array_equal(y.asnumpy(), np.abs(x).sum(1, keepdims=True))


# -- contexts, indexing, reshape ----------------------------------------------------------

def test_any_cpu_id_shares_the_host_pool_and_keeps_its_id():
    import allocator
    import runtime as rt
    before = allocator.memory_stats()["allocated_bytes.all.current"]
    x = nd.array(X, ctx=rt.cpu(3))
    assert x.ctx == rt.cpu(3) and str(x.ctx) == "cpu(3)"
    assert allocator.memory_stats()["allocated_bytes.all.current"] > before
    np.testing.assert_array_equal((x + x).asnumpy(), 2 * X)
    assert (x + x).ctx == rt.cpu(3) and nd.exp(x).ctx == rt.cpu(3)
    with rt.cpu(1):
        assert nd.zeros((2,)).ctx == rt.cpu(1)
    y = x.copyto(rt.cpu(0))
    assert y.ctx == rt.cpu(0)
    np.testing.assert_array_equal(y.asnumpy(), X)
    assert x.as_in_context(rt.cpu(5)).ctx == rt.cpu(5)
    with pytest.raises(ValueError, match=r"^add: all inputs must be on one context \(got "
                                         r"cpu\(3\) and cpu\(0\)\)"):
        x + y
    del x, y


def test_float_ndarray_indices_are_cast_as_mxnet():
    x = nd.array(X)
    idx = nd.array([0, 2])                              # float32, as nd.array makes it
    np.testing.assert_array_equal(x[idx].asnumpy(), X[[0, 2]])
    np.testing.assert_array_equal(x[1:3, idx].asnumpy(), X[1:3][:, [0, 2]])
    np.testing.assert_array_equal(x[idx, 1].asnumpy(), X[[0, 2], 1])
    np.testing.assert_array_equal(x[nd.array([1.7, -1.2])].asnumpy(), X[[1, -1]])  # truncated
    x[idx] = 5
    want = X.copy()
    want[[0, 2]] = 5
    np.testing.assert_array_equal(x.asnumpy(), want)
    x[nd.array([1.0]), nd.array([3.0])] = nd.array([-1.0])
    want[1, 3] = -1
    np.testing.assert_array_equal(x.asnumpy(), want)
    with pytest.raises(IndexError, match="out of bounds"):
        x[nd.array([3.0])]


# MXNet's documented reshape examples (mx.nd.reshape; NDArray.reshape uses the same rule)
RESHAPE_DOCS = [((2, 3, 4), (4, 0, 2), (4, 3, 2)), ((2, 3, 4), (2, 0, 0), (2, 3, 4)),
                ((2, 3, 4), (6, 1, -1), (6, 1, 4)), ((2, 3, 4), (3, -1, 8), (3, 1, 8)),
                ((2, 3, 4), (-1,), (24,)), ((2, 3, 4), (-2,), (2, 3, 4)),
                ((2, 3, 4), (2, -2), (2, 3, 4)), ((2, 3, 4), (-2, 1, 1), (2, 3, 4, 1, 1)),
                ((2, 3, 4), (-3, 4), (6, 4)), ((2, 3, 4, 5), (-3, -3), (6, 20)),
                ((2, 3, 4), (0, -3), (2, 12)), ((2, 3, 4), (-3, -2), (6, 4)),
                ((2, 3, 4), (-4, 1, 2, -2), (1, 2, 3, 4)),
                ((2, 3, 4), (2, -4, -1, 3, -2), (2, 1, 3, 4))]


@pytest.mark.parametrize("src, target, want", RESHAPE_DOCS)
def test_reshape_method_follows_mxnets_codes(src, target, want):
    a = np.arange(int(np.prod(src)), dtype=np.float32).reshape(src)
    x = nd.array(a)
    for y in (x.reshape(target), x.reshape(*target), x.reshape(shape=target)):
        assert y.shape == want
        assert y.chunk is x.chunk                    # still a view
        np.testing.assert_array_equal(y.asnumpy(), a.reshape(want))


def test_reshape_method_reverse():
    x = nd.zeros((10, 5, 4))
    assert x.reshape((-1, 0)).shape == (40, 5)
    assert x.reshape((-1, 0), reverse=True).shape == (50, 4)
    assert x.reshape(shape=(-1, 0), reverse=True).shape == (50, 4)
    assert x.reshape(-1, 0, reverse=True).shape == (50, 4)
    with pytest.raises(TypeError, match=r"^reshape: reverse must be a bool \(got 'yes'\)"):
        x.reshape((-1, 0), reverse="yes")
    with pytest.raises(TypeError, match=r"^reshape takes a shape and reverse"):
        x.reshape((-1, 0), order="C")


# -- sparse: copyto across storage types, csr[i], zero scalars -----------------------------

def test_copyto_casts_to_the_destinations_storage_type():
    import scipy.sparse as sp
    a = np.array([[0.0, 1.5, 0.0], [0.0, 0.0, 0.0], [2.0, 0.0, -1.0]], np.float32)
    for stype in ("csr", "row_sparse"):
        dst = nd.zeros((3, 3), stype=stype)
        assert nd.array(a).copyto(dst) is dst and dst.stype == stype
        np.testing.assert_array_equal(dense_values(dst), a)
        dense = nd.ones((3, 3), dtype="float64")
        src = nd.sparse.csr_matrix(sp.csr_matrix(a)) if stype == "csr" else \
            nd.sparse.row_sparse_array(a)
        assert src.copyto(dense) is dense and dense.stype == "default"
        np.testing.assert_array_equal(dense.asnumpy(), a.astype(np.float64))
    rsp = nd.sparse.row_sparse_array(np.ones((3, 3), np.float32))
    with pytest.raises(ValueError, match="cannot convert csr to row_sparse directly"):
        nd.sparse.csr_matrix(sp.csr_matrix(a)).copyto(rsp)      # MXNet neither
    np.testing.assert_array_equal(dense_values(rsp), np.ones((3, 3)))   # left unchanged
    csr = nd.sparse.csr_matrix(sp.csr_matrix(a))
    with pytest.raises(ValueError, match="shape"):
        nd.ones((3, 2)).copyto(csr)
    np.testing.assert_array_equal(dense_values(csr), a)


def test_csr_integer_index_is_a_one_row_csr():
    import scipy.sparse as sp
    a = np.array([[0.0, 1.5, 0.0], [0.0, 0.0, 0.0], [2.0, 0.0, -1.0]], np.float32)
    c = nd.sparse.csr_matrix(sp.csr_matrix(a))
    for i in (0, 1, 2, -1, -3, np.int64(2)):
        row = c[i]
        assert row.stype == "csr" and row.shape == (1, 3)
        np.testing.assert_array_equal(dense_values(row), a[[int(i)]])
    for i in (3, -4):
        with pytest.raises(IndexError, match=f"index {i} is out of bounds for axis 0 with "
                                             "size 3"):
            c[i]


@pytest.mark.parametrize("stype", ["csr", "row_sparse"])
def test_zero_scalar_keeps_the_sparse_storage_type(stype):
    a = np.array([[0.0, 1.5, 0.0], [0.0, 0.0, 0.0], [2.0, 0.0, -1.0]], np.float32)
    x = nd.sparse.csr_matrix(a) if stype == "csr" else nd.sparse.row_sparse_array(a)
    for y, want in ((x + 0, a), (x - 0, a), (0 + x, a), (x + 0.0, a), (x * 2, a * 2),
                    (x / 2, a / 2), (nd.add(x, 0), a)):
        assert y.stype == stype
        np.testing.assert_array_equal(dense_values(y), want)
    y = x + 1                       # a nonzero scalar: dense (MXNet)
    assert y.stype == "default"
    np.testing.assert_array_equal(y.asnumpy(), a + 1)


# -- semantics that differed silently: MXNet's documented examples --------------------------

@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_round_takes_halves_away_from_zero(dtype):
    # MXNet: round([-1.5, 1.5, -1.9, 1.9, 2.1]) = [-2., 2., -2., 2., 2.]
    x = np.array([-1.5, 1.5, -1.9, 1.9, 2.1, -2.5, 2.5, 0.5, -0.5, 0.49], dtype)
    want = np.array([-2, 2, -2, 2, 2, -3, 3, 1, -1, 0], dtype)
    np.testing.assert_array_equal(nd.round(nd.array(x, dtype=dtype)).asnumpy(), want)
    c = nd.sparse.csr_matrix(np.array([[0, 2.5], [-0.5, 0]], dtype))
    np.testing.assert_array_equal(dense_values(nd.round(c)), [[0, 3], [-1, 0]])


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_rint_takes_halves_down_as_mxnet(dtype):
    # MXNet: rint([-2.1, -1.9, 1.5, 1.9, 2.1]) = [-2., -2., 1., 2., 2.]
    x = np.array([-2.1, -1.9, 1.5, 1.9, 2.1, -1.5, 2.5, -0.5, 0.5], dtype)
    want = np.array([-2, -2, 1, 2, 2, -2, 2, -1, 0], dtype)
    np.testing.assert_array_equal(nd.rint(nd.array(x, dtype=dtype)).asnumpy(), want)


def test_float_mod_by_zero_is_zero():
    a = np.array([5.0, -5.0, 3.5, 0.0], np.float32)
    b = np.array([0.0, 0.0, 2.0, 0.0], np.float32)
    want = np.where(b == 0, 0, np.mod(a, np.where(b == 0, 1, b)))
    np.testing.assert_array_equal((nd.array(a) % nd.array(b)).asnumpy(), want)
    np.testing.assert_array_equal(nd.mod(nd.array(a), nd.array([[0.0], [2.0]])).asnumpy(),
                                  [[0, 0, 0, 0], np.mod(a, 2)])
    np.testing.assert_array_equal((nd.array(a) % 0).asnumpy(), np.zeros(4))
    np.testing.assert_array_equal((7.0 % nd.array(b)).asnumpy(), [0, 0, 1, 0])
    i = nd.array([5, -3], dtype="int32")
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal((i % 0).asnumpy(), [0, 0])


def test_sum_over_empty_axis_tuple_reduces_every_axis():
    x = nd.array(X)
    for name, ref in (("sum", np.sum), ("mean", np.mean), ("max", np.max), ("prod", np.prod)):
        got = getattr(nd, name)(x, axis=())
        assert got.shape == (1,)
        np.testing.assert_allclose(got.asnumpy(), [ref(X)], rtol=1e-6)
        assert getattr(nd, name)(x, (), True).shape == (1, 1)


def test_where_with_a_1d_condition_selects_rows():
    # MXNet's example: cond = [0, 1] -> [[5, 6], [3, 4]]
    x = nd.array([[1, 2], [3, 4]])
    y = nd.array([[5, 6], [7, 8]])
    np.testing.assert_array_equal(nd.where(nd.array([0, 1]), x, y).asnumpy(), [[5, 6], [3, 4]])
    np.testing.assert_array_equal(nd.where(nd.array([[0, 1], [-1, 0]]), x, y).asnumpy(),
                                  [[5, 2], [3, 8]])
    a = np.arange(24, dtype=np.float32).reshape(3, 2, 4)
    c = np.array([1, 0, 1], np.float32)
    np.testing.assert_array_equal(nd.where(nd.array(c), nd.array(a), nd.array(-a)).asnumpy(),
                                  np.where(c[:, None, None] != 0, a, -a))


def test_where_rows_gradient():
    from runtime import autograd
    c = nd.array([1, 0, 1])
    x, y = nd.array(np.ones((3, 2))), nd.array(np.ones((3, 2)))
    x.attach_grad()
    y.attach_grad()
    with autograd.record():
        out = nd.where(c, x, y)
    out.backward(nd.array(np.arange(6).reshape(3, 2)))
    g = np.arange(6, dtype=np.float32).reshape(3, 2)
    np.testing.assert_array_equal(x.grad.asnumpy(), g * [[1], [0], [1]])
    np.testing.assert_array_equal(y.grad.asnumpy(), g * [[0], [1], [0]])


def test_pick_keepdims_with_an_index_without_the_axis():
    # MXNet's example: pick(x, y=[0, 1, 0], 1, keepdims=True) = [[1.], [4.], [5.]]
    from runtime import autograd
    x = nd.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    np.testing.assert_array_equal(nd.pick(x, nd.array([0, 1, 0]), 1, True).asnumpy(),
                                  [[1.0], [4.0], [5.0]])
    np.testing.assert_array_equal(
        nd.pick(x, nd.array([[0], [1], [0]]), axis=1, keepdims=True).asnumpy(),
        [[1.0], [4.0], [5.0]])
    x.attach_grad()
    with autograd.record():
        y = nd.pick(x, nd.array([0, 1, 0]), 1, True)
    y.backward(nd.array([[1.0], [2.0], [3.0]]))
    np.testing.assert_array_equal(x.grad.asnumpy(), [[1, 0], [0, 2], [3, 0]])
    with pytest.raises(ValueError, match=r"^pick: index has shape \(2,\), expected \(3,\)"):
        nd.pick(x, nd.array([0, 1]), 1, True)


@pytest.mark.parametrize("name, ref", [("exp", np.exp), ("log", np.log), ("sqrt", np.sqrt),
                                       ("sigmoid", lambda v: 1 / (1 + np.exp(-v)))])
@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "int8"])
def test_integer_math_is_computed_in_float_and_truncated(name, ref, dtype):
    v = np.array([1, 2, 3, 4] if dtype in ("int8", "uint8") else [1, 2, 3, 4, 7, 20], dtype)
    got = getattr(nd, name)(nd.array(v, dtype=dtype))
    assert got.dtype == np.dtype(dtype)
    want = np.trunc(ref(v.astype(np.float32)).astype(np.float32)).astype(dtype)
    np.testing.assert_array_equal(got.asnumpy(), want)


@pytest.mark.parametrize("name, ref", [("elemwise_add", np.add), ("elemwise_sub", np.subtract),
                                       ("elemwise_mul", np.multiply),
                                       ("elemwise_div", np.divide)])
def test_elemwise_ops_require_one_shape(name, ref):
    a, b = X, X[::-1] + 1
    np.testing.assert_allclose(getattr(nd, name)(nd.array(a), nd.array(b)).asnumpy(),
                               ref(a, b), rtol=1e-6)
    out = nd.full((3, 4), 7.0)
    with pytest.raises(ValueError, match=rf"^{name}: inputs must have one shape \(got \(3, 4\) "
                                         rf"and \(4,\)\)"):
        getattr(nd, name)(nd.array(a), nd.array(b[0]), out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.full((3, 4), 7.0))
    broadcast = getattr(nd, "broadcast_" + name[9:])(nd.array(a), nd.array(b[0]))
    np.testing.assert_allclose(broadcast.asnumpy(), ref(a, b[0]), rtol=1e-6)
    with pytest.raises(TypeError, match=rf"^{name}: input rhs must be an NDArray \(got int 2\)"):
        getattr(nd, name)(nd.array(a), 2)
    if name != "elemwise_div":               # sparse kernels keep the storage type
        c = nd.sparse.csr_matrix(np.diag([1.0, 2.0, 3.0]))
        d = getattr(nd, name)(c, c)
        assert d.stype == "csr"
        np.testing.assert_array_equal(dense_values(d), ref(np.diag([1.0, 2, 3]),
                                                           np.diag([1.0, 2, 3])))


def test_random_with_ndarray_parameters_draws_per_element():
    # MXNet's _sample_uniform / _sample_normal: shape appended to the parameters' shape
    rt_random.seed(11)
    low, high = np.array([0.0, 10.0, -3.0]), np.array([1.0, 10.5, 3.0])
    u = nd.random.uniform(nd.array(low), nd.array(high), shape=(4000,))
    assert u.shape == (3, 4000) and u.dtype == np.float32
    v = u.asnumpy()
    assert ((v >= low[:, None]) & (v < high[:, None])).all()
    np.testing.assert_allclose(v.mean(1), (low + high) / 2, atol=0.1)
    np.testing.assert_allclose(v.std(1), (high - low) / np.sqrt(12), rtol=0.05)
    loc, scale = np.array([[0.0, 5.0]]), np.array([[1.0, 0.5]])
    n = nd.random.normal(nd.array(loc, dtype="float64"), nd.array(scale, dtype="float64"),
                         shape=4000)
    assert n.shape == (1, 2, 4000) and n.dtype == np.float64
    np.testing.assert_allclose(n.asnumpy().mean(2), loc, atol=0.06)
    np.testing.assert_allclose(n.asnumpy().std(2), scale, rtol=0.05)
    assert nd.random.normal(nd.array([1.0]), nd.array([0.0])).asnumpy().tolist() == [1.0]
    rt_random.seed(3)
    a = nd.random.uniform(nd.array(low), nd.array(high), shape=2).asnumpy()
    rt_random.seed(3)
    np.testing.assert_array_equal(
        nd.random.uniform(nd.array(low), nd.array(high), shape=2).asnumpy(), a)


def test_random_ndarray_parameter_errors():
    lo = nd.array([0.0, 1.0])
    with pytest.raises(TypeError, match=r"^uniform: low and high must both be NDArrays or "
                                        r"both numbers \(got high=float\)"):
        nd.random.uniform(lo, 2.0)
    with pytest.raises(ValueError, match=r"^normal: loc and scale must have one shape"):
        nd.random.normal(lo, nd.array([1.0]))
    with pytest.raises(ValueError, match=r"^uniform: low must be <= high elementwise"):
        nd.random.uniform(lo, nd.array([1.0, 0.5]))
    with pytest.raises(ValueError, match=r"^normal: scale must be >= 0 elementwise"):
        nd.random.normal(lo, nd.array([1.0, -0.5]))


free_failing_tests(globals())


def test_context_default_ctx_and_set_default_context():
    import runtime as mx
    from runtime import test_utils
    with pytest.warns(DeprecationWarning, match="default_ctx has been deprecated"):
        assert mx.Context.default_ctx == mx.cpu(0)
    with mx.cpu(1):
        with pytest.warns(DeprecationWarning):
            mx.Context.default_ctx = mx.cpu(2)
        assert mx.current_context() == mx.cpu(2)
        assert nd.zeros(1).ctx == mx.cpu(2)
    assert mx.current_context() == mx.cpu(0)        # MXNet: the with block restores it
    with mx.cpu(3):
        test_utils.set_default_context(mx.cpu(4))
        assert test_utils.default_context() == mx.cpu(4)
    assert mx.current_context() == mx.cpu(0)
    with pytest.raises(TypeError, match="ctx must be a Context"):
        mx.context.set_current_context("cpu")


def test_base_mx_real_t_is_float32_the_default_dtype():
    assert base.mx_real_t is np.float32
    assert nd.zeros((1,)).dtype == base.mx_real_t
    d = sym.Variable("d")
    _, out, _ = sym.FullyConnected(d, num_hidden=2).infer_type(d=base.mx_real_t)
    assert out == [base.mx_real_t]
