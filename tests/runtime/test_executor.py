"""The backward plan, number for number: hand-built graphs with their reference counts,
requests, slots and pool calls; the pool's own counters and peak against the plan's;
the plan cache; a training loop through the Trainer with no pre-warming.

Gradients are checked against NumPy; pool figures against ``allocator``'s statistics,
read here and nowhere in the runtime."""
import gc

import numpy as np
import pytest

import allocator
import runtime as mx
from runtime import _executor, autograd, nd
from runtime.gluon import nn
from tests.runtime.conftest import free_failing_tests

N = 1024                          # float32 elements: 4096 bytes, a whole number of pages
NB = 4 * N


@pytest.fixture(autouse=True)
def fresh_plans():
    autograd.clear_plan_cache()
    yield
    autograd.clear_plan_cache()


def _arr(v, dtype="float32"):
    return nd.array(np.asarray(v), dtype=dtype)


def _x(req="write"):
    x = _arr(np.linspace(0.1, 0.9, N))
    x.attach_grad(grad_req=req)
    return x


def _pool_calls():
    s = allocator.get_pool().memory_stats()
    return s["num_cache_hits"] + s["num_cache_misses"]


def _backward(head, head_grad=None):
    """``head.backward()`` with the pool's own count of allocations and its peak above
    the allocated bytes at the start."""
    pool = allocator.get_pool()
    start = pool.memory_stats()["allocated_bytes.all.current"]
    allocator.reset_peak_stats()
    calls = _pool_calls()
    head.backward(head_grad)
    s = pool.memory_stats()
    return _pool_calls() - calls, s["allocated_bytes.all.peak"] - start


def _table(plan):
    return [tuple(e) for e in plan]


def test_y_is_2x_is_one_node_and_one_write():
    x = _x()
    for step in range(2):
        with autograd.record():
            y = 2 * x
        calls, peak = _backward(y)
        s = autograd.last_backward_stats()
        assert s == {"nodes": 1, "entries": 2,
                     "requests": {"null": 0, "write": 1, "inplace": 1, "add": 0},
                     "pool_calls": 1 - step, "slots": 1, "plan_peak_bytes": NB,
                     "naive_peak_bytes": 2 * NB, "plan_cached": step == 1}
        assert calls == s["pool_calls"] and peak == (NB if step == 0 else 0)
        # the head's ones (written), then 2 * ones into that buffer, which becomes x.grad
        assert _table(autograd.last_backward_plan()) == [
            (None, 1, "write", 0, NB), ("_mul_scalar", 0, "inplace", 0, NB)]
        np.testing.assert_array_equal(x.grad.asnumpy(), np.full(N, 2.0, np.float32))


def test_x_times_x_plus_x_writes_the_gradient_once_then_adds():
    x = _x()
    with autograd.record():
        y = x * x + x
    calls, peak = _backward(y)
    plan = autograd.last_backward_plan()
    # add's rule hands the out-grad to x (computed into it: the first contribution) and
    # to x * x (a buffer of its own); multiply's two contributions add into x's
    assert _table(plan) == [
        (None, 1, "write", 0, NB), ("add", 1, "write", 1, NB), ("add", 0, "inplace", 0, NB),
        ("multiply", 0, "add", 0, NB), ("multiply", 0, "add", 0, NB)]
    assert (plan.slots, plan.peak_bytes, plan.naive_peak_bytes) == (2, 2 * NB, 3 * NB)
    assert (calls, peak) == (2, 2 * NB)
    v = np.linspace(0.1, 0.9, N).astype(np.float32)
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * v + 1, rtol=1e-6)


def test_a_chain_of_three_reshapes_shares_one_buffer():
    x = _x()
    with autograd.record():
        y = x.reshape((32, 32)).reshape((4, 256)).reshape((N,))
    calls, peak = _backward(y)
    assert _table(autograd.last_backward_plan()) == [
        (None, 1, "write", 0, NB), ("reshape", 1, "inplace", 0, NB),
        ("reshape", 1, "inplace", 0, NB), ("reshape", 0, "inplace", 0, NB)]
    assert (calls, peak) == (1, NB)            # the head's ones: the views cost nothing
    np.testing.assert_array_equal(x.grad.asnumpy(), np.ones(N, np.float32))


