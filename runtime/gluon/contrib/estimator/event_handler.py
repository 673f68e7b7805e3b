"""The estimator's event handlers (MXNet 1.9.1's ``gluon.contrib.estimator.event_handler``).

A handler takes part in an event by deriving from its class (``TrainBegin``, ``EpochBegin``,
``BatchBegin``, ``BatchEnd``, ``EpochEnd``, ``TrainEnd``) and defining the method of that
name; :class:`~runtime.gluon.contrib.estimator.Estimator` calls the handlers of an event in
ascending ``priority`` (0 when a handler has none; equal priorities keep the order given,
the user's handlers before the defaults).  ``batch_end`` and ``epoch_end`` return True to
stop training.  The defaults' priorities order one step: GradientUpdateHandler (-2000)
steps the trainer, MetricHandler and ValidationHandler (-1000) update and validate, the
user's handlers and StoppingHandler (0) read them, LoggingHandler (inf) logs last.
"""

import os
import re
import time
import warnings

import numpy as np

from runtime.metric import CompositeEvalMetric, EvalMetric
from runtime.metric import Loss as LossMetric
from runtime.gluon.contrib.estimator.utils import _check_metrics, _KindError, _monitor_op

__all__ = ["TrainBegin", "TrainEnd", "EpochBegin", "EpochEnd", "BatchBegin", "BatchEnd",
           "StoppingHandler", "MetricHandler", "ValidationHandler", "LoggingHandler",
           "CheckpointHandler", "EarlyStoppingHandler", "GradientUpdateHandler"]


class EventHandler:
    """Base of the event handlers."""


def _check_event_handlers(handlers):
    """``handlers`` (None, an EventHandler, or a list of them) as a new list."""
    if isinstance(handlers, EventHandler):
        return [handlers]
    if handlers is None:
        return []
    if not isinstance(handlers, (list, tuple)) or not all(
            isinstance(h, EventHandler) for h in handlers):
        raise _KindError(f"event_handlers must be an EventHandler or a list of "
                         f"EventHandlers (got {handlers!r})")
    return list(handlers)


def _check_period(value, what, who):
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                              or value < 0):
        raise ValueError(f"{who}: {what} must be None or an integer >= 0 (got {value!r})")


class TrainBegin(EventHandler):
    def train_begin(self, estimator, *args, **kwargs):
        """Called once before the first epoch."""


class TrainEnd(EventHandler):
    def train_end(self, estimator, *args, **kwargs):
        """Called once after the last epoch."""


class EpochBegin(EventHandler):
    def epoch_begin(self, estimator, *args, **kwargs):
        """Called before each pass over the data."""


class EpochEnd(EventHandler):
    def epoch_end(self, estimator, *args, **kwargs):
        """Called after each pass over the data; True stops training."""
        return False


class BatchBegin(EventHandler):
    def batch_begin(self, estimator, *args, **kwargs):
        """Called before each batch, with ``batch``."""


class BatchEnd(EventHandler):
    def batch_end(self, estimator, *args, **kwargs):
        """Called after each batch, with ``batch``, ``pred``, ``label`` and ``loss``;
        True stops training."""
        return False


class StoppingHandler(TrainBegin, BatchEnd, EpochEnd):
    """Stops training after ``max_epoch`` epochs or ``max_batch`` batches (those of the
    estimator's ``fit`` call, read at train begin)."""

    def __init__(self, max_epoch=None, max_batch=None):
        self.max_epoch = max_epoch
        self.max_batch = max_batch
        self.current_batch = 0
        self.current_epoch = 0
        self.stop_training = False

    def train_begin(self, estimator, *args, **kwargs):
        self.max_epoch = estimator.max_epoch
        self.max_batch = estimator.max_batch
        self.current_batch = 0
        self.current_epoch = 0
        self.stop_training = False

    def batch_end(self, estimator, *args, **kwargs):
        self.current_batch += 1
        if self.current_batch == self.max_batch:
            self.stop_training = True
        return self.stop_training

    def epoch_end(self, estimator, *args, **kwargs):
        self.current_epoch += 1
        if self.current_epoch == self.max_epoch:
            self.stop_training = True
        return self.stop_training


