"""A weighted logistic regression loss as a Python custom operator next to MXNet's
LogisticRegressionOutput, in the style of MXNet's
example/numpy-ops/weighted_logistic_regression.py: the operator's infer_shape returns
two lists and gives the label the data's shape, so simple_bind is given the data's shape
only; run through runtime.mxnet_compat by the tests.

Prints four lines of numbers: the custom operator's output and data gradient, then
LogisticRegressionOutput's, each flattened.
"""
import mxnet as mx
import numpy as np


class WeightedLogistic(mx.operator.CustomOp):
    def __init__(self, pos, neg):
        self.pos, self.neg = pos, neg

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], 1 / (1 + mx.nd.exp(-in_data[0])))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        p, y = out_data[0], in_data[1]
        grad = ((p - 1) * y * self.pos + p * (1 - y) * self.neg) / p.shape[1]
        self.assign(in_grad[0], req[0], grad)


@mx.operator.register("weighted_logistic")
class WeightedLogisticProp(mx.operator.CustomOpProp):
    def __init__(self, pos, neg):
        super().__init__(False)
        self.pos, self.neg = float(pos), float(neg)

    def list_arguments(self):
        return ["data", "label"]

    def infer_shape(self, in_shape):
        return [in_shape[0], in_shape[0]], [in_shape[0]]

    def create_operator(self, ctx, shapes, dtypes):
        return WeightedLogistic(self.pos, self.neg)


data = mx.sym.Variable("data")
rows, cols = 4, 3
x = np.linspace(-2, 2, rows * cols).reshape(rows, cols)
y = (np.arange(rows * cols).reshape(rows, cols) % 3 == 0).astype(np.float32)
for sym, label in ((mx.sym.Custom(data, pos=1, neg=0.1, name="wlr",
                                  op_type="weighted_logistic"), "wlr_label"),
                   (mx.sym.LogisticRegressionOutput(data, name="lr"), "lr_label")):
    exe = sym.simple_bind(ctx=mx.cpu(), data=(rows, cols))
    exe.arg_dict["data"][:] = x
    exe.arg_dict[label][:] = y
    exe.forward(is_train=True)
    exe.backward()
    print(" ".join(f"{v:.6f}" for v in exe.outputs[0].asnumpy().ravel()))
    print(" ".join(f"{v:.6f}" for v in exe.grad_dict["data"].asnumpy().ravel()))
