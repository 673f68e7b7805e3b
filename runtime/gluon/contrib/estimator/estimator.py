"""The Gluon ``Estimator`` (MXNet 1.9.1's ``gluon.contrib.estimator.estimator``)."""

import copy
import logging
import sys
import warnings

from runtime.context import Context, cpu, gpu, num_gpus
from runtime.metric import Loss as LossMetric
from runtime.gluon.data import DataLoader
from runtime.gluon.loss import Loss
from runtime.gluon.trainer import Trainer
from runtime.gluon.contrib.estimator.batch_processor import BatchProcessor
from runtime.gluon.contrib.estimator.event_handler import (
    BatchBegin, BatchEnd, EpochBegin, EpochEnd, GradientUpdateHandler, LoggingHandler,
    MetricHandler, StoppingHandler, TrainBegin, TrainEnd, ValidationHandler,
    _check_event_handlers)
from runtime.gluon.contrib.estimator.utils import (_check_handler_metric_ref, _check_metrics,
                                                   _KindError, _suggest_metric_for_loss)

__all__ = ["Estimator"]

_EVENTS = ((TrainBegin, "train_begin"), (EpochBegin, "epoch_begin"),
           (BatchBegin, "batch_begin"), (BatchEnd, "batch_end"), (EpochEnd, "epoch_end"),
           (TrainEnd, "train_end"))


def _check_loader(value, what):
    if not isinstance(value, DataLoader):
        raise _KindError(f"{what} must be a gluon.data.DataLoader (wrap a DataIter or arrays "
                         f"in an ArrayDataset and a DataLoader) (got {type(value).__name__})")


def _check_count(value, what):
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                              or value < 1):
        raise ValueError(f"Estimator.fit: {what} must be None or an integer >= 1 (got "
                         f"{value!r})")