def test_a_branch_that_reaches_no_variable_is_null_and_never_run():
    x = _x()
    w = _arr(np.linspace(-1, 1, N))
    w.attach_grad(grad_req="null")              # on the tape, but wants no gradient
    with autograd.record():
        y = x * 2.0 + nd.exp(w)
    calls, _ = _backward(y)
    assert _table(autograd.last_backward_plan()) == [
        (None, 1, "write", 0, NB), ("add", 1, "inplace", 0, NB), ("add", 0, "null", None, 0),
        ("_mul_scalar", 0, "inplace", 0, NB)]
    assert autograd.last_backward_stats()["nodes"] == 2        # exp's rule never ran
    assert calls == 1
    np.testing.assert_array_equal(x.grad.asnumpy(), np.full(N, 2.0, np.float32))


def test_dot_with_only_the_weight_attached_never_forms_the_data_gradient():
    X = _arr(np.linspace(-1, 1, 64 * 32).reshape(64, 32), "float64")
    W = _arr(np.linspace(0.5, -0.5, 32 * 32).reshape(32, 32), "float64")
    W.attach_grad()
    with autograd.record():
        y = nd.dot(X, W)
    calls, peak = _backward(y)
    assert _table(autograd.last_backward_plan()) == [
        (None, 1, "write", 0, 64 * 32 * 8), ("dot", 0, "null", None, 0),
        ("dot", 0, "write", 1, 32 * 32 * 8)]
    assert (calls, peak) == (2, 64 * 32 * 8 + 32 * 32 * 8)    # no buffer for X's gradient
    np.testing.assert_allclose(W.grad.asnumpy(), X.asnumpy().T @ np.ones((64, 32)),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("given", [False, True])
def test_a_unary_chain_computes_in_place_into_the_out_grad(given):
    x = _x()
    h = _arr(np.linspace(0.5, 1.5, N))
    with autograd.record():
        y = nd.tanh(nd.sigmoid(nd.exp(x)))
    calls, peak = _backward(y, h if given else None)
    assert _table(autograd.last_backward_plan()) == [
        (None, 1, "write", 0, NB), ("tanh", 1, "inplace", 0, NB),
        ("sigmoid", 1, "inplace", 0, NB), ("exp", 0, "inplace", 0, NB)]
    assert (calls, peak) == (1, NB)
    # the head gradient the user passed is copied into the plan's buffer, never written
    np.testing.assert_array_equal(h.asnumpy(), np.linspace(0.5, 1.5, N).astype(np.float32))
    v = np.linspace(0.1, 0.9, N)
    e = np.exp(v)
    s = 1 / (1 + np.exp(-e))
    want = (1 - np.tanh(s) ** 2) * s * (1 - s) * e * (np.linspace(0.5, 1.5, N) if given else 1)
    np.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-5)


def test_a_fan_out_of_ten_writes_once_and_adds_nine_times():
    x = _x()
    with autograd.record():
        y = x * 1.0
        for i in range(2, 11):
            y = y + x * float(i)
    calls, peak = _backward(y)
    plan = _table(autograd.last_backward_plan())
    into_x = [e for e in plan if e[0] == "_mul_scalar"]
    # x's gradient: the first contribution computed into its out-grad, then nine adds
    assert [e[2] for e in into_x] == ["inplace"] + ["add"] * 9
    assert {e[1] for e in into_x} == {0} and len({e[3] for e in into_x}) == 1
    s = autograd.last_backward_stats()
    assert s["requests"] == {"null": 0, "write": 10, "inplace": 10, "add": 9}
    assert s["nodes"] == 19 and s["entries"] == 1 + 9 * 2 + 10
    # each add hands its out-grad to its lhs (a copy) and its rhs (the buffer itself); the
    # lhs's buffer is the next add's out-grad: two buffers alternate, and x's own
    assert s["slots"] == 3 and (calls, peak) == (3, 3 * NB)
    np.testing.assert_array_equal(x.grad.asnumpy(), np.full(N, 55.0, np.float32))


