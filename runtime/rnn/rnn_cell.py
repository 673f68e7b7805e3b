"""MXNet 1.x's symbolic RNN cells (``mx.rnn.LSTMCell`` ...): each builds the graph of
one time step from ``runtime.symbol`` operators, and ``unroll`` chains the steps.

A cell's parameters are variables named ``<prefix>i2h_weight``, ``<prefix>i2h_bias``,
``<prefix>h2h_weight``, ``<prefix>h2h_bias`` (the gates stacked along the rows in the
order ``_gate_names`` gives), kept in an :class:`RNNParams` that cells may share.  Step
``t``'s nodes are named ``<prefix>t<t>_...``; ``reset()`` starts the count again, as a
new graph (another bucket's) needs.  The begin states are ``sym.zeros`` nodes of shape
``(0, num_hidden)``: the batch size is unknown until the graph is bound, and shape
inference fills it from the data, as MXNet's does.

``FusedRNNCell`` runs every step of every layer as one ``RNN`` operator on one flat
parameter vector (``mx.init.FusedRNN`` fills it); ``unpack_weights``/``pack_weights``
convert between that vector and the per-gate arrays of the unfused cells.  The
convolutional cells (``ConvRNNCell``, ``ConvLSTMCell``, ``ConvGRUCell``) replace the
projections by convolutions over images.
"""

import functools
import math
import numbers
import warnings

from runtime import initializer as init, nd, symbol
from runtime.initializer import fused_rnn_slices
from runtime.ops.rnn import rnn_param_size


def _normalize_sequence(length, inputs, layout, merge, in_layout=None):
    """``inputs`` as a list of ``length`` per-step symbols (``merge`` False), one symbol
    with the time axis of ``layout`` (``merge`` True), or as they are (``merge`` None);
    and that time axis."""
    if inputs is None:
        raise ValueError("unroll: inputs must be given (a Symbol or a list of Symbols; "
                         "unroll(inputs=None) is no longer supported in MXNet 1.x)")
    axis = layout.find("T")
    in_axis = in_layout.find("T") if in_layout is not None else axis
    if isinstance(inputs, symbol.Symbol):
        if merge is False:
            if len(inputs.list_outputs()) != 1:
                raise ValueError("unroll: inputs must be one Symbol or a list of Symbols "
                                 f"(got a group of {len(inputs.list_outputs())})")
            inputs = list(symbol.split(inputs, axis=in_axis, num_outputs=length,
                                       squeeze_axis=1))
    else:
        inputs = list(inputs)
        if length is not None and len(inputs) != length:
            raise ValueError(f"unroll: inputs must hold length={length} symbols (got "
                             f"{len(inputs)})")
        if merge is True:
            inputs = symbol.Concat(*[symbol.expand_dims(i, axis=axis) for i in inputs],
                                   dim=axis)
            in_axis = axis
    if isinstance(inputs, symbol.Symbol) and axis != in_axis:
        inputs = symbol.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs, axis


class RNNParams:
    """The variables of one or more cells, made on first request and shared after
    (MXNet's ``mx.rnn.RNNParams``).

    Parameters
    ----------
    prefix : str
        Prepended to every variable's name.
    """

    def __init__(self, prefix=""):
        self._prefix = prefix
        self._params = {}

    def get(self, name, **kwargs):
        """The variable ``prefix + name``, made with ``kwargs`` (``init``, ``shape`` ...
        of ``sym.Variable``) the first time."""
        name = self._prefix + name
        if name not in self._params:
            self._params[name] = symbol.Variable(name, **kwargs)
        return self._params[name]


