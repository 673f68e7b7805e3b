"""Gluon 1.x's test_gluon_rnn.py layer cases (CPU, imperative) and rnn_layer.py's
documented behaviour, ported: shapes, begin_state, layouts, parameter names, order and
shapes, the fixed-weight LSTM inference values, and nd.RNN's MXNet signature."""

import numpy as np
import pytest

import runtime as mx
from runtime import autograd, nd
from runtime.gluon import nn


def check_rnn_layer_forward(layer, inputs, states=None, run_only=False):
    layer.initialize()
    inputs.attach_grad()
    with autograd.record():
        out = layer(inputs) if states is None else layer(inputs, states)
        if states is not None:
            assert isinstance(out, (list, tuple)) and len(out) == 2
            out = out[0]
        else:
            assert isinstance(out, nd.NDArray)
        out.backward()
    np_out, np_dx = out.asnumpy(), inputs.grad.asnumpy()
    layer.hybridize()
    with autograd.record():
        out = layer(inputs) if states is None else layer(inputs, states)[0]
        out.backward()
    if not run_only:
        np.testing.assert_allclose(np_out, out.asnumpy(), rtol=1e-3, atol=1e-5)
        np.testing.assert_allclose(np_dx, inputs.grad.asnumpy(), rtol=1e-3, atol=1e-5)
    return out


@pytest.mark.parametrize("dropout", [0, 0.5])
def test_rnn_layers_fp32(dropout):
    ro = dropout > 0
    one = lambda *s: nd.ones(s)
    out = check_rnn_layer_forward(mx.gluon.rnn.RNN(10, 2, dropout=dropout), one(8, 3, 20), run_only=ro)
    assert out.shape == (8, 3, 10)
    out = check_rnn_layer_forward(mx.gluon.rnn.RNN(10, 2, bidirectional=True, dropout=dropout),
                                  one(8, 3, 20), one(4, 3, 10), run_only=ro)
    assert out.shape == (8, 3, 20)
    check_rnn_layer_forward(mx.gluon.rnn.LSTM(10, 2, dropout=dropout), one(8, 3, 20), run_only=ro)
    check_rnn_layer_forward(mx.gluon.rnn.LSTM(10, 2, bidirectional=True, dropout=dropout),
                            one(8, 3, 20), [one(4, 3, 10), one(4, 3, 10)], run_only=ro)
    check_rnn_layer_forward(mx.gluon.rnn.GRU(10, 2, dropout=dropout), one(8, 3, 20), run_only=ro)
    check_rnn_layer_forward(mx.gluon.rnn.GRU(10, 2, bidirectional=True, dropout=dropout),
                            one(8, 3, 20), one(4, 3, 10), run_only=ro)


def test_rnn_layer_in_sequential():
    net = nn.Sequential()
    net.add(mx.gluon.rnn.LSTM(10, bidirectional=True), nn.Flatten(), nn.Dense(3, activation="relu"))
    net.initialize()
    with autograd.record():
        out = net(nd.ones((2, 3, 10)))
        out.backward()
    assert out.shape == (2, 3)


def test_layer_fill_shape():
    layer = mx.gluon.rnn.LSTM(10)
    assert repr(layer) == "LSTM(None -> 10, TNC)"
    check_rnn_layer_forward(layer, nd.ones((3, 2, 7)))
    assert layer.l0_i2h_weight.shape[1] == 7
    assert repr(layer) == "LSTM(7 -> 10, TNC)"
    assert repr(mx.gluon.rnn.GRU(4, 2, dropout=0.5, bidirectional=True, input_size=3)) == \
        "GRU(3 -> 4, TNC, num_layers=2, dropout=0.5, bidirectional)"


def test_lstm_cpu_inference():
    expected = np.array([[[0.72045636, 0.72045636, 0.95215213, 0.95215213],
                          [0.72045636, 0.72045636, 0.95215213, 0.95215213]],
                         [[0.95215213, 0.95215213, 0.72045636, 0.72045636],
                          [0.95215213, 0.95215213, 0.72045636, 0.72045636]]])
    model = mx.gluon.rnn.LSTM(2, num_layers=6, bidirectional=True)
    model.initialize(mx.init.One())
    y = model(nd.ones((2, 2, 2))).asnumpy()
    np.testing.assert_allclose(y, expected, rtol=1e-3, atol=1e-5)


