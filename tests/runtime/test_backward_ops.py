"""The fused backward kernels (_backward_tanh, _backward_relu, _backward_FullyConnected):
values against NumPy's composed expression over several blocks and in place, gradients
of gradients through them, null requests that skip work, and the memory of a tanh
chain's backward (one gradient buffer)."""
import gc

import numpy as np
import pytest

import allocator
from runtime import autograd, nd
from runtime.ops import OPS, dot, elemwise
from runtime._imperative import invoke
from tests.runtime.conftest import free_failing_tests

CASES = {
    "_backward_tanh": lambda g, y: g * (1 - y * y),
    "_backward_relu": lambda g, y: g * (y > 0),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("size", [0, 7, elemwise.BLOCK, 2 * elemwise.BLOCK + 5])
def test_values_equal_the_composed_expression(name, size, dtype):
    rng = np.random.default_rng(size)
    g = rng.uniform(-2, 2, size).astype(dtype)
    y = rng.uniform(-1, 1, size).astype(dtype)
    want = CASES[name](g, y).astype(dtype)
    got = invoke(OPS[name], [nd.array(g, dtype=dtype), nd.array(y, dtype=dtype)])
    np.testing.assert_array_equal(got.asnumpy(), want)
    # in place into the out-grad (lhs), as the executor's donation does
    gn = nd.array(g, dtype=dtype)
    res = invoke(OPS[name], [gn, nd.array(y, dtype=dtype)], out=gn)
    assert res is gn
    np.testing.assert_array_equal(gn.asnumpy(), want)


def test_relu_gradient_on_integers_keeps_the_dtype():
    g, y = np.array([3, -2, 5, 4]), np.array([1, 0, 2, -1])
    got = invoke(OPS["_backward_relu"], [nd.array(g, dtype="int64"), nd.array(y, dtype="int64")])
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got.asnumpy(), [3, 0, 5, 0])


@pytest.mark.parametrize("name, second", [
    ("tanh", lambda v: -2 * np.tanh(v) * (1 - np.tanh(v) ** 2)),
    ("relu", lambda v: np.zeros_like(v)),
])
def test_second_derivative_through_the_fused_rule(name, second):
    v = np.array([-1.3, -0.4, 0.35, 1.2])
    x = nd.array(v, dtype="float64")
    x.attach_grad()
    with autograd.record():
        y = getattr(nd, name)(x)
        (g,) = autograd.grad(y, x, create_graph=True)
    g.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), second(v), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_cross_entropy_gradient_equals_numpy(dtype):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 5)).astype(dtype)
    label = np.array([0, 4, 2, 2, 1, 3])
    og = np.array([0.25], dtype)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    want = e / e.sum(axis=1, keepdims=True)
    want[np.arange(6), label] -= 1
    want *= og
    got = invoke(OPS["_backward_softmax_cross_entropy"],
                 [nd.array(og, dtype=dtype), nd.array(x, dtype=dtype), nd.array(label)])
    np.testing.assert_allclose(got.asnumpy(), want,
                               rtol=1e-6 if dtype == "float32" else 1e-14,
                               atol=1e-7)
    xv = nd.array(x, dtype=dtype)
    xv.attach_grad()
    with autograd.record():
        loss = nd.softmax_cross_entropy(xv, nd.array(label)) * 0.25
    loss.backward()
    np.testing.assert_allclose(xv.grad.asnumpy(), want,
                               rtol=1e-6 if dtype == "float32" else 1e-14,
                               atol=1e-7)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_cross_entropy_gradient_reads_the_forward_softmax(dtype, monkeypatch):
    # outside create_graph the rule reads the softmax the forward kept (its state):
    # _backward_softmax_cross_entropy does not run, and the result is the same bit for bit
    rng = np.random.default_rng(4)
    x = rng.standard_normal((7, 3)).astype(dtype)
    label = np.array([0, 2, 1, 1, 0, 2, 2], np.float32)
    og = nd.array(np.array([0.125], dtype), dtype=dtype)
    want = invoke(OPS["_backward_softmax_cross_entropy"],
                  [og, nd.array(x, dtype=dtype), nd.array(label)]).asnumpy()
    bce = OPS["_backward_softmax_cross_entropy"]

    def refuse(attrs, ins, outs):
        raise AssertionError("the softmax was computed again")
    monkeypatch.setattr(bce, "compute", refuse)
    xv = nd.array(x, dtype=dtype)
    xv.attach_grad()
    with autograd.record():
        loss = nd.softmax_cross_entropy(xv, nd.array(label)) * 0.125
    loss.backward()
    np.testing.assert_array_equal(xv.grad.asnumpy(), want)
    with autograd.record():        # under create_graph: from data, through the old op
        loss = nd.softmax_cross_entropy(xv, nd.array(label))
        with pytest.raises(AssertionError, match="computed again"):
            autograd.grad(loss, xv, create_graph=True)