class MetricHandler(EpochBegin, BatchEnd):
    """Resets ``metrics`` at each epoch begin and updates them at each batch end: a
    :class:`runtime.metric.Loss` with the batch's losses, the others with its labels and
    predictions.

    Parameters
    ----------
    metrics : EvalMetric or list of EvalMetric
    priority : number, default -1000
        Before the handlers that read the metrics.
    """

    def __init__(self, metrics, priority=-1000):
        self.metrics = _check_metrics(metrics)
        self.priority = priority

    def epoch_begin(self, estimator, *args, **kwargs):
        for metric in self.metrics:
            metric.reset()

    def batch_end(self, estimator, *args, **kwargs):
        pred, label, loss = kwargs["pred"], kwargs["label"], kwargs["loss"]
        for metric in self.metrics:
            if isinstance(metric, LossMetric):
                metric.update(0, loss)
            else:
                metric.update(label, pred)


class ValidationHandler(TrainBegin, BatchEnd, EpochEnd):
    """Runs ``eval_fn(val_data=..., batch_axis=..., event_handlers=...)`` every
    ``epoch_period`` epochs and every ``batch_period`` batches (None or 0: never).

    Parameters
    ----------
    val_data : DataLoader
    eval_fn : callable
        Usually the estimator's ``evaluate``.
    epoch_period : int or None, default 1
    batch_period : int or None, default None
    priority : number, default -1000
        Before the handlers that read the validation metrics.
    event_handlers : EventHandler or list of EventHandler, optional
        Passed on to ``eval_fn``.
    """

    def __init__(self, val_data, eval_fn, epoch_period=1, batch_period=None, priority=-1000,
                 event_handlers=None):
        if not callable(eval_fn):
            raise _KindError(f"ValidationHandler: eval_fn must be callable (got "
                             f"{eval_fn!r})")
        _check_period(epoch_period, "epoch_period", "ValidationHandler")
        _check_period(batch_period, "batch_period", "ValidationHandler")
        self.val_data = val_data
        self.eval_fn = eval_fn
        self.epoch_period = epoch_period
        self.batch_period = batch_period
        self.current_batch = 0
        self.current_epoch = 0
        self.priority = priority
        self.event_handlers = event_handlers

    def train_begin(self, estimator, *args, **kwargs):
        self.current_batch = 0
        self.current_epoch = 0

    def _validate(self, estimator):
        self.eval_fn(val_data=self.val_data, batch_axis=estimator.batch_axis,
                     event_handlers=self.event_handlers)

    def batch_end(self, estimator, *args, **kwargs):
        self.current_batch += 1
        if self.batch_period and self.current_batch % self.batch_period == 0:
            self._validate(estimator)

    def epoch_end(self, estimator, *args, **kwargs):
        self.current_epoch += 1
        if self.epoch_period and self.current_epoch % self.epoch_period == 0:
            self._validate(estimator)


def _metric_text(metrics):
    return "".join("%s: %.4f, " % metric.get() for metric in metrics)


