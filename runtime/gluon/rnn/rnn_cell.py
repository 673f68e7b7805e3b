r"""Recurrent cells (Gluon 1.x's ``gluon.rnn`` cells): one time step each, and ``unroll``
over a sequence.

``RNNCell``, ``LSTMCell`` and ``GRUCell`` hold ``i2h_weight`` ``(G*H, input_size)``,
``h2h_weight`` ``(G*H, H)``, ``i2h_bias`` and ``h2h_bias`` ``(G*H,)`` with Gluon's gate
order (LSTM: input, forget, cell, output; GRU: reset, update, new), the layout of the
fused layers' per-layer parameters: a ``HybridSequentialRNNCell(prefix='lstm0_')`` of
``LSTMCell(prefix='l0_')``, ``LSTMCell(prefix='l1_')`` has exactly the parameter names of
``rnn.LSTM(num_layers=2, prefix='lstm0_')`` (``lstm0_l0_i2h_weight`` ...), so
``collect_params()`` values move between the two by name, as in Gluon.

``SequentialRNNCell``/``HybridSequentialRNNCell`` stack cells, ``BidirectionalCell`` runs
two cells forward and backward (unroll only), and the modifiers ``DropoutCell``,
``ZoneoutCell`` and ``ResidualCell`` wrap a cell.  ``unroll(length, inputs, begin_state,
layout, merge_outputs, valid_length)`` follows Gluon: ``inputs`` is an NDArray in
``layout`` ('NTC' or 'TNC') or a list of ``length`` (batch, C) arrays; ``merge_outputs``
True stacks the outputs into one array, False returns a list, None keeps the form of the
input; ``valid_length`` (batch,) zeroes the outputs past each sequence's length and
returns the states of its last valid step.  Given Symbols (one, then ``length`` is
required, or a list), ``unroll`` builds the unrolled graph, as Gluon's: the begin states
are zeros shaped from the input's batch, and each step's output is named
``<prefix>t<step>_out`` (a BidirectionalCell's ``<output_prefix>t<step>``).

The forwards are registry operators (``FullyConnected``, ``sigmoid``, ``SequenceMask``
...), so autograd records them.  ``RNNCell``, ``LSTMCell``, ``GRUCell`` and
``DropoutCell`` are ``HybridBlock``\ s (:class:`HybridRecurrentCell`): one step's
``hybrid_forward(F, inputs, states, **params)`` calls the operators through ``F``, so a
hybridized cell runs its step as a cached graph, and a HybridBlock that steps a cell
traces it into its own graph.  ``unroll`` runs the steps imperatively (on NDArrays).
``HybridSequentialRNNCell``, the modifier cells and ``BidirectionalCell`` are
HybridRecurrentCells too, as in Gluon, so that they may sit in a HybridBlock (their
cells must then be HybridBlocks); they run their cells' steps themselves.
``SequentialRNNCell`` is a plain block.
"""

import numpy as np

from runtime import nd, symbol
from runtime.gluon.block import Block, HybridBlock
from runtime.gluon.nn.activations import LeakyReLU
from runtime.gluon.nn.basic_layers import _positive_int
from runtime.symbol import Symbol

_LAYOUTS = ("NTC", "TNC")
_ARRAYS = (nd.NDArray, Symbol)


def _F(x):
    """The operators for ``x`` (an array, or a list of them): ``symbol`` for Symbols,
    else ``nd``."""
    if isinstance(x, (list, tuple)):
        x = x[0]
    return symbol if isinstance(x, Symbol) else nd


def _steps(parts, n):
    """The ``n`` outputs of a split as a list (an NDArray split in one is the array)."""
    return [parts] if n == 1 and isinstance(parts, nd.NDArray) else list(parts)