def test_without_inplace_every_gradient_has_a_buffer_and_the_same_values():
    x = _x()
    grads = []
    for inplace in (True, False):
        _executor.set_inplace(inplace)
        try:
            with autograd.record():
                y = nd.tanh(nd.exp(x) * 2.0)
            y.backward()
        finally:
            _executor.set_inplace(True)
        grads.append(x.grad.asnumpy().copy())
        s = autograd.last_backward_stats()
    assert s["requests"] == {"null": 0, "write": 4, "inplace": 0, "add": 0}
    # a buffer is free again once its reader ran: two alternate (the head's, then
    # exp's output's; tanh's input's, then x's)
    assert (s["slots"], s["plan_peak_bytes"], s["naive_peak_bytes"]) == (2, 2 * NB, 4 * NB)
    np.testing.assert_array_equal(grads[0], grads[1])


def test_grad_req_add_accumulates_over_two_backwards():
    x = _x("add")
    for step in range(2):
        with autograd.record():
            y = 2 * x
        calls, _ = _backward(y)
        assert _table(autograd.last_backward_plan()) == [
            (None, 1, "write", 0, NB), ("_mul_scalar", 0, "add", 1, NB)]
        assert calls == (2 if step == 0 else 0)
    np.testing.assert_array_equal(x.grad.asnumpy(), np.full(N, 4.0, np.float32))


def test_a_tanh_chain_holds_the_plans_peak():
    x = _x()
    with autograd.record():
        y = x
        for _ in range(50):
            y = nd.tanh(y)
    calls, peak = _backward(y)
    s = autograd.last_backward_stats()
    assert s["requests"] == {"null": 0, "write": 1, "inplace": 50, "add": 0}
    assert (s["slots"], s["plan_peak_bytes"], s["naive_peak_bytes"]) == (1, NB, 51 * NB)
    assert (calls, peak) == (1, s["plan_peak_bytes"])


def test_the_plan_cache_reuses_a_plan_and_its_buffers():
    x = _x()
    for step in range(3):
        with autograd.record():
            y = nd.relu(x * 3.0 - 1.0).sum()
        calls, peak = _backward(y)
        s = autograd.last_backward_stats()
        assert s["plan_cached"] is (step > 0)
        assert calls == s["pool_calls"] == (s["slots"] if step == 0 else 0)
        assert _executor.plan_cache_info()["plans"] == 1
    assert _executor.plan_cache_info()["bytes"] == s["plan_peak_bytes"]
    # another shape: another plan
    z = _arr(np.linspace(0.1, 0.9, 2 * N))
    z.attach_grad()
    with autograd.record():
        y = nd.relu(z * 3.0 - 1.0).sum()
    y.backward()
    assert not autograd.last_backward_stats()["plan_cached"]
    assert _executor.plan_cache_info()["plans"] == 2
    v = np.linspace(0.1, 0.9, N)
    np.testing.assert_array_equal(x.grad.asnumpy(), np.where(3 * v - 1 > 0, 3.0, 0.0))
    # released: by the autograd call and by the allocator's empty_cache
    held = allocator.get_pool().memory_stats()["allocated_bytes.all.current"]
    allocator.empty_cache()
    assert _executor.plan_cache_info() == {"plans": 0, "max_plans": 8, "bytes": 0}
    assert allocator.get_pool().memory_stats()["allocated_bytes.all.current"] < held


def test_a_plan_is_reused_only_for_the_same_graph():
    v = np.arange(16.0).reshape(4, 4)
    h = np.array([1.0, 2.0, 3.0, 4.0])
    x = _arr(v, "float64")
    x.attach_grad()
    for axis, want in ((0, np.tile(h, (4, 1))), (1, np.tile(h[:, None], (1, 4))),
                       (0, np.tile(h, (4, 1)))):
        with autograd.record():
            y = (x * 2.0).sum(axis=axis)         # same shapes, other axes: another plan
        y.backward(_arr(h, "float64"))
        np.testing.assert_array_equal(x.grad.asnumpy(), 2.0 * want)
    assert autograd.last_backward_stats()["plan_cached"]
    x.attach_grad(grad_req="add")                # another request: another plan
    x.grad[:] = 1.0
    with autograd.record():
        y = (x * 2.0).sum(axis=0)
    y.backward(_arr(h, "float64"))
    assert not autograd.last_backward_stats()["plan_cached"]
    np.testing.assert_array_equal(x.grad.asnumpy(), 1.0 + 2.0 * np.tile(h, (4, 1)))


