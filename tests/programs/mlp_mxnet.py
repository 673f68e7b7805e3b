"""A Gluon MLP written for MXNet 1.x; run through runtime.mxnet_compat by the tests.

Prints one line: the loss before and after training, and the accuracy.
"""
import numpy as np

import mxnet as mx
from mxnet import autograd, gluon, nd
from mxnet.gluon import nn

rng = np.random.RandomState(0)
X = rng.normal(size=(512, 10)).astype(np.float32)
w = rng.normal(size=(10,)).astype(np.float32)
y = (X @ w > 0).astype(np.float32)

net = nn.Sequential()
with net.name_scope():
    net.add(nn.Dense(32, activation="relu"))
    net.add(nn.Dense(2))
net.initialize(mx.init.Xavier(), ctx=mx.cpu())
schedule = mx.lr_scheduler.FactorScheduler(step=20, factor=0.9)
opt = mx.optimizer.Adam(learning_rate=0.01, lr_scheduler=schedule)
trainer = gluon.Trainer(net.collect_params(), opt)
loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
it = mx.io.NDArrayIter(X, y, batch_size=64, shuffle=True, last_batch_handle="discard")


def mean_loss():
    return float(loss_fn(net(nd.array(X)), nd.array(y)).mean().asscalar())


first = mean_loss()
for epoch in range(5):
    it.reset()
    for batch in it:
        with autograd.record():
            loss = loss_fn(net(batch.data[0]), batch.label[0])
        loss.backward()
        trainer.step(batch.data[0].shape[0])
acc = float((net(nd.array(X)).argmax(axis=1).asnumpy() == y).mean())
print(f"loss {first:.4f} -> {mean_loss():.4f} accuracy {acc:.3f}")
