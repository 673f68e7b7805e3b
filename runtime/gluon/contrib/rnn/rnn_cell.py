"""``gluon.contrib.rnn``'s cells: ``LSTMPCell``, an LSTM cell whose recurrent state is a
projection of its hidden state (LSTMP, Sak et al. 2014), and ``VariationalDropoutCell``,
dropout with one mask per sequence (Gal and Ghahramani 2016)."""

from runtime.gluon.nn.basic_layers import _positive_int
from runtime.gluon.rnn.rnn_cell import (HybridRecurrentCell, ModifierCell, _F,
                                        _check_steppable_modifier, _GatedCell)

__all__ = ["LSTMPCell", "VariationalDropoutCell"]


class LSTMPCell(_GatedCell):
    """LSTM with a projection (Gluon's ``contrib.rnn.LSTMPCell``): with ``c`` and the
    gates as in :class:`~runtime.gluon.rnn.LSTMCell` (``i2h_weight`` (4H, input_size),
    ``h2h_weight`` (4H, P) applied to the projected state ``r``), the cell computes
    ``h = o * tanh(c)`` and returns ``r = h2r_weight @ h`` (``h2r_weight`` (P, H), no
    bias) as its output and first state; the states are ``[r, c]``, of shapes
    (batch, P) and (batch, H)."""

    _gates = 4

    def __init__(self, hidden_size, projection_size, i2h_weight_initializer=None,
                 h2h_weight_initializer=None, h2r_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 prefix=None, params=None):
        HybridRecurrentCell.__init__(self, prefix=prefix, params=params)
        layer = type(self).__name__
        self._hidden_size = _positive_int(layer, "hidden_size", hidden_size)
        self._projection_size = _positive_int(layer, "projection_size", projection_size)
        self._input_size = _positive_int(layer, "input_size", input_size, minimum=0)
        g = 4 * self._hidden_size
        self.i2h_weight = self.params.get("i2h_weight", shape=(g, self._input_size),
                                          init=i2h_weight_initializer,
                                          allow_deferred_init=True)
        self.h2h_weight = self.params.get("h2h_weight", shape=(g, self._projection_size),
                                          init=h2h_weight_initializer,
                                          allow_deferred_init=True)
        self.h2r_weight = self.params.get("h2r_weight",
                                          shape=(self._projection_size, self._hidden_size),
                                          init=h2r_weight_initializer,
                                          allow_deferred_init=True)
        self.i2h_bias = self.params.get("i2h_bias", shape=(g,), init=i2h_bias_initializer,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get("h2h_bias", shape=(g,), init=h2h_bias_initializer,
                                        allow_deferred_init=True)

    def _alias(self):
        return "lstmp"

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._projection_size), "__layout__": "NC"},
                {"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, h2r_weight,
                       i2h_bias, h2h_bias):
        i2h, h2h = self._projections(F, inputs, states, i2h_weight, h2h_weight, i2h_bias,
                                     h2h_bias)
        gates = F.split(i2h + h2h, num_outputs=4, axis=1)
        in_gate = F.sigmoid(gates[0])
        forget_gate = F.sigmoid(gates[1])
        in_transform = F.tanh(gates[2])
        out_gate = F.sigmoid(gates[3])
        next_c = forget_gate * states[1] + in_gate * in_transform
        hidden = F.elemwise_mul(out_gate, F.Activation(next_c, act_type="tanh",
                                                       name=self._step_name("state")))
        next_r = F.FullyConnected(hidden, h2r_weight, no_bias=True,
                                  num_hidden=self._projection_size,
                                  name=self._step_name("out"))
        return next_r, [next_r, next_c]

    def __repr__(self):
        shape = self.i2h_weight.shape
        return (f"{type(self).__name__}({shape[1] if shape[1] else None} -> "
                f"{self._hidden_size} -> {self._projection_size})")


class VariationalDropoutCell(ModifierCell):
    """Dropout on a cell's inputs, first state (``h``) and outputs with masks drawn once
    per sequence, at its first step after :meth:`reset` (``unroll`` resets), and reused
    at every step (Gluon's ``contrib.rnn.VariationalDropoutCell``).  The rates are in
    [0, 1); as Dropout, the masks are ones outside training mode."""

    def __init__(self, base_cell, drop_inputs=0., drop_states=0., drop_outputs=0.):
        _check_steppable_modifier("VariationalDropoutCell", base_cell,
                                  drop_inputs=drop_inputs, drop_states=drop_states,
                                  drop_outputs=drop_outputs)
        super().__init__(base_cell)
        self.drop_inputs = drop_inputs
        self.drop_states = drop_states
        self.drop_outputs = drop_outputs
        self._masks = {}

    def _alias(self):
        return "vardrop"

    def reset(self):
        super().reset()
        self._masks = {}

    def _mask(self, what, p, like):
        """The sequence's mask for ``what``: drawn at its first step, then reused."""
        mask = self._masks.get(what)
        if mask is None:
            F = _F(like)
            mask = self._masks[what] = F.Dropout(F.ones_like(like), p=p)
        return mask

    def forward(self, inputs, states):
        if self.drop_states:
            states = [states[0] * self._mask("states", self.drop_states, states[0])] + \
                list(states[1:])
        if self.drop_inputs:
            inputs = inputs * self._mask("inputs", self.drop_inputs, inputs)
        output, next_states = self.base_cell(inputs, states)
        if self.drop_outputs:
            output = output * self._mask("outputs", self.drop_outputs, output)
        return output, next_states

    def __repr__(self):
        return (f"VariationalDropoutCell(drop_inputs={self.drop_inputs}, drop_states="
                f"{self.drop_states}, drop_outputs={self.drop_outputs}, {self.base_cell!r})")
