"""Graph mode on one plan: a bound executor and a CachedOp under static_alloc and
static_shape run forward and backward from one memory plan kept between calls
(runtime._executor.GraphPlan).  References: the imperative path (nd + autograd), float64
central differences, and the pools' own counters for "no pool call"."""

import allocator
import numpy as np
import pytest

import runtime as mx
from runtime import _executor, autograd, nd
from runtime import symbol as sym
from runtime._executor import GraphPlan
from runtime.gluon import Trainer, nn
from runtime.gluon.loss import SoftmaxCrossEntropyLoss


def pool_calls():
    """Allocations served by the pools so far (cache hits and misses, every pool)."""
    n = 0
    for pool in allocator.pools().values():
        s = pool.memory_stats()
        n += s["num_cache_hits"] + s["num_cache_misses"]
    return n


def mlp_symbol():
    x = sym.var("x")
    h = sym.Activation(sym.FullyConnected(x, num_hidden=6, name="fc1"), act_type="relu")
    h = sym.FullyConnected(h, num_hidden=3, name="fc2")
    return sym.tanh(h)


def bound(dtype=np.float64, grad_req="write", batch=4):
    exe = mlp_symbol().simple_bind(mx.cpu(), grad_req=grad_req, type_dict={"x": dtype},
                                   x=(batch, 5))
    rng = np.random.RandomState(0)
    for name, arr in exe.arg_dict.items():
        arr[:] = rng.normal(size=arr.shape)
    return exe


def imperative(exe, head):
    """Output and gradients of the executor's graph computed with nd and autograd."""
    a = {k: v.copy() for k, v in exe.arg_dict.items()}
    for v in a.values():
        v.attach_grad()
    with autograd.record():
        h = nd.relu(nd.FullyConnected(a["x"], a["fc1_weight"], a["fc1_bias"], num_hidden=6))
        out = nd.tanh(nd.FullyConnected(h, a["fc2_weight"], a["fc2_bias"], num_hidden=3))
    out.backward(head)
    return out.asnumpy(), {k: v.grad.asnumpy() for k, v in a.items()}


def test_executor_values_and_gradients_equal_the_imperative_path():
    exe = bound()
    head = nd.array(np.random.RandomState(1).normal(size=(4, 3)), dtype=np.float64)
    want_out, want = imperative(exe, head)
    for _ in range(3):            # the same results from the kept plan, call after call
        exe.forward(is_train=True)
        exe.backward(head)
        np.testing.assert_allclose(exe.outputs[0].asnumpy(), want_out, rtol=1e-12)
        for k, g in want.items():
            np.testing.assert_allclose(exe.grad_dict[k].asnumpy(), g, rtol=1e-10,
                                       atol=1e-12, err_msg=k)


def test_executor_gradients_match_central_differences():
    exe = bound()
    rng = np.random.RandomState(2)
    r = rng.normal(size=(4, 3))
    exe.forward(is_train=True)
    exe.backward(nd.array(r, dtype=np.float64))
    for name in ("x", "fc1_weight", "fc2_bias"):
        arr = exe.arg_dict[name]
        base = arr.asnumpy()
        v = rng.normal(size=base.shape)
        vals = []
        for sign in (1, -1):
            arr[:] = base + sign * 1e-6 * v
            vals.append(np.sum(exe.forward(is_train=False)[0].asnumpy() * r))
        arr[:] = base
        np.testing.assert_allclose(np.sum(exe.grad_dict[name].asnumpy() * v),
                                   (vals[0] - vals[1]) / 2e-6, rtol=1e-6, err_msg=name)


def test_executor_steady_state_makes_no_pool_call():
    exe = bound(np.float32)
    head = nd.ones((4, 3))
    for _ in range(2):
        exe.forward(is_train=True)
        exe.backward(head)
    c0 = pool_calls()
    exe.forward(is_train=True)
    c1 = pool_calls()
    exe.backward(head)
    c2 = pool_calls()
    assert (c1 - c0, c2 - c1) == (0, 0)


