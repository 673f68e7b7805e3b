"""Linear-algebra operators against NumPy: dot (MXNet's N-D and transpose rules),
batch_dot, matmul (NumPy broadcasting), FullyConnected; requests, gradients (float64
central differences), bad input, and that the kernels write straight into the output."""

import numpy as np
import pytest

from runtime import autograd, nd
from runtime.base import MXNetError
from runtime.ops import dot, registry
from tests.runtime.opcheck import check_grad, check_requests, run

FLOATS = ["float16", "float32", "float64"]
INTS = ["uint8", "int8", "int32", "int64"]
TOL = {"float16": 1e-2, "float32": 1e-5, "float64": 1e-12}


def sample(shape, dtype="float64", seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(0, 3, shape).astype(dtype)
    return rng.uniform(-1, 1, shape).astype(dtype)


def assert_close(got, want, dtype):
    assert got.shape == want.shape, (got.shape, want.shape)
    assert np.dtype(got.dtype) == np.dtype(dtype)
    if np.dtype(dtype).kind in "iu":
        np.testing.assert_array_equal(got.asnumpy(), want.astype(dtype))
    else:
        np.testing.assert_allclose(got.asnumpy().astype(np.float64), want,
                                   rtol=TOL[dtype], atol=TOL[dtype])


def ref_dot(a, b, ta=False, tb=False):
    """MXNet's dot written independently: move the contracted axis, then tensordot."""
    if a.ndim == 1 and b.ndim == 1:
        return np.tensordot(a, b, 1).reshape(1)
    if ta:
        a = np.moveaxis(a, 0, -1)
    if tb:
        b = np.moveaxis(b, -1, 0)
    return np.tensordot(a, b, 1)


# (lhs shape, rhs shape, transpose_a, transpose_b)
DOT_CASES = [
    ((3, 4), (4, 5), False, False), ((4, 3), (4, 5), True, False),
    ((3, 4), (5, 4), False, True), ((4, 3), (5, 4), True, True),
    ((4,), (4,), False, False), ((4,), (4, 5), False, False), ((3, 4), (4,), False, False),
    ((4,), (4, 5), True, False), ((3, 4), (4,), False, True),
    ((2, 3, 4), (4, 5), False, False), ((3, 4), (4, 2, 5), False, False),
    ((2, 3, 4), (4, 2, 5), False, False), ((4, 2, 3), (4, 5), True, False),
    ((2, 3, 4), (5, 2, 4), False, True), ((4, 2, 3), (2, 5, 4), True, True),
    ((0, 4), (4, 5), False, False), ((3, 0), (0, 5), False, False),
    ((3, 4), (4, 0), False, False), ((2, 0, 4), (4, 3), False, False),
    ((1, 1), (1, 1), False, False),
]


@pytest.mark.parametrize("ls, rs, ta, tb", DOT_CASES)
@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_dot_matches_mxnet_semantics(ls, rs, ta, tb, dtype):
    a, b = sample(ls, dtype, 1), sample(rs, dtype, 2)
    got = run("dot", [a, b], {"transpose_a": ta, "transpose_b": tb})[0]
    assert_close(got, ref_dot(a.astype(np.float64), b.astype(np.float64), ta, tb), dtype)


def test_dot_of_vectors_has_shape_1_like_mxnet():
    got = nd.dot(nd.array([1, 2, 3]), nd.array([4, 5, 6]))
    assert got.shape == (1,)
    assert got.asnumpy().tolist() == [32.0]


def test_dot_transpose_a_keeps_the_order_of_the_other_axes():
    # MXNet views lhs as (shape[0], prod(rest)) and transposes that matrix: the result
    # is (3, 2, 5), not lhs.T's reversed (2, 3, 5).
    a, b = sample((4, 3, 2)), sample((4, 5))
    got = nd.dot(nd.array(a, dtype="float64"), nd.array(b, dtype="float64"), transpose_a=True)
    assert got.shape == (3, 2, 5)
    np.testing.assert_allclose(got.asnumpy(), np.einsum("kij,kl->ijl", a, b), rtol=1e-12)


@pytest.mark.parametrize("shapes", [((3, 4), (4, 5)), ((4,), (4,)), ((2, 3, 4), (4, 2))])
def test_matmul_operator_is_dot(shapes):
    a, b = sample(shapes[0], "float32", 1), sample(shapes[1], "float32", 2)
    got = nd.array(a) @ nd.array(b)
    np.testing.assert_allclose(got.asnumpy(), ref_dot(a, b), rtol=1e-5)


def test_dot_writes_the_output_without_a_temporary(monkeypatch):
    seen = []

    class Spy:
        def __getattr__(self, name):
            return getattr(np, name)

        def dot(self, a, b, out=None):
            seen.append(out)
            return np.dot(a, b, out=out)

        def matmul(self, a, b, out=None):    # host kernels: np.dot zero-fills out first
            seen.append(out)
            return np.matmul(a, b, out=out)

    monkeypatch.setattr(dot, "np", Spy())
    x, y = nd.array(sample((8, 6), "float32")), nd.array(sample((8, 6), "float32", 1))
    r = nd.dot(x, y, transpose_b=True)
    assert len(seen) == 1 and seen[0] is not None
    assert np.shares_memory(seen[0], np.asarray(r))
    r = nd.FullyConnected(x, y, nd.zeros(8), num_hidden=8)
    assert np.shares_memory(seen[1], np.asarray(r))


@pytest.mark.parametrize("ls, rs, ta, tb", [c for c in DOT_CASES if 0 not in c[0] + c[1]])
def test_dot_gradients(ls, rs, ta, tb):
    check_grad("dot", [sample(ls, seed=1), sample(rs, seed=2)],
               {"transpose_a": ta, "transpose_b": tb})


def test_dot_gradients_of_zero_size_inputs_are_zero_size():
    op = registry.get("dot")
    for ls, rs in (((0, 4), (4, 5)), ((3, 0), (0, 5))):
        x, y = nd.zeros(ls), nd.zeros(rs)
        g = nd.ones(nd.dot(x, y).shape)
        gx, gy = op.gradient(op.parse_attrs({}), [x, y], [], [g])
        assert gx.shape == ls and gy.shape == rs
        assert not gx.asnumpy().any() and not gy.asnumpy().any()


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_dot_requests(ta, tb):
    check_requests("dot", [sample((3, 3), "float32", 1), sample((3, 3), "float32", 2)],
                   {"transpose_a": ta, "transpose_b": tb})


def test_dot_bad_input():
    with pytest.raises(ValueError, match=r"^dot: shapes \(3, 4\) and \(5, 2\) are not aligned$"):
        nd.dot(nd.zeros((3, 4)), nd.zeros((5, 2)))
    with pytest.raises(ValueError, match=r"^dot: shapes \(3, 4\) and \(3, 2\) are not aligned "
                                         r"\(transpose_b=True\)"):
        nd.dot(nd.zeros((3, 4)), nd.zeros((3, 2)), transpose_b=True)
    with pytest.raises(TypeError, match=r"^dot: inputs must have one dtype \(got float32, "
                                        r"float64\)"):
        nd.dot(nd.zeros((2, 2)), nd.zeros((2, 2), dtype="float64"))
    with pytest.raises(ValueError, match=r"^dot: cannot transpose 1-D inputs"):
        nd.dot(nd.zeros(3), nd.zeros(3), transpose_a=True)
    with pytest.raises(ValueError, match=r"^dot: inputs must have at least 1 dimension"):
        nd.dot(nd.zeros(()), nd.zeros(3))
    with pytest.raises(TypeError, match=r"^dot: transpose_a must be a bool"):
        nd.dot(nd.zeros((2, 2)), nd.zeros((2, 2)), transpose_a="yes")
    with pytest.raises(ValueError, match=r"^dot: shapes \(2, 3\) and \(2, 3\) are not aligned"):
        nd.zeros((2, 3)) @ nd.zeros((2, 3))


def test_failed_dot_leaves_out_and_inputs_unchanged():
    x, y = nd.ones((3, 4)), nd.ones((5, 2))
    out = nd.full((3, 2), 7.0)
    with pytest.raises(ValueError):
        nd.dot(x, y, out=out)
    assert (out.asnumpy() == 7).all() and (x.asnumpy() == 1).all() and (y.asnumpy() == 1).all()


# -- batch_dot ----------------------------------------------------------------------------

BATCH_CASES = [((2, 3, 4), (2, 4, 5), False, False), ((2, 4, 3), (2, 4, 5), True, False),
               ((2, 3, 4), (2, 5, 4), False, True), ((2, 4, 3), (2, 5, 4), True, True),
               ((2, 2, 3, 4), (2, 2, 4, 1), False, False), ((0, 3, 4), (0, 4, 5), False, False),
               ((2, 3, 0), (2, 0, 5), False, False), ((1, 1, 1), (1, 1, 1), False, False)]


def ref_batch_dot(a, b, ta, tb):
    return np.matmul(np.swapaxes(a, -1, -2) if ta else a, np.swapaxes(b, -1, -2) if tb else b)


@pytest.mark.parametrize("ls, rs, ta, tb", BATCH_CASES)
@pytest.mark.parametrize("dtype", FLOATS + ["int32", "uint8"])
def test_batch_dot_values(ls, rs, ta, tb, dtype):
    a, b = sample(ls, dtype, 1), sample(rs, dtype, 2)
    got = run("batch_dot", [a, b], {"transpose_a": ta, "transpose_b": tb})[0]
    assert_close(got, ref_batch_dot(a.astype(np.float64), b.astype(np.float64), ta, tb), dtype)


@pytest.mark.parametrize("ls, rs, ta, tb", [c for c in BATCH_CASES if 0 not in c[0] + c[1]])
def test_batch_dot_gradients(ls, rs, ta, tb):
    check_grad("batch_dot", [sample(ls, seed=1), sample(rs, seed=2)],
               {"transpose_a": ta, "transpose_b": tb})


def test_batch_dot_requests():
    check_requests("batch_dot", [sample((2, 3, 3), "float32", 1), sample((2, 3, 3), "float32", 2)],
                   {"transpose_a": True})


def test_batch_dot_bad_input():
    with pytest.raises(ValueError, match=r"^batch_dot: inputs must both be 3-D"):
        nd.batch_dot(nd.zeros((3, 4)), nd.zeros((4, 5)))
    with pytest.raises(ValueError, match=r"^batch_dot: batch dimensions \(2,\) and \(3,\) differ"):
        nd.batch_dot(nd.zeros((2, 3, 4)), nd.zeros((3, 4, 5)))
    with pytest.raises(ValueError, match=r"^batch_dot: shapes \(2, 3, 4\) and \(2, 5, 4\) are "
                                         r"not aligned"):
        nd.batch_dot(nd.zeros((2, 3, 4)), nd.zeros((2, 5, 4)))
    with pytest.raises(TypeError, match=r"^batch_dot: inputs must have one dtype"):
        nd.batch_dot(nd.zeros((2, 3, 4)), nd.zeros((2, 4, 5), dtype="int32"))


# -- matmul -------------------------------------------------------------------------------

MATMUL_CASES = [((3, 4), (4, 5)), ((4,), (4,)), ((4,), (4, 5)), ((3, 4), (4,)),
                ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)), ((2, 1, 3, 4), (3, 4, 2)),
                ((1, 3, 4), (2, 4, 5)), ((4,), (2, 4, 5)), ((2, 3, 4), (4,)),
                ((0, 3, 4), (4, 5)), ((3, 0), (0, 2)), ((2, 3, 4), (1, 4, 0))]


