"""gluon.contrib.estimator: the same seeded programs as MXNet 1.9.1 (its results in
tests/fixtures/mxnet/estimator.json, written by estimator_programs.py beside it), the
training loop against a NumPy reference, the places where ndrt knowingly differs
(docs/differences.md), and refused arguments."""

import importlib.util
import json
import logging
import os
import pickle
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import runtime as mx
from runtime import gluon
from runtime.gluon.contrib import estimator as est_mod
from runtime.gluon.contrib.estimator import (BatchProcessor, CheckpointHandler,
                                             EarlyStoppingHandler, Estimator, LoggingHandler,
                                             MetricHandler)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "mxnet"
_spec = importlib.util.spec_from_file_location("estimator_programs",
                                               FIXTURES / "estimator_programs.py")
programs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(programs)
MXNET = json.loads((FIXTURES / "estimator.json").read_text())

_NUMBER = re.compile(r"-?\d+\.\d+")


def _agree(ours, theirs, where):
    """``ours`` equals MXNet's ``theirs``: same structure and text, numbers (also those
    inside log lines) within 1e-4 (float32 rounding, printed to 4 places)."""
    if isinstance(theirs, list):
        assert isinstance(ours, list) and len(ours) == len(theirs), \
            f"{where}: {ours!r} != {theirs!r}"
        for i, (a, b) in enumerate(zip(ours, theirs)):
            _agree(a, b, f"{where}[{i}]")
    elif isinstance(theirs, dict):
        assert isinstance(ours, dict) and sorted(ours) == sorted(theirs), where
        for k in theirs:
            _agree(ours[k], theirs[k], f"{where}.{k}")
    elif isinstance(theirs, str):
        # MXNet 1.9.1 misspells the handler's name in this line
        theirs = theirs.replace("EarlyStoppingHanlder", "EarlyStoppingHandler")
        assert _NUMBER.sub("#", ours) == _NUMBER.sub("#", theirs), \
            f"{where}: {ours!r} != {theirs!r}"
        np.testing.assert_allclose([float(x) for x in _NUMBER.findall(ours)],
                                   [float(x) for x in _NUMBER.findall(theirs)], atol=1e-4,
                                   err_msg=where)
    elif isinstance(theirs, float):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6, err_msg=where)
    else:
        assert ours == theirs, f"{where}: {ours!r} != {theirs!r}"


@pytest.mark.parametrize("program", programs.PROGRAMS, ids=lambda p: p.__name__)
def test_same_as_mxnet(program):
    ours = json.loads(json.dumps(programs.run(mx, program)))
    _agree(ours, MXNET[program.__name__], program.__name__)


def test_fixture_covers_what_matters():
    # the comparison above is only as good as what MXNet's run holds
    events = MXNET["events"]["epochs"]["calls"]
    assert [c[:2] for c in events[:6]] == [
        ["p-3000", "train_begin"], ["p-1500", "train_begin"], ["p-500", "train_begin"],
        ["none", "train_begin"], ["p500", "train_begin"], ["p-3000", "epoch_begin"]]
    # at the first batch end: before the step (-3000), after it, after the metrics
    first_end = [c for c in events if c[1] == "batch_end"][:5]
    assert [c[2:4] for c in first_end] == [[0, 0], [1, 0], [1, 4], [1, 4], [1, 4]]
    stops = MXNET["early_stopping"]
    assert {k: v["epochs_run"] for k, v in stops.items()} == {
        "max_baseline": 4, "min_patience1": 3, "min_patience2_delta": 4}
    assert "model-symbol.json" in MXNET["checkpoints"]["by_epochs"]["files"]


# -- a NumPy reference ---------------------------------------------------------------------
def _regression(n=10, batch_size=4, seed=3):
    rng = np.random.RandomState(seed)
    x = rng.normal(size=(n, 3)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]]) + 0.3).astype(np.float32)
    w0 = rng.normal(size=(1, 3)).astype(np.float32)
    loader = gluon.data.DataLoader(gluon.data.ArrayDataset(mx.nd.array(x), mx.nd.array(y)),
                                   batch_size=batch_size)
    return x, y, w0, loader