def test_executor_grad_req_add_accumulates_and_backward_may_repeat():
    exe = bound(grad_req="add")
    head = nd.array(np.random.RandomState(3).normal(size=(4, 3)), dtype=np.float64)
    _, want = imperative(exe, head)
    exe.forward(is_train=True)
    exe.backward(head)
    exe.backward(head)            # forward values a rule reads live to the end of backward
    for k, g in want.items():
        np.testing.assert_allclose(exe.grad_dict[k].asnumpy(), 2 * g, rtol=1e-10,
                                   atol=1e-12, err_msg=k)


def test_executor_backward_after_inference_forward():
    exe = bound()
    head = nd.array(np.random.RandomState(4).normal(size=(4, 3)), dtype=np.float64)
    _, want = imperative(exe, head)
    exe.forward(is_train=False)
    exe.backward(head)
    for k, g in want.items():
        np.testing.assert_allclose(exe.grad_dict[k].asnumpy(), g, rtol=1e-10, atol=1e-12)


def test_one_plan_shares_slots_between_forward_values_and_gradients():
    exe = bound(np.float32)
    exe.forward(is_train=True)
    exe.backward(nd.ones((4, 3)))
    plan = exe._state.plan
    # a buffer per forward value and per gradient would hold naive_bytes; the one plan
    # gives the forward's dead values to the gradients (the first FC's output, read by
    # no gradient rule, is dead once relu ran)
    assert plan.peak_bytes < plan.naive_bytes
    assert plan.forward_bytes > 0


def test_sparse_input_runs_op_by_op():
    x = sym.var("x", stype="csr")
    out = sym.dot(x, sym.var("w"))
    exe = out.bind(mx.cpu(), {"x": nd.sparse.csr_matrix(np.eye(3, dtype=np.float32)),
                              "w": nd.ones((3, 2))})
    np.testing.assert_array_equal(exe.forward()[0].asnumpy(), np.ones((3, 2)))
    assert exe._plans[(None, False)] is False


def test_graph_plan_refuses_another_input_shape():
    exe = bound(np.float32)
    exe.forward()
    plan = exe._plans[(None, False)]
    args = exe._inputs()
    args[0] = nd.ones((2, 5))
    with pytest.raises(ValueError, match="graph input 0 must be"):
        plan.forward(args)


# -- FullyConnected + relu as one step ---------------------------------------------------

def _fc_relu_graph(act="relu", no_bias=False, also_out=False, second_reader=False):
    x = sym.var("x")
    pre = sym.FullyConnected(x, num_hidden=6, no_bias=no_bias, name="fc1")
    h = sym.relu(pre) if act == "relu_op" else sym.Activation(pre, act_type=act)
    if second_reader:
        h = h + pre
    out = sym.tanh(sym.FullyConnected(h, num_hidden=3, name="fc2"))
    return sym.Group([out, pre]) if also_out else out


def _run_graph(graph, fusion, x, head, seed=0):
    """(plan, outputs, gradients) of one training forward and backward of ``graph``
    bound with float32 arguments drawn from ``seed``; ``fusion`` for its plan."""
    _executor.set_graph_fusion(fusion)
    try:
        exe = graph.simple_bind(mx.cpu(), x=x.shape)
        rng = np.random.RandomState(seed)
        for name, arr in exe.arg_dict.items():
            arr[:] = x if name == "x" else rng.normal(size=arr.shape)
        outs = exe.forward(is_train=True)
        exe.backward([head] + [nd.zeros(o.shape) for o in outs[1:]])
    finally:
        _executor.set_graph_fusion(True)
    return (exe._state.plan, [o.asnumpy() for o in outs],
            {k: v.asnumpy() for k, v in exe.grad_dict.items()})


@pytest.mark.parametrize("act", ["relu", "relu_op"])
def test_fully_connected_relu_fused_gives_the_unfused_values_bit_for_bit(act):
    rng = np.random.RandomState(7)
    x = rng.normal(size=(5, 4)).astype(np.float32)
    x[1, 2] = np.nan                   # NaN goes through as np.maximum lets it
    head = nd.array(rng.normal(size=(5, 3)))
    fused, outs, grads = _run_graph(_fc_relu_graph(act), True, x, head)
    plain, want, want_grads = _run_graph(_fc_relu_graph(act), False, x, head)
    assert (fused.fused_steps, plain.fused_steps) == (1, 0)
    assert np.isnan(outs[0][1]).all() and not np.isnan(outs[0][0]).any()
    for o, w in zip(outs, want):
        np.testing.assert_array_equal(o, w)
    for k, g in want_grads.items():
        np.testing.assert_array_equal(grads[k], g, err_msg=k)


