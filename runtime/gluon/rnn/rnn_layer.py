"""Recurrent layers (Gluon 1.x's ``rnn.RNN``, ``rnn.LSTM``, ``rnn.GRU``): multi-layer,
optionally bidirectional, over the fused :func:`runtime.nd.RNN`.

Parameters as Gluon names them, per layer ``i`` and direction (``l`` forward, ``r``
backward): ``l0_i2h_weight`` ``(G*H, input_size)``, ``l0_h2h_weight`` ``(G*H, H)``,
``l0_i2h_bias`` and ``l0_h2h_bias`` ``(G*H,)``, registered in that order (with LSTM's
``projection_size`` P, ``l0_h2h_weight`` is ``(G*H, P)`` and ``l0_h2r_weight (P, H)`` comes
after ``l0_h2h_bias``, as Gluon 1.x registers them); the forward
concatenates them flat in ``nd.RNN``'s packing order (every weight, then every bias).

The layers are HybridBlocks, as in Gluon: run imperatively, a layer calls ``nd.RNN``;
traced (hybridizing a block that contains it, ``export``), it is one ``RNN`` node of the
graph, its parameters concatenated by graph ops and its default begin states zeros of
the traced batch size.  A layer with ``projection_size`` runs as a composition of
operators (see runtime/nd/_rnn.py) and cannot be traced (NotImplementedError); tracing
needs ``input_size`` (the first layer's weight shape).  ``hybridize()`` of the layer
itself is accepted and it keeps running imperatively.
"""

import re

import numpy as np

from runtime import nd, symbol
from runtime.gluon.nn.basic_layers import _positive_int
from runtime.gluon.block import HybridBlock
from runtime.gluon.rnn import rnn_cell
from runtime.symbol import Symbol

_GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}


