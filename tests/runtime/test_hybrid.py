"""Gluon's hybrid blocks: HybridBlock/HybridSequential/HybridLambda run the same imperative
and hybridized (gradients against float64 central differences), a hybridized call is one
tape node, export() files load back bit for bit and have Gluon's layout, and MXNet
1.9.1's exported CNN (tests/fixtures/mxnet) gives MXNet's outputs and gradients through
SymbolBlock.imports."""

import json
import os

import numpy as np
import pytest

import runtime as mx
from runtime import autograd, nd
from runtime.gluon import nn

FIX = os.path.join(os.path.dirname(__file__), "..", "fixtures", "mxnet")


def load(name):
    return np.load(os.path.join(FIX, name + ".npy"))


def _mlp(dtype="float32"):
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(6, activation="tanh", dtype=dtype), nn.Dense(4, dtype=dtype),
                nn.HybridLambda(lambda F, x: F.softmax(x)))
    net.initialize(mx.init.Xavier())
    return net


def _grads(net, x, head):
    net.collect_params().zero_grad()
    x.attach_grad()
    with autograd.record():
        out = net(x)
        loss = (out * head).sum()
    loss.backward()
    return out.asnumpy(), x.grad.asnumpy(), {k: p.grad().asnumpy().copy()
                                              for k, p in net.collect_params().items()}


def test_hybridized_matches_central_differences():
    net = _mlp("float64")
    rng = np.random.RandomState(0)
    x = nd.array(rng.normal(size=(3, 5)), dtype="float64")
    head = nd.array(rng.normal(size=(3, 4)), dtype="float64")
    net(x)
    net.hybridize()
    _, gx, grads = _grads(net, x, head)

    def loss():
        return float((net(x) * head).sum().asnumpy().sum())

    for arr, g in [(x, gx)] + [(p.data(), grads[k])
                               for k, p in net.collect_params().items()]:
        v = rng.normal(size=arr.shape)
        base = arr.asnumpy().copy()
        vals = []
        for sign in (1, -1):
            arr[:] = base + sign * 1e-6 * v
            vals.append(loss())
        arr[:] = base
        np.testing.assert_allclose(np.sum(g * v), (vals[0] - vals[1]) / 2e-6, rtol=1e-6)


def test_hybridized_equals_imperative_and_is_one_tape_node():
    net = _mlp()
    x = nd.array(np.random.RandomState(1).normal(size=(2, 7)))
    head = nd.array(np.random.RandomState(2).normal(size=(2, 4)))
    ref = _grads(net, x, head)
    net.hybridize(static_alloc=True, static_shape=True)
    got = _grads(net, x, head)
    np.testing.assert_allclose(got[0], ref[0], rtol=1e-6)
    np.testing.assert_allclose(got[1], ref[1], rtol=1e-5, atol=1e-7)
    for k in ref[2]:
        np.testing.assert_allclose(got[2][k], ref[2][k], rtol=1e-5, atol=1e-7)
    with autograd.record():
        y = net(x)
    # the whole graph is one node of the tape, its input the variables' arrays
    assert "CachedOp" in repr(y._entry)
    assert len(net._cache) == 1
    net(nd.ones((5, 7)))                      # static_shape: a new shape, a new graph
    assert len(net._cache) == 2
    net.hybridize()
    net(x)
    net(nd.ones((5, 7)))                      # otherwise one graph serves both shapes
    assert len(net._cache) == 1
    net.hybridize(False)
    with autograd.record():
        y = net(x)
    assert "CachedOp" not in repr(y._entry) and "softmax" in repr(y._entry)


def test_deferred_shapes_are_inferred_from_the_traced_graph():
    net = nn.HybridSequential()
    net.add(nn.Dense(3), nn.Dense(2, in_units=0))
    net.initialize()
    net.hybridize()
    out = net(nd.ones((4, 9)))
    assert out.shape == (4, 2)
    assert net[0].weight.data().shape == (3, 9) and net[1].weight.data().shape == (2, 3)


