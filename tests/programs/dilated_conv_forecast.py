"""A WaveNet-like stack of dilated causal Conv1D layers with residual and skip paths,
forecasting the next value of a Lorenz trajectory, written for MXNet 1.x Gluon in the
style of MXNet's example/gluon/ts_forecasting_cnn (windows cut with NDArray slice
assignment, ArrayDataset and DataLoader, Adam with weight decay, an L1 loss, the best
epoch's parameters saved, loaded into a new network and scored with metric.RMSE); run
through runtime.mxnet_compat by the tests in the folder given as the first argument.

Prints one line: the mean training loss of the first and the last epoch, and the test
RMSE of the reloaded network beside that of predicting the last value seen.
"""
import os
import sys

import mxnet as mx
import numpy as np
from mxnet import autograd, gluon, nd

mx.random.seed(7)
WINDOW, DEPTH, BATCH = 16, 4, 32


def lorenz(steps, dt=0.01, s=10.0, r=28.0, b=8 / 3):
    p = np.array([0.0, 1.0, 1.05])
    out = np.empty((steps, 3))
    for t in range(steps):
        x, y, z = p
        p = p + dt * np.array([s * (y - x), x * (r - z) - y, x * y - b * z])
        out[t] = p
    return (out - out.min(0)) / (out.max(0) - out.min(0)) - 0.5


class Stack(gluon.nn.Block):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.inp = gluon.nn.Conv1D(4, kernel_size=1, in_channels=1)
            self.dilated, self.res, self.skip = (gluon.nn.Sequential() for _ in range(3))
            for d in (2 ** i for i in range(DEPTH)):
                self.dilated.add(gluon.nn.Conv1D(4, kernel_size=2, dilation=d, in_channels=4,
                                                 activation="relu"))
                self.res.add(gluon.nn.Conv1D(4, kernel_size=1, in_channels=4))
                self.skip.add(gluon.nn.Conv1D(4, kernel_size=1, in_channels=4))
            self.out = gluon.nn.Conv1D(1, kernel_size=1, in_channels=4)

    def forward(self, x):
        h = self.inp(x)
        skips = []
        for dilated, res, skip in zip(self.dilated, self.res, self.skip):
            y = res(dilated(h))
            skips.append(skip(y))
            h = y + h[:, :, -y.shape[2]:]
        width = h.shape[2]
        return self.out(sum(s[:, :, -width:] for s in skips)).reshape((0, -1))[:, -1]


def windows(series):
    n = series.shape[0] - WINDOW
    x, y = nd.zeros((n, 1, WINDOW)), nd.zeros((n,))
    for i in range(n):
        x[i, 0, :] = series[i:i + WINDOW]
        y[i] = series[i + WINDOW]
    return gluon.data.ArrayDataset(x, y)


series = lorenz(1200)[:, 0]
train = gluon.data.DataLoader(windows(series[:900]), BATCH, shuffle=True, last_batch="discard")
test = gluon.data.DataLoader(windows(series[900:]), BATCH, shuffle=False)
net = Stack()
net.initialize(mx.init.Xavier(magnitude=2, rnd_type="gaussian", factor_type="in"))
trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.01, "wd": 1e-4})
loss_fn = gluon.loss.L1Loss()
path = os.path.join(sys.argv[1], "best.params")
losses, best = [], float("inf")
for epoch in range(15):
    total, seen = nd.zeros(1), 0
    for x, y in train:
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(BATCH)
        total += loss.sum()
        seen += x.shape[0]
    losses.append(total.asscalar() / seen)
    if losses[-1] < best:
        best = losses[-1]
        net.save_parameters(path)

reloaded = Stack()
reloaded.load_parameters(path)
rmse, naive = mx.metric.RMSE(), mx.metric.RMSE()
for x, y in test:
    rmse.update(labels=[y], preds=[reloaded(x)])
    naive.update(labels=[y], preds=[x[:, 0, -1]])
print("loss", losses[0], "->", losses[-1], "rmse", rmse.get()[1], "naive", naive.get()[1])
