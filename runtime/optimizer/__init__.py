"""Optimizers (MXNet 1.x's ``mx.optimizer``).

>>> import runtime as mx
>>> opt = mx.optimizer.create("adam", learning_rate=0.01)
>>> updater = mx.optimizer.get_updater(opt)
>>> updater(0, grad, weight)          # one update of weight 0, state made on first use

Updates are the registry operators of runtime/ops (``sgd_update``, ``sgd_mom_update``,
``adam_update``, ``adagrad_update``, ``nag_mom_update``, ``rmsprop_update``,
``rmspropalex_update``, ``ftml_update``, ``ftrl_update``, ``signum_update``,
``signsgd_update``, and LAMB's ``lamb_update_phase1``/``lamb_update_phase2`` with their
``mp_`` forms) called with ``out=weight``: the weight and the optimizer's state
change in place, and row_sparse gradients take lazy updates (only the rows present are
touched) unless ``lazy_update=False`` (SGD, Adam, AdaGrad; the updates that MXNet has no
row_sparse kernel for take the standard update).  Adamax,
AdaDelta, Nadam, SGLD and DCASGD, which have no update operator in MXNet either, are
NDArray formulas (a row_sparse gradient counts as its dense form); LARS and LBSGD scale
SGD's learning rate.
"""

from runtime.optimizer.optimizer import (DCASGD, FTML, LAMB, LARS, LBSGD, NAG, SGD,
                                         SGLD, AdaDelta, AdaGrad, Adam, Adamax, Ftrl,
                                         Nadam, Optimizer, RMSProp, Signum, Updater, ccSGD,
                                         create, get_updater, register)

__all__ = ["Optimizer", "SGD", "ccSGD", "Adam", "AdaGrad", "NAG", "RMSProp", "Ftrl", "Signum",
           "Adamax", "AdaDelta", "Nadam", "SGLD", "DCASGD", "LAMB", "FTML", "LARS", "LBSGD",
           "Updater", "get_updater", "create", "register"]
