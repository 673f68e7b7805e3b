"""Gluon's layers, losses and cells as HybridBlocks: every convolution, pooling,
normalisation and activation layer, every loss and every recurrent cell gives, hybridized (alone and inside a HybridSequential whose graph infers the
deferred shapes), the outputs, gradients and updated running statistics of MXNet 1.9.1
(``data/mxnet191.npz``) and of its own imperative call; HybridConcatenate joins its
branches as Concatenate does; a small CNN trains the same hybridized and imperative,
BatchNorm's running statistics included, and exports to files SymbolBlock.imports runs
with the same outputs."""

import os

import numpy as np
import pytest

import runtime as mx
from runtime import autograd, nd
from runtime.gluon import nn

from runtime.gluon import loss as L

from runtime.gluon import rnn

from tests.runtime.mxnet_fixtures import CELL_CASES, LAYER_CASES, LOSS_CASES
from tests.runtime.test_rnn_cell import unrolled

FIXTURES = np.load(os.path.join(os.path.dirname(__file__), "data", "mxnet191.npz"))


def _close(actual, expected, what):
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-5, err_msg=what)


def _run(key, cls, kwargs, mode):
    """(output, input gradient, [(parameter, value after, gradient or None)]) of one
    recorded call of the fixture's layer with the fixture's parameters: ``mode`` 'plain'
    (imperative), 'alone' (the layer hybridized) or 'nested' (inside a hybridized
    HybridSequential, which infers the deferred shapes from its graph)."""
    kwargs = dict(kwargs)
    if mode == "nested" and kwargs.get("layout", "NC")[1] != "C" and cls.startswith("Conv"):
        # a channel-last weight is transposed before the operator: the parent's graph
        # cannot infer its input channels (see conv_layers' docstring)
        kwargs["in_channels"] = FIXTURES[f"{key}/x"].shape[-1]
    layer = getattr(nn, cls)(**kwargs)
    block = layer
    if mode == "nested":
        block = nn.HybridSequential()
        block.add(layer)
    block.initialize()
    if mode != "plain":
        block.hybridize()
    x = nd.array(FIXTURES[f"{key}/x"])
    block(x)                                        # completes deferred shapes
    params = list(layer.collect_params().values())
    for i, p in enumerate(params):
        p.set_data(nd.array(FIXTURES[f"{key}/p{i}"]))
    x.attach_grad()
    with autograd.record():
        out = block(x)
    out.backward(nd.array(FIXTURES[f"{key}/head"]))
    return (out.asnumpy(), x.grad.asnumpy(),
            [(p, p.data().asnumpy(), None if p.grad_req == "null" else p.grad().asnumpy())
             for p in params])


@pytest.mark.parametrize("mode", ["alone", "nested"])
@pytest.mark.parametrize("key,cls,kwargs,shape", LAYER_CASES, ids=[c[0] for c in LAYER_CASES])
def test_hybridized_layer_matches_imperative_and_mxnet(key, cls, kwargs, shape, mode):
    layer = getattr(nn, cls)(**kwargs)
    assert isinstance(layer, nn.HybridBlock)
    ref_out, ref_dx, ref_params = _run(key, cls, kwargs, "plain")
    out, dx, params = _run(key, cls, kwargs, mode)
    np.testing.assert_allclose(out, ref_out, rtol=1e-6, atol=1e-6, err_msg="output")
    np.testing.assert_allclose(dx, ref_dx, rtol=1e-5, atol=1e-6, err_msg="input gradient")
    for (p, after, grad), (_, ref_after, ref_grad) in zip(params, ref_params):
        np.testing.assert_allclose(after, ref_after, rtol=1e-6, atol=1e-7, err_msg=p.name)
        if grad is not None:
            np.testing.assert_allclose(grad, ref_grad, rtol=1e-5, atol=1e-6, err_msg=p.name)
    _close(out, FIXTURES[f"{key}/out"], f"{key}: output")
    if cls != "SELU":          # MXNet 1.9.1's SELU gradient is wrong (test_gluon_nn.py)
        _close(dx, FIXTURES[f"{key}/dx"], f"{key}: input gradient")
    for i, (p, after, grad) in enumerate(params):
        # MXNet writes 1 into a fixed gamma, ndrt leaves it (test_gluon_nn.py)
        if not (cls == "BatchNorm" and p.name.endswith("gamma") and p.grad_req == "null"):
            _close(after, FIXTURES[f"{key}/after{i}"], f"{key}: {p.name} after")
        if f"{key}/dp{i}" in FIXTURES:
            _close(grad, FIXTURES[f"{key}/dp{i}"], f"{key}: {p.name} gradient")