@pytest.mark.parametrize("ls, rs", MATMUL_CASES)
@pytest.mark.parametrize("dtype", FLOATS + ["int64", "int8"])
def test_matmul_matches_numpy(ls, rs, dtype):
    a, b = sample(ls, dtype, 1), sample(rs, dtype, 2)
    got = run("matmul", [a, b])[0]
    assert_close(got, np.matmul(a.astype(np.float64), b.astype(np.float64)), dtype)


@pytest.mark.parametrize("ls, rs", [c for c in MATMUL_CASES if 0 not in c[0] + c[1]])
def test_matmul_gradients_undo_broadcasting(ls, rs):
    check_grad("matmul", [sample(ls, seed=1), sample(rs, seed=2)])


def test_matmul_gradients_of_zero_size_inputs():
    op = registry.get("matmul")
    x, y = nd.zeros((0, 3, 4)), nd.zeros((4, 5))
    gx, gy = op.gradient({}, [x, y], [], [nd.zeros((0, 3, 5))])
    assert gx.shape == (0, 3, 4) and gy.shape == (4, 5) and not gy.asnumpy().any()


def test_matmul_requests():
    check_requests("matmul", [sample((2, 3, 3), "float32", 1), sample((3, 3), "float32", 2)])


def test_matmul_bad_input():
    with pytest.raises(ValueError, match=r"^matmul: shapes \(3, 4\) and \(5,\) are not aligned"):
        nd.matmul(nd.zeros((3, 4)), nd.zeros(5))
    with pytest.raises(ValueError, match=r"^matmul: the batch dimensions of shapes \(2, 3, 4\) "
                                         r"and \(3, 4, 5\) are not broadcastable"):
        nd.matmul(nd.zeros((2, 3, 4)), nd.zeros((3, 4, 5)))
    with pytest.raises(ValueError, match=r"^matmul: inputs must have at least 1 dimension"):
        nd.matmul(nd.zeros(()), nd.zeros((2, 2)))
    with pytest.raises(TypeError, match=r"^matmul: inputs must have one dtype"):
        nd.matmul(nd.zeros((2, 2)), nd.zeros((2, 2), dtype="float16"))


