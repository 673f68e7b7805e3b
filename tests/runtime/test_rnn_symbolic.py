"""MXNet 1.x's symbolic RNN package (runtime.rnn): the cells unrolled, bound and run
against NumPy recurrences; fused against unfused cells on the same weights; the
names, shapes and packing MXNet 1.9.1 gives (quoted where used); the sentence
encoder, the bucketing iterator and the RNN checkpoints."""

import numpy as np
import pytest

import runtime as mx
from runtime import nd, rnn


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _run(out, data, seed=0, params=None):
    """The forward of ``out`` bound to ``data`` (NumPy) with random parameters (or
    ``params``): (outputs as NumPy, the parameters as NumPy by name)."""
    rng = np.random.default_rng(seed)
    exe = out.simple_bind(mx.cpu(), data=data.shape, grad_req="null")
    values = {}
    for name, arr in exe.arg_dict.items():
        if name == "data":
            arr[:] = data
        else:
            value = params[name] if params is not None else \
                rng.uniform(-0.5, 0.5, arr.shape).astype(np.float32)
            arr[:] = value
            values[name] = np.asarray(value, dtype=np.float64)
    return [o.asnumpy() for o in exe.forward()], values


def _lstm(x, p, prefix, h):
    """NumPy LSTM over x (N, T, C), gates i, f, c, o stacked in MXNet's rows."""
    n = x.shape[0]
    hs, c, hid = [], np.zeros((n, h)), np.zeros((n, h))
    for t in range(x.shape[1]):
        g = x[:, t] @ p[prefix + "i2h_weight"].T + p[prefix + "i2h_bias"] \
            + hid @ p[prefix + "h2h_weight"].T + p[prefix + "h2h_bias"]
        i, f, cc, o = (g[:, k * h:(k + 1) * h] for k in range(4))
        c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(cc)
        hid = _sigmoid(o) * np.tanh(c)
        hs.append(hid)
    return np.stack(hs, 1), c


def _gru(x, p, prefix, h):
    """NumPy GRU (cuDNN's form) over x (N, T, C), gates r, z, n."""
    hid, hs = np.zeros((x.shape[0], h)), []
    for t in range(x.shape[1]):
        gi = x[:, t] @ p[prefix + "i2h_weight"].T + p[prefix + "i2h_bias"]
        gh = hid @ p[prefix + "h2h_weight"].T + p[prefix + "h2h_bias"]
        r = _sigmoid(gi[:, :h] + gh[:, :h])
        z = _sigmoid(gi[:, h:2 * h] + gh[:, h:2 * h])
        cand = np.tanh(gi[:, 2 * h:] + r * gh[:, 2 * h:])
        hid = (1 - z) * cand + z * hid
        hs.append(hid)
    return np.stack(hs, 1)


def _elman(x, p, prefix, h, act):
    hid, hs = np.zeros((x.shape[0], h)), []
    for t in range(x.shape[1]):
        hid = act(x[:, t] @ p[prefix + "i2h_weight"].T + p[prefix + "i2h_bias"]
                  + hid @ p[prefix + "h2h_weight"].T + p[prefix + "h2h_bias"])
        hs.append(hid)
    return np.stack(hs, 1)