def _loss_grads(block, x, head):
    x = x.copy()
    x.attach_grad()
    with autograd.record():
        out = block(x)
    out.backward(head)
    return out.asnumpy(), x.grad.asnumpy(), [p.grad().asnumpy().copy()
                                             for p in block.collect_params().values()
                                             if p.grad_req != "null"]


@pytest.mark.parametrize("make", [
    lambda: nn.BatchNormReLU(momentum=0.7),
    lambda: nn.SyncBatchNorm(),
    lambda: nn.InstanceNorm(axis=2, scale=True),
    lambda: nn.LayerNorm(axis=1),
    lambda: nn.Conv2D(4, 3, activation="relu", padding=1),
    lambda: nn.Conv2DTranspose(2, 3, strides=2, output_padding=1, layout="NHWC",
                               in_channels=4),
    lambda: nn.AvgPool2D(layout="NHWC"),
    lambda: nn.GlobalAvgPool2D(layout="NHWC"),
    lambda: nn.PReLU(),
    lambda: nn.Identity(),
], ids=["bnrelu", "syncbn", "instancenorm_axis2", "layernorm_axis1", "conv_act",
        "deconv_nhwc", "avgpool_nhwc", "gavgpool_nhwc", "prelu_shared", "identity"])
def test_more_layers_hybridized_equal_imperative(make):
    rng = np.random.default_rng(3)
    x = nd.array(rng.standard_normal((2, 3, 4, 4)).astype(np.float32))
    plain, hybrid = make(), make()
    plain.initialize(mx.init.Xavier())
    hybrid.initialize()
    plain(x)
    hybrid(x)
    for p, q in zip(plain.collect_params().values(), hybrid.collect_params().values()):
        q.set_data(p.data())
    hybrid.hybridize()
    head = nd.array(rng.standard_normal(plain(x).shape).astype(np.float32))
    ref = _loss_grads(plain, x, head)
    got = _loss_grads(hybrid, x, head)
    np.testing.assert_allclose(got[0], ref[0], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got[1], ref[1], rtol=1e-5, atol=1e-6)
    assert len(got[2]) == len(ref[2])
    for g, r in zip(got[2], ref[2]):
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-6)
    for p, q in zip(plain.collect_params().values(), hybrid.collect_params().values()):
        np.testing.assert_allclose(q.data().asnumpy(), p.data().asnumpy(), rtol=1e-6,
                                   atol=1e-7, err_msg=p.name)


def test_hybrid_concatenate_joins_branches_as_concatenate():
    x = nd.array(np.arange(6, dtype=np.float32).reshape(2, 3))
    cat = nn.HybridConcatenate(axis=1)
    with cat.name_scope():
        cat.add(nn.Identity(), nn.HybridLambda(lambda F, a: a * 2), nn.Dense(2))
    cat.initialize()
    plain = cat(x).asnumpy()
    w = cat[2].weight.data().asnumpy()
    ref = np.concatenate([x.asnumpy(), 2 * x.asnumpy(), x.asnumpy() @ w.T], axis=1)
    np.testing.assert_allclose(plain, ref, rtol=1e-6)
    cat.hybridize()
    np.testing.assert_allclose(cat(x).asnumpy(), ref, rtol=1e-6)
    assert list(cat.collect_params()) == ["hybridconcatenate0_dense0_weight",
                                          "hybridconcatenate0_dense0_bias"]
    with pytest.raises(ValueError, match="children of a HybridBlock must be HybridBlocks"):
        cat.add(nn.Lambda("tanh"))
    with pytest.raises(ValueError, match="HybridConcatenate: add at least one block"):
        nn.HybridConcatenate()(x)
    with pytest.raises(TypeError, match=r"HybridConcatenate: axis must be an int \(got 1.5\)"):
        nn.HybridConcatenate(axis=1.5)


def test_nested_channel_last_conv_infers_in_channels():
    # the weight reaches the operator through a transpose, which passes its unknown
    # dimension through to the convolution's (as MXNet's inference fills it)
    net = nn.HybridSequential()
    net.add(nn.Conv2D(4, 3, layout="NHWC"), nn.Dense(2))
    net.initialize()
    net.hybridize()
    x = nd.array(np.random.default_rng(0).standard_normal((2, 5, 5, 3)))
    got = net(x).asnumpy()
    assert net[0].weight.shape == (4, 3, 3, 3)
    net.hybridize(False)
    np.testing.assert_allclose(got, net(x).asnumpy(), rtol=1e-5, atol=1e-6)
    # the same layer alone reads them from its own input
    conv = nn.Conv2D(4, 3, layout="NHWC")
    conv.initialize()
    conv.hybridize()
    assert conv(nd.ones((2, 5, 5, 3))).shape == (2, 3, 3, 4)
    assert conv.weight.shape == (4, 3, 3, 3)