class BaseRNNCell:
    """The base of the cells: ``cell(inputs, states)`` builds one step and returns
    ``(output, new states)``; ``unroll`` builds ``length`` steps.

    Parameters
    ----------
    prefix : str
        Prefix of the nodes' names (and of the parameters' when ``params`` is None).
    params : RNNParams, optional
        Variables to share with other cells; a new container when None.
    """

    def __init__(self, prefix="", params=None):
        self._own_params = params is None
        self._prefix = prefix
        self._params = RNNParams(prefix) if params is None else params
        self._modified = False
        self.reset()

    def reset(self):
        """Start the step and begin-state counts again, before building another graph."""
        self._init_counter = -1
        self._counter = -1
        for cell in getattr(self, "_cells", ()):
            cell.reset()

    def __call__(self, inputs, states):
        raise NotImplementedError(f"{type(self).__name__} cannot be stepped; use unroll")

    @property
    def params(self):
        """The cell's :class:`RNNParams` (once asked for, the cell no longer counts as
        owning them)."""
        self._own_params = False
        return self._params

    @property
    def state_info(self):
        """Per state, ``{'shape': ..., '__layout__': ...}`` (0: the batch size)."""
        raise NotImplementedError

    def _nc_states(self, n):
        """``state_info`` of ``n`` states of shape (batch, num_hidden), layout NC."""
        return [{"shape": (0, self._num_hidden), "__layout__": "NC"} for _ in range(n)]

    @property
    def state_shape(self):
        return [info["shape"] for info in self.state_info]

    @property
    def _gate_names(self):
        return ()

    def _check_unmodified(self):
        if self._modified:
            raise RuntimeError(f"{type(self).__name__}: after a modifier cell (DropoutCell, "
                               "ZoneoutCell, ResidualCell) wraps this cell, call the "
                               "modifier cell instead")

    def begin_state(self, func=symbol.zeros, **kwargs):
        """One symbol per state made by ``func`` (``sym.zeros`` by default; also
        ``sym.Variable`` to feed the states), named ``<prefix>begin_state_<k>``, with the
        state's shape and layout and ``kwargs``."""
        self._check_unmodified()
        states = []
        for info in self.state_info:
            self._init_counter += 1
            if info is not None:
                kwargs.update(info)
            states.append(func(name=f"{self._prefix}begin_state_{self._init_counter}",
                               **kwargs))
        return states

    def unpack_weights(self, args):
        """``args`` (name -> NDArray, ``Module.get_params()[0]``) with this cell's stacked
        ``i2h``/``h2h`` weights and biases split per gate
        (``<prefix>i2h_f_weight`` ...), copies."""
        args = dict(args)
        gates = self._gate_names
        if not gates:
            return args
        h = self._num_hidden
        for group in ("i2h", "h2h"):
            for kind in ("weight", "bias"):
                whole = args.pop(f"{self._prefix}{group}_{kind}")
                for j, gate in enumerate(gates):
                    args[f"{self._prefix}{group}{gate}_{kind}"] = whole[j * h:(j + 1) * h].copy()
        return args

    def pack_weights(self, args):
        """The inverse of :meth:`unpack_weights`: the per-gate arrays stacked again."""
        args = dict(args)
        gates = self._gate_names
        if not gates:
            return args
        for group in ("i2h", "h2h"):
            for kind in ("weight", "bias"):
                parts = [args.pop(f"{self._prefix}{group}{gate}_{kind}") for gate in gates]
                args[f"{self._prefix}{group}_{kind}"] = nd.concatenate(parts)
        return args

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        """``length`` steps over ``inputs`` (one symbol with the time axis of ``layout``,
        or a list of per-step symbols) from ``begin_state`` (:meth:`begin_state` when
        None): ``(outputs, states)``, the outputs one symbol along the time axis with
        ``merge_outputs`` True, a list with False, whichever is at hand with None."""
        self.reset()
        inputs, _ = _normalize_sequence(length, inputs, layout, False)
        states = self.begin_state() if begin_state is None else begin_state
        outputs = []
        for step in inputs:
            output, states = self(step, states)
            outputs.append(output)
        outputs, _ = _normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _next_step(self):
        """Count one more step; the prefix of its nodes' names (``<prefix>t<k>_``)."""
        self._counter += 1
        return f"{self._prefix}t{self._counter}_"

    def _get_activation(self, inputs, activation, **kwargs):
        if isinstance(activation, str):
            return symbol.Activation(inputs, act_type=activation, **kwargs)
        return activation(inputs, **kwargs)

    def _fc_params(self):
        """The input-to-hidden and hidden-to-hidden weights and biases of a fully
        connected cell, made in MXNet's order (``i2h_weight``, ``i2h_bias``,
        ``h2h_weight``, ``h2h_bias``)."""
        return tuple(self.params.get(name) for name in
                     ("i2h_weight", "i2h_bias", "h2h_weight", "h2h_bias"))

    def _fc(self, data, weight, bias, width, name):
        return symbol.FullyConnected(data=data, weight=weight, bias=bias, num_hidden=width,
                                     name=name)