def test_the_plan_cache_is_bounded():
    for i in range(_executor.PLAN_CACHE_SIZE + 3):
        x = _arr(np.ones(i + 1))
        x.attach_grad()
        with autograd.record():
            y = x * 2.0
        y.backward()
    assert _executor.plan_cache_info()["plans"] == _executor.PLAN_CACHE_SIZE


def test_create_graph_runs_through_an_unplanned_plan():
    x = _arr([0.5, -0.25, 1.5], "float64")
    x.attach_grad()
    with autograd.record():
        y = nd.tanh(x) * x
        (g,) = autograd.grad(y, x, create_graph=True)
    plan = autograd.last_backward_plan()
    assert all(e.slot is None for e in plan) and plan.slots == 0
    g.backward()
    v = np.array([0.5, -0.25, 1.5])
    t = np.tanh(v)
    # d/dx (tanh'(x) x + tanh(x)) = -2 t (1 - t^2) x + 2 (1 - t^2)
    np.testing.assert_allclose(x.grad.asnumpy(), -2 * t * (1 - t * t) * v + 2 * (1 - t * t),
                               rtol=1e-12)


def test_an_error_resets_the_statistics_and_leaves_grad_alone():
    x = _x()
    with autograd.record():
        y = 2 * x
    y.backward()
    before = x.grad.asnumpy().copy()
    with autograd.record():
        z = nd.exp(x)
        y = z * 3.0 + x
    z[:] = 0                         # exp saved its output: backward must refuse
    with pytest.raises(RuntimeError, match="exp's output 0"):
        y.backward()
    assert autograd.last_backward_stats() == {}
    assert autograd.last_backward_plan() is None
    np.testing.assert_array_equal(x.grad.asnumpy(), before)


def test_a_thousand_trainer_steps_keep_a_flat_pool_and_backward_allocates_nothing():
    rng = np.random.default_rng(0)
    X = nd.array(rng.standard_normal((32, 20)), dtype="float32")
    labels = nd.array(rng.integers(0, 10, 32), dtype="float32")
    net = nn.Sequential()
    net.add(nn.Dense(64, activation="relu"), nn.Dense(10))
    net.initialize()
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
    pool = allocator.get_pool()
    allocator.empty_cache()
    allocator.reset_peak_stats()
    losses, calls = [], []
    for step in range(1000):
        with autograd.record():
            loss = loss_fn(net(X), labels)
        before = _pool_calls()
        loss.backward()
        calls.append(_pool_calls() - before)
        trainer.step(32)
        if step == 9:
            at10 = pool.memory_stats()
        if step in (0, 999):
            losses.append(float(loss.mean().asnumpy()[0]))
    at1000 = pool.memory_stats()
    assert losses[1] < 0.1 * losses[0], losses
    assert calls[0] > 0 and calls[2:] == [0] * 998, calls[:4]
    assert autograd.last_backward_stats()["pool_calls"] == 0
    for key in ("reserved_bytes.all.peak", "allocated_bytes.all.peak",
                "allocated_bytes.all.current"):
        assert at1000[key] == at10[key], (key, at10[key], at1000[key])
    del net, trainer
    gc.collect()


free_failing_tests(globals())


def test_a_cached_plan_is_not_reused_for_other_attributes():
    # one graph shape, three act_types: each backward must run its own rule
    x0 = np.array([-1.0, 0.5, 2.0])
    w = np.array([1.0, 2.0, 3.0])
    s = 1 / (1 + np.exp(-x0))
    want = {"relu": (x0 > 0) * w, "sigmoid": s * (1 - s) * w, "tanh": (1 - np.tanh(x0) ** 2) * w}
    for _ in range(2):
        for act, expected in want.items():
            x = nd.array(x0, dtype="float64")
            x.attach_grad()
            with autograd.record():
                z = (nd.Activation(x, act_type=act) * nd.array(w, dtype="float64")).sum()
            z.backward()
            np.testing.assert_allclose(x.grad.asnumpy(), expected, rtol=1e-12)