def _pool_peak(work):
    """Peak pool bytes above the bytes allocated before ``work()``, while it runs."""
    gc.collect()
    pool = allocator.get_pool()
    base = pool.memory_stats()["allocated_bytes.all.current"]
    pool.reset_peak_stats()
    work()
    return pool.memory_stats()["allocated_bytes.all.peak"] - base


def test_a_tanh_chain_backward_holds_one_gradient_buffer():
    n, depth = 1 << 18, 6                 # 1 MiB float32 arrays
    x = nd.array(np.random.default_rng(0).uniform(-1, 1, n).astype(np.float32))
    x.attach_grad()

    def chain():
        with autograd.record():
            y = x
            for _ in range(depth):
                y = nd.tanh(y)
        y.backward()
    peak = _pool_peak(chain)             # the saved outputs and one gradient buffer
    assert peak <= (depth + 1) * 4 * n, peak / (4 * n)
    stats = autograd.last_backward_stats()
    assert stats["requests"]["inplace"] == depth
    t, want = x.asnumpy(), np.ones(n, np.float32)
    ys = []
    for _ in range(depth):
        t = np.tanh(t)
        ys.append(t)
    for t in reversed(ys):
        want = want * (1 - t * t)
    np.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-6)


def _fc_numpy(g, x, w):
    g2, x2 = g.reshape(-1, w.shape[0]), x.reshape(g.reshape(-1, w.shape[0]).shape[0], -1)
    return [(g2 @ w).reshape(x.shape), g2.T @ x2, g2.sum(0)]


def test_fully_connected_gradient_is_one_fused_call_that_skips_null_outputs(monkeypatch):
    rng = np.random.default_rng(7)
    x, w, b = (rng.standard_normal(s) for s in ((5, 2, 3), (4, 6), (4,)))
    g = rng.standard_normal((5, 4))
    products = []
    real_mm = dot._mm
    monkeypatch.setattr(dot, "_mm", lambda a, c, out: products.append(out.shape)
                        or real_mm(a, c, out))
    xn, wn, bn = (nd.array(a, dtype='float64') for a in (x, w, b))
    wn.attach_grad()                # data needs no gradient: dX (5, 6) is never formed
    bn.attach_grad()
    with autograd.record():
        y = nd.FullyConnected(xn, wn, bn, num_hidden=4)
    products.clear()
    y.backward(nd.array(g, dtype='float64'))
    assert products == [(4, 6)]
    _, want_w, want_b = _fc_numpy(g, x, w)
    np.testing.assert_allclose(wn.grad.asnumpy(), want_w, rtol=1e-12)
    np.testing.assert_allclose(bn.grad.asnumpy(), want_b, rtol=1e-12)
    # the op itself: a null output is neither computed nor made, out= left as it was
    keep = nd.array(np.full((5, 2, 3), 7.0), dtype='float64')
    gn, fcb = nd.array(g, dtype='float64'), OPS["_backward_FullyConnected"]
    res = invoke(fcb, [gn, xn, wn], {"num_hidden": 4},
                 out=[keep, nd.zeros((4, 6), dtype="float64"), nd.zeros((4,), dtype="float64")],
                 req=["null", "write", "add"])
    np.testing.assert_array_equal(keep.asnumpy(), 7.0)
    np.testing.assert_allclose(res[1].asnumpy(), want_w, rtol=1e-12)
    np.testing.assert_allclose(res[2].asnumpy(), want_b, rtol=1e-12)
    res = invoke(fcb, [gn, xn, wn], {"num_hidden": 4}, req=["write", "null", "null"])
    assert res[1] is None and res[2] is None
    np.testing.assert_allclose(res[0].asnumpy(), _fc_numpy(g, x, w)[0], rtol=1e-12)


def test_second_derivative_through_the_fused_fully_connected_rule():
    # L = sum(c * dL1/dx) with L1 = sum(FC(x, W, b)^2) / 2, so dL1/dx = (x W^T + b) W:
    # dL/dW through the fused rule's own rule, against float64 central differences
    rng = np.random.default_rng(8)
    x, w, b, c = (rng.standard_normal(s) for s in ((3, 4), (2, 4), (2,), (3, 4)))

    def inner(wv):
        return np.sum(c * ((x @ wv.T + b) @ wv))
    eps, want = 1e-6, np.zeros_like(w)
    for idx in np.ndindex(*w.shape):
        d = np.zeros_like(w)
        d[idx] = eps
        want[idx] = (inner(w + d) - inner(w - d)) / (2 * eps)
    xn, wn, bn = (nd.array(a, dtype='float64') for a in (x, w, b))
    xn.attach_grad()
    wn.attach_grad()
    with autograd.record():
        y = nd.FullyConnected(xn, wn, bn, num_hidden=2)
        (gx,) = autograd.grad((y * y).sum() / 2, xn, create_graph=True)
        total = (gx * nd.array(c, dtype='float64')).sum()
    total.backward()
    np.testing.assert_allclose(wn.grad.asnumpy(), want, rtol=1e-6, atol=1e-8)


free_failing_tests(globals())