def test_converted_layers_refuse_non_arrays():
    with pytest.raises(TypeError, match=r"^BatchNorm: input must be an NDArray or a Symbol "
                                        r"\(got list\)"):
        nn.BatchNorm()([1.0, 2.0])


def _cnn():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(4, 3, padding=1), nn.BatchNorm(momentum=0.8), nn.Activation("relu"),
                nn.MaxPool2D(), nn.Flatten(), nn.Dense(3))
    return net


def test_small_cnn_trains_hybridized_as_imperative_and_exports(tmp_path):
    rng = np.random.default_rng(7)
    x = nd.array(rng.standard_normal((6, 2, 6, 6)).astype(np.float32))
    y = nd.array(rng.integers(0, 3, 6).astype(np.float32))
    plain, hybrid = _cnn(), _cnn()
    plain.initialize(mx.init.Xavier())
    hybrid.initialize()
    hybrid.hybridize()
    plain(x)
    hybrid(x)               # deferred shapes through the cached graph's inference
    for p, q in zip(plain.collect_params().values(), hybrid.collect_params().values()):
        assert q.shape == p.shape
        q.set_data(p.data())
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    trainers = [mx.gluon.Trainer(n.collect_params(), "sgd", {"learning_rate": 0.1})
                for n in (plain, hybrid)]
    bn_p, bn_h = plain[1], hybrid[1]
    start = bn_h.running_mean.data().asnumpy().copy()
    for _ in range(3):
        outs = []
        for net, trainer in zip((plain, hybrid), trainers):
            with autograd.record():
                out = net(x)
                loss = loss_fn(out, y)
            loss.backward()
            trainer.step(x.shape[0])
            outs.append(out.asnumpy())
        np.testing.assert_allclose(outs[1], outs[0], rtol=1e-5, atol=1e-6)
        for name in ("running_mean", "running_var"):
            np.testing.assert_allclose(getattr(bn_h, name).data().asnumpy(),
                                       getattr(bn_p, name).data().asnumpy(), rtol=1e-6,
                                       atol=1e-7, err_msg=name)
    # the hybridized training moved the statistics towards the batch's
    assert np.abs(bn_h.running_mean.data().asnumpy() - start).max() > 1e-3
    for p, q in zip(plain.collect_params().values(), hybrid.collect_params().values()):
        np.testing.assert_allclose(q.data().asnumpy(), p.data().asnumpy(), rtol=1e-5,
                                   atol=1e-6, err_msg=p.name)
    # inference (not recording) leaves the statistics alone in both modes
    before = bn_h.running_var.data().asnumpy().copy()
    np.testing.assert_allclose(hybrid(x).asnumpy(), plain(x).asnumpy(), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_array_equal(bn_h.running_var.data().asnumpy(), before)

    sym_file, params_file = hybrid.export(str(tmp_path / "cnn"), epoch=3)
    sym = mx.sym.load(sym_file)
    assert sym.list_auxiliary_states() == [bn_h.running_mean.name, bn_h.running_var.name]
    loaded = nn.SymbolBlock.imports(sym_file, ["data"], params_file)
    np.testing.assert_array_equal(loaded(x).asnumpy(), hybrid(x).asnumpy())
    for name in ("running_mean", "running_var"):
        p = getattr(bn_h, name)
        np.testing.assert_array_equal(loaded.params[p.name].data().asnumpy(),
                                      p.data().asnumpy())


def _loss_run(loss, args, hybrid):
    args = [a.copy() for a in args]
    if hybrid:
        loss.hybridize()
    args[0].attach_grad()
    with autograd.record():
        out = loss(*args)
    out.backward()
    return out.asnumpy(), args[0].grad.asnumpy()


@pytest.mark.parametrize("case", LOSS_CASES, ids=[c[0] for c in LOSS_CASES])
def test_hybridized_loss_matches_imperative_and_mxnet(case):
    key, cls, kwargs, kinds, _, sw_shape = case
    args = [nd.array(FIXTURES[f"loss/{key}/in{i}"]) for i in range(len(kinds))]
    if sw_shape is not None:
        args.append(nd.array(FIXTURES[f"loss/{key}/sw"]))
    assert isinstance(getattr(L, cls)(**kwargs), nn.HybridBlock)
    ref_out, ref_grad = _loss_run(getattr(L, cls)(**kwargs), args, False)
    out, grad = _loss_run(getattr(L, cls)(**kwargs), args, True)
    assert out.shape == ref_out.shape == FIXTURES[f"loss/{key}/out"].shape
    np.testing.assert_allclose(out, ref_out, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out, FIXTURES[f"loss/{key}/out"], rtol=5e-5, atol=1e-6)
    if f"loss/{key}/grad" in FIXTURES:
        np.testing.assert_allclose(grad, FIXTURES[f"loss/{key}/grad"], rtol=5e-5, atol=1e-5)


def test_hybridized_losses_take_optional_inputs_in_order():
    rng = np.random.default_rng(5)
    pred = nd.array(rng.standard_normal((3, 4)).astype(np.float32))
    label = nd.array(rng.integers(0, 2, (3, 4)).astype(np.float32))
    pos_weight = nd.array(rng.uniform(0.5, 2, (3, 4)).astype(np.float32))
    sw = nd.array(rng.uniform(0.5, 2, (3, 1)).astype(np.float32))
    plain, hybrid = L.SigmoidBCELoss(), L.SigmoidBCELoss()
    hybrid.hybridize()
    for kwargs in ({}, {"sample_weight": sw}, {"sample_weight": sw, "pos_weight": pos_weight}):
        np.testing.assert_allclose(hybrid(pred, label, **kwargs).asnumpy(),
                                   plain(pred, label, **kwargs).asnumpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="SigmoidBinaryCrossEntropyLoss: a hybridized loss "
                                         "takes its optional inputs in order: pos_weight is "
                                         "given, so sample_weight must be too"):
        hybrid(pred, label, pos_weight=pos_weight)
    poisson = L.PoissonNLLLoss()
    poisson.hybridize()
    with pytest.raises(ValueError, match=r"PoissonNLLLoss: a hybridized loss takes "
                                         r"epsilon=1e-08 \(got 0.001\)"):
        poisson(pred, label, epsilon=1e-3)
    with pytest.raises(TypeError, match="L2Loss: .*unexpected keyword argument 'weights'"):
        L.L2Loss()(pred, label, weights=sw)


def test_cnn_with_loss_hybridized_end_to_end():
    rng = np.random.default_rng(11)
    x = nd.array(rng.standard_normal((4, 2, 6, 6)).astype(np.float32))
    y = nd.array(rng.integers(0, 3, 4).astype(np.float32))
    grads = []
    for hybrid in (False, True):
        net = _cnn()
        net.initialize(mx.init.Constant(0.05))
        loss_fn = L.SoftmaxCrossEntropyLoss()
        if hybrid:
            net.hybridize()
            loss_fn.hybridize()
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        grads.append([loss.asnumpy()] + [p.grad().asnumpy() for p in
                                         net.collect_params().values() if p.grad_req != "null"])
    for got, ref in zip(grads[1], grads[0]):
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("key", [c[0] for c in CELL_CASES])
def test_hybridized_cells_unroll_as_imperative(key):
    # (MXNet's values: test_rnn_cell.py runs the same cases hybridized)
    ref = unrolled(key, False)
    got = unrolled(key, True)
    for g, r in zip(got[0] + got[1] + [got[2]] + got[3], ref[0] + ref[1] + [ref[2]] + ref[3]):
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-6)