def _format_sequence(length, inputs, layout, merge):
    """``(inputs, time axis, batch size)``: ``inputs`` (an array in ``layout`` or a list
    of steps; NDArrays or Symbols) split into a list of steps (``merge`` False), stacked
    into one array (True) or left as they are (None).  The batch size of Symbols is 0
    (unknown until shapes are inferred)."""
    if layout not in _LAYOUTS:
        raise ValueError(f"unroll: layout must be one of {_LAYOUTS} (got {layout!r})")
    axis = layout.find("T")
    if isinstance(inputs, Symbol):
        if length is None:
            raise ValueError("unroll: length must be given when inputs is one Symbol (got "
                             "None)")
        if merge is False:
            return _steps(symbol.split(inputs, axis=axis, num_outputs=length,
                                       squeeze_axis=True), length), axis, 0
        return inputs, axis, 0
    if isinstance(inputs, nd.NDArray):
        if inputs.ndim < 3:
            raise ValueError(f"unroll: inputs must have at least 3 axes, the first in "
                             f"layout {layout!r} (got shape {inputs.shape!r})")
        batch_size = inputs.shape[layout.find("N")]
        if length is not None and inputs.shape[axis] != length:
            raise ValueError(f"unroll: length must be the inputs' size {inputs.shape[axis]} "
                             f"on the time axis of {layout!r} (got {length})")
        if merge is False:
            steps = inputs.shape[axis]
            return _steps(nd.split(inputs, axis=axis, num_outputs=steps, squeeze_axis=True),
                          steps), axis, batch_size
    else:
        inputs = list(inputs)
        if not inputs or not (all(isinstance(x, nd.NDArray) for x in inputs)
                              or all(isinstance(x, Symbol) for x in inputs)):
            raise TypeError("unroll: inputs must be an NDArray or a Symbol, or a non-empty "
                            "list of NDArrays or of Symbols")
        if length is not None and len(inputs) != length:
            raise ValueError(f"unroll: length must be the number of input steps "
                             f"{len(inputs)} (got {length})")
        batch_size = inputs[0].shape[0] if isinstance(inputs[0], nd.NDArray) else 0
        if merge is True:
            inputs = _F(inputs).stack(*inputs, axis=axis)
    return inputs, axis, batch_size


def _mask_sequence(data, length, valid_length, time_axis, merge):
    """Zero the steps of ``data`` (a list of steps or one array) past ``valid_length``;
    one array back when ``merge``, else a list."""
    F = _F(data)
    if not isinstance(data, _ARRAYS):
        data = F.stack(*data, axis=time_axis)
    out = F.SequenceMask(data, sequence_length=valid_length, use_sequence_length=True,
                         axis=time_axis)
    if merge:
        return out
    return _steps(F.split(out, num_outputs=length, axis=time_axis, squeeze_axis=True), length)


def _reverse_sequences(steps, length, valid_length=None):
    """The list of steps in reverse order, each sequence reversed within its own
    ``valid_length`` when given."""
    if valid_length is None:
        return list(reversed(steps))
    F = _F(steps)
    rev = F.SequenceReverse(F.stack(*steps, axis=0), sequence_length=valid_length,
                            use_sequence_length=True)
    return _steps(F.split(rev, axis=0, num_outputs=length, squeeze_axis=True), length)


def _symbol_zeros(like, batch_axis):
    """A ``begin_state`` func for Symbol inputs: zeros of the state's shape (batch, ...)
    whose batch is axis ``batch_axis`` of ``like`` (every other axis summed away), so
    shape inference learns it from the inputs (MXNet's 0 for the unknown batch)."""
    def zeros(shape, **kwargs):
        batch = symbol.sum(symbol.zeros_like(like), axis=batch_axis, exclude=True)
        batch = symbol.reshape(batch, shape=(-1,) + (1,) * (len(shape) - 1))
        return symbol.tile(batch, reps=(1,) + tuple(shape[1:]))
    return zeros


def _begin_state(cell, begin_state, inputs, batch_size, layout="NTC"):
    if begin_state is not None:
        return begin_state
    if isinstance(inputs, Symbol):          # the merged sequence in ``layout``
        return cell.begin_state(batch_size=0, func=_symbol_zeros(inputs, layout.find("N")))
    first = inputs if isinstance(inputs, nd.NDArray) else inputs[0]
    if isinstance(first, Symbol):           # one step, (batch, ...)
        return cell.begin_state(batch_size=0, func=_symbol_zeros(first, 0))
    return cell.begin_state(batch_size=batch_size, ctx=first.ctx)


