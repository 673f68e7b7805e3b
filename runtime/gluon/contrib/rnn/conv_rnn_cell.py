"""Convolutional recurrent cells (Gluon's ``gluon.contrib.rnn.conv_rnn_cell``): the
RNN, LSTM and GRU cells with their two matrix products replaced by convolutions, so that
inputs and states are feature maps (ConvLSTM, Shi et al. 2015).

A cell for ``d`` spatial dimensions (``Conv1D*`` 'NCW', ``Conv2D*`` 'NCHW', ``Conv3D*``
'NCDHW') takes ``input_shape`` = (C, S1, .., Sd) of one step (C may be 0: taken from
the first input).  ``i2h`` convolves the input with ``i2h_kernel``, ``i2h_pad`` and
``i2h_dilate`` (stride 1), which fixes the state's spatial shape; ``h2h`` convolves the
state with ``h2h_kernel`` (odd sizes only) and ``h2h_dilate``, padded so that the shape
is kept.  Parameters: ``i2h_weight`` (G*hidden_channels, C, *i2h_kernel), ``h2h_weight``
(G*hidden_channels, hidden_channels, *h2h_kernel), ``i2h_bias`` and ``h2h_bias``
(G*hidden_channels,), G the number of gates (1, 4, 3) in Gluon's gate order.
"""

import numbers

from runtime.gluon.nn.basic_layers import _positive_int
from runtime.gluon.rnn.rnn_cell import GRUCell, HybridRecurrentCell, LSTMCell, RNNCell

__all__ = ["Conv1DRNNCell", "Conv2DRNNCell", "Conv3DRNNCell", "Conv1DLSTMCell",
           "Conv2DLSTMCell", "Conv3DLSTMCell", "Conv1DGRUCell", "Conv2DGRUCell",
           "Conv3DGRUCell"]

_LAYOUTS = {1: "NCW", 2: "NCHW", 3: "NCDHW"}