def test_fused_fully_connected_relu_equals_numpy():
    rng = np.random.RandomState(8)
    x = rng.normal(size=(64, 4)).astype(np.float32)
    _executor.set_graph_fusion(True)
    exe = _fc_relu_graph().simple_bind(mx.cpu(), x=x.shape)
    for name, arr in exe.arg_dict.items():
        arr[:] = x if name == "x" else rng.normal(size=arr.shape)
    a = {k: v.asnumpy().astype(np.float64) for k, v in exe.arg_dict.items()}
    h = np.maximum(a["x"] @ a["fc1_weight"].T + a["fc1_bias"], 0)
    want = np.tanh(h @ a["fc2_weight"].T + a["fc2_bias"])
    np.testing.assert_allclose(exe.forward()[0].asnumpy(), want, rtol=1e-5, atol=1e-6)
    assert exe._state.plan.fused_steps == 1


@pytest.mark.parametrize("case", [dict(act="tanh"), dict(no_bias=True),
                                  dict(also_out=True), dict(second_reader=True)])
def test_fully_connected_relu_not_fused_where_its_output_is_needed(case):
    # another activation, no bias, the FullyConnected's output an output of the graph,
    # or read twice: nothing is fused, and the outputs are NumPy's
    rng = np.random.RandomState(9)
    x = rng.normal(size=(5, 4)).astype(np.float32)
    head = nd.array(rng.normal(size=(5, 3)))
    plan, outs, _ = _run_graph(_fc_relu_graph(**case), True, x, head)
    assert plan.fused_steps == 0
    rng = np.random.RandomState(0)           # _run_graph's draws, in argument order
    exe = _fc_relu_graph(**case).simple_bind(mx.cpu(), x=x.shape)
    a = {name: x.astype(np.float64) if name == "x" else rng.normal(size=arr.shape)
         for name, arr in exe.arg_dict.items()}
    a = {k: v.astype(np.float32).astype(np.float64) for k, v in a.items()}
    pre = a["x"] @ a["fc1_weight"].T + a.get("fc1_bias", 0)
    h = np.tanh(pre) if case.get("act") == "tanh" else np.maximum(pre, 0)
    if case.get("second_reader"):
        h = h + pre
    want = [np.tanh(h @ a["fc2_weight"].T + a["fc2_bias"])] + (
        [pre] if case.get("also_out") else [])
    assert len(outs) == len(want)
    for o, w in zip(outs, want):
        np.testing.assert_allclose(o, w, rtol=1e-5, atol=1e-5)


def test_fused_step_under_the_profiler_runs_op_by_op_with_the_same_values(tmp_path):
    from runtime import profiler
    rng = np.random.RandomState(10)
    x = rng.normal(size=(5, 4)).astype(np.float32)
    head = nd.array(rng.normal(size=(5, 3)))
    _, want, want_grads = _run_graph(_fc_relu_graph(), True, x, head)
    profiler.set_config(filename=str(tmp_path / "trace.json"))
    profiler.dumps(reset=True)
    profiler.set_state("run")
    try:
        plan, outs, grads = _run_graph(_fc_relu_graph(), True, x, head)
    finally:
        profiler.set_state("stop")
        profiler.dump(finished=True)            # the records go, their sums stay
        names = profiler.dumps(reset=True)
        profiler.set_config(filename="profile.json")
    assert plan.fused_steps == 1
    for o, w in zip(outs, want):
        np.testing.assert_array_equal(o, w)
    for k, g in want_grads.items():
        np.testing.assert_array_equal(grads[k], g, err_msg=k)
    assert "FullyConnected" in names and "Activation" in names


# -- hybridized blocks -------------------------------------------------------------------