class RNNCell(BaseRNNCell):
    """An Elman cell: ``h' = activation(W_i x + b_i + W_h h + b_h)``.

    Parameters
    ----------
    num_hidden : int
    activation : str or callable
        'tanh' (default), 'relu', ... or a function of a symbol.
    prefix : str, default 'rnn_'
    params : RNNParams, optional
    """

    def __init__(self, num_hidden, activation="tanh", prefix="rnn_", params=None):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._activation = activation
        self._iW, self._iB, self._hW, self._hB = self._fc_params()

    @property
    def state_info(self):
        return self._nc_states(1)

    @property
    def _gate_names(self):
        return ("",)

    def __call__(self, inputs, states):
        name = self._next_step()
        i2h = self._fc(inputs, self._iW, self._iB, self._num_hidden, f"{name}i2h")
        h2h = self._fc(states[0], self._hW, self._hB, self._num_hidden, f"{name}h2h")
        output = self._get_activation(i2h + h2h, self._activation, name=f"{name}out")
        return output, [output]


class LSTMCell(BaseRNNCell):
    """A long short-term memory cell, gates in the order input, forget, cell, output;
    states ``[h, c]``.

    Parameters
    ----------
    num_hidden : int
    prefix : str, default 'lstm_'
    params : RNNParams, optional
    forget_bias : float, default 1.0
        The initial bias of the forget gate (``i2h_bias`` carries
        ``init.LSTMBias(forget_bias)``).
    """

    def __init__(self, num_hidden, prefix="lstm_", params=None, forget_bias=1.0):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._iW = self.params.get("i2h_weight")
        self._hW = self.params.get("h2h_weight")
        self._iB = self.params.get("i2h_bias", init=init.LSTMBias(forget_bias=forget_bias))
        self._hB = self.params.get("h2h_bias")

    @property
    def state_info(self):
        return self._nc_states(2)

    @property
    def _gate_names(self):
        return ["_i", "_f", "_c", "_o"]

    def __call__(self, inputs, states):
        name = self._next_step()
        h = self._num_hidden
        gates = (self._fc(inputs, self._iW, self._iB, 4 * h, f"{name}i2h")
                 + self._fc(states[0], self._hW, self._hB, 4 * h, f"{name}h2h"))
        parts = symbol.SliceChannel(gates, num_outputs=4, name=f"{name}slice")
        in_gate = symbol.Activation(parts[0], act_type="sigmoid", name=f"{name}i")
        forget_gate = symbol.Activation(parts[1], act_type="sigmoid", name=f"{name}f")
        in_transform = symbol.Activation(parts[2], act_type="tanh", name=f"{name}c")
        out_gate = symbol.Activation(parts[3], act_type="sigmoid", name=f"{name}o")
        next_c = symbol._internal._plus(forget_gate * states[1], in_gate * in_transform,
                                        name=f"{name}state")
        next_h = symbol._internal._mul(out_gate, symbol.Activation(next_c, act_type="tanh"),
                                       name=f"{name}out")
        return next_h, [next_h, next_c]


class GRUCell(BaseRNNCell):
    """A gated recurrent unit in cuDNN's form (the reset gate applied after the
    recurrent projection), gates in the order reset, update, new.

    Parameters
    ----------
    num_hidden : int
    prefix : str, default 'gru_'
    params : RNNParams, optional
    """

    def __init__(self, num_hidden, prefix="gru_", params=None):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._iW, self._iB, self._hW, self._hB = self._fc_params()

    @property
    def state_info(self):
        return self._nc_states(1)

    @property
    def _gate_names(self):
        return ["_r", "_z", "_o"]

    def __call__(self, inputs, states):
        name = self._next_step()
        h = self._num_hidden
        prev = states[0]
        i2h = self._fc(inputs, self._iW, self._iB, 3 * h, f"{name}_i2h")
        h2h = self._fc(prev, self._hW, self._hB, 3 * h, f"{name}_h2h")
        i2h_r, i2h_z, i2h = symbol.SliceChannel(i2h, num_outputs=3, name=f"{name}_i2h_slice")
        h2h_r, h2h_z, h2h = symbol.SliceChannel(h2h, num_outputs=3, name=f"{name}_h2h_slice")
        reset = symbol.Activation(i2h_r + h2h_r, act_type="sigmoid", name=f"{name}_r_act")
        update = symbol.Activation(i2h_z + h2h_z, act_type="sigmoid", name=f"{name}_z_act")
        candidate = symbol.Activation(i2h + reset * h2h, act_type="tanh",
                                      name=f"{name}_h_act")
        next_h = symbol._internal._plus((1. - update) * candidate, update * prev,
                                        name=f"{name}out")
        return next_h, [next_h]


