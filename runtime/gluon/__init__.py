"""Gluon (MXNet 1.x's ``mx.gluon``): blocks, parameters, the Trainer, and the
subpackages ``nn`` (layers), ``rnn`` (recurrent layers), ``loss``, ``data``, ``utils``,
``contrib`` and ``model_zoo``.

>>> import runtime as mx
>>> net = mx.gluon.nn.Sequential()
>>> net.add(mx.gluon.nn.Dense(16, activation="relu"), mx.gluon.nn.Dense(2))
>>> net.initialize(mx.init.Xavier())
>>> trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
"""

from runtime.gluon.parameter import (Constant, DeferredInitializationError, Parameter,
                                     ParameterDict)
from runtime.gluon.block import Block, HybridBlock, SymbolBlock
from runtime.gluon.trainer import StaleGradientError, Trainer
from runtime.gluon import contrib, data, loss, model_zoo, nn, rnn, utils

__all__ = ["Block", "HybridBlock", "SymbolBlock", "Parameter", "Constant", "ParameterDict",
           "DeferredInitializationError", "Trainer", "StaleGradientError", "nn", "rnn", "loss",
           "data", "utils", "contrib", "model_zoo"]
