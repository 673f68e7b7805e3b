"""An MLP on MNIST's IDX files through MXNet 1.x's Module API, in the style of MXNet's
example/module/mnist_mlp.py: MNISTIter, the intermediate loop (forward, update_metric,
backward, update), then fit, iter_predict, predict (merged and per batch) and score;
run through runtime.mxnet_compat by the tests on the files in the folder given as the
first argument.

Prints one line: the training accuracy of the first epoch of the hand-written loop, the
validation accuracy that fit reaches, the accuracy computed from predict's batches and
the one score gives.
"""
import os
import sys

import mxnet as mx
import numpy as np

root = sys.argv[1]
data = mx.sym.Variable("data")
net = mx.sym.Activation(mx.sym.FullyConnected(data, name="fc1", num_hidden=64),
                        name="relu1", act_type="relu")
net = mx.sym.FullyConnected(net, name="fc2", num_hidden=10)
net = mx.sym.SoftmaxOutput(net, name="softmax")


def mnist(prefix, **kwargs):
    return mx.io.MNISTIter(image=os.path.join(root, f"{prefix}-images-idx3-ubyte"),
                           label=os.path.join(root, f"{prefix}-labels-idx1-ubyte"),
                           batch_size=50, flat=True, silent=True, **kwargs)


train, val = mnist("train", seed=3), mnist("t10k", shuffle=False)

mod = mx.mod.Module(net)
mod.bind(data_shapes=train.provide_data, label_shapes=train.provide_label)
mod.init_params(mx.init.Xavier())
mod.init_optimizer(optimizer_params={"learning_rate": 0.1, "momentum": 0.9})
metric = mx.metric.create("acc")
for batch in train:
    mod.forward(batch)
    mod.update_metric(metric, batch.label)
    mod.backward()
    mod.update()
first = metric.get()[1]

train.reset()
mod = mx.mod.Module(net)
mod.fit(train, eval_data=val, initializer=mx.init.Xavier(),
        optimizer_params={"learning_rate": 0.1, "momentum": 0.9}, num_epoch=2)
fit_acc = mod.score(val, "acc")[0][1]

correct = seen = 0
for outputs, _, batch in mod.iter_predict(val):
    correct += int((outputs[0].asnumpy().argmax(1) == batch.label[0].asnumpy()).sum())
    seen += batch.label[0].shape[0]
merged = mod.predict(val).asnumpy()
per_batch = mod.predict(val, merge_batches=False)
assert np.array_equal(np.concatenate([b[0].asnumpy() for b in per_batch]), merged)
metric.reset()
mod.score(val, metric)
print("acc", first, "fit", fit_acc, "predict", correct / seen, "score", metric.get()[1])