def _linear(w0, context=None):
    net = gluon.nn.Dense(1, in_units=3)
    net.initialize(ctx=context)
    net.weight.set_data(mx.nd.array(w0))
    net.bias.set_data(mx.nd.zeros(1))
    return net


def _numpy_fit(x, y, w0, lr, epochs, batch_size):
    """SGD on 0.5 * (x w^T + b - y)^2 averaged over each batch; returns w, b and the
    mean loss of the last epoch's samples (computed before each batch's step)."""
    w, b = w0.astype(np.float64), np.zeros(1)
    for _ in range(epochs):
        losses = []
        for s in range(0, len(x), batch_size):
            xb, yb = x[s:s + batch_size].astype(np.float64), y[s:s + batch_size]
            err = xb @ w.T + b - yb
            losses.extend(0.5 * err[:, 0] ** 2)
            w = w - lr * (err.T @ xb) / len(xb)
            b = b - lr * err.sum(axis=0) / len(xb)
    return w, b, float(np.mean(losses))


@pytest.mark.parametrize("contexts", [None, [mx.cpu(0), mx.cpu(1)]],
                         ids=["one_context", "two_contexts"])
def test_fit_matches_numpy_sgd(contexts):
    x, y, w0, loader = _regression(batch_size=4)
    net = _linear(w0, contexts)
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    est = Estimator(net, gluon.loss.L2Loss(), trainer=trainer, context=contexts)
    est.logger.handlers.clear()
    est.fit(loader, epochs=3)
    w, b, last_loss = _numpy_fit(x, y, w0, 0.1, 3, 4)
    np.testing.assert_allclose(net.weight.data().asnumpy(), w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(net.bias.data().asnumpy(), b, rtol=1e-5, atol=1e-6)
    copies = net.weight.list_data()
    assert len(copies) == len(contexts or [None])       # every context's copy updated
    for copy in copies:
        np.testing.assert_array_equal(copy.asnumpy(), copies[0].asnumpy())
    name, value = est.train_metrics[0].get()
    assert name == "training l2loss"
    np.testing.assert_allclose(value, last_loss, rtol=1e-5)


def test_evaluate_reports_the_validation_loss():
    x, y, w0, loader = _regression()
    net = _linear(w0)
    est = Estimator(net, gluon.loss.L2Loss(), trainer=gluon.Trainer(
        net.collect_params(), "sgd", {"learning_rate": 0.1}))
    est.logger.handlers.clear()
    est.evaluate(loader)
    expected = np.mean(0.5 * (x @ w0.T - y)[:, 0] ** 2)
    np.testing.assert_allclose(est.val_metrics[0].get()[1], expected, rtol=1e-5)
    np.testing.assert_array_equal(net.weight.data().asnumpy(), w0)    # no step


def test_batches_stop_mid_epoch_and_batch_processor_is_used():
    x, y, w0, loader = _regression()
    calls = []

    class Counting(BatchProcessor):
        def fit_batch(self, estimator, train_batch, batch_axis=0):
            calls.append(train_batch[0].shape[0])
            return super().fit_batch(estimator, train_batch, batch_axis)
    net = _linear(w0)
    est = Estimator(net, gluon.loss.L2Loss(), batch_processor=Counting(),
                    trainer=gluon.Trainer(net.collect_params(), "sgd",
                                          {"learning_rate": 0.1}))
    est.logger.handlers.clear()
    est.fit(loader, batches=5)
    assert calls == [4, 4, 2, 4, 4]
    w, _, _ = _numpy_fit(x, y, w0, 0.1, 1, 4)     # one epoch, then two more batches
    assert not np.allclose(net.weight.data().asnumpy(), w)


# -- files ----------------------------------------------------------------------------------
def _classifier(tmp_path=None, hybrid=False):
    net = programs._net(mx, hybrid=hybrid)
    est, _ = programs._estimator(mx, net)
    est.logger.handlers.clear()
    return net, est


def test_checkpoint_holds_the_parameters_and_states(tmp_path):
    net, est = _classifier(hybrid=True)
    est.fit(programs._data(mx), epochs=1, event_handlers=[CheckpointHandler(str(tmp_path))])
    fresh = programs._net(mx, hybrid=True)
    fresh.load_parameters(str(tmp_path / "model-epoch0batch3.params"))
    for a, b in zip(net.collect_params().values(), fresh.collect_params().values()):
        np.testing.assert_array_equal(a.data().asnumpy(), b.data().asnumpy())
    trainer = gluon.Trainer(fresh.collect_params(), "adam", {"learning_rate": 0.9})
    trainer.load_states(str(tmp_path / "model-epoch0batch3.states"))
    assert type(trainer.optimizer).__name__ == "SGD" and trainer.learning_rate == 0.5
    assert trainer.optimizer.num_update == 3
    graph = mx.sym.load(str(tmp_path / "model-symbol.json"))
    assert graph.list_arguments()[0] == "data"
    assert sorted(graph.list_arguments()[1:]) == sorted(net.collect_params())


def test_failed_checkpoint_leaves_no_file(tmp_path, monkeypatch):
    net, est = _classifier()
    real = pickle.dumps

    def full_disk(value, *args, **kwargs):
        data = real(value, *args, **kwargs)
        if isinstance(value, tuple):             # the trainer's (states, optimizer)
            raise OSError(28, "No space left on device")
        return data
    monkeypatch.setattr(pickle, "dumps", full_disk)
    with pytest.raises(OSError, match="No space left"):
        est.fit(programs._data(mx), epochs=1,
                event_handlers=[CheckpointHandler(str(tmp_path))])
    # the parameters went in under their final name; the states did not
    assert sorted(os.listdir(tmp_path)) == ["model-epoch0batch3.params"]


def test_failed_states_write_leaves_the_old_file(tmp_path, monkeypatch):
    net, est = _classifier()
    path = tmp_path / "t.states"
    path.write_bytes(b"old")

    def broken(src, dst):
        raise OSError(5, "Input/output error")
    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError, match="Input/output error"):
        est.trainer.save_states(str(path))
    assert os.listdir(tmp_path) == ["t.states"] and path.read_bytes() == b"old"