class FusedRNNCell(BaseRNNCell):
    """Every step of ``num_layers`` layers as one ``RNN`` operator on one flat parameter
    vector ``<prefix>parameters`` (filled by ``init.FusedRNN``).  It cannot be stepped;
    :meth:`unfuse` gives the equivalent stack of cells.

    Parameters
    ----------
    num_hidden : int
    num_layers : int, default 1
    mode : {'lstm', 'gru', 'rnn_tanh', 'rnn_relu'}
    bidirectional : bool, default False
    dropout : float, default 0
        Dropout between layers, in training.
    get_next_state : bool, default False
        Whether ``unroll`` returns the final states.
    forget_bias : float, default 1.0
    prefix : str, default ``mode + '_'``
    params : RNNParams, optional
    """

    def __init__(self, num_hidden, num_layers=1, mode="lstm", bidirectional=False,
                 dropout=0., get_next_state=False, forget_bias=1.0, prefix=None,
                 params=None):
        super().__init__(prefix=f"{mode}_" if prefix is None else prefix, params=params)
        self._num_hidden = num_hidden
        self._num_layers = num_layers
        self._mode = mode
        self._bidirectional = bidirectional
        self._dropout = dropout
        self._get_next_state = get_next_state
        self._directions = ["l", "r"] if bidirectional else ["l"]
        self._parameter = self.params.get(
            "parameters", init=init.FusedRNN(None, num_hidden, num_layers, mode,
                                             bidirectional, forget_bias))

    @property
    def state_info(self):
        n = 2 if self._mode == "lstm" else 1
        return [{"shape": (len(self._directions) * self._num_layers, 0, self._num_hidden),
                 "__layout__": "LNC"} for _ in range(n)]

    @property
    def _gate_names(self):
        return {"rnn_relu": [""], "rnn_tanh": [""], "lstm": ["_i", "_f", "_c", "_o"],
                "gru": ["_r", "_z", "_o"]}[self._mode]

    def _slices(self, size):
        return fused_rnn_slices(self._mode, size, self._num_hidden, self._num_layers,
                                self._bidirectional, self._prefix)

    def unpack_weights(self, args):
        args = dict(args)
        flat = args.pop(self._parameter.name)
        for name, (start, shape) in self._slices(flat.size).items():
            args[name] = flat[start:start + math.prod(shape)].reshape(shape).copy()
        return args

    def pack_weights(self, args):
        args = dict(args)
        first = args[f"{self._prefix}l0_i2h{self._gate_names[0]}_weight"]
        total = rnn_param_size(self._mode, first.shape[1], self._num_hidden,
                               self._num_layers, self._bidirectional)
        flat = nd.zeros((total,), ctx=first.context, dtype=first.dtype)
        for name, (start, shape) in self._slices(total).items():
            flat[start:start + math.prod(shape)] = args.pop(name).reshape(-1)
        args[self._parameter.name] = flat
        return args

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        inputs, axis = _normalize_sequence(length, inputs, layout, True)
        if axis == 1:
            warnings.warn("NTC layout detected. Consider using TNC for FusedRNNCell for "
                          "faster speed")
            inputs = symbol.swapaxes(inputs, dim1=0, dim2=1)
        elif axis != 0:
            raise ValueError(f"FusedRNNCell.unroll: layout must be 'NTC' or 'TNC' (got "
                             f"{layout!r})")
        states = self.begin_state() if begin_state is None else begin_state
        named = {"state": states[0]}
        if self._mode == "lstm":
            named["state_cell"] = states[1]
        rnn = symbol.RNN(data=inputs, parameters=self._parameter,
                         state_size=self._num_hidden, num_layers=self._num_layers,
                         bidirectional=self._bidirectional, p=self._dropout,
                         state_outputs=self._get_next_state, mode=self._mode,
                         name=f"{self._prefix}rnn", **named)
        if not self._get_next_state:
            outputs, states = rnn, []
        else:
            outputs = rnn[0]
            states = [rnn[1], rnn[2]] if self._mode == "lstm" else [rnn[1]]
            for state in states:
                state._set_attr(__layout__="LNC")
        if axis == 1:
            outputs = symbol.swapaxes(outputs, dim1=0, dim2=1)
        outputs, _ = _normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def unfuse(self):
        """The same network as a :class:`SequentialRNNCell` of unfused cells (named
        ``<prefix>l<k>_``, and ``<prefix>r<k>_`` backward), whose parameters
        :meth:`unpack_weights` gives."""
        def make(cell_prefix):
            if self._mode == "lstm":
                return LSTMCell(self._num_hidden, prefix=cell_prefix)
            if self._mode == "gru":
                return GRUCell(self._num_hidden, prefix=cell_prefix)
            return RNNCell(self._num_hidden, activation=self._mode[4:], prefix=cell_prefix)

        stack = SequentialRNNCell()
        for k in range(self._num_layers):
            if self._bidirectional:
                stack.add(BidirectionalCell(make(f"{self._prefix}l{k}_"),
                                            make(f"{self._prefix}r{k}_"),
                                            output_prefix=f"{self._prefix}bi_l{k}_"))
            else:
                stack.add(make(f"{self._prefix}l{k}_"))
            if self._dropout > 0 and k != self._num_layers - 1:
                stack.add(DropoutCell(self._dropout, prefix=f"{self._prefix}_dropout{k}_"))
        return stack


