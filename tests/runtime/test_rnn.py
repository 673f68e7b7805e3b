"""nd.RNN (MXNet 1.x's fused RNN operator) against an independent NumPy float64
transcription of each cell's equations (MXNet's documentation), gradients against float64
central differences, and its errors."""

import itertools
import json

import numpy as np
import pytest

import runtime as mx
from runtime import autograd, nd
from runtime.gluon import nn
from runtime.nd._rnn import rnn_param_size
from tests.runtime.conftest import free_failing_tests

GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}


# -- reference --------------------------------------------------------------------------------

def unpack(params, mode, isz, h, layers, d, proj=None):
    """The flat vector split as MXNet packs it: all weights (per layer, per direction:
    i2h, h2h and with a projection h2r), then all biases (i2h, h2h) in the same order."""
    g = GATES[mode]
    r = h if proj is None else proj
    pos = 0
    ws = []
    for layer in range(layers):
        i = isz if layer == 0 else d * r
        for _ in range(d):
            wx = params[pos:pos + g * h * i].reshape(g * h, i)
            pos += g * h * i
            wh = params[pos:pos + g * h * r].reshape(g * h, r)
            pos += g * h * r
            wr = None
            if proj is not None:
                wr = params[pos:pos + r * h].reshape(r, h)
                pos += r * h
            ws.append([wx, wh, wr])
    for k in range(layers * d):
        ws[k].append(params[pos:pos + g * h])
        pos += g * h
        ws[k].append(params[pos:pos + g * h])
        pos += g * h
    assert pos == params.size
    return ws


def sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def cell(mode, x, hp, cp, wx, wh, wr, bx, bh, clip=None):
    """One step of one sample set, as MXNet documents the cells (``wr``: LSTMP's
    projection ``h_t = W_hr (o * tanh(c_t))``)."""
    h = wh.shape[0] // GATES[mode]
    if mode in ("rnn_relu", "rnn_tanh"):
        pre = x @ wx.T + bx + hp @ wh.T + bh
        return (np.maximum(pre, 0) if mode == "rnn_relu" else np.tanh(pre)), None
    if mode == "lstm":
        pre = x @ wx.T + bx + hp @ wh.T + bh
        i, f, g, o = (pre[:, k * h:(k + 1) * h] for k in range(4))
        c = sigmoid(f) * cp + sigmoid(i) * np.tanh(g)
        if clip is not None:
            c = np.clip(c, *clip)
        hn = sigmoid(o) * np.tanh(c)
        return (hn if wr is None else hn @ wr.T), c
    xi = x @ wx.T + bx
    hh = hp @ wh.T + bh
    r = sigmoid(xi[:, :h] + hh[:, :h])
    z = sigmoid(xi[:, h:2 * h] + hh[:, h:2 * h])
    n = np.tanh(xi[:, 2 * h:] + r * hh[:, 2 * h:])
    return (1 - z) * n + z * hp, None


def reference(mode, x, params, h0, c0, h, layers, bidir, lengths=None, clip=None,
              proj=None):
    """Sample by sample: each sequence cut at its length, run forward (and reversed for
    the backward direction), outputs past the length 0."""
    t, n, isz = x.shape
    d = 2 if bidir else 1
    r = h if proj is None else proj
    ws = unpack(params, mode, isz, h, layers, d, proj)
    out = np.zeros((t, n, d * r))
    hn = np.zeros((layers * d, n, r))
    cn = np.zeros((layers * d, n, h))
    for b in range(n):
        length = t if lengths is None else int(lengths[b])
        seq = x[:length, b]
        for layer in range(layers):
            outs = []
            for direction in range(d):
                k = layer * d + direction
                hp, cp = h0[k, b:b + 1], (c0[k, b:b + 1] if c0 is not None else None)
                ys = []
                order = range(length - 1, -1, -1) if direction else range(length)
                for s in order:
                    hp, cp = cell(mode, seq[s:s + 1], hp, cp, *ws[k], clip=clip)
                    ys.append(hp[0])
                if direction:
                    ys = ys[::-1]
                outs.append(np.array(ys).reshape(length, r))
                hn[k, b] = hp[0]
                if cp is not None:
                    cn[k, b] = cp[0]
            seq = np.concatenate(outs, axis=1)
        out[:length, b] = seq
    return out, hn, cn


def make(mode, t, n, isz, h, layers, bidir, dtype=np.float64, seed=0, proj=None):
    rng = np.random.default_rng(seed)
    d = 2 if bidir else 1
    size = rnn_param_size(mode, isz, h, layers, bidir, proj)
    x = rng.uniform(-1, 1, (t, n, isz))
    params = rng.uniform(-0.6, 0.6, size)
    h0 = rng.uniform(-1, 1, (layers * d, n, h if proj is None else proj))
    c0 = rng.uniform(-1, 1, (layers * d, n, h)) if mode == "lstm" else None
    return x.astype(dtype), params.astype(dtype), h0.astype(dtype), \
        None if c0 is None else c0.astype(dtype)


def call(mode, x, params, h0, c0, h, layers, bidir, lengths=None, **kw):
    args = dict(state_size=h, num_layers=layers, bidirectional=bidir, mode=mode,
                state_outputs=True, **kw)
    if c0 is not None:
        args["state_cell"] = c0
    if lengths is not None:
        args.update(sequence_length=lengths, use_sequence_length=True)
    return nd.RNN(x, params, h0, **args)


# -- forward ------------------------------------------------------------------------------------

CASES = list(itertools.product(GATES, (1, 2), (False, True), (False, True)))


