"""gluon.contrib's layers and cells (Gluon 1.x's ``contrib.nn.PixelShuffle*D``,
``contrib.rnn`` convolutional cells, ``LSTMPCell`` and ``VariationalDropoutCell``):
forwards against NumPy implementations written from the layers' definitions, shapes
through symbolic unrolls, deferred channels, and the rules on bad arguments."""

import numpy as np
import pytest

import runtime as mx
from runtime import autograd, nd
from runtime.gluon import nn, rnn
from runtime.gluon.contrib import nn as cnn
from runtime.gluon.contrib import rnn as crnn
from runtime.test_utils import assert_allclose


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


# -- PixelShuffle ----------------------------------------------------------------------

def _depth_to_space(x, factors):
    """out[n, c, s1*f1 + i1, ...] = x[n, c*F + flat(i1, .., id), s1, ...], by loops."""
    n, cf = x.shape[:2]
    spatial = x.shape[2:]
    f_total = int(np.prod(factors))
    c = cf // f_total
    out = np.zeros((n, c) + tuple(s * f for s, f in zip(spatial, factors)), x.dtype)
    for idx in np.ndindex(*x.shape):
        b, ch, pos = idx[0], idx[1], idx[2:]
        c_out, sub = divmod(ch, f_total)
        offsets = np.unravel_index(sub, factors)
        target = tuple(p * f + o for p, f, o in zip(pos, factors, offsets))
        out[(b, c_out) + target] = x[idx]
    return out


@pytest.mark.parametrize("cls, factor, shape", [
    (cnn.PixelShuffle1D, 3, (2, 6, 4)),
    (cnn.PixelShuffle2D, (2, 3), (1, 12, 2, 3)),
    (cnn.PixelShuffle2D, 2, (2, 8, 3, 2)),
    (cnn.PixelShuffle3D, (2, 1, 2), (1, 8, 2, 3, 4)),
])
def test_pixel_shuffle_matches_the_definition_imperative_and_hybridized(cls, factor, shape):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    factors = (factor,) * (len(shape) - 2) if isinstance(factor, int) else factor
    want = _depth_to_space(x, factors)
    layer = cls(factor)
    np.testing.assert_array_equal(layer(nd.array(x)).asnumpy(), want)
    layer.hybridize()
    np.testing.assert_array_equal(layer(nd.array(x)).asnumpy(), want)


def test_pixel_shuffle_gradient_is_the_inverse_permutation():
    x = nd.array(np.arange(24, dtype=np.float32).reshape(1, 4, 2, 3))
    head = np.random.default_rng(1).standard_normal((1, 1, 4, 6)).astype(np.float32)
    x.attach_grad()
    with autograd.record():
        y = cnn.PixelShuffle2D(2)(x)
    y.backward(nd.array(head))
    # y[..., h*2+i, w*2+j] = x[c*4 + i*2 + j, h, w], so dx at that place is head there
    want = head.reshape(1, 1, 2, 2, 3, 2).transpose(0, 1, 3, 5, 2, 4).reshape(1, 4, 2, 3)
    np.testing.assert_array_equal(x.grad.asnumpy(), want)


def test_pixel_shuffle_refuses_bad_factors():
    with pytest.raises(ValueError, match=r"PixelShuffle2D: factor must be an integer or 2 "
                                         r"integers \(got \(2, 2, 2\)\)"):
        cnn.PixelShuffle2D((2, 2, 2))
    with pytest.raises(ValueError, match=r"PixelShuffle1D: factor must be an integer >= 1 "
                                         r"\(got 0\)"):
        cnn.PixelShuffle1D(0)


def test_assert_allclose_uses_numpy_defaults():
    assert_allclose(nd.array([1.0, np.nan]), [1.0, np.nan])
    with pytest.raises(AssertionError):
        assert_allclose(nd.array([1.0]), [1.0 + 1e-5])


# -- convolutional cells -----------------------------------------------------------------

def _conv1d(x, w, b, pad=0, dilate=1):
    """Cross-correlation (MXNet's Convolution), x (N, C, W), w (F, C, K), stride 1."""
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad)))
    k = w.shape[2]
    width = x.shape[2] - dilate * (k - 1)
    out = np.zeros((x.shape[0], w.shape[0], width))
    for t in range(width):
        window = x[:, :, t:t + dilate * (k - 1) + 1:dilate]
        out[:, :, t] = np.einsum("nck,fck->nf", window, w)
    return out + b[None, :, None]