# -- FullyConnected -----------------------------------------------------------------------

def ref_fc(x, w, b, flatten):
    x2 = x.reshape(x.shape[0], int(np.prod(x.shape[1:]))) if flatten else x
    out = x2 @ w.T
    return out if b is None else out + b


FC_CASES = [((5, 4), True), ((5, 2, 3), True), ((5, 2, 3), False), ((4,), True),
            ((4,), False), ((0, 3), True), ((2, 0, 3), False), ((2, 0), True)]


def fc_inputs(ds, flatten, nh, no_bias, dtype="float64"):
    k = int(np.prod(ds[1:])) if flatten else ds[-1]
    xs = [sample(ds, dtype, 1), sample((nh, k), dtype, 2)]
    return xs if no_bias else xs + [sample((nh,), dtype, 3)]


@pytest.mark.parametrize("ds, flatten", FC_CASES)
@pytest.mark.parametrize("no_bias", [False, True])
@pytest.mark.parametrize("dtype", FLOATS + ["int32"])
def test_fully_connected_matches_numpy(ds, flatten, no_bias, dtype):
    xs = fc_inputs(ds, flatten, 3, no_bias, dtype)
    got = run("FullyConnected", xs, {"num_hidden": 3, "no_bias": no_bias, "flatten": flatten})[0]
    f64 = [x.astype(np.float64) for x in xs]
    want = ref_fc(f64[0], f64[1], None if no_bias else f64[2], flatten)
    if flatten and len(ds) == 1:      # MXNet: 1-D data is (n, 1) when flattened
        want = ref_fc(f64[0].reshape(-1, 1), f64[1], None if no_bias else f64[2], True)
    assert_close(got, want, dtype)


