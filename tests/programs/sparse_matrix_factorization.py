"""Matrix factorization with row_sparse embeddings written for MXNet 1.x's Module API, in
the style of MXNet's example/sparse/matrix_factorization (contrib.SparseEmbedding on
Variables of stype 'row_sparse', a LinearRegressionOutput, a PrefetchingIter over a
dict-fed NDArrayIter, an SGD optimizer object, the hand-written loop with BatchEndParam
and Speedometer, the MSE metric); run through runtime.mxnet_compat by the tests on
ratings drawn from a rank-2 model.

Prints one line: the validation MSE before training and after each epoch.
"""
import logging

import mxnet as mx
import numpy as np

logging.basicConfig(level=logging.WARNING)
USERS, ITEMS, FACTORS, BATCH = 500, 400, 8, 50
rng = np.random.RandomState(0)
u_true, i_true = rng.normal(size=(USERS, 2)), rng.normal(size=(ITEMS, 2))


def ratings(n):
    user, item = rng.randint(0, USERS, n), rng.randint(0, ITEMS, n)
    score = 3 + (u_true[user] * i_true[item]).sum(1)
    data = {"user": mx.nd.array(user, dtype="int32"), "item": mx.nd.array(item)}
    return mx.io.PrefetchingIter(mx.io.NDArrayIter(data, {"score": mx.nd.array(score)},
                                                   batch_size=BATCH, shuffle=True))


def tower(name, rows):
    weight = mx.sym.Variable(f"{name}_weight", stype="row_sparse")
    x = mx.sym.contrib.SparseEmbedding(mx.sym.Variable(name), weight=weight, input_dim=rows,
                                       output_dim=FACTORS, deterministic=True)
    return mx.sym.FullyConnected(mx.sym.Activation(x, act_type="relu"), num_hidden=FACTORS)


pred = mx.sym.Flatten(mx.sym.sum(tower("user", USERS) * tower("item", ITEMS), axis=1))
net = mx.sym.LinearRegressionOutput(pred, label=mx.sym.Variable("score"))

train, val = ratings(8000), ratings(1000)
mod = mx.mod.Module(net, data_names=["user", "item"], label_names=["score"])
mod.bind(data_shapes=train.provide_data, label_shapes=train.provide_label)
mod.init_params(initializer=mx.init.Xavier(factor_type="in", magnitude=2.34))
mod.init_optimizer(optimizer=mx.optimizer.create("sgd", learning_rate=0.05, momentum=0.9,
                                                 wd=1e-4, rescale_grad=1.0 / BATCH))
mses = [mod.score(val, ["mse"])[0][1]]
speed = mx.callback.Speedometer(BATCH, 50)
metric = mx.metric.create(["mse"])
for epoch in range(6):
    metric.reset()
    for nbatch, batch in enumerate(train, 1):
        mod.forward_backward(batch)
        mod.update()
        mod.update_metric(metric, batch.label)
        speed(mx.model.BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=metric,
                                     locals=locals()))
    mses.append(mod.score(val, ["mse"])[0][1])
    train.reset()
print("mse", *mses)
