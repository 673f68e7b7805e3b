"""``runtime.nn``: the training layer in Gluon's spirit (imperative only).

Blocks: :class:`Block`, :class:`Sequential`, :class:`Dense`, :class:`Embedding`,
:class:`Dropout`, :class:`Activation`, :class:`Flatten`; recurrent layers :class:`RNN`,
:class:`LSTM`, :class:`GRU` (Gluon's ``rnn`` ones, over ``nd.RNN``); parameters:
:class:`Parameter`, :class:`ParameterDict`; submodules :mod:`runtime.nn.init`
(initialisers, MXNet's ``mx.init``) and :mod:`runtime.nn.loss` (Gluon's ``loss``).

>>> from runtime import nn, autograd, nd
>>> net = nn.Sequential()
>>> net.add(nn.Dense(16, activation="relu"), nn.Dense(2))
>>> net.initialize(nn.init.Xavier())
>>> with autograd.record():
...     loss = nn.loss.SoftmaxCrossEntropyLoss()(net(nd.ones((4, 8))), nd.zeros((4,)))
>>> loss.backward()
"""

from runtime.nn import init, loss
from runtime.nn.basic_layers import Activation, Dense, Dropout, Embedding, Flatten
from runtime.nn.block import Block, Sequential
from runtime.nn.rnn_layer import GRU, LSTM, RNN
from runtime.nn.parameter import DeferredInitializationError, Parameter, ParameterDict

__all__ = ["Block", "Sequential", "Dense", "Embedding", "Dropout", "Activation", "Flatten",
           "RNN", "LSTM", "GRU",
           "Parameter", "ParameterDict", "DeferredInitializationError", "init", "loss"]