class LoggingHandler(TrainBegin, TrainEnd, EpochBegin, EpochEnd, BatchBegin, BatchEnd):
    """Logs training to ``estimator.logger`` in MXNet 1.9.1's lines: the optimizer and
    learning rate at train begin, each epoch's begin and end (time and ``metrics``), with
    an integer ``log_interval`` also every ``log_interval``-th batch (samples so far, the
    time since the last such line, ``metrics``), and the totals at train end.  A handler
    whose metrics are not training ones (no name holds 'training') logs a validation run:
    'Validation Begin' and its metrics.

    Parameters
    ----------
    log_interval : 'epoch' or int >= 1, default 'epoch'
    metrics : EvalMetric or list of EvalMetric, optional
    priority : number, default inf
        After every other handler, so that what it logs is up to date.
    """

    def __init__(self, log_interval="epoch", metrics=None, priority=np.inf):
        if not (log_interval == "epoch" if isinstance(log_interval, str) else
                isinstance(log_interval, int) and not isinstance(log_interval, bool)
                and log_interval >= 1):
            raise ValueError(f"LoggingHandler: log_interval must be 'epoch' or an integer "
                             f">= 1 (got {log_interval!r})")
        self.metrics = _check_metrics(metrics)
        self.log_interval = log_interval
        self.priority = priority
        self.batch_index = 0
        self.current_epoch = 0
        self.processed_samples = 0
        self.log_interval_time = 0
        self.train_start = self.epoch_start = self.batch_start = time.time()

    def train_begin(self, estimator, *args, **kwargs):
        self.train_start = time.time()
        trainer = estimator.trainer
        estimator.logger.info("Training begin: using optimizer %s with current learning "
                              "rate %.4f ", type(trainer.optimizer).__name__,
                              trainer.learning_rate)
        if estimator.max_epoch:
            estimator.logger.info("Train for %d epochs.", estimator.max_epoch)
        else:
            estimator.logger.info("Train for %d batches.", estimator.max_batch)
        self.current_epoch = 0
        self.batch_index = 0
        self.processed_samples = 0
        self.log_interval_time = 0

    def train_end(self, estimator, *args, **kwargs):
        seconds = time.time() - self.train_start
        msg = "Train finished using total %ds with %d epochs. " % (seconds, self.current_epoch)
        estimator.logger.info((msg + _metric_text(self.metrics)).rstrip(", "))

    def batch_begin(self, estimator, *args, **kwargs):
        if self.log_interval != "epoch":
            self.batch_start = time.time()

    def batch_end(self, estimator, *args, **kwargs):
        if self.log_interval != "epoch":
            self.log_interval_time += time.time() - self.batch_start
            self.processed_samples += kwargs["batch"][0].shape[0]
            if self.batch_index % self.log_interval == 0:
                msg = "[Epoch %d][Batch %d][Samples %s] time/interval: %.3fs " % (
                    self.current_epoch, self.batch_index, self.processed_samples,
                    self.log_interval_time)
                self.log_interval_time = 0
                estimator.logger.info((msg + _metric_text(self.metrics)).rstrip(", "))
        self.batch_index += 1

    def epoch_begin(self, estimator, *args, **kwargs):
        self.epoch_start = time.time()
        if any("training" in metric.name for metric in self.metrics):
            estimator.logger.info("[Epoch %d] Begin, current learning rate: %.4f",
                                  self.current_epoch, estimator.trainer.learning_rate)
        else:
            estimator.logger.info("Validation Begin")

    def epoch_end(self, estimator, *args, **kwargs):
        msg = "[Epoch %d] Finished in %.3fs, " % (self.current_epoch,
                                                  time.time() - self.epoch_start)
        estimator.logger.info((msg + _metric_text(self.metrics)).rstrip(", "))
        self.current_epoch += 1
        self.batch_index = 0


