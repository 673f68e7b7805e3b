"""gluon.model_zoo.vision networks as HybridBlocks: every model traces to one graph whose
inputs are exactly its parameters (names as MXNet's), representative models give the
same outputs (and gradients) hybridized as imperatively, and an exported model loads
back through SymbolBlock.imports with the same outputs.  The forwards use small inputs
(global pooling takes any size) to keep the suite fast; test_model_zoo.py checks names,
shapes and values against MXNet 1.9.1."""

import numpy as np
import pytest

from runtime import autograd, init, nd, random, symbol
from runtime.gluon import SymbolBlock
from runtime.gluon.model_zoo import vision
from tests.runtime.conftest import free_failing_tests

from runtime.gluon.model_zoo.vision import _MODELS


# (model, input side): global pooling takes small inputs; SqueezeNet's 13x13 pooling
# needs 224; AlexNet's dense layers take what its 64x64 input leaves; a DenseNet of two
# small dense blocks ends on its 7x7 pooling from 56
FORWARDS = [("resnet18_v1", 32), ("resnet18_v2", 32),
            ("mobilenet0.25", 32), ("mobilenetv2_0.25", 32), ("vgg11_bn", 32),
            ("alexnet", 64), ("squeezenet1.1", 224), ("densenet_small", 56)]


def _net(name, side, seed=0):
    random.seed(seed)
    if name == "densenet_small":    # DenseNet's blocks, transitions and 7x7 pooling, small
        net = vision.DenseNet(8, 4, [2, 1], classes=10)
    else:
        net = vision.get_model(name, classes=10)
    net.initialize(init.Xavier(magnitude=2.0))
    x = nd.random.uniform(-1, 1, shape=(2, 3, side, side))
    net(x)                                  # deferred shapes known
    for p in net.collect_params().values():   # running statistics away from 0 and 1
        if p.name.endswith(("running_mean", "running_var")):
            p.set_data(nd.random.uniform(0.5, 1.5, shape=p.shape))
    return net, x


@pytest.mark.parametrize("name", sorted(_MODELS))
def test_every_model_traces_to_one_graph_of_its_parameters(name):
    net = vision.get_model(name)
    out = net(symbol.var("data"))
    assert isinstance(out, symbol.Symbol)
    inputs = set(out.list_arguments()) | set(out.list_auxiliary_states())
    assert inputs == {"data"} | {p.name for p in net.collect_params().values()}
    assert set(out.list_auxiliary_states()) == {
        p.name for p in net.collect_params().values()
        if p.name.endswith(("running_mean", "running_var"))}


@pytest.mark.parametrize("name,side", FORWARDS)
def test_hybridized_model_gives_the_imperative_output(name, side):
    net, x = _net(name, side)
    want = net(x).asnumpy()
    net.hybridize()
    got = net(x).asnumpy()
    assert got.shape == (2, 10)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_hybridized_resnet_training_step_gives_the_imperative_gradients():
    grads = []
    for hybrid in (False, True):
        net, x = _net("resnet18_v1", 16, seed=1)
        if hybrid:
            net.hybridize()
        with autograd.record():
            loss = (net(x) ** 2).sum()
        loss.backward()
        grads.append({k: p.grad().asnumpy()
                      for k, p in net._collect_params_with_prefix().items()
                      if p.grad_req != "null"})
    assert grads[0].keys() == grads[1].keys()
    for k in grads[0]:
        np.testing.assert_allclose(grads[1][k], grads[0][k], rtol=1e-3, atol=1e-5)


@pytest.mark.parametrize("name,side", [("resnet18_v2", 32), ("mobilenetv2_0.25", 32),
                                       ("squeezenet1.1", 224)])
def test_exported_model_loads_back_with_the_same_output(name, side, tmp_path):
    net, x = _net(name, side)
    net.hybridize()
    want = net(x).asnumpy()
    sym_file, params_file = net.export(str(tmp_path / name), epoch=3)
    assert params_file.endswith(f"{name}-0003.params")
    back = SymbolBlock.imports(sym_file, "data", params_file)
    np.testing.assert_allclose(back(x).asnumpy(), want, rtol=1e-5, atol=1e-6)


free_failing_tests(globals())
