"""The Gluon estimator (MXNet 1.9.1's ``gluon.contrib.estimator``): a training loop
over a DataLoader driven by event handlers.

>>> from runtime.gluon.contrib.estimator import Estimator, CheckpointHandler
>>> est = Estimator(net, loss=gluon.loss.SoftmaxCrossEntropyLoss(), trainer=trainer)
>>> est.fit(train_loader, val_data=val_loader, epochs=3,
...         event_handlers=[CheckpointHandler("ckpt")])
"""

from runtime.gluon.contrib.estimator import batch_processor, estimator, event_handler
from runtime.gluon.contrib.estimator.batch_processor import BatchProcessor
from runtime.gluon.contrib.estimator.estimator import Estimator
from runtime.gluon.contrib.estimator.event_handler import (
    BatchBegin, BatchEnd, CheckpointHandler, EarlyStoppingHandler, EpochBegin, EpochEnd,
    GradientUpdateHandler, LoggingHandler, MetricHandler, StoppingHandler, TrainBegin,
    TrainEnd, ValidationHandler)

__all__ = ["Estimator", "BatchProcessor", "TrainBegin", "TrainEnd", "EpochBegin",
           "EpochEnd", "BatchBegin", "BatchEnd", "StoppingHandler", "MetricHandler",
           "ValidationHandler", "LoggingHandler", "CheckpointHandler",
           "EarlyStoppingHandler", "GradientUpdateHandler"]
