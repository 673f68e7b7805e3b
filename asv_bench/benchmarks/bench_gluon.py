"""Gluon models as programs train them (the models are imported by
``asv_bench/run_gluon_figures.py``, which times PyTorch's beside them):

* ``ResNetStep``: a training step of the model zoo's ``resnet18_v1`` (10 classes) on
  random 3x64x64 images, SoftmaxCrossEntropyLoss and an SGD Trainer with momentum.
* ``LSTMStep``: forward + backward of ``rnn.LSTM(256, num_layers=2)`` on (T, 32, 256).
"""
import numpy as np

import runtime as mx
from runtime import autograd, gluon, nd
from runtime.gluon.model_zoo import vision


def resnet_step(batch):
    """A closure running one training step of resnet18_v1 on a fixed random batch."""
    mx.random.seed(0)
    net = vision.resnet18_v1(classes=10)
    net.initialize(mx.init.Xavier())
    trainer = gluon.Trainer(net.collect_params(), "sgd",
                            {"learning_rate": 0.01, "momentum": 0.9})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    rng = np.random.default_rng(0)
    x = nd.array(rng.standard_normal((batch, 3, 64, 64)).astype(np.float32))
    y = nd.array(rng.integers(0, 10, batch))

    def step():
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(batch)
        return loss
    return step


def lstm_layer(shape):
    """(layer, x, forward+backward closure, the input as NumPy): a 2-layer LSTM of 256
    units on a random input of ``shape`` (T, N, C) whose gradient is attached."""
    mx.random.seed(0)
    layer = gluon.rnn.LSTM(256, num_layers=2, input_size=shape[2])
    layer.initialize(mx.init.Uniform(0.1))
    xs = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    x = nd.array(xs)
    x.attach_grad()

    def fwd_bwd():
        with autograd.record():
            out = layer(x)
        out.backward()
        return out
    return layer, x, fwd_bwd, xs


class ResNetStep:
    params = [[2, 16]]
    param_names = ["batch"]
    timeout = 300

    def setup(self, batch):
        self.step = resnet_step(batch)
        self.step()

    def time_step(self, batch):
        self.step()


class LSTMStep:
    params = [[5, 35]]
    param_names = ["steps"]
    timeout = 120

    def setup(self, steps):
        self.fwd_bwd = lstm_layer((steps, 32, 256))[2]
        self.fwd_bwd()

    def time_forward_backward(self, steps):
        self.fwd_bwd()
