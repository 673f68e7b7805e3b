"""The training layer (runtime.gluon, runtime.io), each beside the NumPy work it is compared
with, so that the ratio shows in one run:

* ``NNMLPStep``: forward, backward and SGD update of bench_autograd's MLP 784-256-256-10
  written with ``nn.Sequential``/``nn.Dense``/``mx.gluon.loss.SoftmaxCrossEntropyLoss``,
  beside the same model in raw registry ops (bench_autograd's ``ndrt_mlp``) and the
  handwritten NumPy step: the layer's own overhead is nn minus raw.
* ``LossStep``: forward and backward of a loss block on (batch, 10) logits (softmax
  cross-entropy) or (batch, 1) logits (sigmoid binary cross-entropy) beside NumPy's
  forward and gradient by hand.
* ``NDArrayIterEpoch``: one epoch of ``NDArrayIter`` over float32 (10000, 64) data and
  labels, unshuffled (views) or shuffled (gathered), beside NumPy slicing / fancy
  indexing of the same batches.
"""

import numpy as np

from benchmarks.bench_autograd import LAYERS, LR, mlp_data, ndrt_mlp, numpy_step
import runtime as mx
from runtime import autograd, nd
from runtime.gluon import nn
from runtime.io import NDArrayIter
from runtime.gluon.loss import SigmoidBCELoss, SoftmaxCrossEntropyLoss


def nn_mlp(P0, X, Y):
    """``step()``: one SGD step of the MLP as nn blocks, initialised from P0."""
    net = nn.Sequential()
    for units in LAYERS[1:-1]:
        net.add(nn.Dense(units, activation="relu"))
    net.add(nn.Dense(LAYERS[-1]))
    net.initialize()
    Xn, Yn = nd.array(X), nd.array(Y)
    net(Xn)
    params = list(net.collect_params().values())
    for p, v in zip(params, P0):
        p.set_data(v)
    loss_fn = SoftmaxCrossEntropyLoss()
    scale = LR / X.shape[0]

    def step():
        with autograd.record():
            loss = loss_fn(net(Xn), Yn)
        loss.backward()
        for p in params:
            w = p.data()
            w -= scale * p.grad()
    return step


class NNMLPStep:
    params = [64, 256]
    param_names = ["batch"]

    def setup(self, batch):
        X, Y, P = mlp_data(batch)
        self.np_args = ([p.copy() for p in P], X, Y)
        self.nn_step = nn_mlp(P, X, Y)
        self.raw_step = ndrt_mlp(P, X, Y)[0]
        for f in (self.nn_step, self.raw_step):
            f()

    def time_nn(self, batch):
        self.nn_step()

    def time_raw_ops(self, batch):
        self.raw_step()

    def time_numpy(self, batch):
        numpy_step(*self.np_args)


def numpy_softmax_ce(x, y):
    z = x - x.max(axis=1, keepdims=True)
    e = np.exp(z)
    s = e.sum(axis=1)
    rows = np.arange(len(x))
    loss = np.log(s) - z[rows, y]
    g = e / s[:, None]
    g[rows, y] -= 1
    return loss, g


def numpy_sigmoid_bce(x, z):
    loss = np.logaddexp(0, x) - x * z
    g = 1 / (1 + np.exp(-x)) - z
    return loss.mean(axis=1), g


class LossStep:
    params = (["softmax_ce", "sigmoid_bce"], [256])
    param_names = ["loss", "batch"]

    def setup(self, loss, batch):
        rng = np.random.default_rng(0)
        if loss == "softmax_ce":
            x = rng.standard_normal((batch, 10)).astype(np.float32)
            y = rng.integers(0, 10, batch)
            self.np_args, self.np_fn = (x, y), numpy_softmax_ce
            self.block, label = SoftmaxCrossEntropyLoss(), nd.array(y)
        else:
            x = rng.standard_normal((batch, 1)).astype(np.float32)
            z = rng.integers(0, 2, (batch, 1)).astype(np.float32)
            self.np_args, self.np_fn = (x, z), numpy_sigmoid_bce
            self.block, label = SigmoidBCELoss(), nd.array(z)
        pred = nd.array(x)
        pred.attach_grad()

        def step():
            with autograd.record():
                out = self.block(pred, label)
            out.backward()
        self.step = step
        step()

    def time_ndrt(self, loss, batch):
        self.step()

    def time_numpy(self, loss, batch):
        self.np_fn(*self.np_args)


class NDArrayIterEpoch:
    params = [False, True]
    param_names = ["shuffle"]
    N, D, BATCH = 10000, 64, 128

    def setup(self, shuffle):
        rng = np.random.default_rng(0)
        self.x = rng.standard_normal((self.N, self.D)).astype(np.float32)
        self.y = rng.integers(0, 10, self.N).astype(np.float32)
        self.it = NDArrayIter(self.x, self.y, batch_size=self.BATCH, shuffle=shuffle, seed=0,
                              last_batch_handle="discard")
        self.shuffle = shuffle
        self.rng = np.random.default_rng(0)

    def time_ndrt(self, shuffle):
        for _ in self.it:
            pass
        self.it.reset()

    def time_numpy(self, shuffle):
        n = self.N - self.N % self.BATCH
        order = self.rng.permutation(self.N) if self.shuffle else None
        for s in range(0, n, self.BATCH):
            if order is None:
                self.x[s:s + self.BATCH], self.y[s:s + self.BATCH]
            else:
                rows = order[s:s + self.BATCH]
                self.x[rows], self.y[rows]
