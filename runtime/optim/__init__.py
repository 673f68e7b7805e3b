"""Training: optimizers (MXNet's ``mx.optimizer``), gluon's ``Trainer`` and
``clip_global_norm``.

>>> from runtime import optim
>>> opt = optim.create("adam", learning_rate=0.01)
>>> trainer = optim.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
>>> trainer.step(batch_size)          # after backward

Updates are the registry operators of runtime/ops/optimizer_op.py (``sgd_update``,
``sgd_mom_update``, ``adam_update``, ``adagrad_update``) called with ``out=weight``: the
weight and the optimizer's state change in place, and row_sparse gradients take lazy
updates (only the rows present are touched) unless ``lazy_update=False``.
"""

from runtime.optim.optimizer import (SGD, AdaGrad, Adam, FactorScheduler, Optimizer, create,
                                     register)
from runtime.optim.trainer import StaleGradientError, Trainer
from runtime.optim.utils import clip_global_norm

__all__ = ["Optimizer", "SGD", "Adam", "AdaGrad", "FactorScheduler", "create", "register",
           "Trainer", "StaleGradientError", "clip_global_norm"]