class SequentialRNNCell(BaseRNNCell):
    """Cells stacked: each one's output is the next one's input; the states are the
    cells' states in order.

    Parameters
    ----------
    params : RNNParams, optional
        When given, the added cells take their variables from it (they must not have
        been given their own).
    """

    def __init__(self, params=None):
        super().__init__(prefix="", params=params)
        self._override_cell_params = params is not None
        self._cells = []

    def add(self, cell):
        """Append ``cell`` to the stack."""
        self._cells.append(cell)
        if self._override_cell_params:
            if not cell._own_params:
                raise ValueError("SequentialRNNCell.add: give params to the "
                                 "SequentialRNNCell or to its cells, not both")
            cell.params._params.update(self.params._params)
        self.params._params.update(cell.params._params)

    @property
    def state_info(self):
        return [info for cell in self._cells for info in cell.state_info]

    def begin_state(self, **kwargs):
        self._check_unmodified()
        return [s for cell in self._cells for s in cell.begin_state(**kwargs)]

    def unpack_weights(self, args):
        for cell in self._cells:
            args = cell.unpack_weights(args)
        return args

    def pack_weights(self, args):
        for cell in self._cells:
            args = cell.pack_weights(args)
        return args

    def _split_states(self, states):
        pos = 0
        for cell in self._cells:
            n = len(cell.state_info)
            yield cell, states[pos:pos + n]
            pos += n

    def __call__(self, inputs, states):
        self._counter += 1
        next_states = []
        for cell, state in self._split_states(states):
            if isinstance(cell, BidirectionalCell):
                raise TypeError("SequentialRNNCell: a BidirectionalCell cannot be stepped; "
                                "use unroll")
            inputs, state = cell(inputs, state)
            next_states += state
        return inputs, next_states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        begin_state = self.begin_state() if begin_state is None else begin_state
        last = len(self._cells) - 1
        next_states = []
        for k, (cell, states) in enumerate(self._split_states(begin_state)):
            inputs, states = cell.unroll(length, inputs=inputs, begin_state=states,
                                         layout=layout,
                                         merge_outputs=merge_outputs if k == last else None)
            next_states += states
        return inputs, next_states