class Estimator:
    """A training loop over Gluon DataLoaders driven by event handlers.

    Parameters
    ----------
    net : gluon.Block
        The model to train; initialised here (with ``initializer``) unless it already is.
    loss : gluon.loss.Loss
    train_metrics : EvalMetric or list of EvalMetric, optional
        Default: the metric suggested by the loss (Accuracy for softmax cross-entropy)
        and a :class:`runtime.metric.Loss` named after the loss.  Their names get the
        prefix 'training '.
    val_metrics : EvalMetric or list of EvalMetric, optional
        Default: copies of the training metrics.  Their names get the prefix
        'validation ' (or have 'training' replaced by it).
    initializer : Initializer, optional
    trainer : gluon.Trainer, optional
        Default: SGD with learning rate 0.001 over the net's parameters (with a warning).
    context : Context or list of Context, optional
        Default: gpu(0) when there is a GPU, else cpu().
    val_net : gluon.Block, optional
        The model to validate (sharing the net's parameters); default ``net``.
    val_loss : gluon.loss.Loss, optional
        Default ``loss``.
    batch_processor : BatchProcessor, optional
        Anything with ``fit_batch`` and ``evaluate_batch``; default :class:`BatchProcessor`.

    Attributes
    ----------
    logger : logging.Logger
        This estimator's own logger (level INFO, printing the bare message to
        ``sys.stdout``); its handlers log there.  Add handlers to it as to any logger.
    """

    logger = None

    def __init__(self, net, loss, train_metrics=None, val_metrics=None, initializer=None,
                 trainer=None, context=None, val_net=None, val_loss=None,
                 batch_processor=None):
        # every argument is checked before anything (the net, the metrics) changes
        self.loss = self._check_loss(loss, "loss")
        self.val_loss = self.loss if val_loss is None else self._check_loss(val_loss,
                                                                             "val_loss")
        train_metrics = _check_metrics(train_metrics, "train_metrics")
        val_metrics = _check_metrics(val_metrics, "val_metrics")
        self.context = self._check_context(context)
        if trainer is not None and not isinstance(trainer, Trainer):
            raise _KindError(f"trainer must be a gluon.Trainer (got {trainer!r})")
        self.batch_processor = self._check_batch_processor(batch_processor)

        self.net = net
        self.val_net = net if val_net is None else val_net
        self._train_metrics = self._training_metrics(train_metrics)
        self._val_metrics = self._validation_metrics(val_metrics)
        self.logger = logging.Logger(name="Estimator", level=logging.INFO)
        self.logger.addHandler(logging.StreamHandler(sys.stdout))
        self._initialize(initializer)
        if trainer is None:
            warnings.warn("No trainer specified, default SGD optimizer with learning rate "
                          "0.001 is used.")
            trainer = Trainer(self.net.collect_params(), "sgd", {"learning_rate": 0.001})
        self.trainer = trainer
        self.max_epoch = None
        self.max_batch = None
        self.batch_axis = 0

    # -- the arguments -------------------------------------------------------------------
    @staticmethod
    def _check_loss(loss, what):
        if not isinstance(loss, Loss):
            raise _KindError(f"{what} must be a gluon.loss.Loss (got {loss!r})")
        return loss

    @staticmethod
    def _check_context(context):
        gpus = [gpu(i) for i in range(num_gpus())]
        if not context:
            if len(gpus) > 1:
                warnings.warn("You have multiple GPUs, gpu(0) will be used by default. To "
                              "utilize all your GPUs, specify context as a list of gpus, "
                              "e.g. context=[mx.gpu(0), mx.gpu(1)] ")
            return [gpus[0]] if gpus else [cpu()]
        contexts = [context] if isinstance(context, Context) else context
        if not isinstance(contexts, list) or not all(isinstance(c, Context)
                                                     for c in contexts):
            raise _KindError(f"context must be a Context or a list of Contexts, e.g. "
                             f"mx.cpu() or [mx.gpu(0), mx.gpu(1)] (got {context!r})")
        for ctx in contexts:
            if not str(ctx).startswith("cpu") and ctx not in gpus:
                raise ValueError(f"context must be available here: cpu() or one of "
                                 f"{gpus} (got {ctx})")
        return contexts

    @staticmethod
    def _check_batch_processor(batch_processor):
        if batch_processor is None:
            return BatchProcessor()
        if not (callable(getattr(batch_processor, "fit_batch", None))
                and callable(getattr(batch_processor, "evaluate_batch", None))):
            raise _KindError(f"batch_processor must have fit_batch() and evaluate_batch() "
                             f"methods (got {batch_processor!r})")
        return batch_processor

    def _training_metrics(self, metrics):
        if not metrics:
            suggested = _suggest_metric_for_loss(self.loss)
            metrics = [suggested] if suggested is not None else []
            metrics.append(LossMetric(self.loss.name.rstrip("0123456789")))
        for metric in metrics:
            metric.name = "training " + metric.name
        return metrics

    def _validation_metrics(self, metrics):
        if not metrics:
            metrics = [copy.deepcopy(m) for m in self._train_metrics]
        for metric in metrics:
            if "training" in metric.name:
                metric.name = metric.name.replace("training", "validation")
            else:
                metric.name = "validation " + metric.name
        return metrics

    def _initialize(self, initializer):
        if not self._is_initialized():
            # initialize() leaves the parameters that already have values as they are
            if initializer:
                self.net.initialize(init=initializer, ctx=self.context)
            else:
                self.net.initialize(ctx=self.context)
        elif initializer:
            warnings.warn("Network already fully initialized, skipping initialization. You "
                          "don't need to pass initializer if you already initialized your "
                          "net. You can use net.initialize(init=your_initializer, "
                          "force_reinit=True)to force re-initialize.")

    def _is_initialized(self):
        for param in self.net.collect_params().values():
            try:
                param.list_ctx()
            except RuntimeError:
                return False
        return True

    @property
    def train_metrics(self):
        """The training metrics (a list)."""
        return self._train_metrics

    @property
    def val_metrics(self):
        """The validation metrics (a list)."""
        return self._val_metrics

    # -- the loops -----------------------------------------------------------------------
    def evaluate(self, val_data, batch_axis=0, event_handlers=None):
        """Run ``batch_processor.evaluate_batch`` over ``val_data`` as one epoch of events
        (epoch begin, batch begin/end, epoch end), with a MetricHandler and a
        LoggingHandler of the validation metrics unless ``event_handlers`` has them.

        Parameters
        ----------
        val_data : DataLoader
        batch_axis : int, default 0
        event_handlers : EventHandler or list of EventHandler, optional
        """
        _check_loader(val_data, "val_data")
        handlers = self._validation_handlers(event_handlers)
        for metric in self.val_metrics:
            metric.reset()
        events = self._categorize_handlers(handlers)
        for handler in events["epoch_begin"]:
            handler.epoch_begin(self)
        for batch in val_data:
            for handler in events["batch_begin"]:
                handler.batch_begin(self, batch=batch)
            _, label, pred, loss = self.batch_processor.evaluate_batch(self, batch,
                                                                       batch_axis)
            for handler in events["batch_end"]:
                handler.batch_end(self, batch=batch, pred=pred, label=label, loss=loss)
        for handler in events["epoch_end"]:
            handler.epoch_end(self)

    def fit(self, train_data, val_data=None, epochs=None, event_handlers=None, batches=None,
            batch_axis=0):
        """Train over ``train_data`` for ``epochs`` epochs or ``batches`` batches (exactly
        one of them), calling ``batch_processor.fit_batch`` on each batch and the event
        handlers around it.  Besides ``event_handlers``, a StoppingHandler is always
        added, and a GradientUpdateHandler, a MetricHandler, a LoggingHandler (of the
        training metrics) and, with ``val_data``, a ValidationHandler (every epoch)
        unless ``event_handlers`` has one of the kind.  A batch end or epoch end handler
        returning True stops training (after the epoch end handlers run).

        Parameters
        ----------
        train_data : DataLoader
        val_data : DataLoader, optional
        epochs : int, optional
        event_handlers : EventHandler or list of EventHandler, optional
        batches : int, optional
        batch_axis : int, default 0
            The axis along which a batch is split over the contexts.
        """
        _check_loader(train_data, "train_data")
        if val_data is not None:
            _check_loader(val_data, "val_data")
        _check_count(epochs, "epochs")
        _check_count(batches, "batches")
        if (epochs is None) == (batches is None):
            raise ValueError(f"Estimator.fit: exactly one of epochs and batches must be given "
                             f"(got epochs={epochs!r}, batches={batches!r})")
        handlers = self._training_handlers(val_data, event_handlers, epochs, batches)
        self.max_epoch, self.max_batch, self.batch_axis = epochs, batches, batch_axis
        events = self._categorize_handlers(handlers)

        for handler in events["train_begin"]:
            handler.train_begin(self)
        while True:
            for handler in events["epoch_begin"]:
                handler.epoch_begin(self)
            seen = False
            for batch in train_data:
                seen = True
                for handler in events["batch_begin"]:
                    handler.batch_begin(self, batch=batch)
                _, label, pred, loss = self.batch_processor.fit_batch(self, batch,
                                                                      batch_axis)
                # every handler runs, then any of them may stop
                stops = [handler.batch_end(self, batch=batch, pred=pred, label=label,
                                           loss=loss) for handler in events["batch_end"]]
                if any(stops):
                    break
            stops = [handler.epoch_end(self) for handler in events["epoch_end"]]
            if any(stops):
                break
            if not seen and self.max_batch is not None:
                raise ValueError(f"Estimator.fit: train_data must give at least one batch "
                                 f"to train for batches={self.max_batch} (got an empty "
                                 f"epoch)")
        for handler in events["train_end"]:
            handler.train_end(self)

    # -- the handlers --------------------------------------------------------------------
    def _training_handlers(self, val_data, event_handlers, epochs, batches):
        handlers = _check_event_handlers(event_handlers)

        def missing(kind):
            return not any(isinstance(h, kind) for h in handlers)
        added = [StoppingHandler(epochs, batches)]
        if missing(GradientUpdateHandler):
            added.append(GradientUpdateHandler())
        if missing(MetricHandler):
            added.append(MetricHandler(metrics=self.train_metrics))
        if missing(ValidationHandler) and val_data is not None:
            added.append(ValidationHandler(val_data=val_data, eval_fn=self.evaluate))
        if missing(LoggingHandler):
            added.append(LoggingHandler(metrics=self.train_metrics))
        return self._merge(handlers, added, self.train_metrics + self.val_metrics)

    def _validation_handlers(self, event_handlers):
        handlers = _check_event_handlers(event_handlers)
        added = []
        if not any(isinstance(h, MetricHandler) for h in handlers):
            added.append(MetricHandler(metrics=self.val_metrics))
        if not any(isinstance(h, LoggingHandler) for h in handlers):
            added.append(LoggingHandler(metrics=self.val_metrics))
        return self._merge(handlers, added, self.val_metrics)

    @staticmethod
    def _merge(handlers, added, known_metrics):
        """The user's handlers and the defaults in the order they run.  When both are
        present, the user's must refer only to metrics the defaults update."""
        if handlers and added:
            for handler in handlers + added:
                _check_handler_metric_ref(handler, known_metrics)
        # sorted() is stable: equal priorities keep the user's handlers first
        return sorted(handlers + added, key=lambda h: getattr(h, "priority", 0))

    @staticmethod
    def _categorize_handlers(handlers):
        """{event method name: the handlers taking part in that event, in order}."""
        return {name: [h for h in handlers if isinstance(h, kind)] for kind, name in _EVENTS}