class _Stepper(nn.HybridBlock):
    """Two steps of an LSTM cell inside one hybrid_forward: the cell's step traced into
    the parent's graph."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.cell = rnn.LSTMCell(4)

    def hybrid_forward(self, F, x0, x1, h, c):
        out0, states = self.cell(x0, [h, c])
        out1, states = self.cell(x1, states)
        return out0 + out1, states


def test_cell_stepped_inside_a_hybridized_block():
    rng = np.random.default_rng(2)
    args = [nd.array(rng.standard_normal(s).astype(np.float32))
            for s in ((2, 3), (2, 3), (2, 4), (2, 4))]
    plain, hybrid = _Stepper(), _Stepper()
    plain.initialize(mx.init.Xavier())
    hybrid.initialize()
    plain(*args)
    hybrid.hybridize()
    hybrid(*args)                   # the cell's input size through the parent's graph
    for p, q in zip(plain.collect_params().values(), hybrid.collect_params().values()):
        assert q.shape == p.shape
        q.set_data(p.data())
    results = []
    for net in (plain, hybrid):
        with autograd.record():
            out, (h, c) = net(*args)
            total = out.sum() + (h * 2).sum() + (c * 3).sum()
        total.backward()
        results.append([out.asnumpy(), h.asnumpy(), c.asnumpy()] +
                       [p.grad().asnumpy() for p in net.collect_params().values()])
    for g, r in zip(results[1], results[0]):
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-6)