def _cells_state_info(cells, batch_size):
    return [info for cell in cells for info in cell.state_info(batch_size)]


def _cells_begin_state(cells, **kwargs):
    return [state for cell in cells for state in cell.begin_state(**kwargs)]


class RecurrentCell(Block):
    """The base of the cells (Gluon's ``RecurrentCell``): ``cell(inputs, states)`` is
    one step returning ``(output, new_states)``; :meth:`unroll` runs a sequence."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._modified = False
        self.reset()

    def reset(self):
        """Reset the step counters (before a new sequence)."""
        self._init_counter = -1
        self._counter = -1
        for cell in self._children.values():
            if isinstance(cell, RecurrentCell):
                cell.reset()

    def state_info(self, batch_size=0):
        """One dict per state: ``shape`` and ``__layout__``."""
        raise NotImplementedError(f"{type(self).__name__}: define state_info()")

    def _check_unmodified(self):
        if self._modified:
            raise RuntimeError(f"{type(self).__name__}: after applying a modifier cell "
                               f"(ZoneoutCell, ResidualCell ...) the base cell cannot be "
                               f"called directly; call the modifier cell instead")

    def begin_state(self, batch_size=0, func=None, **kwargs):
        """The initial states: ``func(shape=..., **kwargs)`` for each of
        :meth:`state_info` (default ``nd.zeros``; ``ctx=``, ``dtype=`` pass through)."""
        self._check_unmodified()
        func = nd.zeros if func is None else func
        states = []
        for info in self.state_info(batch_size):
            self._init_counter += 1
            info = {k: v for k, v in (info or {}).items() if k != "__layout__"}
            info.update(kwargs)
            states.append(func(**info))
        return states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        """Run ``length`` steps; returns ``(outputs, states)`` (see the module's
        docstring for the forms of ``inputs`` and ``outputs``)."""
        self.reset()
        inputs, axis, batch_size = _format_sequence(length, inputs, layout, False)
        states = _begin_state(self, begin_state, inputs, batch_size)
        outputs, all_states = [], []
        for step in inputs:
            output, states = self(step, states)
            outputs.append(output)
            if valid_length is not None:
                all_states.append(states)
        if valid_length is not None:
            F = _F(outputs)
            states = [F.SequenceLast(F.stack(*per_step, axis=0),
                                     sequence_length=valid_length,
                                     use_sequence_length=True, axis=0)
                      for per_step in zip(*all_states)]
            outputs = _mask_sequence(outputs, len(inputs), valid_length, axis, True)
        outputs, _, _ = _format_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    @staticmethod
    def _get_activation(F, inputs, activation, name=None):
        if activation in ("tanh", "relu", "sigmoid", "softsign"):
            return getattr(F, activation)(inputs, name=name)
        if isinstance(activation, str):
            return F.Activation(inputs, act_type=activation, name=name)
        if isinstance(activation, LeakyReLU):
            return F.LeakyReLU(inputs, act_type="leaky", slope=activation._alpha, name=name)
        return activation(inputs)

    def _step_name(self, what):
        """Gluon's name of a node of the current step (``t0_out``): what a graph built
        by unrolling on Symbols calls it, under the cell's prefix."""
        return f"t{self._counter}_{what}"

    def __call__(self, inputs, states):
        self._counter += 1
        return super().__call__(inputs, states)


class HybridRecurrentCell(RecurrentCell, HybridBlock):
    """Gluon's ``HybridRecurrentCell``: a cell whose step is
    ``hybrid_forward(F, inputs, states, **params)``, returning ``(output, new_states)``."""


