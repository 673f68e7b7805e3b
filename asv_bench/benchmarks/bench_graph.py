"""Graph mode beside its references, so that the ratios show in one run (the models and
references are imported by ``asv_bench/run_graph_figures.py``):

* ``HybridMLPStep``: a hybridized ``HybridSequential`` MLP 784-256-256-10 (Dense, relu),
  ``hybridize(static_alloc=True, static_shape=True)`` (a static plan: its forward and
  backward make no pool call in a steady-state step), with ``SoftmaxCrossEntropyLoss``
  (imperative: its fused 2-D kernel; one pool call a step, its output) and an SGD
  ``Trainer``; reference: the handwritten NumPy step of bench_autograd.
  ``check_same_update`` requires one step of each from the same weights to agree.
* ``HybridChain``: forward of a hybridized block of 50 one-element ``tanh``; reference: 50
  ``np.tanh`` calls.
* ``ImportedCNN``: inference through ``SymbolBlock.imports`` of MXNet's exported CNN
  (tests/fixtures/mxnet/cnn-*); reference: the same model's imperative forward, the seven
  ``nd`` calls written out with the same parameters.
"""
import os

import allocator
import numpy as np

from runtime import autograd, nd
from runtime.gluon import Trainer, nn
from runtime.gluon.loss import SoftmaxCrossEntropyLoss

from .bench_autograd import LAYERS, LR, mlp_data, numpy_step

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests",
                        "fixtures", "mxnet")
CHAIN_OPS = 50


# -- the hybridized MLP ------------------------------------------------------------------

def hybrid_mlp(P0, X, Y):
    """(step, net): one SGD step of the hybridized Gluon MLP initialised from P0 (the
    NumPy parameters [W1, b1, W2, b2, W3, b3])."""
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(LAYERS[1], activation="relu", in_units=LAYERS[0]),
                nn.Dense(LAYERS[2], activation="relu", in_units=LAYERS[1]),
                nn.Dense(LAYERS[3], in_units=LAYERS[2]))
    net.initialize()
    for p, value in zip(net.collect_params().values(), P0):
        p.set_data(nd.array(value))
    net.hybridize(static_alloc=True, static_shape=True)
    loss = SoftmaxCrossEntropyLoss()
    trainer = Trainer(net.collect_params(), "sgd", {"learning_rate": LR})
    Xn, Yn = nd.array(X), nd.array(Y)
    n = X.shape[0]

    def step():
        with autograd.record():
            out = loss(net(Xn), Yn)
        out.backward()
        trainer.step(n)
    return step, net


def pool_calls():
    """Allocations the pools have served so far (cache hits and misses)."""
    return sum(p.memory_stats()["num_cache_hits"] + p.memory_stats()["num_cache_misses"]
               for p in allocator.pools().values())


def step_pool_calls(step, warmup=3):
    """Pool calls of one ``step()`` after ``warmup`` steps (0: a static plan's steady
    state)."""
    for _ in range(warmup):
        step()
    before = pool_calls()
    step()
    return pool_calls() - before


def check_same_update(batch=64):
    """One step of the hybridized MLP and of the NumPy step from the same weights give
    the same weights (float32 tolerances)."""
    X, Y, P0 = mlp_data(batch)
    step, net = hybrid_mlp(P0, X, Y)
    step()
    P = [p.copy() for p in P0]
    numpy_step(P, X, Y)
    for p, want in zip(net.collect_params().values(), P):
        np.testing.assert_allclose(p.data().asnumpy(), want, rtol=1e-4, atol=1e-5,
                                   err_msg=p.name)


# -- a chain of small ops ----------------------------------------------------------------

class TanhChain(nn.HybridBlock):
    """``CHAIN_OPS`` nested tanh."""

    def hybrid_forward(self, F, x):
        for _ in range(CHAIN_OPS):
            x = F.tanh(x)
        return x


def numpy_chain(p):
    for _ in range(CHAIN_OPS):
        p = np.tanh(p)
    return p


# -- MXNet's exported CNN ----------------------------------------------------------------

def imported_cnn():
    """(block, x): MXNet's exported CNN through SymbolBlock.imports, and its input."""
    block = nn.SymbolBlock.imports(os.path.join(FIXTURES, "cnn-symbol.json"), ["data"],
                                   os.path.join(FIXTURES, "cnn-0000.params"))
    return block, nd.array(np.load(os.path.join(FIXTURES, "cnn_x.npy")))


def imperative_cnn(block):
    """The same model as seven ``nd`` calls on the block's parameters (the attributes of
    the fixture's JSON)."""
    p = {k: v.data() for k, v in block.collect_params().items()}

    def forward(x):
        h = nd.Convolution(x, p["cnn_conv0_weight"], p["cnn_conv0_bias"], kernel=(3, 3),
                           num_filter=4)
        h = nd.BatchNorm(h, p["cnn_batchnorm0_gamma"], p["cnn_batchnorm0_beta"],
                         p["cnn_batchnorm0_running_mean"], p["cnn_batchnorm0_running_var"],
                         eps=1e-5, fix_gamma=False)
        h = nd.Activation(h, act_type="relu")
        h = nd.Pooling(h, kernel=(2, 2), stride=(2, 2), pool_type="max")
        h = nd.FullyConnected(nd.flatten(h), p["cnn_dense0_weight"], p["cnn_dense0_bias"],
                              num_hidden=5)
        return nd.softmax(h)
    return forward


# -- asv ---------------------------------------------------------------------------------

class HybridMLPStep:
    """One SGD step of the hybridized MLP 784-256-256-10, float32."""
    params = [[64, 1024]]
    param_names = ["batch"]
    timeout = 120

    def setup(self, batch):
        self.X, self.Y, P0 = mlp_data(batch)
        self.P = [p.copy() for p in P0]
        self.step, _ = hybrid_mlp(P0, self.X, self.Y)
        self.step()

    def time_step(self, batch):
        self.step()

    def time_step_numpy(self, batch):
        numpy_step(self.P, self.X, self.Y)

    def track_pool_calls(self, batch):
        return step_pool_calls(self.step)
    track_pool_calls.unit = "calls"


class HybridChain:
    """Forward of 50 nested tanh on one element, hybridized."""

    def setup(self):
        self.block = TanhChain()
        self.block.hybridize()
        self.x = nd.array([0.5])
        self.p = np.array([0.5], np.float32)
        self.block(self.x)

    def time_hybridized(self):
        self.block(self.x)

    def time_numpy(self):
        numpy_chain(self.p)


class ImportedCNN:
    """Inference of MXNet's exported CNN (batch 2, 1x8x8)."""

    def setup(self):
        self.block, self.x = imported_cnn()
        self.imperative = imperative_cnn(self.block)
        self.block(self.x)

    def time_symbolblock(self):
        self.block(self.x)

    def time_imperative(self):
        self.imperative(self.x)