class _RNNLayer(HybridBlock):
    """The common part of :class:`RNN`, :class:`LSTM` and :class:`GRU` (Gluon's
    ``_RNNLayer``)."""

    def __init__(self, hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                 i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                 h2h_bias_initializer, mode, lstm_state_clip_min=None,
                 lstm_state_clip_max=None, lstm_state_clip_nan=False, dtype="float32",
                 use_sequence_length=False, projection_size=None,
                 h2r_weight_initializer=None, **kwargs):
        super().__init__(**kwargs)
        layer = type(self).__name__
        if layout not in ("TNC", "NTC"):
            raise ValueError(f"{layer}: layout must be 'TNC' or 'NTC' (got {layout!r})")
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float, np.integer,
                                                                 np.floating)) \
                or not 0.0 <= dropout < 1.0:
            raise ValueError(f"{layer}: dropout must be a number in [0, 1) (got "
                             f"{dropout!r})")
        self._hidden_size = _positive_int(layer, "hidden_size", hidden_size)
        self._num_layers = _positive_int(layer, "num_layers", num_layers)
        self._input_size = _positive_int(layer, "input_size", input_size, minimum=0)
        self._layout = layout
        self._dropout = float(dropout)
        self._dir = 2 if bidirectional else 1
        self._mode = mode
        self._gates = _GATES[mode]
        if (lstm_state_clip_min is None) != (lstm_state_clip_max is None):
            raise ValueError(f"{layer}: state_clip_min and state_clip_max must be given "
                             f"together (got {lstm_state_clip_min!r}, "
                             f"{lstm_state_clip_max!r})")
        self._clip = (lstm_state_clip_min, lstm_state_clip_max, bool(lstm_state_clip_nan))
        self._use_sequence_length = bool(use_sequence_length)
        self._dtype = dtype
        self._projection_size = None if projection_size is None else \
            _positive_int(layer, "projection_size", projection_size)
        ng, ni, nh = self._gates, self._input_size, self._hidden_size
        nr = nh if projection_size is None else self._projection_size   # recurrent width
        inits = {"i2h_weight": i2h_weight_initializer, "h2h_weight": h2h_weight_initializer,
                 "h2r_weight": h2r_weight_initializer,
                 "i2h_bias": i2h_bias_initializer, "h2h_bias": h2h_bias_initializer}
        self._inits = inits
        self._names = []
        for i in range(self._num_layers):
            for j in "lr"[:self._dir]:
                kinds = [("i2h_weight", (ng * nh, ni)), ("h2h_weight", (ng * nh, nr)),
                         ("i2h_bias", (ng * nh,)), ("h2h_bias", (ng * nh,))]
                if projection_size is not None:     # Gluon 1.x: after the biases
                    kinds.append(("h2r_weight", (nr, nh)))
                for kind, shape in kinds:
                    name = f"{j}{i}_{kind}"
                    setattr(self, name, self.params.get(
                        name, shape=shape, dtype=dtype, init=inits[kind],
                        allow_deferred_init=True))
                    self._names.append(name)
            ni = nr * self._dir

    def __repr__(self):
        shape = getattr(self, "l0_i2h_weight").shape
        layers = f", num_layers={self._num_layers}" if self._num_layers != 1 else ""
        return (f"{type(self).__name__}({shape[1] if shape[1] else None} -> "
                f"{self._hidden_size}, {self._layout}{layers}"
                f"{', dropout=' + str(self._dropout) if self._dropout else ''}"
                f"{', bidirectional' if self._dir == 2 else ''})")

    def _unfuse(self):
        """The layer as a stack of cells that share its parameters (Gluon's private
        ``_unfuse``): a cell per layer, a BidirectionalCell of two when bidirectional,
        and a DropoutCell between layers when ``dropout``."""
        if self._projection_size is not None or self._clip[0] is not None:
            raise NotImplementedError(f"{type(self).__name__}: _unfuse takes no "
                                      "projection_size and no state clipping (as Gluon's)")
        cell_type, extra = {"lstm": (rnn_cell.LSTMCell, {}), "gru": (rnn_cell.GRUCell, {}),
                            "rnn_relu": (rnn_cell.RNNCell, {"activation": "relu"}),
                            "rnn_tanh": (rnn_cell.RNNCell, {"activation": "tanh"})}[self._mode]
        inits = {f"{k}_initializer": v for k, v in self._inits.items() if k != "h2r_weight"}
        stack = rnn_cell.HybridSequentialRNNCell(prefix=self.prefix, params=self.params)
        with stack.name_scope():
            ni = self._input_size
            for i in range(self._num_layers):
                cells = [cell_type(self._hidden_size, input_size=ni, prefix=f"{d}{i}_",
                                   **inits, **extra) for d in "lr"[:self._dir]]
                stack.add(rnn_cell.BidirectionalCell(*cells) if self._dir == 2 else cells[0])
                if self._dropout and i != self._num_layers - 1:
                    stack.add(rnn_cell.DropoutCell(self._dropout))
                ni = self._hidden_size * self._dir
        return stack

    def _collect_params_with_prefix(self, prefix=""):
        """The structural names that save_parameters/load_parameters use: Gluon 1.x's
        (``_unfused.0.i2h_weight``, bidirectional ``_unfused.0.l_cell.i2h_weight``), so
        that files saved by MXNet load; ``h2r`` weights (which Gluon 1.x cannot save)
        keep their own name."""
        if prefix:
            prefix += "."

        def key(name):
            m = re.fullmatch(r"(l|r)(\d+)_(i2h|h2h)_(weight|bias)", name)
            if m is None:
                return name
            d, i, g, t = m.groups()
            cell = f"{d}_cell." if self._dir == 2 else ""
            return f"_unfused.{i}.{cell}{g}_{t}"
        ret = {prefix + key(k): p for k, p in self._reg_params.items()}
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    def state_info(self, batch_size=0):
        """The shape, layout and dtype of each begin state: ``(num_layers*directions,
        batch_size, hidden_size)``, 'LNC', the layer's dtype (two of them for LSTM: h
        and c)."""
        shape = (self._num_layers * self._dir, batch_size, self._hidden_size)
        info = [{"shape": shape, "__layout__": "LNC", "dtype": self._dtype}
                for _ in range(2 if self._mode == "lstm" else 1)]
        if self._projection_size is not None:      # h is projection_size wide, c is not
            info[0]["shape"] = shape[:2] + (self._projection_size,)
        return info

    def begin_state(self, batch_size=0, func=None, **kwargs):
        """The initial states: ``func(shape=..., dtype=..., **kwargs)`` for each of
        :meth:`state_info` (default ``nd.zeros``; ``ctx=``, ``dtype=`` pass through)."""
        func = nd.zeros if func is None else func
        states = []
        for info in self.state_info(batch_size):
            info.pop("__layout__")
            info.update(kwargs)
            states.append(func(**info))
        return states

    def forward(self, inputs, states=None, sequence_length=None):
        """``outputs`` for ``inputs`` (``layout``), and with ``states`` given the pair
        ``(outputs, new_states)`` (Gluon: states default to zeros and are then not
        returned).  ``sequence_length`` (N,) is taken with ``use_sequence_length``."""
        layer = type(self).__name__
        if isinstance(inputs, Symbol):
            return self._traced(inputs, states, sequence_length)
        if not isinstance(inputs, nd.NDArray) or inputs.ndim != 3:
            raise ValueError(f"{layer}: inputs must be a 3-D NDArray in layout "
                             f"{self._layout!r} (got "
                             f"{getattr(inputs, 'shape', type(inputs).__name__)!r})")
        skip_states = states is None
        if skip_states:
            batch = inputs.shape[self._layout.find("N")]
            states = self.begin_state(batch, ctx=inputs.ctx, dtype=inputs.dtype)
        if isinstance(states, nd.NDArray):
            states = [states]
        want = 2 if self._mode == "lstm" else 1
        if not isinstance(states, (list, tuple)) or len(states) != want:
            raise ValueError(f"{layer}: states must be a list of {want} NDArray(s) "
                             f"(begin_state's) (got {states!r})")
        if self._layout == "NTC":
            inputs = nd.swapaxes(inputs, dim1=0, dim2=1)
        self._infer(inputs.shape[2])
        params = nd.concat(*(getattr(self, name).data().reshape((-1,))
                             for name in self._flat_order()), dim=0)
        out = nd.RNN(inputs, params, *states,
                     sequence_length=sequence_length if self._use_sequence_length else None,
                     state_size=self._hidden_size, num_layers=self._num_layers,
                     bidirectional=self._dir == 2, mode=self._mode, p=self._dropout,
                     state_outputs=True, projection_size=self._projection_size,
                     lstm_state_clip_min=self._clip[0],
                     lstm_state_clip_max=self._clip[1], lstm_state_clip_nan=self._clip[2],
                     use_sequence_length=self._use_sequence_length)
        outputs, new_states = out[0], list(out[1:])
        if self._layout == "NTC":
            outputs = nd.swapaxes(outputs, dim1=0, dim2=1)
        return outputs if skip_states else (outputs, new_states)

    def _traced(self, inputs, states, sequence_length):
        """The layer as one ``RNN`` node of a graph (a hybridized parent's trace)."""
        layer = type(self).__name__
        if self._projection_size is not None:
            raise NotImplementedError(
                f"{layer}: a layer with projection_size cannot be traced into a graph "
                "(nd.RNN runs LSTMP as a composition of operators, not the fused RNN "
                "operator); run it without hybridize()")
        lengths = {}
        if self._use_sequence_length:
            if not isinstance(sequence_length, Symbol):
                raise ValueError(f"{layer}: use_sequence_length=True needs a "
                                 f"sequence_length (got {sequence_length!r})")
            lengths = {"sequence_length": sequence_length}
        unknown = [n for n in self._names if 0 in getattr(self, n).shape]
        if unknown:
            raise ValueError(f"{layer}: input_size must be given to trace the layer into a "
                             f"graph (got the deferred shape {getattr(self, unknown[0]).shape}"
                             f" of {unknown[0]!r})")
        if self._layout == "NTC":
            inputs = symbol.swapaxes(inputs, dim1=0, dim2=1)
        skip_states = states is None
        if skip_states:     # zeros (L*D, batch, H), the batch taken from the inputs
            row = symbol.slice_axis(inputs, axis=0, begin=0, end=1)
            zero = symbol.sum(symbol.zeros_like(row), axis=2, keepdims=True)
            shape = (self._num_layers * self._dir, 0, self._hidden_size)
            states = [symbol.broadcast_to(zero, shape=shape)] * \
                (2 if self._mode == "lstm" else 1)
        elif isinstance(states, Symbol):
            states = [states]
        params = symbol.concat(*(symbol.reshape(getattr(self, name).var(), shape=(-1,))
                                 for name in self._flat_order()), dim=0)
        out = symbol.RNN(inputs, params, *states, **lengths, state_size=self._hidden_size,
                         num_layers=self._num_layers, bidirectional=self._dir == 2,
                         mode=self._mode, p=self._dropout, state_outputs=True,
                         use_sequence_length=self._use_sequence_length,
                         lstm_state_clip_min=self._clip[0],
                         lstm_state_clip_max=self._clip[1],
                         lstm_state_clip_nan=self._clip[2])
        outputs = out[0]
        new_states = [out[k] for k in range(1, 3 if self._mode == "lstm" else 2)]
        if self._layout == "NTC":
            outputs = symbol.swapaxes(outputs, dim1=0, dim2=1)
        return outputs if skip_states else (outputs, new_states)

    def _flat_order(self):
        """The parameter names in nd.RNN's packing order: every weight (per layer, per
        direction: i2h, h2h, and h2r with a projection), then every bias (i2h, h2h) in the
        same order."""
        kinds = ("i2h", "h2h") if self._projection_size is None else ("i2h", "h2h", "h2r")
        return [f"{d}{i}_{g}_{t}" for t in ("weight", "bias")
                for i in range(self._num_layers) for d in "lr"[:self._dir]
                for g in kinds if t == "weight" or g != "h2r"]

    def _infer(self, input_size):
        """Finish the deferred first-layer weights once the input size is known."""
        for d in "lr"[:self._dir]:
            w = getattr(self, f"{d}0_i2h_weight")
            if w.shape[1] == 0:
                w.shape = (w.shape[0], input_size)
        for name in self._names:
            getattr(self, name)._finish_deferred_init()