def test_trainer_states_round_trip_and_refuse_other_files(tmp_path):
    net = programs._net(mx)
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.01})
    est = Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(), trainer=trainer)
    est.logger.handlers.clear()
    est.fit(programs._data(mx), batches=2)
    path = str(tmp_path / "t.states")
    trainer.save_states(path)
    other = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
    other.load_states(path)
    assert type(other.optimizer).__name__ == "Adam" and other.optimizer.num_update == 2
    for i, (mean, var) in trainer._states.items():
        np.testing.assert_array_equal(other._states[i][0].asnumpy(), mean.asnumpy())
        np.testing.assert_array_equal(other._states[i][1].asnumpy(), var.asnumpy())
    assert other.optimizer.param_dict[0] is list(net.collect_params().values())[0]
    bad = tmp_path / "bad.states"
    bad.write_bytes(b"not a pickle")
    before = other.optimizer
    with pytest.raises(ValueError, match="must hold the states that save_states wrote"):
        other.load_states(str(bad))
    assert other.optimizer is before


# -- where ndrt differs from MXNet 1.9.1 (docs/differences.md) ------------------------------
def test_auto_mode_watches_a_loss_downward():
    # MXNet 1.9.1's 'auto' compares every metric upward ('acc' or 'f1' in name is
    # always true): a falling loss would stop training
    net, est = _classifier()
    loss_metric = est.train_metrics[1]
    with pytest.warns(UserWarning, match="takes 'min'"):
        stopper = EarlyStoppingHandler(loss_metric, patience=0)
    est.fit(programs._data(mx), epochs=3, event_handlers=[stopper])
    assert not stopper.stop_training           # the loss fell every epoch
    with pytest.warns(UserWarning, match="takes 'max'"):
        EarlyStoppingHandler(est.train_metrics[0])


