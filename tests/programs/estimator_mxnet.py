"""MXNet 1.x's estimator tutorial in small: a Gluon classifier trained with
``gluon.contrib.estimator`` (validation, checkpoints, early stopping); run through
runtime.mxnet_compat by the tests.

Usage: estimator_mxnet.py CHECKPOINT_DIR.  The estimator logs to stdout; the last line
printed is the validation accuracy and the checkpoint files.
"""
import os
import sys
import warnings

import numpy as np

import mxnet as mx
from mxnet import gluon
from mxnet.gluon.contrib.estimator import estimator
from mxnet.gluon.contrib.estimator.event_handler import (CheckpointHandler,
                                                         EarlyStoppingHandler)

mx.random.seed(0)
rng = np.random.RandomState(0)
X = rng.normal(size=(400, 8)).astype(np.float32)
y = (X[:, :4].sum(axis=1) > 0).astype(np.float32)
train = gluon.data.DataLoader(gluon.data.ArrayDataset(X[:320], y[:320]), batch_size=32,
                              shuffle=True)
val = gluon.data.DataLoader(gluon.data.ArrayDataset(X[320:], y[320:]), batch_size=40)

net = gluon.nn.HybridSequential()
net.add(gluon.nn.Dense(16, activation="relu"), gluon.nn.Dense(2))
net.initialize(mx.init.Xavier(), ctx=mx.cpu())
net.hybridize()
trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.01})
est = estimator.Estimator(net=net, loss=gluon.loss.SoftmaxCrossEntropyLoss(),
                          train_metrics=mx.metric.Accuracy(), trainer=trainer,
                          context=mx.cpu())
val_acc = est.val_metrics[0]
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    handlers = [CheckpointHandler(sys.argv[1], monitor=val_acc, save_best=True,
                                  max_checkpoints=2),
                EarlyStoppingHandler(monitor=val_acc, patience=3, mode="max")]
est.fit(train_data=train, val_data=val, epochs=8, event_handlers=handlers)
print("RESULT", val_acc.get()[1], " ".join(sorted(os.listdir(sys.argv[1]))))