def gluon_mlp(hybrid):
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(16, activation="relu", in_units=8), nn.Dense(4, in_units=16))
    net.initialize(mx.init.Xavier())
    loss = SoftmaxCrossEntropyLoss()
    if hybrid:
        net.hybridize(static_alloc=True, static_shape=True)
        loss.hybridize(static_alloc=True, static_shape=True)
    return net, loss


def gluon_mlp_pair(hybrid):
    """(net, loss, ref, ref_loss): ``gluon_mlp(hybrid)`` and a not hybridized twin with
    the same parameter values."""
    net, loss = gluon_mlp(hybrid)
    ref, ref_loss = gluon_mlp(False)
    for p, q in zip(net.collect_params().values(), ref.collect_params().values()):
        q.set_data(p.data().copy())
    return net, loss, ref, ref_loss


def test_hybridized_training_step_makes_no_pool_call_and_equals_imperative():
    rng = np.random.RandomState(5)
    x = nd.array(rng.normal(size=(6, 8)))
    y = nd.array(rng.randint(0, 4, 6))
    net, loss_fn, ref, ref_loss = gluon_mlp_pair(True)
    trainers = [Trainer(n.collect_params(), "sgd", {"learning_rate": 0.5})
                for n in (net, ref)]
    calls = []
    for step in range(4):
        c0 = pool_calls()
        with autograd.record():
            loss = loss_fn(net(x), y)
        c1 = pool_calls()
        loss.backward()
        c2 = pool_calls()
        calls.append((c1 - c0, c2 - c1))
        with autograd.record():
            want = ref_loss(ref(x), y)
        want.backward()
        np.testing.assert_allclose(loss.asnumpy(), want.asnumpy(), rtol=1e-5)
        for p, q in zip(net.collect_params().values(), ref.collect_params().values()):
            np.testing.assert_allclose(p.grad().asnumpy(), q.grad().asnumpy(), rtol=1e-4,
                                       atol=1e-6, err_msg=p.name)
        for t in trainers:
            t.step(6)
    # steps 1 and 2 make the two states a loop alternates between; then nothing
    assert calls[2:] == [(0, 0), (0, 0)]


def test_held_outputs_are_never_overwritten():
    net, _ = gluon_mlp(True)
    x1, x2 = nd.ones((3, 8)), nd.full((3, 8), -2.0)
    y1 = net(x1)
    first = y1.asnumpy()
    y2 = net(x2)                  # y1 is held: this call takes another state
    y3 = net(x2)
    np.testing.assert_array_equal(y1.asnumpy(), first)
    np.testing.assert_array_equal(y2.asnumpy(), y3.asnumpy())
    assert not np.array_equal(first, y2.asnumpy())


def test_two_recorded_calls_before_one_backward():
    rng = np.random.RandomState(6)
    x1, x2 = nd.array(rng.normal(size=(2, 8))), nd.array(rng.normal(size=(2, 8)))
    net, _, ref, _ = gluon_mlp_pair(True)
    for block in (net, ref):
        with autograd.record():
            out = (block(x1) * block(x2)).sum()
        out.backward()
    for p, q in zip(net.collect_params().values(), ref.collect_params().values()):
        np.testing.assert_allclose(p.grad().asnumpy(), q.grad().asnumpy(), rtol=1e-5,
                                   atol=1e-6, err_msg=p.name)


def test_input_gradient_through_a_static_block_matches_central_differences():
    net, _ = gluon_mlp(True)
    net.cast("float64")
    rng = np.random.RandomState(7)
    x = nd.array(rng.normal(size=(3, 8)), dtype=np.float64)
    r = rng.normal(size=(3, 4))
    x.attach_grad()
    with autograd.record():
        out = net(x)
    out.backward(nd.array(r, dtype=np.float64))
    v = rng.normal(size=(3, 8))
    base = x.asnumpy()
    f = [np.sum(net(nd.array(base + s * 1e-6 * v, dtype=np.float64)).asnumpy() * r)
         for s in (1, -1)]
    np.testing.assert_allclose(np.sum(x.grad.asnumpy() * v), (f[0] - f[1]) / 2e-6,
                               rtol=1e-6)


