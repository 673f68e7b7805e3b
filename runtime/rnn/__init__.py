"""MXNet 1.x's ``mx.rnn``: symbolic RNN cells (:mod:`runtime.rnn.rnn_cell`), the
bucketing sentence iterator (:mod:`runtime.rnn.io`) and RNN checkpoints
(:mod:`runtime.rnn.rnn`), for the Module API.  Gluon's cells are ``runtime.gluon.rnn``."""

from runtime.rnn import io, rnn, rnn_cell
from runtime.rnn.io import BucketSentenceIter, encode_sentences
from runtime.rnn.rnn import do_rnn_checkpoint, load_rnn_checkpoint, save_rnn_checkpoint
from runtime.rnn.rnn_cell import (BaseConvRNNCell, BaseRNNCell, BidirectionalCell,
                                  ConvGRUCell, ConvLSTMCell, ConvRNNCell, DropoutCell,
                                  FusedRNNCell, GRUCell, LSTMCell, ModifierCell,
                                  ResidualCell, RNNCell, RNNParams, SequentialRNNCell,
                                  ZoneoutCell)

__all__ = ["io", "rnn", "rnn_cell", "BucketSentenceIter", "encode_sentences",
           "save_rnn_checkpoint", "load_rnn_checkpoint", "do_rnn_checkpoint",
           "RNNParams", "BaseRNNCell", "RNNCell", "LSTMCell", "GRUCell", "FusedRNNCell",
           "SequentialRNNCell", "DropoutCell", "ModifierCell", "ZoneoutCell",
           "ResidualCell", "BidirectionalCell", "BaseConvRNNCell", "ConvRNNCell",
           "ConvLSTMCell", "ConvGRUCell"]