class CheckpointHandler(TrainBegin, BatchEnd, EpochEnd):
    """Saves the network's parameters and the trainer's states every ``epoch_period``
    epochs and every ``batch_period`` batches, as
    ``<model_dir>/<model_prefix>-epoch<E>batch<B>.params`` and ``.states`` (E the epoch,
    B the batches done at an epoch's end, the batch's index at a batch period), keeping
    the newest ``max_checkpoints``; with ``save_best`` also
    ``<model_prefix>-best.params/.states`` whenever ``monitor`` improves.  After the first
    batch, a hybridized network's graph goes to ``<model_prefix>-symbol.json``.  Every file
    is written to a temporary name in ``model_dir`` and renamed into place.

    Parameters
    ----------
    model_dir : str
        Made if missing.
    model_prefix : str, default 'model'
    monitor : EvalMetric, optional
        One of the estimator's metrics; required by ``save_best``.
    verbose : int, default 0
        1 logs every save.
    save_best : bool, default False
    mode : {'auto', 'min', 'max'}, default 'auto'
        Which way ``monitor`` improves; 'auto': up for accuracy and F1, down otherwise.
    epoch_period : int or None, default 1
    batch_period : int or None, default None
    max_checkpoints : int, default 5
        The best checkpoint is not counted.
    resume_from_checkpoint : bool, default False
        Load the newest checkpoint of ``model_prefix`` in ``model_dir`` at train begin
        and train only the epochs (or batches) left; the periods must be of the kind the
        training counts (epoch_period alone when fit counts epochs, batch_period alone
        when it counts batches).
    """

    def __init__(self, model_dir, model_prefix="model", monitor=None, verbose=0,
                 save_best=False, mode="auto", epoch_period=1, batch_period=None,
                 max_checkpoints=5, resume_from_checkpoint=False):
        who = "CheckpointHandler"
        if save_best and not isinstance(monitor, EvalMetric):
            raise ValueError(f"{who}: monitor must be one of the estimator's train_metrics or "
                             f"val_metrics when save_best is True (got {monitor!r})")
        _check_period(epoch_period, "epoch_period", who)
        _check_period(batch_period, "batch_period", who)
        _check_period(max_checkpoints, "max_checkpoints", who)
        if max_checkpoints is None:
            raise ValueError(f"{who}: max_checkpoints must be an integer >= 0 (got None)")
        os.makedirs(model_dir, exist_ok=True)
        self.model_dir = model_dir
        self.model_prefix = model_prefix
        self.monitor = monitor
        self.verbose = verbose
        self.save_best = save_best
        self.epoch_period = epoch_period
        self.batch_period = batch_period
        self.max_checkpoints = max_checkpoints
        self.resume_from_checkpoint = resume_from_checkpoint
        self.current_batch = 0
        self.current_epoch = 0
        self.trained_epoch = -1
        self.trained_batch = -1
        self.saved_checkpoints = []
        if save_best:
            self.monitor_op, self.best = _monitor_op(monitor, mode, who)

    def train_begin(self, estimator, *args, **kwargs):
        self.current_epoch = 0
        self.current_batch = 0
        if self.save_best:
            self.best = -np.inf if self.monitor_op is np.greater else np.inf
        if self.resume_from_checkpoint:
            by_epochs = bool(estimator.max_epoch)
            if (bool(self.epoch_period) != by_epochs or bool(self.batch_period) == by_epochs):
                raise ValueError(
                    f"CheckpointHandler: resume_from_checkpoint needs the period of the kind "
                    f"fit counts: {'epoch_period alone' if by_epochs else 'batch_period alone'}"
                    f" (got epoch_period={self.epoch_period!r}, "
                    f"batch_period={self.batch_period!r})")
            self._resume(estimator)

    def batch_end(self, estimator, *args, **kwargs):
        if self.current_batch == 0:
            self._save_symbol(estimator)
        if self.batch_period and (self.current_batch + 1) % self.batch_period == 0:
            self._save_checkpoint(estimator)
        self.current_batch += 1

    def epoch_end(self, estimator, *args, **kwargs):
        if self.epoch_period and (self.current_epoch + 1) % self.epoch_period == 0:
            self._save_checkpoint(estimator)
        self.current_epoch += 1

    def _numbers(self, estimator):
        """(epoch, batch) of the checkpoint saved now, counted on from a resumed one."""
        epoch, batch = self.current_epoch, self.current_batch
        if self.trained_epoch >= 0:
            epoch += self.trained_epoch + 1
            # at an epoch's end the batch count is already up to date; at a batch period
            # the name holds the batch's index
            batch += self.trained_batch + (0 if estimator.max_epoch else 1)
        return epoch, batch

    def _save_checkpoint(self, estimator):
        epoch, batch = self._numbers(estimator)
        prefix = "%s-epoch%dbatch%d" % (self.model_prefix, epoch, batch)
        self._save_params_and_trainer(estimator, prefix)
        self.saved_checkpoints.append(prefix)
        if self.verbose > 0:
            estimator.logger.info("[Epoch %d] CheckpointHandler: trained total %d batches, "
                                  "saving model at %s with prefix: %s", self.current_epoch,
                                  self.current_batch + 1, self.model_dir, prefix)
        while len(self.saved_checkpoints) > self.max_checkpoints:
            old = self.saved_checkpoints.pop(0)
            for suffix in (".params", ".states"):
                path = os.path.join(self.model_dir, old + suffix)
                if os.path.exists(path):
                    os.remove(path)
        if self.save_best:
            self._save_best(estimator)

    def _save_best(self, estimator):
        name, value = self.monitor.get()
        if np.isnan(value):
            warnings.warn(f"CheckpointHandler: skipping the best model: monitor {name!r} has "
                          f"no value; it must be one of the estimator's train_metrics or "
                          f"val_metrics", RuntimeWarning)
            return
        if self.monitor_op(value, self.best):
            prefix = self.model_prefix + "-best"
            self._save_params_and_trainer(estimator, prefix)
            if self.verbose > 0:
                estimator.logger.info("[Epoch %d] CheckpointHandler: %s improved from %0.5f "
                                      "to %0.5f, updating best model at %s with prefix: %s",
                                      self.current_epoch, name, self.best, value,
                                      self.model_dir, prefix)
            self.best = value
        elif self.verbose > 0:
            estimator.logger.info("[Epoch %d] CheckpointHandler: %s did not improve from "
                                  "%0.5f, skipping updating best model", self.current_epoch,
                                  name, self.best)

    def _save_symbol(self, estimator):
        path = os.path.join(self.model_dir, self.model_prefix + "-symbol.json")
        # a HybridBlock keeps its traced graphs, (inputs, output symbol, ...), in _cache
        # once hybridized and called, as Gluon keeps _cached_graph
        cache = getattr(estimator.net, "_cache", None)
        if cache:
            graph = next(iter(cache.values()))[1]
            graph.save(path)
        else:
            estimator.logger.info(
                "Model architecture(symbol file) is not saved, please use HybridBlock to "
                "construct your model, and call net.hybridize() before passing to Estimator "
                "in order to save model architecture as %s.", path)

    def _save_params_and_trainer(self, estimator, prefix):
        base = os.path.join(self.model_dir, prefix)
        # both write beside the file and rename it into place once complete
        estimator.net.save_parameters(base + ".params")
        estimator.trainer.save_states(base + ".states")

    def _checkpoints(self):
        """[(epoch, batch, prefix)] of this handler's checkpoints in model_dir, oldest
        first."""
        pattern = re.compile(re.escape(self.model_prefix) + r"-epoch(\d+)batch(\d+)\.params")
        found = []
        for fname in os.listdir(self.model_dir):
            m = pattern.fullmatch(fname)
            if m:
                found.append((int(m.group(1)), int(m.group(2)), fname[:-len(".params")]))
        return sorted(found)

    def _resume(self, estimator):
        found = self._checkpoints()
        if not found:
            self.trained_epoch = self.trained_batch = -1
            if estimator.max_batch:
                todo = "%d batches" % estimator.max_batch
            else:
                todo = "%d epochs" % estimator.max_epoch
            estimator.logger.info("CheckpointHandler: No checkpoint found, training from "
                                  "scratch for " + todo)
            return
        epoch, batch, prefix = found[-1]
        if estimator.max_epoch and epoch >= estimator.max_epoch - 1:
            raise ValueError(f"CheckpointHandler: the checkpoint to resume from must leave "
                             f"epochs to train (got {prefix!r} in {self.model_dir!r} for "
                             f"epochs={estimator.max_epoch}); give "
                             f"resume_from_checkpoint=False to train from scratch")
        if estimator.max_batch and batch >= estimator.max_batch - 1:
            raise ValueError(f"CheckpointHandler: the checkpoint to resume from must leave "
                             f"batches to train (got {prefix!r} in {self.model_dir!r} for "
                             f"batches={estimator.max_batch}); give "
                             f"resume_from_checkpoint=False to train from scratch")
        base = os.path.join(self.model_dir, prefix)
        if not os.path.exists(base + ".states"):
            raise ValueError(f"CheckpointHandler: checkpoint {prefix!r} in "
                             f"{self.model_dir!r} must have a .states file beside its "
                             f".params (got none)")
        estimator.net.load_parameters(base + ".params", ctx=estimator.context)
        estimator.trainer.load_states(base + ".states")
        self.trained_epoch, self.trained_batch = epoch, batch
        msg = ("CheckpointHandler: Checkpoint resumed from epoch %d batch %d, continue to "
               "train for " % (epoch, batch))
        if estimator.max_epoch:
            estimator.max_epoch -= epoch + 1
            msg += "%d epochs " % estimator.max_epoch
        if estimator.max_batch:
            estimator.max_batch -= batch + 1
            msg += "%d batches " % estimator.max_batch
        # the checkpoints already there count toward max_checkpoints
        self.saved_checkpoints = [p for _, _, p in found]
        estimator.logger.warning(msg)