@pytest.mark.parametrize("mode,layers,bidir,use_len", CASES)
def test_forward_matches_numpy(mode, layers, bidir, use_len):
    t, n, isz, h = 5, 3, 4, 3
    x, params, h0, c0 = make(mode, t, n, isz, h, layers, bidir)
    lengths = np.array([5, 2, 4]) if use_len else None
    res = call(mode, nd.array(x, dtype=np.float64), nd.array(params, dtype=np.float64),
               nd.array(h0, dtype=np.float64),
               None if c0 is None else nd.array(c0, dtype=np.float64), h, layers, bidir,
               None if lengths is None else nd.array(lengths, dtype=np.float64))
    out, hn, cn = reference(mode, x, params, h0, c0, h, layers, bidir, lengths)
    d = 2 if bidir else 1
    assert len(res) == (3 if mode == "lstm" else 2)
    assert res[0].shape == (t, n, d * h) and res[1].shape == (layers * d, n, h)
    np.testing.assert_allclose(res[0].asnumpy(), out, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(res[1].asnumpy(), hn, rtol=1e-10, atol=1e-12)
    if mode == "lstm":
        np.testing.assert_allclose(res[2].asnumpy(), cn, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("layers,bidir,use_len", [(1, False, False), (2, True, True),
                                                  (2, False, True)])
def test_lstm_projection(layers, bidir, use_len):
    t, n, isz, h, proj = 4, 3, 3, 4, 2
    x, params, h0, c0 = make("lstm", t, n, isz, h, layers, bidir, proj=proj, seed=7)
    c0 = np.random.default_rng(8).uniform(-1, 1, (layers * (2 if bidir else 1), n, h))
    lengths = np.array([4, 1, 3]) if use_len else None
    res = call("lstm", *(nd.array(a, dtype=np.float64) for a in (x, params, h0, c0)), h,
               layers, bidir, None if lengths is None else nd.array(lengths),
               projection_size=proj)
    out, hn, cn = reference("lstm", x, params, h0, c0, h, layers, bidir, lengths, proj=proj)
    assert res[0].shape == (t, n, (2 if bidir else 1) * proj) and res[1].shape == h0.shape
    assert res[2].shape == c0.shape
    for got, ref in zip(res, (out, hn, cn)):
        np.testing.assert_allclose(got.asnumpy(), ref, rtol=1e-10, atol=1e-12)


def test_float32_and_single_output():
    x, params, h0, c0 = make("lstm", 4, 2, 3, 5, 1, True, dtype=np.float32)
    out = nd.RNN(nd.array(x), nd.array(params), nd.array(h0), nd.array(c0), state_size=5,
                 num_layers=1, bidirectional=True, mode="lstm")
    assert isinstance(out, nd.NDArray) and out.dtype == np.float32
    ref, _, _ = reference("lstm", x.astype(np.float64), params.astype(np.float64),
                          h0.astype(np.float64), c0.astype(np.float64), 5, 1, True)
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-5, atol=1e-5)


def test_positional_attributes_in_mxnet_order():
    x, params, h0, _ = make("gru", 3, 2, 2, 2, 1, False)
    a = nd.RNN(nd.array(x), nd.array(params), nd.array(h0), None, None, 2, 1, False, "gru")
    ref, _, _ = reference("gru", x, params, h0, None, 2, 1, False)
    np.testing.assert_allclose(a.asnumpy(), ref, rtol=1e-5, atol=1e-6)


def test_out_argument():
    x, params, h0, c0 = (nd.array(a) for a in make("lstm", 3, 2, 2, 3, 1, True,
                                                    dtype=np.float32))
    kw = dict(state_size=3, num_layers=1, bidirectional=True, mode="lstm")
    ref = nd.RNN(x, params, h0, c0, state_outputs=True, **kw)
    outs = [nd.zeros((3, 2, 6)), nd.zeros((2, 2, 3)), nd.zeros((2, 2, 3))]
    got = nd.RNN(x, params, h0, c0, state_outputs=True, out=outs, **kw)
    for g, o, r in zip(got, outs, ref):
        assert g is o
        np.testing.assert_array_equal(o.asnumpy(), r.asnumpy())
    single = nd.zeros((3, 2, 6))
    assert nd.RNN(x, params, h0, c0, out=single, **kw) is single
    np.testing.assert_array_equal(single.asnumpy(), ref[0].asnumpy())
    bad = [nd.ones((3, 2, 6)), nd.ones((2, 2, 3)), nd.ones((1, 2, 3))]
    with pytest.raises(ValueError, match=r"out\[2\] must be a dense array of shape "
                                         r"\(2, 2, 3\) and dtype float32 \(got shape "
                                         r"\(1, 2, 3\)"):
        nd.RNN(x, params, h0, c0, state_outputs=True, out=bad, **kw)
    assert all((b.asnumpy() == 1).all() for b in bad)       # left unchanged
    with pytest.raises(TypeError, match=r"out must be a list of 3 NDArray"):
        nd.RNN(x, params, h0, c0, state_outputs=True, out=bad[0], **kw)
    with pytest.raises(ValueError, match=r"out\[0\] .* dtype float32 \(got shape \(3, 2, "
                                         r"6\), dtype float64"):
        nd.RNN(x, params, h0, c0, out=nd.zeros((3, 2, 6), dtype=np.float64), **kw)


def test_lstm_state_clip():
    x, params, h0, c0 = make("lstm", 4, 2, 3, 3, 2, False, seed=3)
    c0 = c0 * 4
    res = call("lstm", nd.array(x, dtype=np.float64), nd.array(params, dtype=np.float64),
               nd.array(h0, dtype=np.float64), nd.array(c0, dtype=np.float64), 3, 2, False,
               lstm_state_clip_min=-0.3, lstm_state_clip_max=0.2)
    out, hn, cn = reference("lstm", x, params, h0, c0, 3, 2, False, clip=(-0.3, 0.2))
    np.testing.assert_allclose(res[0].asnumpy(), out, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(res[2].asnumpy(), cn, rtol=1e-10, atol=1e-12)
    assert cn.max() <= 0.2 and cn.min() >= -0.3
    unclipped = call("lstm", nd.array(x, dtype=np.float64),
                     nd.array(params, dtype=np.float64), nd.array(h0, dtype=np.float64),
                     nd.array(c0, dtype=np.float64), 3, 2, False)
    assert not np.allclose(unclipped[2].asnumpy(), cn)


def test_lstm_state_clip_nan():
    x, params, h0, c0 = make("lstm", 2, 2, 2, 2, 1, False)
    c0[0, 0, 0] = np.nan
    args = [nd.array(a, dtype=np.float64) for a in (x, params, h0, c0)]
    kept = call("lstm", *args, 2, 1, False, lstm_state_clip_min=-1.0,
                lstm_state_clip_max=1.0)
    assert np.isnan(kept[2].asnumpy()[0, 0, 0])
    stopped = call("lstm", *args, 2, 1, False, lstm_state_clip_min=-1.0,
                   lstm_state_clip_max=1.0, lstm_state_clip_nan=True)
    assert not np.isnan(stopped[0].asnumpy()).any()
    assert not np.isnan(stopped[2].asnumpy()).any()
    # one step: the NaN cell state becomes lstm_state_clip_min (cuDNN's fmin(fmax(c, lo),
    # hi)), the others are clipped as usual
    one = call("lstm", args[0][:1], *args[1:], 2, 1, False, lstm_state_clip_min=-1.0,
               lstm_state_clip_max=1.0, lstm_state_clip_nan=True)
    _, _, cn = reference("lstm", x[:1], params, h0, np.nan_to_num(c0), 2, 1, False,
                         clip=(-1.0, 1.0))
    cn[0, 0, 0] = -1.0
    np.testing.assert_allclose(one[2].asnumpy(), cn, rtol=1e-12)


def test_dropout_between_layers_training_only():
    x, params, h0, _ = make("rnn_tanh", 3, 4, 3, 8, 2, False, dtype=np.float32)
    args = [nd.array(a) for a in (x, params, h0)]
    kw = dict(state_size=8, num_layers=2, mode="rnn_tanh", p=0.5)
    ref, _, _ = reference("rnn_tanh", x.astype(np.float64), params.astype(np.float64),
                          h0.astype(np.float64), None, 8, 2, False)
    np.testing.assert_allclose(nd.RNN(*args, **kw).asnumpy(), ref, rtol=1e-5, atol=1e-5)
    with autograd.record():
        dropped = nd.RNN(*args, **kw)
    assert not np.allclose(dropped.asnumpy(), ref, atol=1e-3)
    # a single layer is not affected: p applies between layers only
    first = np.concatenate([params[:8 * 3 + 64], params[-4 * 8:-2 * 8]])  # layer 0's
    assert first.size == rnn_param_size("rnn_tanh", 3, 8, 1)
    with autograd.record():
        single = nd.RNN(args[0], nd.array(first), nd.array(h0[:1]), **dict(kw, num_layers=1))
    ref1, _, _ = reference("rnn_tanh", x.astype(np.float64), first.astype(np.float64),
                           h0[:1].astype(np.float64), None, 8, 1, False)
    np.testing.assert_allclose(single.asnumpy(), ref1, rtol=1e-5, atol=1e-5)


# -- gradients ------------------------------------------------------------------------------

def numeric_grad(f, a, eps=1e-6):
    g = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        old = a[idx]
        a[idx] = old + eps
        up = f()
        a[idx] = old - eps
        down = f()
        a[idx] = old
        g[idx] = (up - down) / (2 * eps)
    return g


@pytest.mark.parametrize("mode,layers,bidir,use_len", [
    ("rnn_tanh", 2, True, True), ("rnn_relu", 1, False, False), ("lstm", 2, True, False),
    ("lstm", 1, False, True), ("gru", 2, False, True), ("gru", 1, True, False),
    ("lstm_clip", 2, True, True), ("lstm_proj", 2, True, True)])
def test_gradients_match_central_differences(mode, layers, bidir, use_len):
    clip = proj = None
    if mode == "lstm_clip":     # some cell states clipped (no value on the bounds)
        mode, clip = "lstm", (-0.41, 0.37)
    if mode == "lstm_proj":
        mode, proj = "lstm", 1
    t, n, isz, h = 3, 2, 2, 2
    x, params, h0, c0 = make(mode, t, n, isz, h, layers, bidir, seed=5, proj=proj)
    r = h if proj is None else proj
    if proj is not None:
        c0 = np.random.default_rng(6).uniform(-1, 1, (layers * (2 if bidir else 1), n, h))
    if mode == "rnn_relu":
        h0 = np.abs(h0)        # away from relu's kink
    lengths = np.array([3, 2]) if use_len else None
    rng = np.random.default_rng(1)
    d = 2 if bidir else 1
    wo = rng.uniform(-1, 1, (t, n, d * r))
    wh = rng.uniform(-1, 1, (layers * d, n, r))
    wc = rng.uniform(-1, 1, (layers * d, n, h))
    arrays = [x, params, h0] + ([c0] if c0 is not None else [])

    def loss_np():
        out, hn, cn = reference(mode, x, params, h0, c0, h, layers, bidir, lengths, clip,
                                proj)
        return (out * wo).sum() + (hn * wh).sum() + (cn * wc).sum() * (mode == "lstm")

    nds = [nd.array(a, dtype=np.float64) for a in arrays]
    for a in nds:
        a.attach_grad()
    ln = None if lengths is None else nd.array(lengths, dtype=np.float64)
    with autograd.record():
        res = call(mode, nds[0], nds[1], nds[2], nds[3] if c0 is not None else None, h,
                   layers, bidir, ln, projection_size=proj, **({} if clip is None else dict(
                       lstm_state_clip_min=clip[0], lstm_state_clip_max=clip[1])))
        loss = (res[0] * nd.array(wo, dtype=np.float64)).sum() + \
            (res[1] * nd.array(wh, dtype=np.float64)).sum()
        if mode == "lstm":
            loss = loss + (res[2] * nd.array(wc, dtype=np.float64)).sum()
    loss.backward()
    np.testing.assert_allclose(loss.asnumpy(), loss_np(), rtol=1e-10)
    for a, arr, nm in zip(arrays, nds, ("data", "parameters", "state", "state_cell")):
        num = numeric_grad(loss_np, a)
        np.testing.assert_allclose(arr.grad.asnumpy(), num, rtol=1e-5, atol=1e-7,
                                   err_msg=nm)
    if use_len:   # the padding of data gets no gradient
        assert np.all(nds[0].grad.asnumpy()[2:, 1] == 0)


# -- errors -----------------------------------------------------------------------------------

def _inputs(mode="lstm", layers=1, bidir=False):
    x, params, h0, c0 = make(mode, 3, 2, 4, 5, layers, bidir, dtype=np.float32)
    return nd.array(x), nd.array(params), nd.array(h0), \
        None if c0 is None else nd.array(c0)


def test_parameter_count_rule():
    # MXNet: per layer and direction G*H*(I + H) + 2*G*H
    assert rnn_param_size("lstm", 4, 5, 1) == 4 * 5 * (4 + 5) + 2 * 4 * 5
    assert rnn_param_size("gru", 4, 5, 2, True) == \
        2 * (3 * 5 * (4 + 5) + 30) + 2 * (3 * 5 * (10 + 5) + 30)
    assert rnn_param_size("rnn_tanh", 3, 2, 1) == 2 * 5 + 4
    # with a projection P: (I + P + 2)*4H for the first layer, (D*P + P + 2)*4H*D above,
    # plus P*H per layer and direction (MXNet's GetRnnParamSize)
    assert rnn_param_size("lstm", 4, 5, 2, True, 3) == \
        (4 + 3 + 2) * 40 + (6 + 3 + 2) * 40 + 3 * 5 * 2 * 2
    x, params, h0, c0 = _inputs()
    with pytest.raises(ValueError, match=r"parameters must be a 1-D array of 220 values"):
        nd.RNN(x, params[:-1], h0, c0, state_size=5, num_layers=1, mode="lstm")
    with pytest.raises(ValueError, match=r"220 values"):
        nd.RNN(x, params.reshape((2, 110)), h0, c0, state_size=5, num_layers=1, mode="lstm")


@pytest.mark.parametrize("kw,exc,msg", [
    (dict(mode="lstmx"), ValueError, r"mode must be one of .* \(got mode='lstmx'\)"),
    (dict(mode=None), ValueError, r"mode must be one of"),
    (dict(state_size=0), ValueError, r"state_size must be a positive integer \(got "
                                     r"state_size=0\)"),
    (dict(num_layers=None), ValueError, r"num_layers must be a positive integer"),
    (dict(p=1.0), ValueError, r"p must be in \[0, 1\) \(got p=1.0\)"),
    (dict(projection_size=0), ValueError, r"projection_size must be a positive integer "
                                          r"\(got projection_size=0\)"),
    (dict(projection_size=2, mode="gru"), ValueError,
     r"projection_size applies to mode='lstm' only \(got mode='gru'\)"),
    (dict(lstm_state_clip_min=1.0), ValueError, r"must be given together"),
    (dict(lstm_state_clip_min=1.0, lstm_state_clip_max=0.0), ValueError,
     r"lstm_state_clip_min must be <= lstm_state_clip_max"),
    (dict(use_sequence_length=True), ValueError, r"needs sequence_length"),
])
def test_bad_attributes(kw, exc, msg):
    x, params, h0, c0 = _inputs()
    args = dict(state_size=5, num_layers=1, mode="lstm")
    args.update(kw)
    with pytest.raises(exc, match=msg):
        nd.RNN(x, params, h0, c0, **args)


def test_bad_shapes_and_inputs():
    x, params, h0, c0 = _inputs()
    kw = dict(state_size=5, num_layers=1, mode="lstm")
    with pytest.raises(ValueError, match=r"data must be 3-D .* \(got shape \(3, 8\)\)"):
        nd.RNN(x.reshape((3, 8)), params, h0, c0, **kw)
    with pytest.raises(ValueError, match=r"state must have shape .* = \(1, 2, 5\) \(got "
                                         r"\(2, 2, 5\)\)"):
        nd.RNN(x, params, nd.zeros((2, 2, 5)), c0, **kw)
    with pytest.raises(ValueError, match=r"state_cell must have shape .* \(got \(1, 3, 5\)"):
        nd.RNN(x, params, h0, nd.zeros((1, 3, 5)), **kw)
    with pytest.raises(ValueError, match=r"state_cell is required for mode='lstm'"):
        nd.RNN(x, params, h0, **kw)
    xg, pg, hg, _ = _inputs("gru")
    with pytest.raises(ValueError, match=r"state_cell is an input of mode='lstm' only"):
        nd.RNN(xg, pg, hg, c0, state_size=5, num_layers=1, mode="gru")
    with pytest.raises(TypeError, match=r"data must be an NDArray \(got ndarray\)"):
        nd.RNN(x.asnumpy(), params, h0, c0, **kw)
    with pytest.raises(TypeError, match=r"data must have a floating dtype \(got int32\)"):
        nd.RNN(x.astype(np.int32), params, h0, c0, **kw)
    with pytest.raises(TypeError, match=r"state must have data's dtype float32 \(got "
                                        r"float64\)"):
        nd.RNN(x, params, h0.astype(np.float64), c0, **kw)
    with pytest.raises(ValueError, match=r"sequence_length must hold integers in \[1, 3\]"):
        nd.RNN(x, params, h0, c0, nd.array([0, 2]), use_sequence_length=True, **kw)
    with pytest.raises(ValueError, match=r"sequence_length must have shape \(batch,\) = "
                                         r"\(2,\)"):
        nd.RNN(x, params, h0, c0, nd.array([1, 2, 3]), use_sequence_length=True, **kw)
    with pytest.raises(ValueError, match=r"use_sequence_length is False"):
        nd.RNN(x, params, h0, c0, nd.array([1, 2]), **kw)
    # inputs unchanged after the failures
    ref = _inputs()
    for a, b in zip((x, params, h0, c0), ref):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())


def test_zero_length_sequence_and_batch():
    x, params, h0, c0 = _inputs()
    res = nd.RNN(nd.zeros((0, 2, 4)), params, h0, c0, state_size=5, num_layers=1,
                 mode="lstm", state_outputs=True)
    assert res[0].shape == (0, 2, 5)
    np.testing.assert_array_equal(res[1].asnumpy(), h0.asnumpy())
    np.testing.assert_array_equal(res[2].asnumpy(), c0.asnumpy())
    res[1][:] = 7.0                       # new arrays, not the inputs
    assert not (h0.asnumpy() == 7.0).any()
    out = nd.RNN(nd.zeros((3, 0, 4)), params, nd.zeros((1, 0, 5)), nd.zeros((1, 0, 5)),
                 state_size=5, num_layers=1, mode="lstm")
    assert out.shape == (3, 0, 5)


@pytest.mark.parametrize("mode", list(GATES))
def test_state_size_one(mode):
    """One unit per gate: each gate is a single column, never squeezed away."""
    t, n, isz, h, layers, bidir = 3, 2, 2, 1, 2, True
    x, params, h0, c0 = make(mode, t, n, isz, h, layers, bidir, seed=12)
    rng = np.random.default_rng(2)
    wo = rng.uniform(-1, 1, (t, n, 2 * h))
    nds = [nd.array(a, dtype=np.float64) for a in (x, params, h0)]
    for a in nds:
        a.attach_grad()
    with autograd.record():
        res = call(mode, *nds, None if c0 is None else nd.array(c0, dtype=np.float64), h,
                   layers, bidir)
        loss = (res[0] * nd.array(wo, dtype=np.float64)).sum()
    loss.backward()
    out, hn, _ = reference(mode, x, params, h0, c0, h, layers, bidir)
    np.testing.assert_allclose(res[0].asnumpy(), out, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(res[1].asnumpy(), hn, rtol=1e-10, atol=1e-12)

    def loss_np():
        return (reference(mode, x, params, h0, c0, h, layers, bidir)[0] * wo).sum()

    np.testing.assert_allclose(nds[1].grad.asnumpy(), numeric_grad(loss_np, params),
                               rtol=1e-5, atol=1e-7)
    layer = {"lstm": mx.gluon.rnn.LSTM, "gru": mx.gluon.rnn.GRU}.get(mode, mx.gluon.rnn.RNN)(1)
    layer.initialize()
    assert layer(nd.ones((4, 3, 2))).shape == (4, 3, 1)


@pytest.mark.parametrize("shape", [(3, 0, 4), (0, 2, 4), (0, 0, 4)])
@pytest.mark.parametrize("cls", [mx.gluon.rnn.LSTM, mx.gluon.rnn.GRU, mx.gluon.rnn.RNN])
def test_an_empty_batch_or_sequence_under_record_gives_zero_gradients(cls, shape):
    """As FullyConnected on zero rows: the output is on the tape and backward gives
    zero gradients (data's of its own empty shape)."""
    layer = cls(5, input_size=4)
    layer.initialize()
    params = list(layer.collect_params().values())
    for p in params:
        p.grad()[:] = 7.0
    x = nd.zeros(shape)
    x.attach_grad()
    with autograd.record():
        y = layer(x)
    assert y.shape == shape[:2] + (5,)
    y.backward()
    assert x.grad.shape == shape
    for p in params:
        np.testing.assert_array_equal(p.grad().asnumpy(), 0.0, err_msg=p.name)


# -- Gluon-style layers ------------------------------------------------------------------------

def layer_params(layer, mode, layers, bidir):
    """The layer's parameters packed flat in MXNet's order, from their Gluon names."""
    names = [f"{d}{i}_{g}_{t}" for t in ("weight", "bias") for i in range(layers)
             for d in "lr"[:2 if bidir else 1] for g in ("i2h", "h2h")]
    return np.concatenate([getattr(layer, n).data().asnumpy().astype(np.float64).ravel()
                           for n in names])


@pytest.mark.parametrize("cls,mode,kw", [
    (mx.gluon.rnn.RNN, "rnn_relu", {}), (mx.gluon.rnn.RNN, "rnn_tanh", {"activation": "tanh"}),
    (mx.gluon.rnn.LSTM, "lstm", {}), (mx.gluon.rnn.GRU, "gru", {})])
@pytest.mark.parametrize("layout", ["TNC", "NTC"])
def test_layers_match_reference(cls, mode, kw, layout):
    layer = cls(4, num_layers=2, bidirectional=True, layout=layout, **kw)
    names = [n for n in layer.collect_params()]
    p = layer.prefix
    assert names[:4] == [p + "l0_i2h_weight", p + "l0_h2h_weight", p + "l0_i2h_bias",
                         p + "l0_h2h_bias"]
    assert p + "r1_h2h_bias" in names and len(names) == 16
    layer.initialize(mx.init.Uniform(0.5))
    g = GATES[mode]
    assert layer.l0_i2h_weight.shape == (g * 4, 0)          # input size inferred on call
    rng = np.random.default_rng(2)
    x = rng.uniform(-1, 1, (5, 2, 3))
    xin = x if layout == "TNC" else x.transpose(1, 0, 2)
    layer(nd.array(xin))
    assert layer.l0_i2h_weight.shape == (g * 4, 3) and layer.l1_i2h_weight.shape == (g * 4, 8)
    assert not layer.r0_h2h_bias.data().asnumpy().any()     # zeros by default
    for prm in layer.collect_params().values():              # give the biases values too
        prm.set_data(nd.random.uniform(-0.5, 0.5, shape=prm.shape))
    out = layer(nd.array(xin))
    params = layer_params(layer, mode, 2, True)
    zeros = np.zeros((4, 2, 4))
    ref, hn, cn = reference(mode, x, params, zeros, zeros if mode == "lstm" else None, 4, 2,
                            True)
    got = out.asnumpy() if layout == "TNC" else out.asnumpy().transpose(1, 0, 2)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
    states = layer.begin_state(2)
    assert len(states) == (2 if mode == "lstm" else 1) and states[0].shape == (4, 2, 4)
    h0 = rng.uniform(-1, 1, (4, 2, 4))
    states[0] = nd.array(h0)
    out2, new = layer(nd.array(xin), states)
    ref2, hn2, cn2 = reference(mode, x, params, h0, zeros if mode == "lstm" else None, 4, 2,
                               True)
    np.testing.assert_allclose(new[0].asnumpy(), hn2, rtol=1e-5, atol=1e-5)
    if mode == "lstm":
        np.testing.assert_allclose(new[1].asnumpy(), cn2, rtol=1e-5, atol=1e-5)


def test_lstm_layer_with_projection():
    layer = mx.gluon.rnn.LSTM(4, num_layers=2, bidirectional=True, projection_size=2, input_size=3)
    p = layer.prefix
    assert list(layer.collect_params())[:5] == [p + "l0_i2h_weight", p + "l0_h2h_weight",
                                                p + "l0_i2h_bias", p + "l0_h2h_bias",
                                                p + "l0_h2r_weight"]    # Gluon 1.x order
    assert layer.l0_h2h_weight.shape == (16, 2) and layer.l0_h2r_weight.shape == (2, 4)
    assert layer.l1_i2h_weight.shape == (16, 4)
    layer.initialize(mx.init.Uniform(0.5))
    for prm in layer.collect_params().values():
        prm.set_data(nd.random.uniform(-0.5, 0.5, shape=prm.shape))
    states = layer.begin_state(2)
    assert [st.shape for st in states] == [(4, 2, 2), (4, 2, 4)]
    x = np.random.default_rng(4).uniform(-1, 1, (3, 2, 3))
    out, new = layer(nd.array(x), states)
    names = [f"{d}{i}_{g}_{t}" for t in ("weight", "bias") for i in range(2) for d in "lr"
             for g in ("i2h", "h2h", "h2r") if t == "weight" or g != "h2r"]
    params = np.concatenate([getattr(layer, nm).data().asnumpy().astype(np.float64).ravel()
                             for nm in names])
    ref, hn, cn = reference("lstm", x, params, np.zeros((4, 2, 2)), np.zeros((4, 2, 4)), 4,
                            2, True, proj=2)
    assert out.shape == (3, 2, 4)
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(new[0].asnumpy(), hn, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(new[1].asnumpy(), cn, rtol=1e-5, atol=1e-5)


def test_layer_trains_and_sequence_length():
    layer = mx.gluon.rnn.GRU(3, input_size=2, use_sequence_length=True)
    layer.initialize()
    x = nd.random.uniform(shape=(4, 2, 2))
    lengths = nd.array([4, 2])
    with autograd.record():
        out = layer(x, sequence_length=lengths)
        loss = out.sum()
    loss.backward()
    assert np.all(out.asnumpy()[2:, 1] == 0)
    for prm in layer.collect_params().values():
        assert prm.grad().shape == prm.shape
    assert np.abs(layer.l0_h2h_weight.grad().asnumpy()).sum() > 0


def test_layer_errors():
    with pytest.raises(ValueError, match=r"RNN: layout must be 'TNC' or 'NTC' \(got 'NCT'\)"):
        mx.gluon.rnn.RNN(3, layout="NCT")
    with pytest.raises(ValueError, match=r"RNN: activation must be 'relu' or 'tanh'"):
        mx.gluon.rnn.RNN(3, activation="sigmoid")
    with pytest.raises(ValueError, match=r"LSTM: hidden_size must be an integer >= 1"):
        mx.gluon.rnn.LSTM(0)
    with pytest.raises(ValueError, match=r"GRU: dropout must be a number in \[0, 1\)"):
        mx.gluon.rnn.GRU(3, dropout=1.5)
    with pytest.raises(ValueError, match=r"LSTM: projection_size must be an integer >= 1"):
        mx.gluon.rnn.LSTM(3, projection_size=0)
    with pytest.raises(ValueError, match=r"LSTM: state_clip_min and state_clip_max"):
        mx.gluon.rnn.LSTM(3, state_clip_min=-1.0)
    layer = mx.gluon.rnn.LSTM(3)
    layer.initialize()
    with pytest.raises(ValueError, match=r"LSTM: states must be a list of 2 NDArray"):
        layer(nd.zeros((2, 1, 2)), [nd.zeros((1, 1, 3))])
    with pytest.raises(ValueError, match=r"LSTM: inputs must be a 3-D NDArray"):
        layer(nd.zeros((2, 2)))


def test_fused_layers_trace_into_one_rnn_node(tmp_path):
    # Gluon 1.x: rnn.LSTM is a HybridBlock, so a HybridBlock may hold one; hybridized,
    # the layer is one RNN node of the graph, with the imperative results and gradients
    class Tagger(mx.gluon.HybridBlock):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.lstm = mx.gluon.rnn.LSTM(5, layout="NTC", input_size=3)
                self.out = nn.Dense(2, flatten=False, in_units=5)

        def hybrid_forward(self, F, x):
            return self.out(self.lstm(x))

    net = Tagger()
    net.initialize(mx.init.Xavier())
    x = nd.array(np.random.RandomState(0).rand(2, 4, 3))
    want = net.out(net.lstm(x)).asnumpy()
    weight = net.lstm.l0_h2h_weight
    np.testing.assert_array_equal(net(x).asnumpy(), want)
    net.lstm.hybridize()                         # accepted: the layer stays imperative
    np.testing.assert_array_equal(net(x).asnumpy(), want)
    with autograd.record():
        loss = (net(x) ** 2).sum()
    loss.backward()
    grad = weight.grad().asnumpy().copy()
    net.hybridize()
    with autograd.record():
        traced = net(x)
        loss = (traced ** 2).sum()
    loss.backward()
    np.testing.assert_allclose(traced.asnumpy(), want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(weight.grad().asnumpy(), grad, rtol=1e-5, atol=1e-7)
    net.export(str(tmp_path / "tagger"))
    nodes = json.loads((tmp_path / "tagger-symbol.json").read_text())["nodes"]
    assert [n["op"] for n in nodes].count("RNN") == 1


@pytest.mark.parametrize("make_layer", [
    lambda: mx.gluon.rnn.GRU(3, layout="NTC", input_size=2, bidirectional=True,
                             use_sequence_length=True),
    lambda: mx.gluon.rnn.LSTM(3, layout="NTC", input_size=2, num_layers=2,
                              use_sequence_length=True, state_clip_min=-0.05,
                              state_clip_max=0.05)])
def test_layer_with_sequence_length_and_clipping_traces(make_layer):
    class Tagger(mx.gluon.HybridBlock):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.rnn = make_layer()

        def hybrid_forward(self, F, x, lengths):
            return self.rnn(x, None, lengths)

    net = Tagger()
    net.initialize(mx.init.Xavier())
    x = nd.array(np.random.RandomState(1).rand(3, 4, 2))
    lengths = nd.array([4, 2, 1])
    want = net(x, lengths).asnumpy()
    assert np.all(want[1, 2:] == 0) and np.all(want[2, 1:] == 0)
    net.hybridize()
    np.testing.assert_allclose(net(x, lengths).asnumpy(), want, rtol=1e-6, atol=1e-7)


def test_unfused_layers_refuse_tracing():
    # LSTMP runs as a composition of operators, which has no graph node
    net = nn.HybridSequential()
    net.add(mx.gluon.rnn.LSTM(4, input_size=3, projection_size=2))
    net.initialize()
    x = nd.ones((2, 1, 3))
    want = net(x).asnumpy()
    net.hybridize()
    with pytest.raises(NotImplementedError, match="LSTM: a layer with projection_size "
                                                  "cannot be traced"):
        net(x)
    net.hybridize(active=False)
    np.testing.assert_array_equal(net(x).asnumpy(), want)


# -- the fused operator ---------------------------------------------------------------------

def _heads(res, seed):
    rng = np.random.default_rng(seed)
    return [nd.array(rng.uniform(-1, 1, r.shape), dtype=r.dtype) for r in res]


def test_fused_operator_is_one_tape_node_that_keeps_data_and_parameters():
    x, params, h0, c0 = (nd.array(a) for a in make("lstm", 5, 2, 3, 4, 2, True,
                                                   dtype=np.float32))
    for a in (x, params, h0, c0):
        a.attach_grad()
    with autograd.record():
        out = nd.RNN(x, params, h0, c0, state_size=4, num_layers=2, bidirectional=True,
                     mode="lstm")
    out.backward()
    assert autograd.last_backward_stats()["nodes"] == 1
    # with the forward's reserve, the rule reads data and parameters only
    op = mx.ops.get("RNN")
    state = op.prepare(op.parse_attrs({"state_size": 4, "num_layers": 2, "mode": "lstm"}))
    state.reserve = nd.zeros((1,))
    attrs = dict(op.parse_attrs({"state_size": 4, "num_layers": 2, "mode": "lstm"}),
                 _state=state)
    assert op.grad_reads(attrs, 4, 1) == ((0, 1), ())
    assert op.grad_reads(dict(attrs, _state=None), 4, 1) == ((0, 1, 2, 3), ())


@pytest.mark.parametrize("req", ["add", "write"])
def test_fused_gradients_honour_grad_req(req):
    x, params, h0 = (nd.array(a, dtype=np.float64)
                     for a in make("gru", 3, 2, 3, 2, 2, True, seed=4)[:3])
    params.attach_grad(grad_req=req)
    h0.attach_grad(grad_req=req)     # data: no gradient (its request null)
    kw = dict(state_size=2, num_layers=2, bidirectional=True, mode="gru")
    with autograd.record():
        out = nd.RNN(x, params, h0, **kw)
    out.backward()
    once = params.grad.asnumpy().copy(), h0.grad.asnumpy().copy()
    with autograd.record():
        out = nd.RNN(x, params, h0, **kw)
    out.backward()
    k = 2 if req == "add" else 1
    np.testing.assert_allclose(params.grad.asnumpy(), k * once[0], rtol=1e-12)
    np.testing.assert_allclose(h0.grad.asnumpy(), k * once[1], rtol=1e-12)
    assert x.grad is None


def test_fused_dropout_gradient_is_that_of_the_drawn_mask():
    # the same seed draws the same mask: the training forward is then a deterministic
    # function of the parameters, whose central differences the gradient must match
    t, n, isz, h = 3, 2, 2, 3
    x, params, h0, c0 = make("lstm", t, n, isz, h, 2, False, seed=8)
    kw = dict(state_size=h, num_layers=2, mode="lstm", p=0.4)
    wo = np.random.default_rng(2).uniform(-1, 1, (t, n, h))

    def loss_np():
        mx.random.seed(21)
        with autograd.train_mode():
            out = nd.RNN(*(nd.array(a, dtype=np.float64) for a in (x, params, h0, c0)), **kw)
        return float((out.asnumpy() * wo).sum())

    ins = [nd.array(a, dtype=np.float64) for a in (x, params, h0, c0)]
    for a in ins:
        a.attach_grad()
    mx.random.seed(21)
    with autograd.record():
        out = nd.RNN(*ins, **kw)
    out.backward(nd.array(wo, dtype=np.float64))
    np.testing.assert_allclose(float((out.asnumpy() * wo).sum()), loss_np(), rtol=1e-12)
    eval_out = nd.RNN(*ins, **kw).asnumpy()
    assert not np.allclose(out.asnumpy(), eval_out)    # something was dropped
    for a, arr in zip((x, params), ins):
        np.testing.assert_allclose(arr.grad.asnumpy(), numeric_grad(loss_np, a), rtol=1e-5,
                                   atol=1e-7)


def test_sym_rnn_binds_as_one_graph_operator():
    t, n, isz, h = 4, 3, 3, 2
    x, params, h0, c0 = make("lstm", t, n, isz, h, 2, True, seed=9)
    names = ("data", "parameters", "state", "state_cell")
    out = mx.sym.RNN(*(mx.sym.var(nm) for nm in names), state_size=h, num_layers=2,
                     bidirectional=True, mode="lstm", state_outputs=True)
    args = {nm: nd.array(a, dtype=np.float64) for nm, a in zip(names, (x, params, h0, c0))}
    grads = {nm: nd.zeros(a.shape, dtype=np.float64) for nm, a in args.items()}
    ex = out.bind(mx.cpu(), args, args_grad=grads)
    res = ex.forward(is_train=True)
    heads = _heads(res, 5)
    ex.backward(heads)
    for a in args.values():
        a.attach_grad()
    with autograd.record():
        want = nd.RNN(*args.values(), state_size=h, num_layers=2, bidirectional=True,
                      mode="lstm", state_outputs=True)
    autograd.backward(want, heads)
    for got, ref in zip(res, want):
        np.testing.assert_allclose(got.asnumpy(), ref.asnumpy(), rtol=1e-12)
    for nm, a in args.items():
        np.testing.assert_allclose(grads[nm].asnumpy(), a.grad.asnumpy(), rtol=1e-12,
                                   err_msg=nm)


free_failing_tests(globals())


# -- MXNet 1.x's test_gluon_rnn.py layer cases, ported -------------------------------------

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


@pytest.mark.parametrize("layer, bidir, kinds", [
    (lambda **kw: mx.gluon.rnn.LSTM(3, num_layers=2, **kw), True,
     ["BidirectionalCell", "BidirectionalCell"]),
    (lambda **kw: mx.gluon.rnn.GRU(3, num_layers=2, dropout=0.3, **kw), False,
     ["GRUCell", "DropoutCell", "GRUCell"]),
    (lambda **kw: mx.gluon.rnn.RNN(3, activation="relu", **kw), True, ["BidirectionalCell"]),
])
def test_unfused_stack_shares_the_layers_parameters(layer, bidir, kinds):
    # Gluon's private _unfuse (MXNet's test_lstm_cpu_inference unrolls it)
    net = layer(bidirectional=bidir, prefix="rnn_")
    stack = net._unfuse()
    assert isinstance(stack, mx.gluon.rnn.HybridSequentialRNNCell)
    assert [type(c).__name__ for c in stack._children.values()] == kinds
    assert sorted(stack.collect_params()) == sorted(net.collect_params())
    net.initialize(mx.init.Uniform(0.5))
    x = nd.array(np.random.default_rng(1).uniform(-1, 1, (4, 2, 5)))   # TNC
    with autograd.predict_mode():
        fused = net(x).asnumpy()
        unrolled = stack.unroll(4, x, layout="TNC", merge_outputs=True)[0].asnumpy()
    np.testing.assert_allclose(unrolled, fused, rtol=1e-5, atol=1e-6)
    with pytest.raises(NotImplementedError, match="_unfuse takes no projection_size"):
        mx.gluon.rnn.LSTM(3, projection_size=2)._unfuse()
