"""Two Modules chained by MXNet 1.x's SequentialModule, in the style of MXNet's
example/module/sequential_module.py (a feature module without labels, then a classifier
that takes the labels, auto-wired), trained by fit on MNIST's IDX files in the folder
given as the first argument; run through runtime.mxnet_compat by the tests.

Prints one line: the validation accuracy after training and the names of the
parameters of both modules.
"""
import os
import sys

import mxnet as mx

root = sys.argv[1]
features = mx.sym.Activation(mx.sym.FullyConnected(mx.sym.Variable("data"), name="fc1",
                                                   num_hidden=64), act_type="relu")
head = mx.sym.FullyConnected(mx.sym.Variable("data"), name="fc2", num_hidden=10)
head = mx.sym.SoftmaxOutput(head, name="softmax")

chain = mx.mod.SequentialModule()
chain.add(mx.mod.Module(features, label_names=[]))
chain.add(mx.mod.Module(head), take_labels=True, auto_wiring=True)


def mnist(prefix):
    return mx.io.MNISTIter(image=os.path.join(root, f"{prefix}-images-idx3-ubyte"),
                           label=os.path.join(root, f"{prefix}-labels-idx1-ubyte"),
                           batch_size=50, flat=True, silent=True)


train, val = mnist("train"), mnist("t10k")
chain.fit(train, eval_data=val, initializer=mx.init.Xavier(),
          optimizer_params={"learning_rate": 0.1, "momentum": 0.9}, num_epoch=2)
arg_params, _ = chain.get_params()
print("acc", chain.score(val, "acc")[0][1], " ".join(sorted(arg_params)))
