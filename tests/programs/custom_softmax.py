"""A softmax loss written as a Python custom operator (NumPy forward and backward) under
an MLP trained by MXNet 1.x's deprecated FeedForward API, in the style of MXNet's
example/numpy-ops/custom_softmax.py: the operator's label shape comes from the data's;
run through runtime.mxnet_compat by the tests on MNIST's IDX files in the folder given
as the first argument.

Prints one line: the validation accuracy before and after training.
"""
import os
import sys
import warnings

import mxnet as mx
import numpy as np


class NumpySoftmax(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        z = in_data[0].asnumpy()
        e = np.exp(z - z.max(axis=1, keepdims=True))
        self.assign(out_data[0], req[0], mx.nd.array(e / e.sum(axis=1, keepdims=True)))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        labels = in_data[1].asnumpy().astype(int)
        g = out_data[0].asnumpy()
        g[np.arange(len(labels)), labels] -= 1
        self.assign(in_grad[0], req[0], mx.nd.array(g))


@mx.operator.register("numpy_softmax")
class NumpySoftmaxProp(mx.operator.CustomOpProp):
    def __init__(self):
        super().__init__(need_top_grad=False)

    def list_arguments(self):
        return ["data", "label"]

    def infer_shape(self, in_shape):
        return [in_shape[0], (in_shape[0][0],)], [in_shape[0]], []

    def infer_type(self, in_type):
        return [in_type[0], in_type[0]], [in_type[0]], []

    def create_operator(self, ctx, shapes, dtypes):
        return NumpySoftmax()


root = sys.argv[1]
mx.random.seed(7)         # the untrained model's accuracy is a draw: make it one draw
net = mx.sym.Activation(mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=64,
                                              name="fc1"), act_type="relu")
net = mx.sym.FullyConnected(net, num_hidden=10, name="fc2")
net = mx.sym.Custom(net, name="softmax", op_type="numpy_softmax")


def mnist(prefix):
    return mx.io.MNISTIter(image=os.path.join(root, f"{prefix}-images-idx3-ubyte"),
                           label=os.path.join(root, f"{prefix}-labels-idx1-ubyte"),
                           batch_size=50, flat=True, silent=True)


train, val = mnist("train"), mnist("t10k")
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    model = mx.model.FeedForward(net, num_epoch=2, learning_rate=0.1, momentum=0.9,
                                 initializer=mx.init.Xavier())
    untrained = mx.model.FeedForward(net, num_epoch=0, initializer=mx.init.Xavier())
untrained.fit(train)
before = untrained.score(val)
model.fit(train, eval_data=val, batch_end_callback=mx.callback.Speedometer(50, 20))
print("acc", before, "->", model.score(val))