def test_empty_cache_drops_kept_states():
    exe = bound(np.float32)
    exe.forward()
    plan = exe._plans[(None, False)]
    exe._state = None
    exe.outputs = []
    assert plan.states_kept == 1
    allocator.empty_cache()
    assert plan.states_kept == 0
    assert isinstance(plan, GraphPlan)


def test_static_cnn_with_batchnorm_equals_imperative():
    def cnn():
        net = nn.HybridSequential()
        with net.name_scope():
            net.add(nn.Conv2D(4, 3, in_channels=2), nn.BatchNorm(in_channels=4),
                    nn.Activation("relu"), nn.MaxPool2D(2), nn.Flatten(),
                    nn.Dense(3, in_units=36))
        net.initialize(mx.init.Xavier())
        return net
    net, ref = cnn(), cnn()
    for p, q in zip(net.collect_params().values(), ref.collect_params().values()):
        q.set_data(p.data().copy())
    net.hybridize(static_alloc=True, static_shape=True)
    x = nd.array(np.random.RandomState(8).normal(size=(2, 2, 8, 8)))
    for _ in range(3):
        outs = []
        for block in (net, ref):
            with autograd.record():
                out = block(x)
            out.backward(nd.ones_like(out))
            outs.append(out.asnumpy())
        np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5, atol=1e-6)
        for p, q in zip(net.collect_params().values(), ref.collect_params().values()):
            np.testing.assert_allclose(p.data().asnumpy(), q.data().asnumpy(), rtol=1e-6,
                                       err_msg=p.name)     # the moving statistics too
            if p.grad_req != "null":
                np.testing.assert_allclose(p.grad().asnumpy(), q.grad().asnumpy(),
                                           rtol=1e-4, atol=1e-5, err_msg=p.name)


def test_outputs_held_beyond_the_kept_states_stay_right():
    net, _, ref, _ = gluon_mlp_pair(True)
    xs = [nd.full((2, 8), float(i)) for i in range(6)]
    held = [net(x) for x in xs]            # six calls in flight, four states kept
    for x, y in zip(xs, held):
        np.testing.assert_allclose(y.asnumpy(), ref(x).asnumpy(), rtol=1e-5, atol=1e-6)
    plan = next(p for p in list(net._cache.values())[0][2]._plans.values() if p)
    assert plan.states_kept == 4


@pytest.mark.parametrize("grad_req", ["write", "add"])
def test_static_backward_computes_into_the_callers_buffers(monkeypatch, grad_req):
    """The backward executor hands a static graph's rule its planned buffers (``into``)
    and the plan computes the parameters' gradients there (the rule returns those very
    arrays, nothing is copied); the gradients equal the imperative path's, for
    grad_req 'write' and 'add' (two backwards accumulate)."""
    from runtime.nd import _cached_op
    rule = _cached_op._StaticGraphCall.gradient
    seen = []

    def spy(attrs, ins, outs, ograds, state, into=None):
        grads = rule(attrs, ins, outs, ograds, state, into=into)
        seen.append((into, grads))
        return grads
    monkeypatch.setattr(_cached_op._StaticGraphCall, "gradient", staticmethod(spy))
    rng = np.random.RandomState(8)
    x = nd.array(rng.normal(size=(5, 8)))
    net, _ = gluon_mlp(True)
    ref, _ = gluon_mlp(False)
    for block in (net, ref):
        for p in block.collect_params().values():
            p.grad_req = grad_req
    for p, q in zip(net.collect_params().values(), ref.collect_params().values()):
        q.set_data(p.data().copy())
    for _ in range(3):
        for block in (net, ref):
            with autograd.record():
                h = block(x)
                out = (h * h).sum()
            out.backward()
    assert len(seen) == 3
    for into, grads in seen:
        assert len(into) == len(grads) == 4          # the parameters (x: no gradient)
        assert all(b is not None and g is b for b, g in zip(into, grads))
    for p, q in zip(net.collect_params().values(), ref.collect_params().values()):
        np.testing.assert_allclose(p.grad().asnumpy(), q.grad().asnumpy(), rtol=1e-5,
                                   atol=1e-6, err_msg=p.name)

