"""Gluon's recurrent layers (``mx.gluon.rnn``): ``RNN``, ``LSTM`` and ``GRU`` over
``nd.RNN``, with Gluon 1.x's parameter names."""

from runtime.gluon.rnn.rnn_layer import GRU, LSTM, RNN

__all__ = ["RNN", "LSTM", "GRU"]