class DropoutCell(BaseRNNCell):
    """Dropout on the inputs, without states.

    Parameters
    ----------
    dropout : float
        The fraction dropped.
    prefix : str, default 'dropout_'
    params : RNNParams, optional
    """

    def __init__(self, dropout, prefix="dropout_", params=None):
        super().__init__(prefix, params)
        if isinstance(dropout, bool) or not isinstance(dropout, numbers.Real):
            raise TypeError(f"DropoutCell: dropout must be a number (got {dropout!r})")
        self.dropout = dropout

    @property
    def state_info(self):
        return []

    def __call__(self, inputs, states):
        if self.dropout > 0:
            inputs = symbol.Dropout(data=inputs, p=self.dropout)
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        inputs, _ = _normalize_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, symbol.Symbol):
            return self(inputs, [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs)


class ModifierCell(BaseRNNCell):
    """A cell that wraps ``base_cell`` and changes what it computes; the base cell is
    then used through this one only."""

    def __init__(self, base_cell):
        super().__init__()
        base_cell._modified = True
        self.base_cell = base_cell

    @property
    def params(self):
        self._own_params = False
        return self.base_cell.params

    @property
    def state_info(self):
        return self.base_cell.state_info

    def begin_state(self, init_sym=symbol.zeros, **kwargs):
        self._check_unmodified()
        self.base_cell._modified = False
        try:
            return self.base_cell.begin_state(init_sym, **kwargs)
        finally:
            self.base_cell._modified = True

    def unpack_weights(self, args):
        return self.base_cell.unpack_weights(args)

    def pack_weights(self, args):
        return self.base_cell.pack_weights(args)


class ZoneoutCell(ModifierCell):
    """Zoneout (Krueger et al., 2016) on ``base_cell``: in training, each output and
    state value keeps its previous step's value with probability ``zoneout_outputs`` /
    ``zoneout_states``."""

    def __init__(self, base_cell, zoneout_outputs=0., zoneout_states=0.):
        if isinstance(base_cell, (FusedRNNCell, BidirectionalCell)):
            raise TypeError(f"ZoneoutCell: base_cell must be a steppable cell (got a "
                            f"{type(base_cell).__name__}; unfuse it or wrap the cells "
                            "underneath)")
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self.prev_output = None

    def reset(self):
        super().reset()
        self.prev_output = None

    def __call__(self, inputs, states):
        next_output, next_states = self.base_cell(inputs, states)

        def mask(p, like):
            return symbol.Dropout(symbol.ones_like(like), p=p)

        prev = self.prev_output if self.prev_output is not None else symbol.zeros((0, 0))
        output = next_output if self.zoneout_outputs == 0. else symbol.where(
            mask(self.zoneout_outputs, next_output), next_output, prev)
        if self.zoneout_states != 0.:
            next_states = [symbol.where(mask(self.zoneout_states, new), new, old)
                           for new, old in zip(next_states, states)]
        self.prev_output = output
        return output, next_states


class ResidualCell(ModifierCell):
    """``base_cell`` with its input added to its output (Wu et al., 2016)."""

    def __call__(self, inputs, states):
        output, states = self.base_cell(inputs, states)
        return symbol.elemwise_add(output, inputs, name=f"{output.name}_plus_residual"), states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs=inputs,
                                                    begin_state=begin_state, layout=layout,
                                                    merge_outputs=merge_outputs)
        finally:
            self.base_cell._modified = True
        if merge_outputs is None:
            merge_outputs = isinstance(outputs, symbol.Symbol)
        inputs, _ = _normalize_sequence(length, inputs, layout, merge_outputs)
        if merge_outputs:
            return symbol.elemwise_add(outputs, inputs,
                                       name=f"{outputs.name}_plus_residual"), states
        return [symbol.elemwise_add(o, i, name=f"{o.name}_plus_residual")
                for o, i in zip(outputs, inputs)], states