@pytest.mark.parametrize("cls,gates,extra", [(mx.gluon.rnn.RNN, 1, {}), (mx.gluon.rnn.LSTM, 4, {}),
                                             (mx.gluon.rnn.GRU, 3, {})])
def test_parameter_names_and_shapes(cls, gates, extra):
    layer = cls(7, num_layers=2, bidirectional=True, input_size=5, prefix="rnn_")
    params = layer.collect_params()
    want = []
    for i in range(2):
        for d in "lr":
            ni = 5 if i == 0 else 14
            want += [(f"rnn_{d}{i}_i2h_weight", (gates * 7, ni)),
                     (f"rnn_{d}{i}_h2h_weight", (gates * 7, 7)),
                     (f"rnn_{d}{i}_i2h_bias", (gates * 7,)),
                     (f"rnn_{d}{i}_h2h_bias", (gates * 7,))]
    assert [(k, v.shape) for k, v in params.items()] == want


def test_lstmp_parameter_order():
    # Gluon 1.x registers h2r_weight after the biases of each layer and direction
    layer = mx.gluon.rnn.LSTM(4, projection_size=2, input_size=3, prefix="lstm0_")
    assert list(layer.collect_params()) == [
        "lstm0_l0_i2h_weight", "lstm0_l0_h2h_weight", "lstm0_l0_i2h_bias",
        "lstm0_l0_h2h_bias", "lstm0_l0_h2r_weight"]


def test_default_prefixes():
    a, b = mx.gluon.rnn.LSTM(3), mx.gluon.rnn.LSTM(3)
    assert a.prefix.startswith("lstm") and a.prefix != b.prefix
    assert mx.gluon.rnn.GRU(3).prefix.startswith("gru") and mx.gluon.rnn.RNN(3).prefix.startswith("rnn")


@pytest.mark.parametrize("cls,n", [(mx.gluon.rnn.RNN, 1), (mx.gluon.rnn.LSTM, 2), (mx.gluon.rnn.GRU, 1)])
def test_begin_state(cls, n):
    layer = cls(5, num_layers=3, bidirectional=True)
    info = layer.state_info(4)
    assert len(info) == n
    assert all(i["shape"] == (6, 4, 5) and i["__layout__"] == "LNC" for i in info)
    states = layer.begin_state(4)
    assert [s.shape for s in states] == [(6, 4, 5)] * n
    assert all(s.dtype == np.float32 and not s.asnumpy().any() for s in states)
    states = layer.begin_state(4, func=nd.ones)
    assert all(s.asnumpy().all() for s in states)
    # Gluon 1.x: state_info carries the layer's dtype, so begin states follow it
    layer64 = cls(5, dtype="float64")
    assert layer64.state_info(2)[0]["dtype"] == "float64"
    assert all(s.dtype == np.float64 for s in layer64.begin_state(2))


@pytest.mark.parametrize("layout", ["TNC", "NTC"])
@pytest.mark.parametrize("cls", [mx.gluon.rnn.RNN, mx.gluon.rnn.LSTM, mx.gluon.rnn.GRU])
def test_layouts_and_state_outputs(cls, layout):
    layer = cls(6, num_layers=2, bidirectional=True, layout=layout)
    layer.initialize()
    x = nd.random.uniform(shape=(5, 3, 4))       # (T, N, C) or (N, T, C)
    batch = 3 if layout == "TNC" else 5
    out = layer(x)
    assert out.shape == x.shape[:2] + (12,)
    states = layer.begin_state(batch)
    out2, new = layer(x, states)
    np.testing.assert_allclose(out2.asnumpy(), out.asnumpy(), rtol=1e-6)
    assert isinstance(new, list) and [s.shape for s in new] == [s.shape for s in states]
    # the layout only swaps axes: the NTC layer equals the TNC one on swapped data
    if layout == "NTC":
        ref = cls(6, num_layers=2, bidirectional=True, layout="TNC")
        ref.initialize()
        for (_, p), (_, q) in zip(layer.collect_params().items(),
                                  ref.collect_params().items()):
            q.shape = p.shape
            q.set_data(p.data())
        got = ref(nd.swapaxes(x, 0, 1))
        np.testing.assert_allclose(nd.swapaxes(got, 0, 1).asnumpy(), out.asnumpy(),
                                   rtol=1e-5, atol=1e-6)


