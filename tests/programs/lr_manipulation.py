"""Linear regression by Gluon with the learning rate changed between epochs through
Trainer.set_learning_rate, in the style of MXNet's
example/gluon/learning_rate_manipulation.py; run through runtime.mxnet_compat by the
tests.

Prints two lines: the learning rate after each epoch, then the learned weights and
bias.
"""
import mxnet as mx
import numpy as np
from mxnet import autograd, gluon

rng = np.random.RandomState(0)
X = rng.randn(2000, 2)
Y = 2 * X[:, 0] - 3.4 * X[:, 1] + 4.2 + 0.01 * rng.normal(size=2000)

net = gluon.nn.Sequential()
net.add(gluon.nn.Dense(1))
net.initialize(mx.init.Xavier(magnitude=2.24))
trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
loss = gluon.loss.L2Loss()
data = mx.io.NDArrayIter(X, Y, batch_size=10, shuffle=True)
rates = []
for epoch in range(4):
    data.reset()
    for batch in data:
        with autograd.record():
            err = loss(net(batch.data[0]), batch.label[0].reshape((-1, 1)))
        err.backward()
        trainer.step(batch.data[0].shape[0])
    if epoch > 0:
        trainer.set_learning_rate(trainer.learning_rate * 0.5)
    rates.append(trainer.learning_rate)
print("lr", *rates)
weight, bias = (p.data().asnumpy().ravel() for p in net.collect_params().values())
print("params", *weight, *bias)