def test_resume_without_checkpoint_numbers_as_a_fresh_run(tmp_path):
    for resume, folder in ((False, tmp_path / "a"), (True, tmp_path / "b")):
        net, est = _classifier()
        est.fit(programs._data(mx), epochs=2, event_handlers=[
            CheckpointHandler(str(folder), resume_from_checkpoint=resume)])
    assert sorted(os.listdir(tmp_path / "a")) == sorted(os.listdir(tmp_path / "b")) == [
        "model-epoch0batch3.params", "model-epoch0batch3.states",
        "model-epoch1batch6.params", "model-epoch1batch6.states"]


def test_resumed_run_counts_old_checkpoints(tmp_path):
    for epochs, resume in ((3, False), (5, True)):
        net, est = _classifier()
        est.fit(programs._data(mx), epochs=epochs, event_handlers=[CheckpointHandler(
            str(tmp_path), max_checkpoints=3, resume_from_checkpoint=resume)])
    assert sorted(os.listdir(tmp_path)) == [
        f"model-epoch{e}batch{3 * (e + 1)}.{s}" for e in (2, 3, 4)
        for s in ("params", "states")]


def test_stop_at_first_epoch_is_logged_and_handler_list_kept():
    net, est = _classifier()
    lines = programs._quiet(est)
    monitor = est.train_metrics[1]
    stopper = EarlyStoppingHandler(monitor, mode="min", baseline=0.0)
    handlers = [stopper]
    est.fit(programs._data(mx), epochs=5, event_handlers=handlers)
    assert handlers == [stopper]
    assert stopper.stopped_epoch == 0
    assert lines[-2] == ("[Epoch 0] EarlyStoppingHandler: early stopping due to training "
                         "softmaxcrossentropyloss not improving")


def test_a_monitor_outside_the_estimators_metrics_is_refused():
    net, est = _classifier()
    stopper = EarlyStoppingHandler(mx.metric.Accuracy(), mode="max")
    with pytest.raises(ValueError, match="EarlyStoppingHandler: its metrics must be objects "
                                         "of the estimator's train_metrics"):
        est.fit(programs._data(mx), epochs=1, event_handlers=[stopper])


# -- defaults and refusals -------------------------------------------------------------------
def test_default_handlers_give_way_to_the_users():
    net, est = _classifier()
    lines = programs._quiet(est)
    acc = est.train_metrics[0]
    est.fit(programs._data(mx), epochs=1, event_handlers=[
        MetricHandler([acc]), LoggingHandler(metrics=[acc])])
    assert est.train_metrics[1].num_inst == 0        # only the user's MetricHandler ran
    assert lines[-1].endswith("with 1 epochs. training accuracy: 0.5000")


def test_default_trainer_and_context():
    net = programs._net(mx)
    with pytest.warns(UserWarning, match="default SGD optimizer with learning rate 0.001"):
        est = Estimator(net, gluon.loss.L2Loss())
    assert est.trainer.learning_rate == 0.001 and est.context == [mx.cpu()]
    assert isinstance(est.logger, logging.Logger) and est.logger.level == logging.INFO


def test_uninitialized_net_is_initialized_with_the_initializer():
    net = gluon.nn.Dense(2, in_units=3)
    with pytest.warns(UserWarning):
        Estimator(net, gluon.loss.L2Loss(), initializer=mx.init.Constant(0.25))
    np.testing.assert_array_equal(net.weight.data().asnumpy(), np.full((2, 3), 0.25))


