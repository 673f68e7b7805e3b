"""A model-zoo ResNet-18 trained on one batch of random images, written for MXNet 1.x
(hybridized, SGD with momentum and weight decay, a learning rate schedule); run through
runtime.mxnet_compat by the tests.

Prints one line: the loss of the first and the last step, and the last step's accuracy.
"""
import mxnet as mx
import numpy as np
from mxnet import autograd, gluon, nd
from mxnet.gluon.model_zoo import vision

mx.random.seed(0)
np.random.seed(0)
ctx = mx.cpu()
net = vision.resnet18_v1(classes=10, thumbnail=True)
net.initialize(mx.init.Xavier(magnitude=2), ctx=ctx)
net.hybridize()
schedule = mx.lr_scheduler.FactorScheduler(step=10, factor=0.5, base_lr=0.05)
trainer = gluon.Trainer(net.collect_params(), "sgd",
                        {"learning_rate": 0.05, "momentum": 0.9, "wd": 1e-4,
                         "lr_scheduler": schedule})
loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
x = nd.array(np.random.uniform(-1, 1, (8, 3, 16, 16)), ctx=ctx)
y = nd.array(np.arange(8) % 10, ctx=ctx)

losses = []
metric = mx.metric.Accuracy()
for step in range(20):
    with autograd.record():
        out = net(x)
        loss = loss_fn(out, y)
    loss.backward()
    trainer.step(x.shape[0])
    losses.append(loss.mean().asscalar())
metric.update([y], [out])        # the last step's training-mode predictions
print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f} accuracy {metric.get()[1]:.3f}")
