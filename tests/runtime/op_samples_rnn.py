"""Samples, failures and zero-size cases of the fused RNN operator and its hidden
gradient (runtime/ops/rnn.py; see op_samples.py for the tables' meaning)."""

import numpy as np

from runtime.ops.rnn import rnn_param_size
from tests.runtime.op_samples import (FAILURES, SAMPLES, ZERO_SIZE, Failure, Sample, ZeroSize,
                                      _add, uniform, zeros)


def _inputs(mode, t, n, i, h, layers, bidir, seed, dtype=np.float64):
    """data, parameters, state[, state_cell] of one call."""
    d = 2 if bidir else 1
    size = rnn_param_size(mode, i, h, layers, bidir)
    arrays = [uniform((t, n, i), seed=seed, dtype=dtype),
              uniform((size,), -0.5, 0.5, seed=seed + 1, dtype=dtype),
              uniform((layers * d, n, h), -0.5, 0.5, seed=seed + 2, dtype=dtype)]
    if mode == "lstm":
        arrays.append(uniform((layers * d, n, h), -0.5, 0.5, seed=seed + 3, dtype=dtype))
    return arrays


def _attrs(mode, h, layers, bidir, **kw):
    return dict({"mode": mode, "state_size": h, "num_layers": layers,
                 "bidirectional": bidir}, **kw)


_CASES = [("lstm", 1, False, {}), ("lstm", 2, True, {"state_outputs": True}),
          ("gru", 2, False, {"state_outputs": True}), ("gru", 1, True, {}),
          ("rnn_tanh", 2, True, {"state_outputs": True}), ("rnn_relu", 1, False, {})]
_add(SAMPLES, "RNN",
     *[Sample(_inputs(m, 3, 2, 3, 2, layers, bidir, seed=740 + 4 * k),
              _attrs(m, 2, layers, bidir, **kw))
       for k, (m, layers, bidir, kw) in enumerate(_CASES)],
     Sample(_inputs("lstm", 4, 3, 2, 2, 2, True, seed=772) + [np.array([4.0, 1.0, 3.0])],
            _attrs("lstm", 2, 2, True, state_outputs=True, use_sequence_length=True),
            wrt=[0, 1, 2, 3]),
     # some cells clipped, none on a bound
     Sample(_inputs("lstm", 3, 2, 2, 3, 2, False, seed=774),
            _attrs("lstm", 3, 2, False, state_outputs=True, lstm_state_clip_min=-0.13,
                   lstm_state_clip_max=0.11)),
     # (lengths of the other modes cannot be given by position: the fourth input is
     # state_cell, which they do not take)
     Sample(_inputs("lstm", 3, 2, 2, 2, 1, True, seed=773) + [np.array([2, 3], np.int64)],
            _attrs("lstm", 2, 1, True, use_sequence_length=True), wrt=[0, 1, 2, 3]),
     Sample(_inputs("lstm", 2, 3, 4, 3, 2, False, seed=770, dtype=np.float32),
            _attrs("lstm", 3, 2, False, state_outputs=True), grad=False),
     Sample(_inputs("gru", 2, 1, 2, 2, 1, False, seed=771, dtype=np.float16),
            _attrs("gru", 2, 1, False), grad=False))


def _heads(mode, t, n, h, layers, d, state_outputs, seed):
    shapes = [(t, n, d * h)]
    if state_outputs:
        shapes += [(layers * d, n, h)] * (2 if mode == "lstm" else 1)
    return [uniform(s, seed=seed + j) for j, s in enumerate(shapes)]


def _backward_sample(mode, layers, bidir, state_outputs, seed):
    data, params, *states = _inputs(mode, 3, 2, 3, 2, layers, bidir, seed)
    heads = _heads(mode, 3, 2, 2, layers, 2 if bidir else 1, state_outputs, seed + 10)
    return Sample([data, params] + heads + states,
                  _attrs(mode, 2, layers, bidir, state_outputs=state_outputs,
                         use_reserve=False), grad=False)


_add(SAMPLES, "_backward_RNN",
     _backward_sample("lstm", 2, True, True, 780),
     _backward_sample("gru", 1, False, False, 790),
     _backward_sample("rnn_relu", 2, False, True, 800))

_LSTM = _inputs("lstm", 3, 2, 3, 2, 1, False, seed=810)
_add(FAILURES, "RNN",
     Failure(_LSTM[:3] + [uniform((1, 2, 3))], _attrs("lstm", 2, 1, False), ValueError,
             r"^RNN: state_cell must have shape \(num_layers\*directions, batch, "
             r"state_size\) = \(1, 2, 2\) \(got \(1, 2, 3\)\)"),
     Failure([_LSTM[0], uniform((7,))] + _LSTM[2:], _attrs("lstm", 2, 1, False), ValueError,
             r"^RNN: parameters must be a 1-D array of 56 values"),
     Failure(_LSTM[:3], _attrs("lstm", 2, 1, False), ValueError,
             r"^RNN: takes 4 array inputs \(data, parameters, state, state_cell\)"),
     Failure(_LSTM, _attrs("lstm", 2, 1, False, p=1.0), ValueError,
             r"^RNN: p must be in \[0, 1\) \(got p=1.0\)"),
     Failure(_LSTM, _attrs("lstm", 2, 1, False, projection_size=1), NotImplementedError,
             r"^RNN: projection_size must be None in the fused operator \(got 1\)"),
     Failure([uniform((3, 2))] + _LSTM[1:], _attrs("lstm", 2, 1, False), ValueError,
             r"^RNN: data must be 3-D"),
     Failure(_LSTM, _attrs("lstm", 2, 1, False, lstm_state_clip_min=1.0,
                           lstm_state_clip_max=0.5), ValueError,
             r"^RNN: lstm_state_clip_min must be <= lstm_state_clip_max \(got 1.0 > 0.5\)"),
     Failure(_LSTM[:3], _attrs("gru", 2, 1, False, lstm_state_clip_min=0.0,
                               lstm_state_clip_max=0.5), ValueError,
             r"^RNN: lstm_state_clip_min/max apply to mode='lstm' only"),
     Failure(_LSTM + [np.array([3.0])], _attrs("lstm", 2, 1, False, use_sequence_length=True),
             ValueError, r"^RNN: sequence_length must have shape \(batch,\) = \(2,\)"),
     # raised by the kernel, after out= is chosen
     Failure(_LSTM + [np.array([3.0, 4.0])],
             _attrs("lstm", 2, 1, False, use_sequence_length=True), ValueError,
             r"^RNN: sequence_length must hold integers in \[1, 3\] \(the sequence "
             r"length of data\) \(got \[3.0, 4.0\]\)", out=((3, 2, 2), np.float64)))
_add(ZERO_SIZE, "RNN",
     ZeroSize(_inputs("lstm", 0, 2, 3, 2, 1, False, seed=820), _attrs("lstm", 2, 1, False),
              lambda *a: np.zeros((0, 2, 2))),
     ZeroSize(_inputs("gru", 3, 0, 3, 2, 2, True, seed=821),
              _attrs("gru", 2, 2, True, state_outputs=True),
              lambda *a: [np.zeros((3, 0, 4)), np.zeros((4, 0, 2))]),
     # no time steps: the final states are the initial ones
     ZeroSize([zeros(0, 2, 3)] + _inputs("rnn_tanh", 1, 2, 3, 2, 1, False, seed=822)[1:],
              _attrs("rnn_tanh", 2, 1, False, state_outputs=True),
              lambda x, p, s: [np.zeros((0, 2, 2)), s]))