def test_stacked_lstm_and_gru_unrolled_match_numpy():
    stack = rnn.SequentialRNNCell()
    stack.add(rnn.LSTMCell(5, prefix="l0_"))
    stack.add(rnn.GRUCell(4, prefix="l1_"))
    out, states = stack.unroll(3, inputs=mx.sym.Variable("data"), merge_outputs=True)
    # MXNet 1.9.1's names and shapes for the same stack
    assert out.list_arguments() == ["data", "l0_i2h_weight", "l0_i2h_bias", "l0_h2h_weight",
                                    "l0_h2h_bias", "l1_i2h_weight", "l1_i2h_bias",
                                    "l1_h2h_weight", "l1_h2h_bias"]
    assert [s.name for s in states] == ["l0_t2_out", "l0_t2_state", "l1_t2_out"]
    assert out.infer_shape(data=(2, 3, 6))[1] == [(2, 3, 4)]
    x = np.random.default_rng(1).standard_normal((2, 3, 6)).astype(np.float32)
    (got,), p = _run(out, x)
    lstm_out, _ = _lstm(x.astype(np.float64), p, "l0_", 5)
    np.testing.assert_allclose(got, _gru(lstm_out, p, "l1_", 4), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("act", ["tanh", "relu"])
def test_rnn_cell_step_by_step_matches_numpy(act):
    cell = rnn.RNNCell(4, activation=act, prefix="r_")
    steps = [mx.sym.Variable(f"x{t}") for t in range(3)]
    outputs, states = cell.unroll(3, inputs=steps, merge_outputs=False)
    assert [o.name for o in outputs] == ["r_t0_out", "r_t1_out", "r_t2_out"]
    out = mx.sym.Concat(*[mx.sym.expand_dims(o, axis=1) for o in outputs], dim=1)
    x = np.random.default_rng(2).standard_normal((3, 3, 2)).astype(np.float32)
    exe = out.simple_bind(mx.cpu(), grad_req="null", **{f"x{t}": (3, 2) for t in range(3)})
    rng, p = np.random.default_rng(0), {}
    for name, arr in exe.arg_dict.items():
        if name.startswith("x"):
            arr[:] = x[:, int(name[1:])]
        else:
            p[name] = rng.uniform(-0.5, 0.5, arr.shape)
            arr[:] = p[name]
    want = _elman(x.astype(np.float64), p, "r_", 4,
                  np.tanh if act == "tanh" else lambda v: np.maximum(v, 0))
    np.testing.assert_allclose(exe.forward()[0].asnumpy(), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh"])
def test_fused_cell_equals_its_unfused_stack_on_the_unpacked_weights(mode):
    fused = rnn.FusedRNNCell(3, num_layers=2, mode=mode, bidirectional=True, prefix="f_")
    out, _ = fused.unroll(4, inputs=mx.sym.Variable("data"), layout="TNC",
                          merge_outputs=True)
    x = np.random.default_rng(3).standard_normal((4, 2, 5)).astype(np.float32)
    rng = np.random.default_rng(4)
    size = out.infer_shape(data=x.shape)[0][1][0]
    flat = nd.array(rng.uniform(-0.5, 0.5, size))
    (got,), _ = _run(out, x, params={"f_parameters": flat.asnumpy()})
    unpacked = fused.unpack_weights({"f_parameters": flat})
    stack = fused.unfuse()
    ref, _ = stack.unroll(4, inputs=mx.sym.Variable("data"), layout="TNC",
                          merge_outputs=True)
    stacked = stack.pack_weights(unpacked)       # per gate -> each cell's own arrays
    (want,), _ = _run(ref, x, params={k: v.asnumpy() for k, v in stacked.items()})
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    packed = fused.pack_weights(unpacked)["f_parameters"]
    np.testing.assert_array_equal(packed.asnumpy(), flat.asnumpy())


def test_fused_unpack_names_and_order_match_mxnet():
    fused = rnn.FusedRNNCell(3, num_layers=2, mode="gru", bidirectional=True, prefix="f_")
    out, _ = fused.unroll(4, inputs=mx.sym.Variable("data"), layout="TNC",
                          merge_outputs=True)
    assert out.list_arguments() == ["data", "f_parameters"]
    assert out.infer_shape(data=(4, 2, 5))[0] == [(4, 2, 5), (378,)]   # MXNet 1.9.1
    args = fused.unpack_weights({"f_parameters": nd.arange(378)})
    assert len(args) == 48
    # MXNet 1.9.1 unpacks arange(378) to these
    np.testing.assert_array_equal(args["f_l0_i2h_r_weight"].asnumpy(),
                                  np.arange(15).reshape(3, 5))
    np.testing.assert_array_equal(args["f_l1_i2h_z_weight"].asnumpy(),
                                  np.arange(162, 180).reshape(3, 6))
    np.testing.assert_array_equal(args["f_r1_h2h_o_bias"].asnumpy(), [375, 376, 377])


def test_fused_rnn_initializer_fills_gates_by_the_global_rule_and_the_forget_bias():
    fused = rnn.FusedRNNCell(4, num_layers=1, mode="lstm", forget_bias=2.5, prefix="f_")
    out, _ = fused.unroll(3, inputs=mx.sym.Variable("data"), layout="TNC",
                          merge_outputs=True)
    mod = mx.mod.Module(out, label_names=None)
    mod.bind([("data", (3, 2, 6))], for_training=False)
    mod.init_params(mx.init.Constant(0.25))
    parts = fused.unpack_weights(mod.get_params()[0])
    for name, arr in parts.items():
        want = 2.5 if name.endswith("i2h_f_bias") or name.endswith("h2h_f_bias") else \
            0.0 if name.endswith("bias") else 0.25
        np.testing.assert_array_equal(arr.asnumpy(), np.full(arr.shape, want), name)


def test_lstm_cell_bias_starts_with_the_forget_bias_and_shares_params():
    params = rnn.RNNParams("shared_")
    a = rnn.LSTMCell(3, prefix="a_", params=params, forget_bias=0.5)
    b = rnn.LSTMCell(3, prefix="b_", params=params)
    data = mx.sym.Variable("data")
    out = mx.sym.Group([a.unroll(2, data, merge_outputs=True)[0],
                        b.unroll(2, data, merge_outputs=True)[0]])
    assert out.list_arguments() == ["data", "shared_i2h_weight", "shared_i2h_bias",
                                    "shared_h2h_weight", "shared_h2h_bias"]
    mod = mx.mod.Module(out, label_names=None)
    mod.bind([("data", (2, 2, 4))], for_training=False)
    mod.init_params(mx.init.Xavier())
    np.testing.assert_array_equal(mod.get_params()[0]["shared_i2h_bias"].asnumpy(),
                                  [0, 0, 0, .5, .5, .5, 0, 0, 0, 0, 0, 0])


def test_unpack_and_pack_weights_split_gates_by_rows():
    cell = rnn.LSTMCell(2, prefix="c_")
    args = {"c_i2h_weight": nd.arange(24).reshape((8, 3)), "c_i2h_bias": nd.arange(8),
            "c_h2h_weight": nd.arange(16).reshape((8, 2)), "c_h2h_bias": nd.arange(8),
            "other": nd.ones((1,))}
    parts = cell.unpack_weights(args)
    assert sorted(parts) == sorted(["other"] + [f"c_{g}{gate}_{k}" for g in ("i2h", "h2h")
                                                for gate in ("_i", "_f", "_c", "_o")
                                                for k in ("weight", "bias")])
    np.testing.assert_array_equal(parts["c_i2h_f_weight"].asnumpy(),
                                  np.arange(24).reshape(8, 3)[2:4])
    back = cell.pack_weights(parts)
    for k, v in args.items():
        np.testing.assert_array_equal(back[k].asnumpy(), v.asnumpy())


def test_begin_state_func_and_modifier_rules():
    cell = rnn.GRUCell(3, prefix="g_")
    states = cell.begin_state(func=mx.sym.Variable)
    assert [s.name for s in states] == ["g_begin_state_0"]
    assert states[0].attr("__layout__") == "NC"
    wrapped = rnn.ResidualCell(cell)
    with pytest.raises(RuntimeError, match="modifier"):
        cell.begin_state()
    assert len(wrapped.begin_state()) == 1
    with pytest.raises(TypeError, match="steppable"):
        rnn.ZoneoutCell(rnn.FusedRNNCell(3))
    with pytest.raises(TypeError, match="dropout must be a number"):
        rnn.DropoutCell("0.5")
    with pytest.raises(ValueError, match="length=3"):
        cell.unroll(3, [mx.sym.Variable("a")])


def test_residual_and_bidirectional_outputs_match_numpy():
    left, right = rnn.GRUCell(3, prefix="l_"), rnn.GRUCell(3, prefix="r_")
    bi = rnn.BidirectionalCell(left, right, output_prefix="bi_")
    out, states = bi.unroll(4, inputs=mx.sym.Variable("data"), merge_outputs=True)
    assert out.name == "bi_out" and len(states) == 2
    x = np.random.default_rng(5).standard_normal((2, 4, 3)).astype(np.float32)
    (got,), p = _run(out, x)
    fwd = _gru(x.astype(np.float64), p, "l_", 3)
    bwd = _gru(x[:, ::-1].astype(np.float64), p, "r_", 3)[:, ::-1]
    np.testing.assert_allclose(got, np.concatenate([fwd, bwd], 2), rtol=1e-5, atol=1e-6)

    res = rnn.ResidualCell(rnn.RNNCell(3, prefix="e_"))
    out, _ = res.unroll(4, inputs=mx.sym.Variable("data"), merge_outputs=True)
    (got,), p = _run(out, x)
    want = _elman(x.astype(np.float64), p, "e_", 3, np.tanh) + x
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_encode_sentences_follows_mxnet():
    # MXNet 1.9.1's results for the same calls
    assert rnn.encode_sentences([["a", "b"], ["b", "c", "a"]], invalid_label=1,
                                start_label=0) == \
        ([[0, 2], [2, 3, 0]], {"\n": 1, "a": 0, "b": 2, "c": 3})
    assert rnn.encode_sentences([["a", "z"]], vocab={"a": 3}, unknown_token="<unk>",
                                start_label=5) == ([[3, 5]], {"a": 3, "<unk>": 5})
    with pytest.raises(KeyError, match="'z'"):
        rnn.encode_sentences([["a", "z"]], vocab={"a": 3})


def test_bucket_sentence_iter_pads_shifts_and_keys_batches(capsys):
    sentences = [[1, 2], [3, 4, 5], [6], [7, 8, 9, 10, 11, 12], [2, 3, 4]]
    it = rnn.BucketSentenceIter(sentences, 1, buckets=[2, 4, 9], invalid_label=0)
    assert "discarded 0 sentences" in capsys.readouterr().out
    # every bucket holds a sentence (an empty one would be dropped)
    assert it.buckets == [2, 4, 9] and it.default_bucket_key == 9
    assert it.provide_data[0].shape == (1, 9) and it.provide_data[0].layout == "NT"
    seen = []
    for batch in it:
        data, label = batch.data[0].asnumpy()[0], batch.label[0].asnumpy()[0]
        assert batch.bucket_key == len(data) and batch.provide_data[0].shape == (1, len(data))
        np.testing.assert_array_equal(label, np.append(data[1:], 0))
        seen.append(tuple(data[data != 0].astype(int)))
    assert sorted(seen) == sorted(tuple(s) for s in sentences)

    it = rnn.BucketSentenceIter(sentences, 2, buckets=[2, 4], invalid_label=-1,
                                layout="TN")
    assert "discarded 1 sentences" in capsys.readouterr().out
    assert it.buckets == [2, 4] and it.provide_data[0].shape == (4, 2)
    shapes = sorted(b.data[0].shape for b in it)
    assert shapes == [(2, 2), (4, 2)]          # one full batch per bucket, time-major
    with pytest.raises(ValueError, match="layout"):
        rnn.BucketSentenceIter(sentences, 1, layout="NTC")


def test_rnn_checkpoints_hold_unpacked_weights(tmp_path):
    fused = rnn.FusedRNNCell(2, num_layers=1, mode="gru", prefix="f_")
    out, _ = fused.unroll(3, inputs=mx.sym.Variable("data"), layout="TNC",
                          merge_outputs=True)
    flat = nd.array(np.random.default_rng(6).standard_normal(36))   # G*H*(I+H+2), I=4
    prefix = str(tmp_path / "m")
    rnn.do_rnn_checkpoint(fused, prefix, period=2)(1, out, {"f_parameters": flat}, {})
    saved = nd.load(f"{prefix}-0002.params")
    assert "arg:f_l0_i2h_z_weight" in saved and "arg:f_parameters" not in saved
    assert not (tmp_path / "m-0001.params").exists()
    sym, args, aux = rnn.load_rnn_checkpoint([fused], prefix, 2)
    assert sym.list_arguments() == out.list_arguments() and aux == {}
    np.testing.assert_array_equal(args["f_parameters"].asnumpy(), flat.asnumpy())


def test_zoneout_keeps_the_previous_output_in_training_only():
    cell = rnn.ZoneoutCell(rnn.LSTMCell(3, prefix="z_"), zoneout_outputs=0.5)
    out, _ = cell.unroll(4, inputs=mx.sym.Variable("data"), merge_outputs=True)
    x = np.random.default_rng(7).standard_normal((5, 4, 2)).astype(np.float32)
    exe = out.simple_bind(mx.cpu(), data=x.shape, grad_req="null")
    rng, p = np.random.default_rng(0), {}
    for name, arr in exe.arg_dict.items():
        p[name] = x if name == "data" else rng.uniform(-0.5, 0.5, arr.shape)
        arr[:] = p[name]
    h, _ = _lstm(x.astype(np.float64), p, "z_", 3)
    np.testing.assert_allclose(exe.forward(is_train=False)[0].asnumpy(), h, rtol=1e-5,
                               atol=1e-6)
    got = exe.forward(is_train=True)[0].asnumpy()
    prev = np.zeros_like(got[:, 0])             # the first step's previous output: zeros
    kept = 0
    for t in range(4):
        new = np.isclose(got[:, t], h[:, t], atol=1e-6)
        old = np.isclose(got[:, t], prev, atol=1e-6)
        assert (new | old).all()
        kept += (old & ~new).sum()
        prev = got[:, t]
    assert 0 < kept < got.size                  # about half, by the dropout mask


def _conv3x3(x, w, b):
    """NumPy's 3x3 convolution of x (N, C, H, W) with padding 1 (MXNet's NCHW)."""
    n, _, h, wd = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((n, w.shape[0], h, wd))
    for i in range(3):
        for j in range(3):
            out += np.einsum("nchw,fc->nfhw", xp[:, :, i:i + h, j:j + wd], w[:, :, i, j])
    return out + b[None, :, None, None]


def _leaky(v):
    return np.where(v > 0, v, 0.2 * v)


@pytest.mark.parametrize("kind", ["ConvRNNCell", "ConvLSTMCell", "ConvGRUCell"])
def test_convolutional_cells_match_numpy(kind):
    cell = getattr(rnn, kind)(input_shape=(2, 3, 4, 4), num_hidden=2, prefix="c_")
    out, states = cell.unroll(3, inputs=mx.sym.Variable("data"), merge_outputs=True)
    # MXNet 1.9.1's shapes for the same cell
    gates = {"ConvRNNCell": 1, "ConvLSTMCell": 4, "ConvGRUCell": 3}[kind]
    assert out.infer_shape(data=(2, 3, 3, 4, 4))[0][1:] == [
        (2 * gates, 3, 3, 3), (2 * gates,), (2 * gates, 2, 3, 3), (2 * gates,)]
    assert cell.state_info[0] == {"shape": (0, 2, 4, 4), "__layout__": "NCHW"}
    x = np.random.default_rng(8).standard_normal((2, 3, 3, 4, 4)).astype(np.float32)
    (got,), p = _run(out, x)
    h = c = np.zeros((2, 2, 4, 4))
    want = []
    for t in range(3):
        gi = _conv3x3(x[:, t].astype(np.float64), p["c_i2h_weight"], p["c_i2h_bias"])
        gh = _conv3x3(h, p["c_h2h_weight"], p["c_h2h_bias"])
        if kind == "ConvRNNCell":
            h = _leaky(gi + gh)
        elif kind == "ConvLSTMCell":
            i, f, g, o = np.split(gi + gh, 4, axis=1)
            c = _sigmoid(f) * c + _sigmoid(i) * _leaky(g)
            h = _sigmoid(o) * _leaky(c)
        else:
            r = _sigmoid(gi[:, :2] + gh[:, :2])
            z = _sigmoid(gi[:, 2:4] + gh[:, 2:4])
            h = (1 - z) * _leaky(gi[:, 4:] + r * gh[:, 4:]) + z * h
        want.append(h)
    np.testing.assert_allclose(got, np.stack(want, 1), rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="h2h_kernel must hold odd sizes"):
        getattr(rnn, kind)(input_shape=(2, 3, 4, 4), num_hidden=2, h2h_kernel=(2, 2))