def _params(cell):
    return {k.split("_", 1)[1]: v.data().asnumpy().astype(np.float64)
            for k, v in cell.collect_params().items()}


@pytest.mark.parametrize("cls", [crnn.Conv1DRNNCell, crnn.Conv1DLSTMCell, crnn.Conv1DGRUCell])
def test_conv1d_cells_step_matches_numpy(cls):
    rng = np.random.default_rng(2)
    cell = cls((3, 9), 4, i2h_kernel=3, h2h_kernel=3, i2h_pad=1, prefix="c_")
    cell.initialize(mx.init.Uniform(0.5))
    x = rng.standard_normal((2, 3, 9))
    states = [rng.standard_normal((2, 4, 9)) for _ in cell.state_info()]
    out, new = cell(nd.array(x, dtype="float64").astype("float32"),
                    [nd.array(s) for s in states])
    p = _params(cell)
    i2h = _conv1d(x, p["i2h_weight"], p["i2h_bias"], pad=1)
    h2h = _conv1d(states[0], p["h2h_weight"], p["h2h_bias"], pad=1)
    if cls is crnn.Conv1DRNNCell:
        want, want_states = np.tanh(i2h + h2h), [np.tanh(i2h + h2h)]
    elif cls is crnn.Conv1DLSTMCell:
        i, f, g, o = np.split(i2h + h2h, 4, axis=1)
        c = _sigmoid(f) * states[1] + _sigmoid(i) * np.tanh(g)
        want = _sigmoid(o) * np.tanh(c)
        want_states = [want, c]
    else:
        ir, iz, in_ = np.split(i2h, 3, axis=1)
        hr, hz, hn = np.split(h2h, 3, axis=1)
        r, z = _sigmoid(ir + hr), _sigmoid(iz + hz)
        want = (1 - z) * np.tanh(in_ + r * hn) + z * states[0]
        want_states = [want]
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-4, atol=1e-5)
    for got, ref in zip(new, want_states):
        np.testing.assert_allclose(got.asnumpy(), ref, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("cls, in_shape, state", [
    (crnn.Conv2DLSTMCell, (3, 8, 10), (6, 8)),
    (crnn.Conv3DGRUCell, (2, 5, 6, 7), (3, 4, 5)),
])
def test_conv_cell_state_shape_follows_the_i2h_convolution(cls, in_shape, state):
    cell = cls(in_shape, 5, i2h_kernel=3, h2h_kernel=(1,) * len(state), prefix="c_")
    assert [s["shape"] for s in cell.state_info(2)] == \
        [(2, 5) + state] * len(cell.state_info())
    data = [mx.sym.Variable(f"t{i}") for i in range(2)]
    outs, _ = cell.unroll(2, data)
    group = mx.sym.Group(outs)
    assert group.list_outputs() == ["c_t0_out_output", "c_t1_out_output"]
    _, shapes, _ = group.infer_shape(t0=(2,) + in_shape, t1=(2,) + in_shape)
    assert shapes == [(2, 5) + state] * 2


def test_conv_cell_takes_deferred_channels_from_the_first_input_and_unrolls_4d():
    cell = crnn.Conv1DLSTMCell((0, 7), 6, (3,), (3,))
    cell.initialize()
    seq = nd.array(np.random.default_rng(3).standard_normal((2, 4, 5, 7)))
    outputs, states = cell.unroll(4, seq, layout="NTC", merge_outputs=True)
    assert cell.i2h_weight.shape == (24, 5, 3)
    assert outputs.shape == (2, 4, 6, 5)
    assert [s.shape for s in states] == [(2, 6, 5), (2, 6, 5)]


def test_conv_cell_refuses_bad_arguments():
    with pytest.raises(ValueError, match=r"Conv2DRNNCell: h2h_kernel must be odd sizes"):
        crnn.Conv2DRNNCell((3, 8, 8), 4, 3, (2, 3))
    with pytest.raises(ValueError, match=r"Conv1DGRUCell: input_shape must be \(channels, "
                                         r"1 spatial sizes\) \(got \(3, 8, 8\)\)"):
        crnn.Conv1DGRUCell((3, 8, 8), 4, 3, 3)
    with pytest.raises(ValueError, match=r"Conv1DRNNCell: conv_layout must be 'NCW'"):
        crnn.Conv1DRNNCell((3, 8), 4, 3, 3, conv_layout="NWC")
    cell = crnn.Conv1DRNNCell((3, 8), 4, 3, 3)
    cell.initialize()
    with pytest.raises(ValueError, match=r"inputs must be \(batch, channels\) \+ \(8,\)"):
        cell(nd.ones((2, 3, 9)), cell.begin_state(batch_size=2))


# -- LSTMPCell -----------------------------------------------------------------------------

def test_lstmp_step_matches_numpy_and_names_its_parameters():
    rng = np.random.default_rng(4)
    cell = crnn.LSTMPCell(6, 3, input_size=5, prefix="p_")
    cell.initialize(mx.init.Uniform(0.5))
    assert sorted(cell.collect_params().keys()) == [
        "p_h2h_bias", "p_h2h_weight", "p_h2r_weight", "p_i2h_bias", "p_i2h_weight"]
    assert [s["shape"] for s in cell.state_info(2)] == [(2, 3), (2, 6)]
    x, r, c = rng.standard_normal((2, 5)), rng.standard_normal((2, 3)), \
        rng.standard_normal((2, 6))
    out, (new_r, new_c) = cell(nd.array(x), [nd.array(r), nd.array(c)])
    p = _params(cell)
    gates = x @ p["i2h_weight"].T + p["i2h_bias"] + r @ p["h2h_weight"].T + p["h2h_bias"]
    i, f, g, o = np.split(gates, 4, axis=1)
    want_c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
    want_r = (_sigmoid(o) * np.tanh(want_c)) @ p["h2r_weight"].T
    np.testing.assert_allclose(out.asnumpy(), want_r, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(new_r.asnumpy(), want_r, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(new_c.asnumpy(), want_c, rtol=1e-4, atol=1e-5)


# -- VariationalDropoutCell ----------------------------------------------------------------

def test_variational_dropout_reuses_one_mask_per_sequence():
    base = rnn.DropoutCell(0.0)          # passes its input: the output is the masked input
    cell = crnn.VariationalDropoutCell(base, drop_inputs=0.5)
    seq = nd.ones((4, 6, 30))
    with autograd.record():
        first = cell.unroll(6, seq, merge_outputs=True)[0].asnumpy()
        second = cell.unroll(6, seq, merge_outputs=True)[0].asnumpy()
    kept = first[:, 0] != 0
    assert 0 < kept.mean() < 1
    for t in range(6):                    # the same positions dropped at every step
        np.testing.assert_array_equal(first[:, t] != 0, kept)
    np.testing.assert_allclose(first[:, 0][kept], 2.0)      # scaled by 1 / (1 - p)
    assert not np.array_equal(second[:, 0] != 0, kept)      # a new mask per sequence
    np.testing.assert_array_equal(cell.unroll(6, seq, merge_outputs=True)[0].asnumpy(),
                                  seq.asnumpy())            # predict mode: no dropout


def test_variational_dropout_masks_the_first_state_only():
    base = rnn.LSTMCell(3, input_size=2)
    base.initialize()
    cell = crnn.VariationalDropoutCell(base, drop_states=0.5)
    h, c = nd.ones((50, 3)), nd.ones((50, 3))
    with autograd.record():
        cell(nd.zeros((50, 2)), [h, c])
    mask = cell._masks["states"].asnumpy()
    assert set(np.unique(mask)) == {0.0, 2.0}
    assert set(cell._masks) == {"states"}
    with pytest.raises(ValueError, match=r"drop_outputs must be a number in \[0, 1\) "
                                         r"\(got 1\)"):
        crnn.VariationalDropoutCell(rnn.RNNCell(2), drop_outputs=1)


def test_sync_batchnorm_at_its_gluon_1x_path_normalises_the_batch():
    # Gluon 1.x programs take SyncBatchNorm from contrib.nn; on one device it normalises
    # each channel (axis 1) by the batch's statistics, as BatchNorm
    assert cnn.SyncBatchNorm is nn.SyncBatchNorm
    x = np.arange(24.0, dtype="float32").reshape(4, 3, 2) ** 1.5
    layer = cnn.SyncBatchNorm(in_channels=3, num_devices=1)
    layer.initialize()
    with autograd.record():
        y = layer(nd.array(x)).asnumpy()
    mean = x.mean(axis=(0, 2), keepdims=True)
    var = x.var(axis=(0, 2), keepdims=True)
    np.testing.assert_allclose(y, (x - mean) / np.sqrt(var + 1e-5), rtol=1e-4, atol=1e-4)