@pytest.mark.parametrize("kwargs, what", [
    ({"loss": "l2"}, r"loss must be a gluon.loss.Loss \(got 'l2'\)"),
    ({"val_loss": 3}, r"val_loss must be a gluon.loss.Loss \(got 3\)"),
    ({"train_metrics": ["acc"]}, r"train_metrics must be an EvalMetric or a list of "
                                 r"EvalMetrics \(got \['acc'\]\)"),
    ({"context": "cpu"}, r"context must be a Context or a list of Contexts.*\(got 'cpu'\)"),
    ({"trainer": "sgd"}, r"trainer must be a gluon.Trainer \(got 'sgd'\)"),
    ({"batch_processor": object()}, r"batch_processor must have fit_batch\(\) and "
                                    r"evaluate_batch\(\) methods"),
])
def test_estimator_refuses_bad_arguments_and_changes_nothing(kwargs, what):
    net = gluon.nn.Dense(2, in_units=3)
    acc = mx.metric.Accuracy()
    args = {"loss": gluon.loss.L2Loss(), "train_metrics": acc}
    args.update(kwargs)
    with pytest.raises((TypeError, ValueError), match=what) as info:
        Estimator(net, **args)
    # MXNet raises ValueError for all of these; a wrong kind is also a TypeError
    assert isinstance(info.value, ValueError)
    assert acc.name == "accuracy"
    with pytest.raises(RuntimeError):
        net.weight.data()                         # not initialised


def test_unavailable_gpu_is_refused():
    with pytest.raises(ValueError, match=r"context must be available here.*\(got gpu\(3\)\)"):
        Estimator(gluon.nn.Dense(2, in_units=3), gluon.loss.L2Loss(), context=mx.gpu(3))


@pytest.mark.parametrize("kwargs, what", [
    ({}, r"exactly one of epochs and batches must be given \(got epochs=None, "
         r"batches=None\)"),
    ({"epochs": 2, "batches": 3}, r"exactly one of epochs and batches must be given \(got "
                                  r"epochs=2, batches=3\)"),
    ({"epochs": 0}, r"epochs must be None or an integer >= 1 \(got 0\)"),
    ({"batches": 1.5}, r"batches must be None or an integer >= 1 \(got 1.5\)"),
    ({"epochs": 1, "val_data": [1, 2]}, r"val_data must be a gluon.data.DataLoader.*"
                                        r"\(got list\)"),
    ({"epochs": 1, "event_handlers": "log"}, r"event_handlers must be an EventHandler or a "
                                             r"list of EventHandlers \(got 'log'\)"),
])
def test_fit_refuses_bad_arguments(kwargs, what):
    net, est = _classifier()
    before = [p.data().asnumpy().copy() for p in net.collect_params().values()]
    with pytest.raises(ValueError, match=what):
        est.fit(programs._data(mx), **kwargs)
    for b, p in zip(before, net.collect_params().values()):
        np.testing.assert_array_equal(p.data().asnumpy(), b)
    assert est.trainer.optimizer.num_update == 0


def test_fit_and_evaluate_refuse_a_data_iterator():
    net, est = _classifier()
    it = mx.io.NDArrayIter(np.zeros((4, 3), np.float32), np.zeros(4, np.float32))
    with pytest.raises(TypeError, match=r"train_data must be a gluon.data.DataLoader .*"
                                        r"\(got NDArrayIter\)"):
        est.fit(it, epochs=1)
    with pytest.raises(ValueError, match=r"val_data must be a gluon.data.DataLoader"):
        est.evaluate(it)


def test_batches_over_an_empty_loader_is_an_error_not_a_hang():
    net, est = _classifier()
    empty = gluon.data.DataLoader(gluon.data.ArrayDataset(mx.nd.zeros((0, 3)),
                                                          mx.nd.zeros((0,))), batch_size=4)
    with pytest.raises(ValueError, match=r"train_data must give at least one batch to "
                                         r"train for batches=3 \(got an empty epoch\)"):
        est.fit(empty, batches=3)