class RNN(_RNNLayer):
    """Elman RNN: ``h_t = activation(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)`` (Gluon's
    ``rnn.RNN``); ``activation`` is 'relu' or 'tanh'.

    Parameters
    ----------
    hidden_size : int
    num_layers : int
    activation : {'relu', 'tanh'}
    layout : {'TNC', 'NTC'}
        Of the inputs and outputs (states are always (L*D, N, H)).
    dropout : float
        Between layers, in training mode.
    bidirectional : bool
    i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
    h2h_bias_initializer : Initializer or str
    input_size : int
        0 infers it on the first call.
    dtype : str
    use_sequence_length : bool
        Take the ``sequence_length`` argument of the call.
    """

    def __init__(self, hidden_size, num_layers=1, activation="relu", layout="TNC",
                 dropout=0, bidirectional=False, i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", input_size=0, dtype="float32",
                 use_sequence_length=False, **kwargs):
        if activation not in ("relu", "tanh"):
            raise ValueError(f"RNN: activation must be 'relu' or 'tanh' (got "
                             f"{activation!r})")
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional,
                         input_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, "rnn_" + activation,
                         dtype=dtype, use_sequence_length=use_sequence_length, **kwargs)


class LSTM(_RNNLayer):
    """Long short-term memory (Gluon's ``rnn.LSTM``; gates i, f, g, o); states ``[h, c]``.

    Parameters as :class:`RNN` (no activation), plus ``state_clip_min``,
    ``state_clip_max`` (clip the cell state, both or neither) and ``state_clip_nan``;
    ``projection_size`` (LSTMP: ``h = W_hr (o * tanh(c))``, weights ``l0_h2r_weight``
    ``(projection_size, hidden_size)`` initialised by ``h2r_weight_initializer``; the
    output and h state are ``projection_size`` wide).
    """

    def __init__(self, hidden_size, num_layers=1, layout="TNC", dropout=0,
                 bidirectional=False, input_size=0, i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", projection_size=None,
                 h2r_weight_initializer=None, state_clip_min=None, state_clip_max=None,
                 state_clip_nan=False, dtype="float32", use_sequence_length=False, **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional,
                         input_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, "lstm",
                         state_clip_min, state_clip_max, state_clip_nan, dtype=dtype,
                         use_sequence_length=use_sequence_length,
                         projection_size=projection_size,
                         h2r_weight_initializer=h2r_weight_initializer, **kwargs)


class GRU(_RNNLayer):
    """Gated recurrent unit (Gluon's ``rnn.GRU``; gates r, z, n, the reset gate applied
    to ``W_hn h + b_hn`` as MXNet/cuDNN).  Parameters as :class:`RNN` (no activation)."""

    def __init__(self, hidden_size, num_layers=1, layout="TNC", dropout=0,
                 bidirectional=False, input_size=0, i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", dtype="float32", use_sequence_length=False,
                 **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional,
                         input_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, "gru", dtype=dtype,
                         use_sequence_length=use_sequence_length, **kwargs)


__all__ = ["RNN", "LSTM", "GRU"]