class BidirectionalCell(BaseRNNCell):
    """``l_cell`` over the sequence forward and ``r_cell`` backward, their outputs
    concatenated per step (``<output_prefix>t<k>``, or ``<output_prefix>out`` merged).
    It cannot be stepped."""

    def __init__(self, l_cell, r_cell, params=None, output_prefix="bi_"):
        super().__init__("", params=params)
        self._output_prefix = output_prefix
        if params is not None:
            if not (l_cell._own_params and r_cell._own_params):
                raise ValueError("BidirectionalCell: give params to the BidirectionalCell "
                                 "or to its cells, not both")
            l_cell.params._params.update(self.params._params)
            r_cell.params._params.update(self.params._params)
        self.params._params.update(l_cell.params._params)
        self.params._params.update(r_cell.params._params)
        self._cells = [l_cell, r_cell]

    def unpack_weights(self, args):
        for cell in self._cells:
            args = cell.unpack_weights(args)
        return args

    def pack_weights(self, args):
        for cell in self._cells:
            args = cell.pack_weights(args)
        return args

    @property
    def state_info(self):
        return [info for cell in self._cells for info in cell.state_info]

    def begin_state(self, **kwargs):
        self._check_unmodified()
        return [s for cell in self._cells for s in cell.begin_state(**kwargs)]

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        inputs, axis = _normalize_sequence(length, inputs, layout, False)
        states = self.begin_state() if begin_state is None else begin_state
        l_cell, r_cell = self._cells
        n_left = len(l_cell.state_info)
        l_outputs, l_states = l_cell.unroll(length, inputs=inputs,
                                            begin_state=states[:n_left], layout=layout,
                                            merge_outputs=merge_outputs)
        r_outputs, r_states = r_cell.unroll(length, inputs=list(reversed(inputs)),
                                            begin_state=states[n_left:], layout=layout,
                                            merge_outputs=merge_outputs)
        if merge_outputs is None:
            merge_outputs = isinstance(l_outputs, symbol.Symbol) and \
                isinstance(r_outputs, symbol.Symbol)
            if not merge_outputs:
                if isinstance(l_outputs, symbol.Symbol):
                    l_outputs = list(symbol.SliceChannel(l_outputs, axis=axis,
                                                         num_outputs=length, squeeze_axis=1))
                if isinstance(r_outputs, symbol.Symbol):
                    r_outputs = list(symbol.SliceChannel(r_outputs, axis=axis,
                                                         num_outputs=length, squeeze_axis=1))
        if merge_outputs:
            outputs = symbol.Concat(l_outputs, symbol.reverse(r_outputs, axis=axis), dim=2,
                                    name=f"{self._output_prefix}out")
        else:
            outputs = [symbol.Concat(lo, ro, dim=1, name=f"{self._output_prefix}t{k}")
                       for k, (lo, ro) in enumerate(zip(l_outputs, reversed(r_outputs)))]
        return outputs, [l_states, r_states]


_LEAKY = functools.partial(symbol.LeakyReLU, act_type="leaky", slope=0.2)