class _GatedCell(HybridRecurrentCell):
    """A cell with Gluon's four parameters for ``gates`` gates of ``hidden_size``."""

    _gates = 1

    def __init__(self, hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                 i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params):
        super().__init__(prefix=prefix, params=params)
        layer = type(self).__name__
        self._hidden_size = _positive_int(layer, "hidden_size", hidden_size)
        self._input_size = _positive_int(layer, "input_size", input_size, minimum=0)
        g = self._gates * self._hidden_size
        self.i2h_weight = self.params.get("i2h_weight", shape=(g, self._input_size),
                                          init=i2h_weight_initializer,
                                          allow_deferred_init=True)
        self.h2h_weight = self.params.get("h2h_weight", shape=(g, self._hidden_size),
                                          init=h2h_weight_initializer,
                                          allow_deferred_init=True)
        self.i2h_bias = self.params.get("i2h_bias", shape=(g,), init=i2h_bias_initializer,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get("h2h_bias", shape=(g,), init=h2h_bias_initializer,
                                        allow_deferred_init=True)

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def _check(self, inputs, states):
        layer = type(self).__name__
        if not isinstance(inputs, nd.NDArray) or inputs.ndim != 2:
            raise ValueError(f"{layer}: inputs must be a 2-D (batch, input_size) NDArray "
                             f"(got {getattr(inputs, 'shape', type(inputs).__name__)!r})")
        want = len(self.state_info())
        if not isinstance(states, (list, tuple)) or len(states) != want:
            raise ValueError(f"{layer}: states must be a list of {want} NDArray(s) "
                             f"(begin_state's) (got {states!r})")

    def forward(self, inputs, states):
        if not isinstance(inputs, Symbol):         # a traced step has no shapes
            self._check(inputs, states)
        return super().forward(inputs, states)

    def _infer_params(self, inputs, states):
        if self.i2h_weight.shape[1] == 0:
            self.i2h_weight.shape = (self.i2h_weight.shape[0], inputs.shape[1])
        for p in self._reg_params.values():
            p._finish_deferred_init()

    def _projections(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        """``(i2h, h2h)``, each (batch, gates * hidden)."""
        g = self._gates * self._hidden_size
        return (F.FullyConnected(inputs, i2h_weight, i2h_bias, num_hidden=g,
                                 name=self._step_name("i2h")),
                F.FullyConnected(states[0], h2h_weight, h2h_bias, num_hidden=g,
                                 name=self._step_name("h2h")))

    def __repr__(self):
        shape = self.i2h_weight.shape
        act = f", {self._activation}" if type(self) is RNNCell else ""
        return f"{type(self).__name__}({shape[1] if shape[1] else None} -> {shape[0]}{act})"


class RNNCell(_GatedCell):
    """Elman cell: ``h' = activation(W_i x + b_i + W_h h + b_h)`` (Gluon's
    ``rnn.RNNCell``); ``activation`` a name ('tanh', 'relu', ...), a
    :class:`~runtime.gluon.nn.LeakyReLU` or a callable."""

    def __init__(self, hidden_size, activation="tanh", i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", input_size=0, prefix=None, params=None):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix,
                         params)
        self._activation = activation

    def _alias(self):
        return "rnn"

    def hybrid_forward(self, F, inputs, states, **params):
        i2h, h2h = self._projections(F, inputs, states, **params)
        output = self._get_activation(F, i2h + h2h, self._activation,
                                      name=self._step_name("out"))
        return output, [output]


class LSTMCell(_GatedCell):
    """Long short-term memory cell (Gluon's ``rnn.LSTMCell``): gates input, forget,
    cell, output (in that order in the weights' rows); states ``[h, c]``."""

    _gates = 4

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 prefix=None, params=None, activation="tanh", recurrent_activation="sigmoid"):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix,
                         params)
        self._activation = activation
        self._recurrent_activation = recurrent_activation

    def _alias(self):
        return "lstm"

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"},
                {"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def hybrid_forward(self, F, inputs, states, **params):
        i2h, h2h = self._projections(F, inputs, states, **params)
        gates = F.split(i2h + h2h, num_outputs=4, axis=1)
        rec, act = self._recurrent_activation, self._activation
        in_gate = self._get_activation(F, gates[0], rec)
        forget_gate = self._get_activation(F, gates[1], rec)
        in_transform = self._get_activation(F, gates[2], act)
        out_gate = self._get_activation(F, gates[3], rec)
        next_c = forget_gate * states[1] + in_gate * in_transform
        # Gluon applies ``activation`` to the cell state by the Activation operator
        next_h = F.elemwise_mul(out_gate, F.Activation(next_c, act_type=act,
                                                       name=self._step_name("state")),
                                name=self._step_name("out"))
        return next_h, [next_h, next_c]


class GRUCell(_GatedCell):
    """Gated recurrent unit cell (Gluon's ``rnn.GRUCell``): gates reset, update, new;
    ``h' = (1 - z) * tanh(i_n + r * h_n) + z * h``."""

    _gates = 3
    _activation = "tanh"       # the candidate's (a convolutional GRU cell may change it)

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 prefix=None, params=None):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix,
                         params)

    def _alias(self):
        return "gru"

    def hybrid_forward(self, F, inputs, states, **params):
        i2h, h2h = self._projections(F, inputs, states, **params)
        i_r, i_z, i_n = F.split(i2h, num_outputs=3, axis=1)
        h_r, h_z, h_n = F.split(h2h, num_outputs=3, axis=1)
        reset_gate = F.sigmoid(i_r + h_r)
        update_gate = F.sigmoid(i_z + h_z)
        candidate = self._get_activation(F, i_n + reset_gate * h_n, self._activation)
        next_h = F.elemwise_add((1 - update_gate) * candidate, update_gate * states[0],
                                name=self._step_name("out"))
        return next_h, [next_h]