class EarlyStoppingHandler(TrainBegin, EpochEnd, TrainEnd):
    """Stops training when ``monitor`` has not improved by more than ``min_delta`` for
    ``patience`` epochs in a row (checked at each epoch's end).

    Parameters
    ----------
    monitor : EvalMetric
        One of the estimator's metrics (not a CompositeEvalMetric).
    min_delta : float, default 0
    patience : int, default 0
    mode : {'auto', 'min', 'max'}, default 'auto'
        Which way ``monitor`` improves; 'auto': up for accuracy and F1, down otherwise.
    baseline : float, optional
        The value to beat first (else the first epoch's value is an improvement).
    """

    def __init__(self, monitor, min_delta=0, patience=0, mode="auto", baseline=None):
        if not isinstance(monitor, EvalMetric):
            raise _KindError(f"EarlyStoppingHandler: monitor must be one of the estimator's "
                             f"train_metrics or val_metrics (got {monitor!r})")
        if isinstance(monitor, CompositeEvalMetric):
            raise ValueError(f"EarlyStoppingHandler: monitor must be a single metric, not a "
                             f"CompositeEvalMetric (got {monitor.name!r})")
        self.monitor = monitor
        self.baseline = baseline
        self.patience = patience
        self.monitor_op, _ = _monitor_op(monitor, mode, "EarlyStoppingHandler")
        # compare value - min_delta with the best: the sign makes it a margin either way
        self.min_delta = min_delta if self.monitor_op is np.greater else -min_delta
        self.wait = 0
        self.stopped_epoch = 0
        self.current_epoch = 0
        self.stop_training = False
        self.best = None

    def train_begin(self, estimator, *args, **kwargs):
        self.wait = 0
        self.stopped_epoch = 0
        self.current_epoch = 0
        self.stop_training = False
        if self.baseline is not None:
            self.best = self.baseline
        else:
            self.best = -np.inf if self.monitor_op is np.greater else np.inf

    def epoch_end(self, estimator, *args, **kwargs):
        name, value = self.monitor.get()
        if np.isnan(value):
            warnings.warn(f"EarlyStoppingHandler: monitor {name!r} has no value; it must be "
                          f"one of the estimator's train_metrics or val_metrics",
                          RuntimeWarning)
        elif self.monitor_op(value - self.min_delta, self.best):
            self.best = value
            self.wait = 0
        else:
            self.wait += 1
            if self.wait >= self.patience:
                self.stopped_epoch = self.current_epoch
                self.stop_training = True
        self.current_epoch += 1
        return self.stop_training

    def train_end(self, estimator, *args, **kwargs):
        if self.stop_training:
            estimator.logger.info("[Epoch %d] EarlyStoppingHandler: early stopping due to %s "
                                  "not improving", self.stopped_epoch, self.monitor.get()[0])


class GradientUpdateHandler(BatchEnd):
    """Steps the estimator's trainer at each batch end, over as many samples as the
    batch's losses have rows.

    Parameters
    ----------
    priority : number, default -2000
        Before every other handler.
    """

    def __init__(self, priority=-2000):
        self.priority = priority

    def batch_end(self, estimator, *args, **kwargs):
        loss = kwargs["loss"]
        losses = loss if isinstance(loss, (list, tuple)) else [loss]
        estimator.trainer.step(sum(l.shape[0] for l in losses))