def test_relu_rule_keeps_nan_and_signed_zero_of_the_product():
    # the C-level rule is g * (y > 0) to the bit, as the Python rule and MXNet's relu_grad
    x0 = np.array([-1.0, 2.0, -3.0, 4.0, 0.0], dtype=np.float32)
    g0 = np.array([np.nan, np.nan, -1.0, np.inf, 5.0], dtype=np.float32)
    x = nd.array(x0)
    x.attach_grad()
    with autograd.record():
        y = nd.relu(x)
    y.backward(nd.array(g0))
    np.testing.assert_array_equal(np.signbit(x.grad.asnumpy()), np.signbit(g0 * (x0 > 0)))
    np.testing.assert_array_equal(x.grad.asnumpy(), g0 * (np.maximum(x0, 0) > 0))


def _memory(a):
    """The address of ``a``'s memory (the export is released before returning)."""
    view = np.asarray(a)
    address = view.__array_interface__["data"][0]
    del view
    return address


def _conv_case():
    x = _arr(np.linspace(-1, 1, 2 * 3 * 4 * 4).reshape(2, 3, 4, 4))
    w = _arr(np.linspace(0.5, -0.5, 5 * 3).reshape(5, 3, 1, 1))
    w.attach_grad()
    # the weight gradient of a 1x1 convolution under a head of ones
    want = np.einsum("nchw->c", x.asnumpy())[None, :, None, None] * np.ones((5, 1, 1, 1))
    return x, w, want.astype(np.float32)


def test_a_python_rules_gradient_of_a_variable_is_handed_over_not_copied():
    """Convolution's rule runs in Python: its weight gradient is a fresh array, so the
    target owns no planned buffer and w.grad takes that array's memory (the old memory
    goes back to the pool), as MXNet writes the last gradient op into the gradient."""
    x, w, want = _conv_case()
    for step in range(2):
        before = _memory(w.grad)
        with autograd.record():
            y = nd.Convolution(x, w, kernel=(1, 1), num_filter=5, no_bias=True)
        y.backward()
        table = _table(autograd.last_backward_plan())
        assert table[0] == (None, 1, "write", 0, 2 * 5 * 4 * 4 * 4)      # the head's ones
        assert [e[:4] for e in table[1:]] == [("Convolution", 0, "null", None),
                                              ("Convolution", 0, "write", None)]
        assert autograd.last_backward_stats()["slots"] == 1
        assert _memory(w.grad) != before
        np.testing.assert_allclose(w.grad.asnumpy(), want, rtol=1e-6)


def test_a_viewed_grad_is_written_into_its_own_memory():
    """While a NumPy view of w.grad is alive, the gradient is copied into that memory
    (nobody may see .grad change its memory), and the view sees it."""
    x, w, want = _conv_case()
    view = np.asarray(w.grad)
    before = view.__array_interface__["data"][0]
    with autograd.record():
        y = nd.Convolution(x, w, kernel=(1, 1), num_filter=5, no_bias=True)
    y.backward()
    np.testing.assert_allclose(view, want, rtol=1e-6)
    del view
    assert _memory(w.grad) == before


def test_a_head_gradient_handed_through_is_never_taken():
    """A rule's result that somebody else holds (here the caller's head gradient, which
    reshape's rule hands straight to x) is copied into x.grad, never taken: the head
    gradient keeps its memory and values."""
    x = _x()
    head = _arr(np.linspace(1, 2, N))
    with autograd.record():
        y = nd.reshape(x, (N,))
    before = _memory(head)
    y.backward(head)
    assert _memory(head) == before and _memory(x.grad) != before
    np.testing.assert_array_equal(head.asnumpy(), np.linspace(1, 2, N).astype(np.float32))
    np.testing.assert_array_equal(x.grad.asnumpy(), head.asnumpy())