class SequentialRNNCell(RecurrentCell):
    """Cells stacked: each step feeds one cell's output to the next (Gluon's
    ``rnn.SequentialRNNCell``); the states are the cells' states concatenated."""

    def __repr__(self):
        body = "\n".join(f"({i}): " + repr(m).replace("\n", "\n  ")
                         for i, m in self._children.items())
        return f"{type(self).__name__}(\n{body}\n)"

    def add(self, cell):
        """Append ``cell`` (a BidirectionalCell too: the stack then can only be
        unrolled, as in Gluon)."""
        self.register_child(cell)

    def state_info(self, batch_size=0):
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(self, **kwargs):
        self._check_unmodified()
        return _cells_begin_state(self._children.values(), **kwargs)

    def _split_states(self, states):
        p = 0
        for cell in self._children.values():
            n = len(cell.state_info())
            yield cell, states[p:p + n]
            p += n

    def __call__(self, inputs, states):
        self._counter += 1
        next_states = []
        for cell, state in self._split_states(states):
            inputs, state = cell(inputs, state)
            next_states.extend(state)
        return inputs, next_states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        self.reset()
        inputs, _, batch_size = _format_sequence(length, inputs, layout, None)
        begin_state = _begin_state(self, begin_state, inputs, batch_size, layout)
        last = len(self._children) - 1
        next_states = []
        for i, (cell, states) in enumerate(self._split_states(begin_state)):
            inputs, states = cell.unroll(length, inputs, begin_state=states, layout=layout,
                                         merge_outputs=merge_outputs if i == last else None,
                                         valid_length=valid_length)
            next_states.extend(states)
        return inputs, next_states

    def __getitem__(self, i):
        return self._children[str(i)]

    def __len__(self):
        return len(self._children)


class HybridSequentialRNNCell(SequentialRNNCell, HybridRecurrentCell):
    """Gluon's ``rnn.HybridSequentialRNNCell``: :class:`SequentialRNNCell` whose cells
    are HybridBlocks, so that it may sit in a HybridBlock (ndrt runs every cell
    imperatively)."""


