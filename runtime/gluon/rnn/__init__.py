"""Gluon's recurrent layers and cells (``mx.gluon.rnn``): the fused ``RNN``, ``LSTM``
and ``GRU`` over ``nd.RNN``, and the cells (``RNNCell``, ``LSTMCell``, ``GRUCell``,
``SequentialRNNCell``, ``BidirectionalCell``, ``DropoutCell``, ``ZoneoutCell``,
``ResidualCell`` ...) with Gluon 1.x's parameter names."""

from runtime.gluon.rnn.rnn_cell import (BidirectionalCell, DropoutCell, GRUCell,
                                        HybridRecurrentCell, HybridSequentialRNNCell,
                                        LSTMCell, ModifierCell, RecurrentCell, ResidualCell,
                                        RNNCell, SequentialRNNCell, ZoneoutCell)
from runtime.gluon.rnn.rnn_layer import GRU, LSTM, RNN

__all__ = ["RNN", "LSTM", "GRU", "RecurrentCell", "HybridRecurrentCell", "RNNCell",
           "LSTMCell", "GRUCell", "SequentialRNNCell", "HybridSequentialRNNCell",
           "DropoutCell", "ModifierCell", "ZoneoutCell", "ResidualCell", "BidirectionalCell"]