def _fc_relu_mlp(fusion, spelling="relu", nan=False, bias_req="write", no_bias=False,
                 reread=False, dtype="float32"):
    """(plan, gradients) of a backward through FullyConnected + relu twice and a last
    FullyConnected, weights drawn from one seed, with backward fusion ``fusion``."""
    _executor.set_backward_fusion(fusion)
    try:
        rng = np.random.RandomState(11)
        x = rng.normal(size=(6, 5))
        if nan:
            x[2, 1] = np.nan
        params = [nd.array(x, dtype=dtype)] + [
            nd.array(rng.normal(size=s), dtype=dtype)
            for s in [(4, 5), (4,), (3, 4), (3,), (2, 3), (2,)]]
        for i, p in enumerate(params):
            p.attach_grad(grad_req=bias_req if i in (2, 4) else "write")
        x, w1, b1, w2, b2, w3, b3 = params
        relu = nd.relu if spelling == "relu" else \
            (lambda z: nd.Activation(z, act_type="relu"))
        with autograd.record():
            z = nd.FullyConnected(x, w1, None if no_bias else b1, num_hidden=4,
                                  no_bias=no_bias)
            h = relu(z) + z if reread else relu(z)
            h = relu(nd.FullyConnected(h, w2, b2, num_hidden=3))
            y = nd.FullyConnected(h, w3, b3, num_hidden=2)
        y.backward(nd.array(rng.normal(size=(6, 2)), dtype=dtype))
        return autograd.last_backward_plan(), [p.grad.asnumpy() for p in params]
    finally:
        _executor.set_backward_fusion(True)


@pytest.mark.parametrize("spelling", ["relu", "Activation"])
@pytest.mark.parametrize("case", [{}, {"nan": True}, {"bias_req": "null"},
                                  {"bias_req": "add"}, {"dtype": "float64"}])
def test_relu_gradient_applied_in_the_fully_connected_bias_pass_bit_for_bit(spelling,
                                                                             case):
    """A relu computed in place whose input is a FullyConnected's output and nothing
    else's: the FullyConnected's step applies the relu's gradient in the pass that sums
    its bias's gradient (or alone, where the bias takes none).  Every gradient equals the
    unfused plan's bit for bit, NaN included, under write, add and null requests."""
    fused, got = _fc_relu_mlp(True, spelling, **case)
    plain, want = _fc_relu_mlp(False, spelling, **case)
    assert (fused.fused_steps, plain.fused_steps) == (2, 0)
    assert repr(fused) == repr(plain)       # the same entries, requests and slots
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    if case.get("nan"):
        assert np.isnan(got[1]).any()


def test_fused_relu_gradient_equals_numpy():
    plan, got = _fc_relu_mlp(True, dtype="float64")
    assert plan.fused_steps == 2
    rng = np.random.RandomState(11)
    x = rng.normal(size=(6, 5))
    w1, b1, w2, b2, w3, b3 = [rng.normal(size=s) for s in
                              [(4, 5), (4,), (3, 4), (3,), (2, 3), (2,)]]
    g = rng.normal(size=(6, 2))
    z1 = x @ w1.T + b1
    h1 = np.maximum(z1, 0)
    z2 = h1 @ w2.T + b2
    h2 = np.maximum(z2, 0)
    g2 = (g @ w3) * (z2 > 0)
    g1 = (g2 @ w2) * (z1 > 0)
    want = [g1 @ w1, g1.T @ x, g1.sum(0), g2.T @ h1, g2.sum(0), g.T @ h2, g.sum(0)]
    for a, w in zip(got, want):
        np.testing.assert_allclose(a, w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", [{"no_bias": True}, {"reread": True}])
def test_relu_gradient_not_fused_where_the_pattern_does_not_hold(case):
    # no bias to sum in the same pass (the first layer), or the FullyConnected's output
    # also read by the add: that layer's relu runs alone, the second layer still fuses
    fused, got = _fc_relu_mlp(True, **case)
    plain, want = _fc_relu_mlp(False, **case)
    assert (fused.fused_steps, plain.fused_steps) == (1, 0)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
