"""runtime.metric against MXNet 1.9.1 (``data/mxnet191.npz``, written by
``mxnet_fixtures.py``): every metric's local and global values after each update and a
reset_local, and the API (create, names, CompositeEvalMetric, CustomMetric, np, errors)
against MXNet's documented behaviour."""

import json
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
    scalar = metric.CustomMetric(lambda label, pred: (label == pred).mean())  # np.float64
    scalar.update([nd.array([1, 2])], [nd.array([1, 3])])
    name, value = scalar.get()
    assert type(value) is float and value == 0.5 and repr(value) == "0.5"
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


# -- cases of MXNet's test_metric.py that hold for 1.x's mx.metric ----------------------

@pytest.mark.parametrize("name,args,kwargs", [
    ("acc", (), {"axis": 0}), ("f1", (), {}), ("mcc", (), {}), ("perplexity", (-1,), {}),
    ("pearsonr", (), {}), ("pcc", (), {}), ("nll_loss", (), {}), ("loss", (), {})])
def test_config_round_trips_through_json(name, args, kwargs):
    m = metric.create(name, *args, **kwargs)
    again = metric.create(json.dumps(m.get_config()))
    assert type(again) is type(m) and again.get_config() == m.get_config()
    composite = metric.create(["acc", "f1"])
    assert metric.create(json.dumps(composite.get_config())).get_config() == \
        composite.get_config()


def test_acc_with_2d_label_and_nll_by_hand():
    pred = nd.array([[0.3, 0.7], [0, 1.0], [0.4, 0.6], [0.8, 0.2], [0.3, 0.5], [0.6, 0.4]])
    label = nd.array([[0, 1, 1], [1, 0, 1]])
    acc = metric.create("acc")
    acc.update([label], [pred])
    want = (pred.asnumpy().argmax(axis=1) == label.asnumpy().ravel()).mean()
    assert acc.get()[1] == want
    nll = metric.create("nll_loss")
    p = nd.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])
    nll.update([nd.array([2, 1])], [p])
    assert nll.get()[1] == pytest.approx(-(np.log(0.5) + np.log(0.1)) / 2, rel=1e-6)


def test_binary_f1_divide_by_zero_and_counts():
    micro, macro = metric.create("f1", average="micro"), metric.F1(average="macro")
    assert math.isnan(macro.get()[1]) and math.isnan(micro.get()[1])
    pred, label = nd.array([[0.9, 0.1], [0.8, 0.2]]), nd.array([0, 0])
    macro.update([label], [pred])
    micro.update([label], [pred])
    assert macro.get()[1] == 0.0 and micro.get()[1] == 0.0
    macro.reset()
    micro.reset()
    batch1 = ([nd.array([1, 0]), nd.array([1, 0])],
              [nd.array([[0.1, 0.9], [0.5, 0.5]]), nd.array([[0.85, 0.15], [1.0, 0.0]])])
    micro.update(*batch1)
    macro.update(*batch1)
    assert micro.num_inst == 4 and macro.num_inst == 1          # 1.x: macro counts updates
    np.testing.assert_almost_equal(micro.get()[1], 2.0 / 3)
    np.testing.assert_almost_equal(macro.get()[1], 2.0 / 3)


def test_perplexity_and_single_arrays():
    pred, label = nd.array([[0.8, 0.2], [0.2, 0.8], [0, 1.0]]), nd.array([0, 1, 1])
    m = metric.create("perplexity", -1)
    m.update([label], [pred])
    assert m.get()[1] == pytest.approx(np.exp(-np.log([0.8, 0.8, 1.0]).sum() / 3))
    p = nd.array([[1, 2, 3, 4]])
    for name, want in (("mse", 0.01), ("mae", 0.1), ("rmse", 0.1)):
        mm = metric.create(name)
        mm.update(p + 0.1, p)
        np.testing.assert_almost_equal(mm.get()[1], want, decimal=6)


def _cm_batch(cm):
    """One batch whose (label, argmax of pred) confusion matrix is ``cm``."""
    labels, preds = [], []
    for i, row in enumerate(cm):
        for j, count in enumerate(row):
            labels += [i] * count
            preds += [np.eye(len(cm))[j]] * count
    return [nd.array(labels, dtype="int32")], [nd.array(np.array(preds))]


def test_pcc_agrees_with_mcc_and_the_multiclass_formula():
    labels, preds = _cm_batch([[7, 3], [2, 5]])
    pcc, mcc = metric.create("pcc"), metric.create("mcc")
    pcc.update(labels, preds)
    mcc.update(labels, preds)
    np.testing.assert_almost_equal(pcc.get()[1], mcc.get()[1])
    pcc.reset()
    pcc.update(labels, [p.argmax(axis=1) for p in preds])       # classes instead of scores
    np.testing.assert_almost_equal(pcc.get()[1], mcc.get()[1])
    cm = np.array([[23, 13, 3], [7, 19, 11], [2, 5, 17]])
    k = len(cm)
    num = sum(cm[a, a] * cm[b, c] - cm[a, b] * cm[c, a] for a in range(k) for b in range(k)
              for c in range(k))
    rows, cols = cm.sum(axis=1), cm.sum(axis=0)
    den = (sum(rows[a] * (cm.sum() - rows[a]) for a in range(k)) *
           sum(cols[a] * (cm.sum() - cols[a]) for a in range(k))) ** 0.5
    labels, preds = _cm_batch(cm.tolist())
    pcc.reset()
    pcc.update(labels, preds)
    np.testing.assert_almost_equal(pcc.get()[1], num / den)
    one_by_one = metric.create("pcc")           # order, batch size and updates do not matter
    for lab, pr in reversed(list(zip(labels[0], preds[0]))):
        one_by_one.update([lab.reshape((-1,))], [pr.reshape((1, -1))])
    assert one_by_one.get()[1] == pytest.approx(pcc.get()[1], rel=1e-12)


def test_a_metric_that_tallies_locally_reports_that_tally_as_its_global_one():
    # MXNet's examples subclass EvalMetric and add to sum_metric/num_inst themselves;
    # MXNet's get_global then gives the local value (no has_global_stats), which
    # Module.fit logs as the epoch's training metric
    class Hits(mx.metric.EvalMetric):
        def __init__(self):
            super().__init__("hits")

        def update(self, labels, preds):
            self.sum_metric += float((labels[0].asnumpy() == preds[0].asnumpy()).sum())
            self.num_inst += labels[0].size

    m = Hits()
    assert np.isnan(m.get_global()[1])
    m.update([mx.nd.array([1, 2, 3, 4])], [mx.nd.array([1, 0, 3, 0])])
    assert m.get_global() == m.get() == ("hits", 0.5)
    assert m.get_global_name_value() == [("hits", 0.5)]
    m.reset_local()
    m.update([mx.nd.array([1, 2])], [mx.nd.array([1, 2])])
    assert m.get_global() == ("hits", 1.0)          # the local tally since reset_local
    acc = mx.metric.Accuracy()                       # a built-in keeps both tallies
    acc.update([mx.nd.array([0, 1])], [mx.nd.array([[1, 0], [1, 0]])])
    acc.reset_local()
    assert acc.get_global() == ("accuracy", 0.5) and np.isnan(acc.get()[1])