@pytest.mark.parametrize("make, what", [
    (lambda m: LoggingHandler(log_interval=0), r"log_interval must be 'epoch' or an "
                                              r"integer >= 1 \(got 0\)"),
    (lambda m: LoggingHandler(log_interval="batch"), r"\(got 'batch'\)"),
    (lambda m: CheckpointHandler("unused-dir", save_best=True), r"monitor must be one of the "
     r"estimator's train_metrics or val_metrics when save_best is True \(got None\)"),
    (lambda m: CheckpointHandler("unused-dir", batch_period=-1), r"batch_period must be None "
                                                                 r"or an integer >= 0"),
    (lambda m: EarlyStoppingHandler(3), r"monitor must be one of the estimator's "
                                        r"train_metrics or val_metrics \(got 3\)"),
    (lambda m: EarlyStoppingHandler(mx.metric.CompositeEvalMetric([m])),
     r"monitor must be a single metric, not a CompositeEvalMetric"),
    (lambda m: MetricHandler("acc"), r"metrics must be an EvalMetric or a list"),
])
def test_handlers_refuse_bad_arguments(make, what, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=what):
        make(mx.metric.Accuracy())
    assert not (tmp_path / "unused-dir").exists()


def test_resume_refuses_a_finished_run_and_the_wrong_period(tmp_path):
    net, est = _classifier()
    est.fit(programs._data(mx), epochs=2, event_handlers=[CheckpointHandler(str(tmp_path))])
    net, est = _classifier()
    with pytest.raises(ValueError, match=r"must leave epochs to train \(got "
                                         r"'model-epoch1batch6'.*for epochs=2\)"):
        est.fit(programs._data(mx), epochs=2, event_handlers=[
            CheckpointHandler(str(tmp_path), resume_from_checkpoint=True)])
    with pytest.raises(ValueError, match=r"needs the period of the kind fit counts: "
                                         r"batch_period alone"):
        est.fit(programs._data(mx), batches=4, event_handlers=[
            CheckpointHandler(str(tmp_path), resume_from_checkpoint=True)])


def test_module_names():
    assert est_mod.Estimator is Estimator
    for name in est_mod.__all__:
        assert hasattr(est_mod, name), name
    assert set(est_mod.event_handler.__all__) <= set(est_mod.__all__)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        LoggingHandler()                         # no warning for the defaults


def test_verbose_checkpoint_lines(tmp_path):
    net, est = _classifier()
    lines = programs._quiet(est, str(tmp_path))
    est.fit(programs._data(mx), epochs=2, event_handlers=[CheckpointHandler(
        str(tmp_path), verbose=1, save_best=True, monitor=est.train_metrics[1],
        mode="min")])
    saved = [line for line in lines if "CheckpointHandler" in line]
    loss0 = float(MXNET["checkpoints"]["by_epochs"]["log"][3].rsplit(" ", 1)[1])
    assert saved[0] == ("[Epoch 0] CheckpointHandler: trained total 4 batches, saving model "
                        "at <dir> with prefix: model-epoch0batch3")
    assert re.fullmatch(r"\[Epoch 0\] CheckpointHandler: training softmaxcrossentropyloss "
                        r"improved from inf to (\S+), updating best model at <dir> with "
                        r"prefix: model-best", saved[1])
    best0 = saved[1].split(" to ")[1].split(",")[0]
    np.testing.assert_allclose(float(best0), loss0, atol=1e-4)
    # the next line starts from the old best (MXNet 1.9.1 prints the new one twice)
    assert saved[3].startswith(f"[Epoch 1] CheckpointHandler: training "
                               f"softmaxcrossentropyloss improved from {best0} to ")
