"""Sparse linear classification in the style of MXNet 1.x's
example/sparse/linear_classification: LibSVM files read by ``mx.io.LibSVMIter``, a
symbol with a csr data variable and a row_sparse weight (``sym.sparse.dot``), a loss
written as a CustomOp, a Module whose optimizer runs on a local KVStore, the weight's
rows pulled per batch with ``kv.row_sparse_pull``, checkpoints with optimizer states.
Run through runtime.mxnet_compat by the tests with the files' folder and an optimizer
name as arguments; MXNet 1.9.1 runs it unchanged.

Prints, per epoch, the training and the test negative log-likelihood.
"""
import os
import sys

import mxnet as mx
import numpy as np

folder, optimizer = sys.argv[1], sys.argv[2]
FEATURES, BATCH = 1000, 100


class WeightedSoftmaxCE(mx.operator.CustomOp):
    """Softmax cross-entropy whose gradient weighs positive examples up."""

    def __init__(self, positive_cls_weight):
        self.positive_cls_weight = float(positive_cls_weight)

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], mx.nd.SoftmaxOutput(in_data[0], in_data[1]))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        label, pred = in_data[1], out_data[0]
        scale = ((1 + label * self.positive_cls_weight) / self.positive_cls_weight)
        grad = scale.reshape((pred.shape[0], 1)) * (pred - mx.nd.one_hot(label, 2))
        self.assign(in_grad[0], req[0], grad)


@mx.operator.register("weighted_softmax_ce_loss")
class WeightedSoftmaxCEProp(mx.operator.CustomOpProp):
    def __init__(self, positive_cls_weight):
        super(WeightedSoftmaxCEProp, self).__init__(True)
        self.positive_cls_weight = positive_cls_weight

    def list_arguments(self):
        return ["data", "label"]

    def list_outputs(self):
        return ["output"]

    def infer_shape(self, in_shapes):
        return in_shapes, (in_shapes[0],), ()

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return WeightedSoftmaxCE(self.positive_cls_weight)


def linear_model():
    x = mx.symbol.Variable("data", stype="csr")
    weight = mx.symbol.Variable("weight", shape=(FEATURES, 2), stype="row_sparse")
    bias = mx.symbol.Variable("bias", shape=(2,))
    pred = mx.symbol.broadcast_add(mx.symbol.sparse.dot(x, weight), bias)
    y = mx.symbol.Variable("softmax_label")
    out = mx.symbol.Custom(pred, y, op_type="weighted_softmax_ce_loss",
                           positive_cls_weight=2, name="out")
    return mx.sym.MakeLoss(out)


train = mx.io.LibSVMIter(data_libsvm=os.path.join(folder, "train.libsvm"),
                         data_shape=(FEATURES,), batch_size=BATCH)
test = mx.io.LibSVMIter(data_libsvm=os.path.join(folder, "test.libsvm"),
                        data_shape=(FEATURES,), batch_size=BATCH)
kv = mx.kvstore.create("local")
mod = mx.mod.Module(symbol=linear_model(), data_names=["data"],
                    label_names=["softmax_label"])
mod.bind(data_shapes=train.provide_data, label_shapes=train.provide_label)
rng = np.random.RandomState(1)
mod.init_params(arg_params={
    "weight": mx.nd.array(rng.normal(0, 0.01, (FEATURES, 2))).tostype("row_sparse"),
    "bias": mx.nd.zeros((2,))})
mod.init_optimizer(optimizer=mx.optimizer.create(optimizer, learning_rate=0.1,
                                                 rescale_grad=1.0 / BATCH), kvstore=kv)
metric = mx.metric.create(["nll_loss"])
index = mod._exec_group.param_names.index("weight")
weight = mod._exec_group.param_arrays[index]
for epoch in range(3):
    metric.reset()
    for batch in train:
        kv.row_sparse_pull("weight", weight, row_ids=[batch.data[0].indices],
                           priority=-index)
        mod.forward_backward(batch)
        mod.update()
        mod.update_metric(metric, batch.label)
    kv.row_sparse_pull("weight", weight, row_ids=[mx.nd.arange(0, FEATURES, dtype="int64")])
    score = mod.score(test, ["nll_loss"])
    print("epoch %d train %.6f test %.6f" % (epoch, metric.get()[1][0], score[0][1]))
    mod.save_checkpoint(os.path.join(folder, "checkpoint"), epoch,
                        save_optimizer_states=True)
    train.reset()
    test.reset()