@pytest.mark.parametrize("ds, flatten", [c for c in FC_CASES if 0 not in c[0]])
@pytest.mark.parametrize("no_bias", [False, True])
def test_fully_connected_gradients(ds, flatten, no_bias):
    check_grad("FullyConnected", fc_inputs(ds, flatten, 3, no_bias),
               {"num_hidden": 3, "no_bias": no_bias, "flatten": flatten})


def test_fully_connected_gradients_with_empty_batch_or_features():
    op = registry.get("FullyConnected")
    for ds in ((0, 3), (2, 0)):
        xs = [nd.array(a, dtype="float64") for a in fc_inputs(ds, True, 3, False)]
        attrs = op.parse_attrs({"num_hidden": 3})
        out = nd.FullyConnected(*xs, num_hidden=3)
        g = nd.ones(out.shape, dtype="float64")
        gx, gw, gb = op.gradient(attrs, xs, [out], [g])
        assert gx.shape == xs[0].shape and gw.shape == xs[1].shape and gb.shape == (3,)
        np.testing.assert_array_equal(gb.asnumpy(), np.full(3, float(ds[0])))


@pytest.mark.parametrize("no_bias", [False, True])
def test_fully_connected_requests(no_bias):
    check_requests("FullyConnected", fc_inputs((4, 2, 3), True, 3, no_bias, "float32"),
                   {"num_hidden": 3, "no_bias": no_bias})


def test_fully_connected_keyword_attrs_and_positional_inputs():
    x, w, b = (nd.array(a) for a in fc_inputs((2, 3), True, 4, False, "float32"))
    got = nd.FullyConnected(x, w, b, num_hidden=4)
    np.testing.assert_allclose(got.asnumpy(), ref_fc(x.asnumpy(), w.asnumpy(), b.asnumpy(),
                                                     True), rtol=1e-6)