class DropoutCell(HybridRecurrentCell):
    """Applies dropout of ``rate`` to the inputs of each step (training mode only); no
    states.  Unrolled over one array it drops out the whole sequence at once."""

    def __init__(self, rate, axes=(), prefix=None, params=None):
        super().__init__(prefix, params)
        if isinstance(rate, bool) or not isinstance(rate, (int, float, np.integer,
                                                           np.floating)) \
                or not 0.0 <= rate < 1.0:
            raise ValueError(f"DropoutCell: rate must be a number in [0, 1) (got {rate!r})")
        self._rate = rate
        self._axes = axes

    def __repr__(self):
        return f"DropoutCell(rate={self._rate}, axes={self._axes})"

    def _alias(self):
        return "dropout"

    def state_info(self, batch_size=0):
        return []

    def hybrid_forward(self, F, inputs, states):
        if self._rate > 0:
            inputs = F.Dropout(inputs, p=self._rate, axes=self._axes)
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        self.reset()
        inputs, _, _ = _format_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, _ARRAYS):
            return self.forward(inputs, begin_state if begin_state else [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs, valid_length=None)


class ModifierCell(HybridRecurrentCell):
    """The base of the cells that wrap ``base_cell`` (Gluon's ``ModifierCell``): they
    share its parameters and states, and the base cell may then only be called through
    them."""

    def __init__(self, base_cell):
        if not isinstance(base_cell, RecurrentCell):
            raise TypeError(f"{type(self).__name__}: base_cell must be a RecurrentCell (got "
                            f"{type(base_cell).__name__})")
        if base_cell._modified:
            raise ValueError(f"{type(self).__name__}: cell {base_cell.name!r} is already "
                             f"modified; one cell cannot be modified twice")
        base_cell._modified = True
        super().__init__(prefix=base_cell.prefix + self._alias(), params=None)
        self.base_cell = base_cell

    @property
    def params(self):
        return self.base_cell.params

    def state_info(self, batch_size=0):
        return self.base_cell.state_info(batch_size)

    def begin_state(self, func=None, **kwargs):
        self._check_unmodified()
        self.base_cell._modified = False
        try:
            return self.base_cell.begin_state(func=func, **kwargs)
        finally:
            self.base_cell._modified = True

    def __repr__(self):
        return f"{type(self).__name__}({self.base_cell!r})"


def _check_steppable_modifier(layer, base_cell, **rates):
    """Raise unless ``base_cell`` can be stepped (not a BidirectionalCell) and each of
    ``rates`` (name: probability) is a number in [0, 1)."""
    if isinstance(base_cell, BidirectionalCell):
        raise TypeError(f"{layer}: a BidirectionalCell cannot be stepped; wrap the cells "
                        "underneath instead")
    for name, p in rates.items():
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p < 1:
            raise ValueError(f"{layer}: {name} must be a number in [0, 1) (got {p!r})")


class ZoneoutCell(ModifierCell):
    """Zoneout (Krueger et al.): in training, each output and state value keeps its
    previous value with probability ``zoneout_outputs`` / ``zoneout_states`` (Gluon's
    ``rnn.ZoneoutCell``); outside training the base cell's values pass."""

    def __init__(self, base_cell, zoneout_outputs=0., zoneout_states=0.):
        _check_steppable_modifier("ZoneoutCell", base_cell,
                                  zoneout_outputs=zoneout_outputs,
                                  zoneout_states=zoneout_states)
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self._prev_output = None

    def __repr__(self):
        return (f"ZoneoutCell(p_out={self.zoneout_outputs}, p_state={self.zoneout_states}, "
                f"{self.base_cell!r})")

    def _alias(self):
        return "zoneout"

    def reset(self):
        super().reset()
        self._prev_output = None

    def forward(self, inputs, states):
        p_out, p_state = self.zoneout_outputs, self.zoneout_states
        next_output, next_states = self.base_cell(inputs, states)

        F = _F(next_output)

        def keep_new(p, like):       # 1 with probability 1 - p in training, else 1
            return F.Dropout(F.ones_like(like), p=p)
        prev = self._prev_output if self._prev_output is not None \
            else F.zeros_like(next_output)
        output = F.where(keep_new(p_out, next_output), next_output, prev) if p_out \
            else next_output
        if p_state:
            next_states = [F.where(keep_new(p_state, new), new, old)
                           for new, old in zip(next_states, states)]
        self._prev_output = output
        return output, next_states


class ResidualCell(ModifierCell):
    """Adds each step's input to the base cell's output (Gluon's
    ``rnn.ResidualCell``)."""

    def forward(self, inputs, states):
        output, states = self.base_cell(inputs, states)
        return output + inputs, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        self.reset()
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs, begin_state=begin_state,
                                                    layout=layout,
                                                    merge_outputs=merge_outputs,
                                                    valid_length=valid_length)
        finally:
            self.base_cell._modified = True
        if merge_outputs is None:
            merge_outputs = isinstance(outputs, _ARRAYS)
        inputs, axis, _ = _format_sequence(length, inputs, layout, merge_outputs)
        if valid_length is not None:
            inputs = _mask_sequence(inputs, length, valid_length, axis, merge_outputs)
        if merge_outputs:
            return outputs + inputs, states
        return [o + i for o, i in zip(outputs, inputs)], states


