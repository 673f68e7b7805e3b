"""runtime.metric against MXNet 1.9.1 (``data/mxnet191.npz``, written by
``mxnet_fixtures.py``): every metric's local and global values after each update and a
reset_local, and the API (create, names, CompositeEvalMetric, CustomMetric, np, errors)
against MXNet's documented behaviour."""

import math
import os

import numpy as np
import pytest

import runtime as mx
from runtime import metric, nd

from tests.runtime.mxnet_fixtures import METRIC_CASES

FIXTURES = np.load(os.path.join(os.path.dirname(__file__), "data", "mxnet191.npz"))


@pytest.mark.parametrize("case", METRIC_CASES, ids=[c[0] for c in METRIC_CASES])
def test_metric_matches_mxnet(case):
    key, name, kwargs, _, _, updates, _ = case
    m = mx.metric.create(name, **kwargs)
    assert m.get()[0] == str(FIXTURES[f"metric/{key}/name"])
    assert math.isnan(m.get()[1])
    for i in range(updates):
        label = nd.array(FIXTURES[f"metric/{key}/label{i}"])
        pred = nd.array(FIXTURES[f"metric/{key}/pred{i}"])
        m.update([label], [pred])
        np.testing.assert_allclose(m.get()[1], FIXTURES[f"metric/{key}/get{i}"], rtol=1e-6,
                                   err_msg=f"{key}: get() after update {i}")
        if key == "pearsonr_micro":
            # MXNet 1.9.1 reports global_sum_metric / global_num_inst here, which its
            # micro mode never adds to (always 0.0); ndrt reports the correlation of
            # every value seen, which is what get() reports
            assert m.get_global() == m.get()
        else:
            np.testing.assert_allclose(m.get_global()[1],
                                       FIXTURES[f"metric/{key}/global{i}"], rtol=1e-6,
                                       err_msg=f"{key}: get_global() after update {i}")
        if i == 1:
            m.reset_local()
    m.reset()
    assert math.isnan(m.get()[1]) and math.isnan(m.get_global()[1])


def test_accuracy_by_hand_and_single_arrays():
    acc = metric.Accuracy()
    pred = nd.array([[0.3, 0.7], [0.0, 1.0], [0.4, 0.6]])
    label = nd.array([0, 1, 1])
    acc.update(label, pred)                          # single arrays are wrapped
    assert acc.get() == ("accuracy", 2 / 3)
    assert acc.get_name_value() == [("accuracy", 2 / 3)]
    assert str(acc) == "EvalMetric: {'accuracy': 0.6666666666666666}"
    with pytest.raises(ValueError, match="Shape of labels 2 does not match shape of "
                                         "predictions 1"):
        acc.update([label, label], [pred])


def test_create_names_aliases_and_configs():
    for name, cls in [("acc", metric.Accuracy), ("Accuracy", metric.Accuracy),
                      ("ce", metric.CrossEntropy), ("nll_loss", metric.NegativeLogLikelihood),
                      ("top_k_acc", metric.TopKAccuracy), ("pearsonr",
                                                           metric.PearsonCorrelation),
                      ("composite", metric.CompositeEvalMetric), ("pcc", metric.PCC),
                      ("loss", metric.Loss), ("f1", metric.F1), ("mcc", metric.MCC)]:
        kwargs = {"top_k": 2} if cls is metric.TopKAccuracy else {}
        assert type(metric.create(name, **kwargs)) is cls
    perp = metric.create("perplexity", ignore_label=None)
    assert perp.get()[0] == "perplexity"
    again = metric.create(metric.Accuracy(axis=0).get_config())
    assert type(again) is metric.Accuracy and again.axis == 0
    assert type(metric.create('["mse", {}]')) is metric.MSE
    acc = metric.Accuracy()
    assert metric.create(acc) is acc
    comp = metric.create(["acc", "mse", lambda label, pred: 1.0])
    assert [type(m) for m in comp.metrics] == [metric.Accuracy, metric.MSE,
                                               metric.CustomMetric]
    with pytest.raises(ValueError, match="metric must be one of .* \\(got 'nosuch'\\)"):
        metric.create("nosuch")
    with pytest.raises(ValueError, match="already a metric"):
        metric.create(acc, 1)
    with pytest.raises(ValueError, match="top_k must be an int > 1"):
        metric.TopKAccuracy(top_k=1)

    @metric.register
    class Zero(metric.EvalMetric):
        def __init__(self):
            super().__init__("zero")

        def update(self, labels, preds):
            self._add(0.0, 1)

    assert type(metric.create("zero")) is Zero


def test_composite_get_and_update_dict():
    comp = metric.CompositeEvalMetric()
    comp.add("acc")
    comp.add(metric.MAE())
    label = nd.array([0, 1])
    pred = nd.array([[0.9, 0.1], [0.2, 0.8]])
    comp.update([label], [pred])
    names, values = comp.get()
    assert names == ["accuracy", "mae"]
    assert values[0] == 1.0
    # MAE of a (2,) label against (2, 2) pred: label reshaped to (2, 1), broadcast
    assert values[1] == pytest.approx(np.abs(np.array([[0], [1]]) - pred.asnumpy()).mean())
    assert comp.get_metric(1) is comp.metrics[1]
    with pytest.raises(IndexError, match="index must be in"):
        comp.get_metric(5)
    named = metric.Accuracy(output_names=["out"], label_names=["y"])
    named.update_dict({"y": label, "z": nd.array([5, 5])}, {"out": pred, "o2": pred})
    assert named.get()[1] == 1.0


def test_custom_metric_and_np():
    def total(label, pred):
        return float(np.abs(label - pred).sum()), label.size
    custom = metric.CustomMetric(total)
    assert custom.name == "total"
    custom.update([nd.array([1.0, 2.0])], [nd.array([1.5, 2.0])])
    assert custom.get() == ("total", 0.25)
    lam = metric.CustomMetric(lambda label, pred: 3.0)
    assert lam.name == "custom(<lambda>)"
    lam.update([nd.zeros(2)], [nd.zeros(2)])
    lam.update([nd.zeros(2)], [nd.zeros(2)])
    assert lam.get() == ("custom(<lambda>)", 3.0)

    def mine(label, pred):
        return float((label == pred).mean())
    m = metric.np(mine)
    assert m.name == "mine"
    m.update([nd.array([1, 2])], [nd.array([1, 3])])
    assert m.get() == ("mine", 0.5)
    extra = metric.np(mine, allow_extra_outputs=True)
    extra.update([nd.array([1, 2])], [nd.array([1, 2]), nd.array([0, 0])])
    assert extra.get() == ("mine", 1.0)
    with pytest.raises(NotImplementedError, match="cannot be serialized"):
        m.get_config()


def test_loss_and_binary_errors():
    loss = metric.Loss()
    loss.update(None, nd.array([1.0, 2.0, 3.0]))
    loss.update(None, [nd.array([[6.0]])])
    assert loss.get() == ("loss", 3.0)
    f1 = metric.F1()
    with pytest.raises(ValueError, match="only supports binary classification"):
        f1.update([nd.array([0, 1, 2])], [nd.ones((3, 2))])
    with pytest.raises(ValueError, match="average must be 'macro' or 'micro'"):
        metric.F1(average="weighted")
    with pytest.raises(ValueError, match="predictions must have shape \\(batch, classes\\)"):
        metric.TopKAccuracy(top_k=2).update([nd.array([1])], [nd.array([0.5])])