def test_state_shape_checked():
    layer = mx.gluon.rnn.GRU(4, num_layers=2)
    layer.initialize()
    with pytest.raises(ValueError, match=r"Invalid recurrent state shape|state"):
        layer(nd.ones((3, 2, 5)), nd.zeros((2, 3, 4)))     # batch 2, state batch 3


def test_lstm_state_clip_layer():
    layer = mx.gluon.rnn.LSTM(3, state_clip_min=-0.01, state_clip_max=0.01, input_size=2)
    layer.initialize(mx.init.One())
    out, (h, c) = layer(nd.ones((4, 1, 2)) * 10, layer.begin_state(1))
    assert np.abs(c.asnumpy()).max() <= 0.01 + 1e-7
    assert out.shape == (4, 1, 3)


def test_nd_rnn_signature_and_outputs():
    T, N, I, H = 3, 2, 4, 5
    size = 4 * H * (I + H) + 2 * 4 * H
    params = nd.random.uniform(-0.1, 0.1, shape=(size,))
    x, h0, c0 = nd.ones((T, N, I)), nd.zeros((1, N, H)), nd.zeros((1, N, H))
    out = nd.RNN(x, params, h0, c0, state_size=H, num_layers=1, mode="lstm")
    assert isinstance(out, nd.NDArray) and out.shape == (T, N, H)
    out = nd.RNN(x, params, h0, c0, state_size=H, num_layers=1, mode="lstm",
                 state_outputs=True)
    assert [o.shape for o in out] == [(T, N, H), (1, N, H), (1, N, H)]
    out = nd.RNN(data=x, parameters=params, state=h0, state_cell=c0, state_size=H,
                 num_layers=1, mode="lstm")
    assert out.shape == (T, N, H)
    gsize = 3 * H * (I + H) + 2 * 3 * H
    out = nd.RNN(x, nd.zeros((gsize,)), h0, state_size=H, num_layers=1, mode="gru",
                 state_outputs=True)
    assert [o.shape for o in out] == [(T, N, H), (1, N, H)]


def test_save_load_parameters_uses_gluon_1x_keys(tmp_path):
    # Gluon 1.x's _RNNLayer._collect_params_with_prefix: a .params file saved by MXNet
    # holds '_unfused.<layer>.[<l|r>_cell.]<i2h|h2h>_<weight|bias>'
    layer = mx.gluon.rnn.GRU(3, num_layers=2, bidirectional=True, input_size=2)
    keys = list(layer._collect_params_with_prefix())
    assert keys[:4] == ["_unfused.0.l_cell.i2h_weight", "_unfused.0.l_cell.h2h_weight",
                        "_unfused.0.l_cell.i2h_bias", "_unfused.0.l_cell.h2h_bias"]
    assert "_unfused.1.r_cell.h2h_bias" in keys
    uni = mx.gluon.rnn.LSTM(3, input_size=2)
    assert list(uni._collect_params_with_prefix()) == [
        "_unfused.0.i2h_weight", "_unfused.0.h2h_weight", "_unfused.0.i2h_bias",
        "_unfused.0.h2h_bias"]
    rng = np.random.default_rng(0)
    arrays = {k: nd.array(rng.uniform(size=p.shape))
              for k, p in uni._collect_params_with_prefix().items()}
    f = str(tmp_path / "lstm.params")
    nd.save(f, arrays, format="mxnet")
    uni.load_parameters(f)
    np.testing.assert_array_equal(uni.l0_h2h_weight.data().asnumpy(),
                                  arrays["_unfused.0.h2h_weight"].asnumpy())
    uni.save_parameters(f)
    back = mx.gluon.rnn.LSTM(3, input_size=2)
    back.load_parameters(f)
    np.testing.assert_array_equal(back.l0_i2h_bias.data().asnumpy(),
                                  arrays["_unfused.0.i2h_bias"].asnumpy())
    net = nn.Sequential()
    net.add(mx.gluon.rnn.LSTM(3, input_size=2, projection_size=2))
    assert list(net._collect_params_with_prefix())[-1] == "0.l0_h2r_weight"
    assert list(net._collect_params_with_prefix())[0] == "0._unfused.0.i2h_weight"