class BidirectionalCell(HybridRecurrentCell):
    """``l_cell`` over the sequence and ``r_cell`` over it reversed, their outputs
    joined along the feature axis (Gluon's ``rnn.BidirectionalCell``); it can only be
    unrolled.  With ``valid_length`` each sequence is reversed within its length."""

    def __init__(self, l_cell, r_cell, output_prefix="bi_"):
        super().__init__(prefix="", params=None)
        self.register_child(l_cell, "l_cell")
        self.register_child(r_cell, "r_cell")
        self._output_prefix = output_prefix

    def __call__(self, inputs, states):
        raise NotImplementedError("BidirectionalCell cannot be stepped; use unroll")

    def __repr__(self):
        return (f"BidirectionalCell(forward={self._children['l_cell']!r}, "
                f"backward={self._children['r_cell']!r})")

    def state_info(self, batch_size=0):
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(self, **kwargs):
        self._check_unmodified()
        return _cells_begin_state(self._children.values(), **kwargs)

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        self.reset()
        inputs, axis, batch_size = _format_sequence(length, inputs, layout, False)
        length = len(inputs)
        reversed_inputs = _reverse_sequences(inputs, length, valid_length)
        states = _begin_state(self, begin_state, inputs, batch_size)
        F = _F(inputs)
        l_cell, r_cell = self._children.values()
        n_left = len(l_cell.state_info(batch_size))
        l_outputs, l_states = l_cell.unroll(length, inputs, begin_state=states[:n_left],
                                            layout=layout, merge_outputs=merge_outputs,
                                            valid_length=valid_length)
        r_outputs, r_states = r_cell.unroll(length, reversed_inputs,
                                            begin_state=states[n_left:], layout=layout,
                                            merge_outputs=False, valid_length=valid_length)
        reversed_r = _reverse_sequences(r_outputs, length, valid_length)
        if merge_outputs is None:
            merge_outputs = isinstance(l_outputs, _ARRAYS)
            l_outputs, _, _ = _format_sequence(length, l_outputs, layout, merge_outputs)
            reversed_r, _, _ = _format_sequence(length, reversed_r, layout, merge_outputs)
        prefix = self._output_prefix
        if merge_outputs:
            if not isinstance(reversed_r, _ARRAYS):
                reversed_r = F.stack(*reversed_r, axis=axis)
            outputs = F.concat(l_outputs, reversed_r, dim=2, name=f"{prefix}out")
        else:
            outputs = [F.concat(lo, ro, dim=1, name=f"{prefix}t{i}")
                       for i, (lo, ro) in enumerate(zip(l_outputs, reversed_r))]
        if valid_length is not None:
            outputs = _mask_sequence(outputs, length, valid_length, axis, merge_outputs)
        return outputs, l_states + r_states


__all__ = ["RecurrentCell", "HybridRecurrentCell", "RNNCell", "LSTMCell", "GRUCell",
           "SequentialRNNCell", "HybridSequentialRNNCell", "DropoutCell", "ModifierCell",
           "ZoneoutCell", "ResidualCell", "BidirectionalCell"]