class _Custom(nn.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.scale = self.params.get("scale", shape=(1,), init=mx.init.One())
            self.dense = nn.Dense(2, in_units=3)

    def hybrid_forward(self, F, x, y, scale):
        h = F.broadcast_mul(self.dense(x), scale)
        return h + y, F.sum(h)


def test_custom_hybrid_forward_with_two_inputs_and_outputs():
    block = _Custom()
    block.initialize()
    x, y = nd.ones((2, 3)), nd.ones((2, 2))
    ref = [o.asnumpy() for o in block(x, y)]
    block.hybridize()
    got = block(x, y)
    assert isinstance(got, tuple) and len(got) == 2
    for a, b in zip(got, ref):
        np.testing.assert_allclose(a.asnumpy(), b, rtol=1e-6)
    _, sym, *_ = next(iter(block._cache.values()))
    assert sym.list_arguments() == ["data0", block.dense.weight.name,
                                    block.dense.bias.name, block.scale.name, "data1"]


class _TakeAndIndex(nn.HybridBlock):
    def hybrid_forward(self, F, x, index):
        return F.take(x, index) * 2, index


@pytest.mark.parametrize("static", [False, True])
def test_an_input_off_the_tape_returned_as_an_output_carries_no_gradient(static):
    # the index is not attached: returned as it came, it is off the tape, and backward
    # through the other output gives take's gradient (2 at each taken position)
    block = _TakeAndIndex()
    block.hybridize(static_alloc=static, static_shape=static)
    x = nd.array([1.0, 2.0, 3.0, 4.0])
    x.attach_grad()
    index = nd.array([0, 2, 2])
    for _ in range(2):
        with autograd.record():
            y, i = block(x, index)
        y.backward()
        np.testing.assert_array_equal(x.grad.asnumpy(), [2.0, 0.0, 4.0, 0.0])
        np.testing.assert_array_equal(i.asnumpy(), [0, 2, 2])


def test_export_loads_back_bit_for_bit(tmp_path):
    net = _mlp()
    x = nd.array(np.random.RandomState(3).normal(size=(2, 7)))
    with pytest.raises(RuntimeError, match="hybridize\\(\\)"):
        net.export(str(tmp_path / "early"))
    net.hybridize()
    want = net(x).asnumpy()
    sym_file, params_file = net.export(str(tmp_path / "mlp"), epoch=3)
    assert sorted(os.listdir(tmp_path)) == ["mlp-0003.params", "mlp-symbol.json"]
    saved = nd.load(params_file)
    names = {p.name for p in net.collect_params().values()}
    assert set(saved) == {"arg:" + n for n in names}
    for p in net.collect_params().values():
        np.testing.assert_array_equal(saved["arg:" + p.name].asnumpy(), p.data().asnumpy())
    block = nn.SymbolBlock.imports(sym_file, ["data"], params_file)
    np.testing.assert_array_equal(block(x).asnumpy(), want)


def test_exported_json_has_gluons_layout(tmp_path):
    """Field by field against the Dense node and its parameters in MXNet's export."""
    with open(os.path.join(FIX, "cnn-symbol.json")) as f:
        theirs = {n["name"]: n for n in json.load(f)["nodes"]}
    net = nn.HybridSequential(prefix="cnn_")
    with net.name_scope():
        net.add(nn.Dense(5, in_units=36))
    net.initialize()
    net.hybridize()
    net(nd.ones((2, 36)))
    sym_file, _ = net.export(str(tmp_path / "d"))
    with open(sym_file) as f:
        graph = json.load(f)
    ours = {n["name"]: n for n in graph["nodes"]}
    for name in ("cnn_dense0_weight", "cnn_dense0_fwd"):
        assert set(ours[name]) == set(theirs[name])
        assert ours[name]["op"] == theirs[name]["op"]
    assert ours["cnn_dense0_fwd"]["attrs"] == theirs["cnn_dense0_fwd"]["attrs"]
    assert ours["cnn_dense0_weight"]["attrs"] == theirs["cnn_dense0_weight"]["attrs"]
    assert set(ours["cnn_dense0_bias"]["attrs"]) == set(theirs["cnn_dense0_bias"]["attrs"])
    assert graph["attrs"] == {"mxnet_version": ["int", 10901]}


def test_mxnet_exported_cnn_through_symbolblock_imports():
    block = nn.SymbolBlock.imports(os.path.join(FIX, "cnn-symbol.json"), ["data"],
                                   os.path.join(FIX, "cnn-0000.params"))
    x = nd.array(load("cnn_x"))
    np.testing.assert_allclose(block(x).asnumpy(), load("cnn_out_predict"), rtol=1e-5,
                               atol=1e-7)
    mean = block.collect_params()["cnn_batchnorm0_running_mean"].data().asnumpy().copy()
    x.attach_grad()
    with autograd.record():
        out = block(x)
        loss = (out * nd.array(load("cnn_head"))).sum()
    loss.backward()
    np.testing.assert_allclose(out.asnumpy(), load("cnn_out_train"), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(x.grad.asnumpy(), load("cnn_grad_x"), rtol=1e-4, atol=1e-6)
    for name, p in block.collect_params().items():
        if p.grad_req != "null":
            np.testing.assert_allclose(p.grad().asnumpy(), load("cnn_grad_" + name),
                                       rtol=1e-4, atol=1e-6, err_msg=name)
    # training mode updated the moving statistics (BatchNorm's aux states)
    assert not np.allclose(
        block.collect_params()["cnn_batchnorm0_running_mean"].data().asnumpy(), mean)


def test_symbolblock_errors_and_composition():
    data = mx.sym.var("data")
    out = mx.sym.FullyConnected(data, num_hidden=2, name="fc")
    with pytest.raises(ValueError, match="input 'nope' is not a variable"):
        nn.SymbolBlock(out, [mx.sym.var("nope")])
    block = nn.SymbolBlock(out, [data])
    block.initialize()
    net = nn.HybridSequential()
    net.add(block, nn.Activation("relu"))
    x = nd.array(np.random.RandomState(4).normal(size=(3, 4)))
    ref = net(x).asnumpy()
    net.hybridize()
    np.testing.assert_allclose(net(x).asnumpy(), ref, rtol=1e-6)
    w = block.collect_params()["fc_weight"].data().asnumpy()
    b = block.collect_params()["fc_bias"].data().asnumpy()
    np.testing.assert_allclose(ref, np.maximum(x.asnumpy() @ w.T + b, 0), rtol=1e-5)
    with pytest.raises(ValueError, match="takes 1 input"):
        block(x, x)


def _fc_block():
    data = mx.sym.var("data")
    block = nn.SymbolBlock(mx.sym.FullyConnected(data, num_hidden=3, name="fc"), [data])
    block.initialize(mx.init.Normal(1.0))
    return block, block.collect_params()["fc_weight"], block.collect_params()["fc_bias"]


def _affine(x, w, b):
    return x.asnumpy() @ w.data(x.context).asnumpy().T + b.data(x.context).asnumpy()


def test_parameters_changed_after_a_call_are_seen(tmp_path):
    block, w, b = _fc_block()
    x = nd.array(np.random.RandomState(7).normal(size=(2, 4)))
    np.testing.assert_allclose(block(x).asnumpy(), _affine(x, w, b), rtol=1e-5)
    changes = [
        lambda: w.set_data(nd.ones((3, 4)) * 2),
        lambda: b.initialize(mx.init.Constant(5.0), force_reinit=True),
        lambda: block.collect_params().initialize(mx.init.Constant(-1.0), force_reinit=True),
        lambda: (setattr(w, "grad_req", "null"), w.set_data(nd.ones((3, 4)) * 7)),
        # new memory: a call still on the old copy would miss the write after it
        lambda: (w.reset_ctx(mx.cpu(0)), w.set_data(nd.ones((3, 4)) * 9)),
    ]
    for k, change in enumerate(changes):
        before = block(x).asnumpy()
        change()
        want = _affine(x, w, b)
        assert not np.allclose(want, before), k
        np.testing.assert_allclose(block(x).asnumpy(), want, rtol=1e-5, err_msg=str(k))
    # a file written by another block of the same graph
    other, ow, ob = _fc_block()
    ow.set_data(nd.arange(12).reshape((3, 4)))
    other.save_parameters(str(tmp_path / "fc.params"))
    before = block(x).asnumpy()
    block.load_parameters(str(tmp_path / "fc.params"))
    np.testing.assert_allclose(block(x).asnumpy(), _affine(x, ow, ob), rtol=1e-5)
    assert not np.allclose(before, _affine(x, ow, ob))


def test_parameters_on_several_contexts_follow_the_input():
    block, w, b = _fc_block()
    x = nd.array(np.random.RandomState(8).normal(size=(2, 4)))
    block(x)
    for p in (w, b):
        p.reset_ctx([mx.cpu(0), mx.cpu(1)])
    w.set_data(nd.ones((3, 4)) * 3)                  # writes every copy
    for ctx in (mx.cpu(1), mx.cpu(0), mx.cpu(1)):
        xc = x.as_in_context(ctx)
        out = block(xc)
        assert out.context == ctx
        np.testing.assert_allclose(out.asnumpy(), _affine(xc, w, b), rtol=1e-5)
    w.data(mx.cpu(1))[:] = 4                          # one copy only, in place
    np.testing.assert_allclose(block(x.as_in_context(mx.cpu(1))).asnumpy(),
                               x.asnumpy() @ np.full((4, 3), 4.0) + b.data().asnumpy(),
                               rtol=1e-5)
    np.testing.assert_allclose(block(x).asnumpy(),
                               x.asnumpy() @ np.full((4, 3), 3.0) + b.data().asnumpy(),
                               rtol=1e-5)


def test_cast_after_a_call_is_seen():
    block, w, b = _fc_block()
    x = nd.array(np.random.RandomState(9).normal(size=(2, 4)))
    block(x)
    block.cast("float64")
    w.set_data(nd.ones((3, 4), dtype="float64") / 3)
    x64 = x.astype("float64")
    out = block(x64)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out.asnumpy(), _affine(x64, w, b), rtol=1e-12)


def test_hybridized_dense_sees_set_data_and_reinit():
    net = nn.Dense(3, in_units=4)
    net.initialize()
    net.hybridize(static_alloc=True, static_shape=True)
    x = nd.array(np.random.RandomState(10).normal(size=(2, 4)))
    net(x)
    for change in (lambda: net.weight.set_data(nd.ones((3, 4))),
                   lambda: net.bias.initialize(mx.init.Constant(2.0), force_reinit=True),
                   lambda: net.weight.initialize(mx.init.Constant(0.5), force_reinit=True)):
        change()
        np.testing.assert_allclose(net(x).asnumpy(), _affine(x, net.weight, net.bias),
                                   rtol=1e-5)


def test_imports_refuses_mismatched_params(tmp_path):
    net = _mlp()
    net.hybridize()
    net(nd.ones((1, 7)))
    sym_file, params_file = net.export(str(tmp_path / "m"))
    other = nn.HybridSequential()
    other.add(nn.Dense(3, in_units=7))
    other.initialize()
    other.hybridize()
    other(nd.ones((1, 7)))
    _, wrong = other.export(str(tmp_path / "o"))
    with pytest.raises(ValueError, match="missing in file"):
        nn.SymbolBlock.imports(sym_file, ["data"], wrong)


def test_control_flow_on_symbols_is_a_clear_error():
    with pytest.raises(NotImplementedError, match="sym.contrib.foreach: control flow"):
        mx.sym.contrib.foreach(lambda d, s: (d, s), mx.sym.var("x"), [])


def test_hybrid_lambda_and_sequential_slices():
    x = nd.array([[-1.0, 2.0], [0.5, -3.0]])
    by_name = nn.HybridLambda("relu")
    np.testing.assert_array_equal(by_name(x).asnumpy(), np.maximum(x.asnumpy(), 0))
    by_name.hybridize()
    np.testing.assert_array_equal(by_name(x).asnumpy(), np.maximum(x.asnumpy(), 0))
    with pytest.raises(ValueError, match="'no_such_op' is not an operator"):
        nn.HybridLambda("no_such_op")
    net = nn.HybridSequential()
    net.add(nn.HybridLambda(lambda F, v: v * 2), nn.HybridLambda(lambda F, v: v + 1))
    head = net[:1]
    assert isinstance(head, nn.HybridSequential) and len(head) == 1
    net.hybridize()
    np.testing.assert_array_equal(net(x).asnumpy(), x.asnumpy() * 2 + 1)


def test_symbolblock_parameter_files_are_mxnets(tmp_path):
    block = nn.SymbolBlock.imports(os.path.join(FIX, "cnn-symbol.json"), ["data"],
                                   os.path.join(FIX, "cnn-0000.params"))
    path = str(tmp_path / "again.params")
    block.save_parameters(path)
    ours, theirs = nd.load(path), nd.load(os.path.join(FIX, "cnn-0000.params"))
    assert sorted(ours) == sorted(theirs)
    for key in theirs:
        np.testing.assert_array_equal(ours[key].asnumpy(), theirs[key].asnumpy())


def test_plain_block_children_are_refused():
    net = nn.HybridSequential()
    with pytest.raises(ValueError, match="children of a HybridBlock must be HybridBlocks "
                                         "too \\(got Sequential\\)"):
        net.add(nn.Sequential())
    assert len(net) == 0


@pytest.mark.parametrize("static", [False, True])
def test_repeated_calls_find_the_graph_of_their_own_signature(static):
    # a call on one array reuses the last call's graph only when its dtype, storage
    # type (and shape, under static_shape) are the same: alternate them
    net = nn.Dense(3, in_units=4)
    net.initialize()
    net.hybridize(static_alloc=static, static_shape=static)
    w, b = net.weight.data().asnumpy(), net.bias.data().asnumpy()
    rng = np.random.default_rng(0)
    calls = [(2, np.float32), (2, np.float32), (5, np.float32), (2, np.float64),
             (2, np.float32), (5, np.float64)]
    for rows, dtype in calls:
        x = rng.standard_normal((rows, 4)).astype(dtype)
        if dtype == np.float64:
            net.cast("float64")
        out = net(nd.array(x, dtype=dtype))
        assert out.dtype == dtype and out.shape == (rows, 3)
        np.testing.assert_allclose(out.asnumpy(), x @ w.T + b, rtol=1e-5, atol=1e-5)
        if dtype == np.float64:
            net.cast("float32")


def test_a_multi_output_symbol_comes_back_as_a_list_of_arrays():
    class Halves(nn.HybridBlock):
        def hybrid_forward(self, F, x):
            return F.split(x, num_outputs=2, axis=1)

    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    net = Halves()
    eager = net(nd.array(x))
    net.hybridize()
    traced = net(nd.array(x))
    assert isinstance(traced, list) and len(traced) == len(eager) == 2
    for got, want in zip(traced, np.split(x, 2, axis=1)):
        np.testing.assert_array_equal(got.asnumpy(), want)


def test_plain_attributes_may_be_set_before_block_init():
    class Early(nn.HybridBlock):
        def __init__(self, mode):
            self._mode = mode                 # Gluon allows this before __init__
            super().__init__()
            self.dense = nn.Dense(2, in_units=3)

        def hybrid_forward(self, F, x):
            return self.dense(x) * (2 if self._mode == "double" else 1)

    net = Early("double")
    net.initialize()
    x = np.ones((1, 3), np.float32)
    w, b = net.dense.weight.data().asnumpy(), net.dense.bias.data().asnumpy()
    np.testing.assert_allclose(net(nd.array(x)).asnumpy(), 2 * (x @ w.T + b), rtol=1e-6)

    class TooEarly(nn.Block):
        def __init__(self):
            self.dense = nn.Dense(2)          # a child needs the block's bookkeeping
            super().__init__()

    with pytest.raises(RuntimeError, match="call Block.__init__ before assigning"):
        TooEarly()