def test_fully_connected_bad_input():
    x, w, b = nd.zeros((2, 3)), nd.zeros((4, 3)), nd.zeros(4)
    with pytest.raises(TypeError, match=r"^FullyConnected: takes 3 array inputs \(data, weight, "
                                        r"bias\) with no_bias=False \(got 2\)"):
        nd.FullyConnected(x, w, num_hidden=4)
    with pytest.raises(TypeError, match=r"^FullyConnected: takes 2 array inputs \(data, "
                                        r"weight\) with no_bias=True \(got 3\)"):
        nd.FullyConnected(x, w, b, num_hidden=4, no_bias=True)
    with pytest.raises(TypeError, match=r"^FullyConnected: attribute 'num_hidden' is required"):
        nd.FullyConnected(x, w, b)
    with pytest.raises(ValueError, match=r"^FullyConnected: weight must have shape \(5, 3\) for "
                                         r"data of shape \(2, 3\), num_hidden=5"):
        nd.FullyConnected(x, w, b, num_hidden=5)
    with pytest.raises(ValueError, match=r"^FullyConnected: bias must have shape \(4,\) "
                                         r"\(got \(5,\)\)"):
        nd.FullyConnected(x, w, nd.zeros(5), num_hidden=4)
    with pytest.raises(ValueError, match=r"^FullyConnected: num_hidden must be >= 1"):
        nd.FullyConnected(nd.zeros((2, 0)), nd.zeros((0, 0)), num_hidden=0, no_bias=True)
    with pytest.raises(ValueError, match=r"^FullyConnected: data must have at least 1 "
                                         r"dimension"):
        nd.FullyConnected(nd.zeros(()), w, b, num_hidden=4)
    with pytest.raises(TypeError, match=r"^FullyConnected: inputs must have one dtype"):
        nd.FullyConnected(x, w, nd.zeros(4, dtype="float64"), num_hidden=4)
    out = nd.full((2, 5), 7.0)
    with pytest.raises(ValueError):
        nd.FullyConnected(x, w, b, num_hidden=5, out=out)
    assert (out.asnumpy() == 7).all()


# -- gelqf ---------------------------------------------------------------------------------

def _lq_loss(a, wq, wl):
    """sum(wq * Q) + sum(wl * L) of A's LQ factors, by NumPy's QR of A^T (float64)."""
    q, r = np.linalg.qr(np.swapaxes(a, -1, -2))
    return (wq * np.swapaxes(q, -1, -2)).sum() + (wl * np.swapaxes(r, -1, -2)).sum()


def test_gelqf_factors_reconstruct_with_orthonormal_rows_and_lower_l():
    a = np.random.default_rng(11).standard_normal((3, 2, 4))
    q, l = nd.linalg.gelqf(nd.array(a, dtype="float64"))
    q, l = q.asnumpy(), l.asnumpy()
    assert q.shape == (3, 2, 4) and l.shape == (3, 2, 2)
    np.testing.assert_allclose(l @ q, a, atol=1e-12)
    np.testing.assert_allclose(q @ np.swapaxes(q, -1, -2), np.broadcast_to(np.eye(2), (3, 2, 2)),
                               atol=1e-12)
    np.testing.assert_array_equal(np.triu(l, 1), 0)
    assert nd.linalg.gelqf(nd.array(a[0], dtype="float32"))[1].dtype == np.float32


def test_gelqf_gradient_matches_central_differences():
    rng = np.random.default_rng(12)
    a = rng.standard_normal((2, 3))
    wq, wl = rng.standard_normal((2, 3)), rng.standard_normal((2, 2))
    x = nd.array(a, dtype="float64")
    x.attach_grad()
    with autograd.record():
        q, l = nd.linalg.gelqf(x)
        loss = (q * nd.array(wq, dtype="float64")).sum() + \
            (l * nd.array(wl, dtype="float64")).sum()
    loss.backward()
    want = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        up, down = a.copy(), a.copy()
        up[idx] += 1e-6
        down[idx] -= 1e-6
        want[idx] = (_lq_loss(up, wq, wl) - _lq_loss(down, wq, wl)) / 2e-6
    np.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-6, atol=1e-8)


def test_gelqf_refuses_more_rows_than_columns():
    with pytest.raises(MXNetError, match=r"_linalg_gelqf: A must have at least as many "
                                         r"columns as rows \(got shape \(3, 2\)\)"):
        nd.linalg.gelqf(nd.ones((3, 2)))
