"""Gluon's contributed recurrent cells (``gluon.contrib.rnn``): convolutional cells
(``Conv1DRNNCell`` ... ``Conv3DGRUCell``, whose states are feature maps) and the LSTM
cell with a projected state (``LSTMPCell``)."""

from runtime.gluon.contrib.rnn import conv_rnn_cell, rnn_cell
from runtime.gluon.contrib.rnn.conv_rnn_cell import (Conv1DGRUCell, Conv1DLSTMCell,
                                                     Conv1DRNNCell, Conv2DGRUCell,
                                                     Conv2DLSTMCell, Conv2DRNNCell,
                                                     Conv3DGRUCell, Conv3DLSTMCell,
                                                     Conv3DRNNCell)
from runtime.gluon.contrib.rnn.rnn_cell import LSTMPCell, VariationalDropoutCell

__all__ = ["Conv1DRNNCell", "Conv2DRNNCell", "Conv3DRNNCell", "Conv1DLSTMCell",
           "Conv2DLSTMCell", "Conv3DLSTMCell", "Conv1DGRUCell", "Conv2DGRUCell",
           "Conv3DGRUCell", "LSTMPCell", "VariationalDropoutCell", "conv_rnn_cell",
           "rnn_cell"]