class BaseConvRNNCell(BaseRNNCell):
    """The base of the convolutional cells: ``i2h`` and ``h2h`` are convolutions (the
    recurrent one keeps the state's spatial size), the gates stacked along the
    channels.

    Parameters
    ----------
    input_shape : tuple of int
        One step's input shape, batch first (the state's shape follows from it).
    num_hidden : int
        The state's channels.
    h2h_kernel, h2h_dilate : tuple of int
        The recurrent convolution (odd kernel sizes: it pads to keep the size).
    i2h_kernel, i2h_stride, i2h_pad, i2h_dilate : tuple of int
        The input convolution.
    i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
    h2h_bias_initializer : str or Initializer, optional
    activation : str or callable
        Default: a leaky ReLU of slope 0.2.
    prefix : str
        Default: the cell's name (``ConvLSTM_`` ...).
    params : RNNParams, optional
    conv_layout : str, default 'NCHW'
    """

    _default_prefix = ""

    def __init__(self, input_shape, num_hidden, h2h_kernel=(3, 3), h2h_dilate=(1, 1),
                 i2h_kernel=(3, 3), i2h_stride=(1, 1), i2h_pad=(1, 1), i2h_dilate=(1, 1),
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
                 activation=_LEAKY, prefix=None, params=None, conv_layout="NCHW"):
        super().__init__(prefix=self._default_prefix if prefix is None else prefix,
                         params=params)
        if any(k % 2 == 0 for k in h2h_kernel[:2]):
            raise ValueError(f"{type(self).__name__}: h2h_kernel must hold odd sizes (got "
                             f"{h2h_kernel!r})")
        self._h2h_kernel = h2h_kernel
        self._h2h_dilate = h2h_dilate
        self._h2h_pad = tuple(d * (k - 1) // 2 for d, k in zip(h2h_dilate, h2h_kernel))
        self._i2h = {"kernel": i2h_kernel, "stride": i2h_stride, "pad": i2h_pad,
                     "dilate": i2h_dilate}
        self._num_hidden = num_hidden
        self._input_shape = input_shape
        self._conv_layout = conv_layout
        self._activation = activation
        probe = symbol.Convolution(data=symbol.Variable("data"), num_filter=num_hidden,
                                   layout=conv_layout, **self._i2h)
        self._state_shape = (0,) + tuple(probe.infer_shape(data=input_shape)[1][0][1:])
        self._iW = self.params.get("i2h_weight", init=i2h_weight_initializer)
        self._hW = self.params.get("h2h_weight", init=h2h_weight_initializer)
        self._iB = self.params.get("i2h_bias", init=i2h_bias_initializer)
        self._hB = self.params.get("h2h_bias", init=h2h_bias_initializer)

    @property
    def state_info(self):
        return [{"shape": self._state_shape, "__layout__": self._conv_layout}
                for _ in range(2 if len(self._gate_names) == 4 else 1)]

    def _conv_forward(self, inputs, states, name):
        width = self._num_hidden * len(self._gate_names)
        i2h = symbol.Convolution(name=f"{name}i2h", data=inputs, num_filter=width,
                                 weight=self._iW, bias=self._iB, layout=self._conv_layout,
                                 **self._i2h)
        h2h = symbol.Convolution(name=f"{name}h2h", data=states[0], num_filter=width,
                                 kernel=self._h2h_kernel, dilate=self._h2h_dilate,
                                 pad=self._h2h_pad, stride=(1, 1), weight=self._hW,
                                 bias=self._hB, layout=self._conv_layout)
        return i2h, h2h


class ConvRNNCell(BaseConvRNNCell):
    """A convolutional Elman cell (:class:`BaseConvRNNCell`'s parameters; the activation
    defaults to a leaky ReLU of slope 0.2)."""

    _default_prefix = "ConvRNN_"

    @property
    def _gate_names(self):
        return ("",)

    def __call__(self, inputs, states):
        name = self._next_step()
        i2h, h2h = self._conv_forward(inputs, states, name)
        output = self._get_activation(i2h + h2h, self._activation, name=f"{name}out")
        return output, [output]


class ConvLSTMCell(BaseConvRNNCell):
    """A convolutional LSTM (Shi et al., 2015): :class:`LSTMCell`'s gates over
    convolutions, the cell input and the cell's output through ``activation`` (a leaky
    ReLU of slope 0.2 by default)."""

    _default_prefix = "ConvLSTM_"

    @property
    def _gate_names(self):
        return ["_i", "_f", "_c", "_o"]

    def __call__(self, inputs, states):
        name = self._next_step()
        i2h, h2h = self._conv_forward(inputs, states, name)
        parts = symbol.SliceChannel(i2h + h2h, num_outputs=4,
                                    axis=self._conv_layout.find("C"), name=f"{name}slice")
        in_gate = symbol.Activation(parts[0], act_type="sigmoid", name=f"{name}i")
        forget_gate = symbol.Activation(parts[1], act_type="sigmoid", name=f"{name}f")
        in_transform = self._get_activation(parts[2], self._activation, name=f"{name}c")
        out_gate = symbol.Activation(parts[3], act_type="sigmoid", name=f"{name}o")
        next_c = symbol._internal._plus(forget_gate * states[1], in_gate * in_transform,
                                        name=f"{name}state")
        next_h = symbol._internal._mul(out_gate,
                                       self._get_activation(next_c, self._activation),
                                       name=f"{name}out")
        return next_h, [next_h, next_c]


class ConvGRUCell(BaseConvRNNCell):
    """A convolutional GRU: :class:`GRUCell`'s gates over convolutions, the candidate
    through ``activation`` (a leaky ReLU of slope 0.2 by default)."""

    _default_prefix = "ConvGRU_"

    @property
    def _gate_names(self):
        return ["_r", "_z", "_o"]

    def __call__(self, inputs, states):
        name = self._next_step()
        i2h, h2h = self._conv_forward(inputs, states, name)
        i2h_r, i2h_z, i2h = symbol.SliceChannel(i2h, num_outputs=3, name=f"{name}_i2h_slice")
        h2h_r, h2h_z, h2h = symbol.SliceChannel(h2h, num_outputs=3, name=f"{name}_h2h_slice")
        reset = symbol.Activation(i2h_r + h2h_r, act_type="sigmoid", name=f"{name}_r_act")
        update = symbol.Activation(i2h_z + h2h_z, act_type="sigmoid", name=f"{name}_z_act")
        candidate = self._get_activation(i2h + reset * h2h, self._activation,
                                         name=f"{name}_h_act")
        next_h = symbol._internal._plus((1. - update) * candidate, update * states[0],
                                        name=f"{name}out")
        return next_h, [next_h]


__all__ = ["RNNParams", "BaseRNNCell", "RNNCell", "LSTMCell", "GRUCell", "FusedRNNCell",
           "SequentialRNNCell", "DropoutCell", "ModifierCell", "ZoneoutCell",
           "ResidualCell", "BidirectionalCell", "BaseConvRNNCell", "ConvRNNCell",
           "ConvLSTMCell", "ConvGRUCell"]