def _tuple(layer, name, value, dims, minimum):
    """``value`` (an int or ``dims`` ints) as a tuple of ``dims`` ints >= ``minimum``."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        value = (value,) * dims
    if not isinstance(value, (tuple, list)) or len(value) != dims:
        raise ValueError(f"{layer}: {name} must be an integer or {dims} integers (got "
                         f"{value!r})")
    return tuple(_positive_int(layer, name, v, minimum=minimum) for v in value)


class _ConvCell(HybridRecurrentCell):
    """The shared parameters, shapes and convolutions of the convolutional cells; put
    before a gated cell class among a cell's bases, it replaces that cell's two matrix
    products (``_projections``) by convolutions and keeps its step."""

    _dims = 0
    _recurrent_activation = "sigmoid"

    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad,
                 i2h_dilate, h2h_dilate, i2h_weight_initializer, h2h_weight_initializer,
                 i2h_bias_initializer, h2h_bias_initializer, conv_layout, activation,
                 prefix, params):
        HybridRecurrentCell.__init__(self, prefix=prefix, params=params)
        layer, d = type(self).__name__, self._dims
        if conv_layout != _LAYOUTS[d]:
            raise ValueError(f"{layer}: conv_layout must be {_LAYOUTS[d]!r} (got "
                             f"{conv_layout!r})")
        if not isinstance(input_shape, (tuple, list)) or len(input_shape) != d + 1:
            raise ValueError(f"{layer}: input_shape must be (channels, {d} spatial sizes) "
                             f"(got {input_shape!r})")
        channels = _positive_int(layer, "input_shape[0]", input_shape[0], minimum=0)
        spatial = tuple(_positive_int(layer, "input_shape", s) for s in input_shape[1:])
        self._hidden_size = _positive_int(layer, "hidden_channels", hidden_channels)
        self._i2h_kernel = _tuple(layer, "i2h_kernel", i2h_kernel, d, 1)
        self._h2h_kernel = _tuple(layer, "h2h_kernel", h2h_kernel, d, 1)
        if any(k % 2 == 0 for k in self._h2h_kernel):
            raise ValueError(f"{layer}: h2h_kernel must be odd sizes (the state keeps its "
                             f"shape) (got {self._h2h_kernel!r})")
        self._i2h_pad = _tuple(layer, "i2h_pad", i2h_pad, d, 0)
        self._i2h_dilate = _tuple(layer, "i2h_dilate", i2h_dilate, d, 1)
        self._h2h_dilate = _tuple(layer, "h2h_dilate", h2h_dilate, d, 1)
        self._h2h_pad = tuple(dl * (k - 1) // 2
                              for k, dl in zip(self._h2h_kernel, self._h2h_dilate))
        self._state_spatial = tuple(
            s + 2 * p - dl * (k - 1)
            for s, p, dl, k in zip(spatial, self._i2h_pad, self._i2h_dilate, self._i2h_kernel))
        if any(s < 1 for s in self._state_spatial):
            raise ValueError(f"{layer}: i2h_kernel {self._i2h_kernel} (dilated "
                             f"{self._i2h_dilate}, padded {self._i2h_pad}) must fit the "
                             f"input's spatial shape {spatial}")
        self._input_shape = (channels,) + spatial
        self._conv_layout = conv_layout
        self._activation = activation
        g = self._gates * self._hidden_size
        self.i2h_weight = self.params.get("i2h_weight", shape=(g, channels) + self._i2h_kernel,
                                          init=i2h_weight_initializer,
                                          allow_deferred_init=True)
        self.h2h_weight = self.params.get(
            "h2h_weight", shape=(g, self._hidden_size) + self._h2h_kernel,
            init=h2h_weight_initializer, allow_deferred_init=True)
        self.i2h_bias = self.params.get("i2h_bias", shape=(g,), init=i2h_bias_initializer,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get("h2h_bias", shape=(g,), init=h2h_bias_initializer,
                                        allow_deferred_init=True)

    def state_info(self, batch_size=0):
        shape = (batch_size, self._hidden_size) + self._state_spatial
        # as many states as the gated cell has (LSTM: h and c), each a feature map
        return [{"shape": shape, "__layout__": self._conv_layout}] * \
            len(super().state_info(batch_size))

    def _check(self, inputs, states):
        want = self._input_shape[1:]
        if getattr(inputs, "ndim", None) != self._dims + 2 or inputs.shape[2:] != want:
            raise ValueError(f"{type(self).__name__}: inputs must be (batch, channels) + "
                             f"{want} (got {getattr(inputs, 'shape', inputs)!r})")

    def _infer_params(self, inputs, states):
        w = self.i2h_weight
        if w.shape[1] == 0:
            w.shape = (w.shape[0], inputs.shape[1]) + w.shape[2:]
        for p in self._reg_params.values():
            p._finish_deferred_init()

    def _projections(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        """``(i2h, h2h)``, each (batch, gates * hidden_channels, *state spatial shape)."""
        g = self._gates * self._hidden_size
        i2h = F.Convolution(inputs, i2h_weight, i2h_bias, kernel=self._i2h_kernel,
                            pad=self._i2h_pad, dilate=self._i2h_dilate, num_filter=g,
                            layout=self._conv_layout, name=self._step_name("i2h"))
        h2h = F.Convolution(states[0], h2h_weight, h2h_bias, kernel=self._h2h_kernel,
                            pad=self._h2h_pad, dilate=self._h2h_dilate, num_filter=g,
                            layout=self._conv_layout, name=self._step_name("h2h"))
        return i2h, h2h

    def __repr__(self):
        return (f"{type(self).__name__}({self._input_shape} -> {self._hidden_size}, "
                f"i2h_kernel={self._i2h_kernel}, h2h_kernel={self._h2h_kernel})")


class _ConvRNN(_ConvCell, RNNCell):
    def _alias(self):
        return "conv_rnn"


class _ConvLSTM(_ConvCell, LSTMCell):
    def _alias(self):
        return "conv_lstm"


class _ConvGRU(_ConvCell, GRUCell):
    def _alias(self):
        return "conv_gru"


def _make(base, dims, doc):
    layout = _LAYOUTS[dims]
    one = (0,) * dims, (1,) * dims

    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel,
                 i2h_pad=one[0], i2h_dilate=one[1], h2h_dilate=one[1],
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
                 conv_layout=layout, activation="tanh", prefix=None, params=None):
        base.__init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad,
                      i2h_dilate, h2h_dilate, i2h_weight_initializer,
                      h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer,
                      conv_layout, activation, prefix, params)

    name = f"Conv{dims}D{base.__name__[5:]}Cell"
    return type(name, (base,), {"__init__": __init__, "_dims": dims, "__module__": __name__,
                                "__doc__": f"{doc} over {dims}-D feature maps "
                                           f"({layout}; Gluon's ``contrib.rnn.{name}``)."})


_DOCS = {_ConvRNN: "Elman cell, ``h' = activation(i2h(x) + h2h(h))``,",
         _ConvLSTM: "LSTM cell (gates input, forget, cell, output; states ``[h, c]``)",
         _ConvGRU: "GRU cell (gates reset, update, new)"}
Conv1DRNNCell, Conv2DRNNCell, Conv3DRNNCell = (_make(_ConvRNN, d, _DOCS[_ConvRNN])
                                               for d in (1, 2, 3))
Conv1DLSTMCell, Conv2DLSTMCell, Conv3DLSTMCell = (_make(_ConvLSTM, d, _DOCS[_ConvLSTM])
                                                  for d in (1, 2, 3))
Conv1DGRUCell, Conv2DGRUCell, Conv3DGRUCell = (_make(_ConvGRU, d, _DOCS[_ConvGRU])
                                               for d in (1, 2, 3))
