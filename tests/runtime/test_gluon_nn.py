"""Gluon's layers (runtime.gluon.nn) against MXNet 1.9.1: outputs and gradients from
``data/mxnet191.npz`` (written by ``mxnet_fixtures.py`` under MXNet), parameter names,
shapes, defaults and reprs as MXNet prints them, and the Block API (hooks, cast,
summary, share_parameters, save/load options)."""

import os

import numpy as np
import pytest

import runtime as mx
from runtime import autograd, nd
from runtime.gluon import nn

from tests.runtime.mxnet_fixtures import LAYER_CASES

FIXTURES = np.load(os.path.join(os.path.dirname(__file__), "data", "mxnet191.npz"))


def _close(actual, expected, what):
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-5, err_msg=what)


@pytest.mark.parametrize("key,cls,kwargs,shape", LAYER_CASES, ids=[c[0] for c in LAYER_CASES])
def test_layer_matches_mxnet(key, cls, kwargs, shape):
    layer = getattr(nn, cls)(**kwargs)
    layer.initialize()
    x = nd.array(FIXTURES[f"{key}/x"])
    layer(x)                                        # completes deferred shapes
    params = list(layer.collect_params().values())
    names = [str(n) for n in FIXTURES[f"{key}/names"] if str(n)]
    assert [p.name.split("_", 1)[1] for p in params] == [n.split("_", 1)[1] for n in names]
    for i, p in enumerate(params):
        p.set_data(nd.array(FIXTURES[f"{key}/p{i}"]))
    x.attach_grad()
    with autograd.record():
        out = layer(x)
    out.backward(nd.array(FIXTURES[f"{key}/head"]))
    _close(out.asnumpy(), FIXTURES[f"{key}/out"], f"{key}: output")
    if cls == "SELU":
        # MXNet 1.9.1's SELU gradient below 0 is lambda * (out + alpha), not the
        # derivative lambda * alpha * exp(x): compare with the derivative instead
        xv = FIXTURES[f"{key}/x"].astype(np.float64)
        lam, alpha = 1.0507009873554805, 1.6732632423543772
        slope = np.where(xv > 0, lam, lam * alpha * np.exp(xv))
        _close(x.grad.asnumpy(), FIXTURES[f"{key}/head"] * slope, f"{key}: input gradient")
    else:
        _close(x.grad.asnumpy(), FIXTURES[f"{key}/dx"], f"{key}: input gradient")
    for i, p in enumerate(params):
        # MXNet's operator writes 1 into a fixed gamma (scale=False); ndrt's leaves it
        # (documented in nd.BatchNorm); both normalise with 1
        if not (cls == "BatchNorm" and p.name.endswith("gamma") and p.grad_req == "null"):
            _close(p.data().asnumpy(), FIXTURES[f"{key}/after{i}"], f"{key}: {p.name} after")
        if f"{key}/dp{i}" in FIXTURES:
            assert p.grad_req != "null"
            _close(p.grad().asnumpy(), FIXTURES[f"{key}/dp{i}"], f"{key}: {p.name} gradient")
        else:
            assert p.grad_req == "null", p.name


# (constructor, repr MXNet 1.9.1 prints, [(parameter suffix, shape, grad_req)])
REPRS = [
    (lambda: nn.Conv2D(4, 3, layout="NHWC", in_channels=2),
     "Conv2D(3 -> 4, kernel_size=(3, 3), stride=(1, 1))",
     [("weight", (4, 3, 3, 2), "write"), ("bias", (4,), "write")]),
    (lambda: nn.Conv2DTranspose(4, 3, in_channels=2, groups=2),
     "Conv2DTranspose(2 -> 2, kernel_size=(3, 3), stride=(1, 1), groups=2)",
     [("weight", (2, 2, 3, 3), "write"), ("bias", (4,), "write")]),
    (lambda: nn.Conv1D(4, 3, in_channels=2, padding=1, activation="relu"),
     "Conv1D(2 -> 4, kernel_size=(3,), stride=(1,), padding=(1,), Activation(relu))",
     [("weight", (4, 2, 3), "write"), ("bias", (4,), "write")]),
    (lambda: nn.Conv3DTranspose(4, (1, 2, 3), strides=2, output_padding=1),
     "Conv3DTranspose(4 -> 0, kernel_size=(1, 2, 3), stride=(2, 2, 2))",
     [("weight", (0, 4, 1, 2, 3), "write"), ("bias", (4,), "write")]),
    (lambda: nn.Conv2D(6, 3, groups=2, use_bias=False, dilation=2),
     "Conv2D(None -> 6, kernel_size=(3, 3), stride=(1, 1), dilation=(2, 2), groups=2, "
     "bias=False)", [("weight", (6, 0, 3, 3), "write")]),
    (lambda: nn.MaxPool2D(),
     "MaxPool2D(size=(2, 2), stride=(2, 2), padding=(0, 0), ceil_mode=False, "
     "global_pool=False, pool_type=max, layout=NCHW)", []),
    (lambda: nn.AvgPool1D(3, 2, 1),
     "AvgPool1D(size=(3,), stride=(2,), padding=(1,), ceil_mode=False, global_pool=False, "
     "pool_type=avg, layout=NCW)", []),
    (lambda: nn.GlobalAvgPool2D(),
     "GlobalAvgPool2D(size=(1, 1), stride=(1, 1), padding=(0, 0), ceil_mode=True, "
     "global_pool=True, pool_type=avg, layout=NCHW)", []),
    (lambda: nn.BatchNorm(),
     "BatchNorm(axis=1, eps=1e-05, momentum=0.9, fix_gamma=False, use_global_stats=False, "
     "in_channels=None)",
     [("gamma", (0,), "write"), ("beta", (0,), "write"), ("running_mean", (0,), "null"),
      ("running_var", (0,), "null")]),
    (lambda: nn.BatchNorm(in_channels=3, axis=-1, center=False),
     "BatchNorm(axis=-1, eps=1e-05, momentum=0.9, fix_gamma=False, use_global_stats=False, "
     "in_channels=3)",
     [("gamma", (3,), "write"), ("beta", (3,), "null"), ("running_mean", (3,), "null"),
      ("running_var", (3,), "null")]),
    (lambda: nn.InstanceNorm(),
     "InstanceNorm(eps=1e-05, axis=1, center=True, scale=False, in_channels=0)",
     [("gamma", (0,), "null"), ("beta", (0,), "write")]),
    (lambda: nn.LayerNorm(in_channels=5),
     "LayerNorm(eps=1e-05, axis=-1, center=True, scale=True, in_channels=5)",
     [("gamma", (5,), "write"), ("beta", (5,), "write")]),
    (lambda: nn.GroupNorm(2), "GroupNorm(eps=1e-05, num_groups=2, center=True, scale=True)",
     [("gamma", (2,), "write"), ("beta", (2,), "write")]),
    (lambda: nn.LeakyReLU(0.1), "LeakyReLU(0.1)", []),
    (lambda: nn.PReLU(), "PReLU(\n\n)", [("alpha", (1,), "write")]),
    (lambda: nn.ReflectionPad2D(2), "ReflectionPad2D(\n\n)", []),
    (lambda: nn.Lambda("tanh"), "Lambda(tanh)", []),
    (lambda: nn.SyncBatchNorm(),
     "SyncBatchNorm(eps=1e-05, momentum=0.9, fix_gamma=False, use_global_stats=False, "
     "ndev=1, key='{prefix}', in_channels=None)",
     [("gamma", (0,), "write"), ("beta", (0,), "write"), ("running_mean", (0,), "null"),
      ("running_var", (0,), "null")]),
]


@pytest.mark.parametrize("make,text,params", REPRS)
def test_repr_and_parameters_as_mxnet(make, text, params):
    layer = make()
    assert repr(layer) == text.format(prefix=layer.prefix)
    got = [(p.name[len(layer.prefix):], p.shape, p.grad_req)
           for p in layer.collect_params().values()]
    assert got == params


def test_prefixes_follow_gluon_aliases():
    net = nn.Sequential(prefix="net_")
    with net.name_scope():
        net.add(nn.Conv2D(2, 3, activation="relu"), nn.MaxPool2D(), nn.Conv2D(2, 3),
                nn.BatchNorm(), nn.Dense(2))
    assert [b.prefix for b in net] == ["net_conv0_", "net_pool0_", "net_conv1_",
                                       "net_batchnorm0_", "net_dense0_"]
    assert net[0].act.prefix == "net_conv0_relu_"
    assert sorted(net.collect_params("net_conv.*_weight")) == ["net_conv0_weight",
                                                               "net_conv1_weight"]
    assert list(net.collect_params(".*running_(mean|var)")) == [
        "net_batchnorm0_running_mean", "net_batchnorm0_running_var"]


def _ref_conv2d(x, w, b, stride, pad):
    """A direct NumPy convolution (NCHW, OIHW)."""
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros((n, o, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
            out[:, :, i, j] = np.einsum("nchw,ochw->no", patch, w)
    return out + b[None, :, None, None]


def test_conv_channel_last_is_channel_first_transposed():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 6, 5, 3)).astype(np.float32)        # NHWC
    layer = nn.Conv2D(4, 3, strides=2, padding=1, layout="NHWC")
    layer.initialize()
    out = layer(nd.array(x))
    assert layer.weight.shape == (4, 3, 3, 3)                       # (O, kh, kw, I)
    w = np.moveaxis(layer.weight.data().asnumpy(), -1, 1)
    ref = _ref_conv2d(np.moveaxis(x, -1, 1), w, layer.bias.data().asnumpy(), 2, 1)
    np.testing.assert_allclose(out.asnumpy(), np.moveaxis(ref, 1, -1), rtol=1e-5, atol=1e-5)


def test_deferred_in_channels_and_errors():
    layer = nn.Conv2D(4, 3, groups=2)
    layer.initialize()
    with pytest.raises(mx.gluon.DeferredInitializationError):
        layer.weight.data()
    with pytest.raises(ValueError, match="groups=2 must divide the input's 3 channels"):
        layer(nd.ones((1, 3, 5, 5)))
    assert layer.weight.shape == (4, 0, 3, 3)                      # unchanged
    assert layer(nd.ones((1, 6, 5, 5))).shape == (1, 4, 3, 3)
    assert layer.weight.shape == (4, 3, 3, 3)
    with pytest.raises(ValueError, match=r"Conv2D: input must have 4 dimensions \(NCHW\)"):
        layer(nd.ones((6, 5, 5)))
    with pytest.raises(ValueError, match="Conv2D: layout must be one of"):
        nn.Conv2D(4, 3, layout="NCW")
    with pytest.raises(ValueError, match=r"Conv2D: kernel_size must be .* \(got \(3, 3, 3\)\)"):
        nn.Conv2D(4, (3, 3, 3))
    with pytest.raises(ValueError, match="MaxPool1D: layout must be one of"):
        nn.MaxPool1D(layout="NCHW")
    with pytest.raises(ValueError, match="LeakyReLU: alpha must be >= 0"):
        nn.LeakyReLU(-0.1)
    with pytest.raises(ValueError, match="Lambda: function must name an nd function"):
        nn.Lambda("no_such_function")
    with pytest.raises(NotImplementedError, match="num_devices must be None or 1"):
        nn.SyncBatchNorm(num_devices=2)


def test_pooling_argument_orders_follow_gluon():
    # MaxPool3D, AvgPool2D and AvgPool3D take ceil_mode before layout, the others after
    assert "ceil_mode=True" in repr(nn.MaxPool3D(2, 1, 0, True))
    assert "layout=NHWC" in repr(nn.MaxPool2D(2, 1, 0, "NHWC"))
    assert "ceil_mode=True" in repr(nn.AvgPool2D(2, 1, 0, True, "NHWC", False))
    assert nn.AvgPool2D(2, 1, 0, True, "NHWC", False)._kwargs["count_include_pad"] is False
    assert "layout=NWC" in repr(nn.AvgPool1D(2, 1, 0, "NWC", True))


def test_batchnorm_inference_uses_running_statistics():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 3, 2)).astype(np.float32)
    bn = nn.BatchNorm(in_channels=3)
    bn.initialize()
    mean = np.array([0.5, -1.0, 2.0], np.float32)
    var = np.array([1.5, 0.5, 2.0], np.float32)
    bn.running_mean.set_data(mean)
    bn.running_var.set_data(var)
    bn.gamma.set_data(np.array([1.0, 2.0, 0.5], np.float32))
    out = bn(nd.array(x)).asnumpy()                 # not recording: inference
    ref = (x - mean[:, None]) / np.sqrt(var[:, None] + 1e-5) * \
        np.array([1.0, 2.0, 0.5])[:, None]
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(bn.running_mean.data().asnumpy(), mean)


def test_lambda_concatenate_identity():
    x = nd.array(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert repr(nn.Lambda(lambda a: a)) == "Lambda(<lambda>)"
    np.testing.assert_allclose(nn.Lambda("tanh")(x).asnumpy(), np.tanh(x.asnumpy()),
                               rtol=1e-6)
    cat = nn.Concatenate(axis=1)
    cat.add(nn.Identity(), nn.Lambda(lambda a: a * 2), nn.Dense(2, in_units=3))
    cat.initialize()
    out = cat(x).asnumpy()
    dense = cat[2]
    ref = np.concatenate([x.asnumpy(), 2 * x.asnumpy(),
                          x.asnumpy() @ dense.weight.data().asnumpy().T], axis=1)
    np.testing.assert_allclose(out, ref, rtol=1e-6)
    assert len(cat.collect_params()) == 2
    with pytest.raises(ValueError, match="add at least one block"):
        nn.Concatenate()(x)


def test_forward_hooks_order_and_detach():
    calls = []
    layer = nn.Dense(2, in_units=3)
    layer.initialize()
    pre = layer.register_forward_pre_hook(lambda b, args: calls.append(("pre", b, args)))
    post = layer.register_forward_hook(lambda b, args, out: calls.append(("post", out.shape)))
    x = nd.ones((4, 3))
    layer(x)
    assert calls[0][0] == "pre" and calls[0][1] is layer and calls[0][2][0] is x
    assert calls[1] == ("post", (4, 2))
    pre.detach()
    with post:
        layer(x)
    assert calls[2:] == [("post", (4, 2))]
    layer(x)
    assert len(calls) == 3
    post.detach()                                        # twice: nothing happens


def test_cast_changes_every_parameter_and_keeps_batchnorm_float32():
    net = nn.Sequential()
    net.add(nn.Dense(3, in_units=2), nn.BatchNorm(in_channels=3))
    net.initialize()
    net.cast("float64")
    assert [p.dtype for p in net.collect_params().values()] == [np.float64] * 6
    x = nd.ones((4, 2), dtype="float64")
    with autograd.record():
        y = net(x)
    y.backward()
    assert y.dtype == np.float64 and net[0].weight.grad().dtype == np.float64
    net.cast("float16")
    assert net[0].weight.dtype == np.float16
    assert net[1].gamma.dtype == np.float32             # Gluon's BatchNorm.cast rule


def test_summary_prints_gluon_table(capsys):
    net = nn.Sequential()
    net.add(nn.Dense(4, in_units=3), nn.BatchNorm(), nn.Dense(2))
    net.initialize()
    net.summary(nd.ones((5, 3)))
    out = capsys.readouterr().out.splitlines()
    rows = [line.split() for line in out[3:7]]
    assert rows[0] == ["Input", "(5,", "3)", "0"]
    assert rows[1] == ["Dense-1", "(5,", "4)", "16"]
    assert rows[2] == ["BatchNorm-2", "(5,", "4)", "16"]
    assert rows[3] == ["Dense-3", "(5,", "2)", "10"]
    assert "   Total params: 42" in out
    assert "   Trainable params: 34" in out
    assert "   Non-trainable params: 8" in out
    assert "Unique parameters in model: 42" in out
    assert not net[0]._forward_hooks                    # hooks removed


def test_share_parameters_by_structural_name():
    a = nn.Sequential()
    a.add(nn.Dense(3, in_units=2), nn.Dense(1, in_units=3))
    b = nn.Sequential()
    b.add(nn.Dense(3, in_units=2), nn.Dense(1, in_units=3))
    a.initialize()
    shared = {k: v for k, v in a._collect_params_with_prefix().items() if k.startswith("0.")}
    with pytest.warns(UserWarning, match="'9.weight' is not in this block"):
        b.share_parameters(dict(shared, **{"9.weight": a[1].weight}))
    assert b[0].weight is a[0].weight and b[0].bias is a[0].bias
    assert b[1].weight is not a[1].weight
    names = list(b.collect_params())
    assert a[0].weight.name in names and len(names) == 4
    b[1].initialize()
    x = nd.ones((2, 2))
    np.testing.assert_array_equal(a[0](x).asnumpy(), b[0](x).asnumpy())
    with pytest.raises(TypeError, match=r"shared\['0.weight'\] must be a Parameter"):
        b.share_parameters({"0.weight": 1})


def test_save_load_options(tmp_path):
    net = nn.Sequential()
    net.add(nn.Dense(3, in_units=2), nn.Dense(3, in_units=3))
    net.initialize()
    f = str(tmp_path / "net.params")
    net.save_parameters(f)
    other = nn.Sequential()
    other.add(nn.Dense(3, in_units=2, dtype="float64"), nn.Dense(3, in_units=3))
    other.initialize()
    with pytest.raises(ValueError, match="set cast_dtype=True"):
        other.load_parameters(f)
    other.load_parameters(f, cast_dtype=True)            # dtype_source='current'
    assert other[0].weight.dtype == np.float64
    np.testing.assert_allclose(other[0].weight.data().asnumpy(),
                               net[0].weight.data().asnumpy())
    other.load_parameters(f, cast_dtype=True, dtype_source="saved")
    assert other[0].weight.dtype == np.float32
    with pytest.raises(ValueError, match="dtype_source must be 'current' or 'saved'"):
        other.load_parameters(f, cast_dtype=True, dtype_source="file")
    small = nn.Sequential()
    small.add(nn.Dense(3, in_units=2))
    small.initialize()
    with pytest.raises(ValueError, match="set ignore_extra=True"):
        small.load_parameters(f)
    small.load_parameters(f, ignore_extra=True)
    big = nn.Sequential()
    big.add(nn.Dense(3, in_units=2), nn.Dense(3, in_units=3), nn.Dense(1, in_units=3))
    big.initialize()
    with pytest.raises(ValueError, match="set allow_missing=True"):
        big.load_parameters(f)
    big.load_parameters(f, allow_missing=True)
    np.testing.assert_array_equal(big[1].weight.data().asnumpy(),
                                  net[1].weight.data().asnumpy())


def test_save_deduplicate_shared_parameters(tmp_path):
    net = nn.Sequential()
    net.add(nn.Dense(3, in_units=3), nn.Dense(3, in_units=3))
    net[1].share_parameters({"weight": net[0].weight})
    net.initialize()
    full, dedup = str(tmp_path / "full.params"), str(tmp_path / "dedup.params")
    net.save_parameters(full)
    net.save_parameters(dedup, deduplicate=True)
    assert sorted(nd.load(full)) == ["0.bias", "0.weight", "1.bias", "1.weight"]
    assert sorted(nd.load(dedup)) == ["0.bias", "1.bias", "1.weight"]
    again = nn.Sequential()
    again.add(nn.Dense(3, in_units=3), nn.Dense(3, in_units=3))
    again[1].share_parameters({"weight": again[0].weight})
    again.initialize()
    again.load_parameters(dedup)                         # 0.weight found as 1.weight
    np.testing.assert_array_equal(again[0].weight.data().asnumpy(),
                                  net[0].weight.data().asnumpy())


def test_parameter_dict_save_load_and_legacy_files(tmp_path):
    net = nn.Sequential(prefix="net_")
    with net.name_scope():
        net.add(nn.Dense(3, in_units=2), nn.Dense(1, in_units=3))
    net.initialize()
    f = str(tmp_path / "legacy.params")
    net.collect_params().save(f, strip_prefix="net_")
    assert sorted(nd.load(f)) == ["dense0_bias", "dense0_weight", "dense1_bias",
                                  "dense1_weight"]
    other = nn.Sequential(prefix="other_")
    with other.name_scope():
        other.add(nn.Dense(3, in_units=2), nn.Dense(1, in_units=3))
    other.initialize()
    other.load_parameters(f)                       # Gluon 1.x's legacy path
    np.testing.assert_array_equal(other[1].weight.data().asnumpy(),
                                  net[1].weight.data().asnumpy())
    third = nn.Sequential(prefix="net_")
    with third.name_scope():
        third.add(nn.Dense(3, in_units=2), nn.Dense(1, in_units=3))
    third.collect_params().load(f, restore_prefix="net_")     # deferred: takes the file's
    np.testing.assert_array_equal(third[0].bias.data().asnumpy(),
                                  net[0].bias.data().asnumpy())
    with pytest.raises(ValueError, match="strip_prefix 'x_' must begin every parameter"):
        net.collect_params().save(f, strip_prefix="x_")
    with pytest.raises(ValueError, match="restore_prefix 'net_x' must begin every parameter"):
        third.collect_params().load(f, restore_prefix="net_x")
    with pytest.raises(ValueError, match=r"parameter 'net_dense0_weight' is missing in file"):
        third.collect_params().load(f)


def _dict_with(name, shape):
    params = mx.gluon.ParameterDict("p_")
    params.get(name, shape=shape)
    return params


@pytest.mark.parametrize("refused, match", [
    (lambda: mx.gluon.Parameter("w", shape=(2,), stype="invalid"),
     r"Parameter 'w': stype must be one of \('default', 'row_sparse', 'csr'\) \(got 'invalid'\)"),
    (lambda: mx.gluon.Parameter("w", shape=(2,), grad_stype="dense"),
     r"Parameter 'w': grad_stype must be one of .* \(got 'dense'\)"),
    (lambda: setattr(mx.gluon.Parameter("w", shape=(2,)), "grad_req", "sum"),
     r"Parameter 'w': grad_req must be one of .* \(got 'sum'\)"),
    (lambda: _dict_with("w", (2,)).get("w", shape=(3,)),
     r"Parameter 'p_w' exists with shape \(2,\), which does not match shape \(3,\)"),
])
def test_refused_parameter_arguments_are_value_and_assertion_errors(refused, match):
    # Gluon asserts these checks; an error of both classes serves callers of either
    with pytest.raises(ValueError, match=match) as info:
        refused()
    assert isinstance(info.value, AssertionError)


def test_private_grad_list_follows_grad_req():
    # Gluon's Parameter._grad, which Gluon 1.x programs and tests read
    p = mx.gluon.Parameter("w", shape=(2,))
    assert p._grad is None                       # not initialised
    p.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    assert [g.context for g in p._grad] == [mx.cpu(0), mx.cpu(1)]
    assert all(g is h for g, h in zip(p._grad, p.list_grad()))
    p.grad_req = "null"
    assert p._grad is None
    p.grad_req = "write"
    np.testing.assert_array_equal(p._grad[1].asnumpy(), np.zeros(2, np.float32))


def test_a_load_that_does_not_fit_is_a_value_and_assertion_error(tmp_path):
    f = str(tmp_path / "p.params")
    saved = _dict_with("w", (2,))
    saved.initialize()
    saved.save(f)
    for name, shape, match in (("v", (2,), "parameter 'p_v' is missing in file"),
                               ("w", (3,), r"parameter 'p_w' \(p_w\) has shape \(3,\)")):
        with pytest.raises(AssertionError, match=match) as info:
            _dict_with(name, shape).load(f)
        assert isinstance(info.value, ValueError)


def test_batchnorm_relu_is_batchnorm_then_relu():
    rng = np.random.default_rng(3)
    x = nd.array(rng.standard_normal((4, 3, 2)))
    plain, fused = nn.BatchNorm(in_channels=3), nn.BatchNormReLU(in_channels=3)
    for layer in (plain, fused):
        layer.initialize()
        layer.gamma.set_data(np.array([1.0, 2.0, 0.5], np.float32))
        layer.beta.set_data(np.array([0.1, -0.2, 0.3], np.float32))
    with autograd.record():
        a, b = plain(x), fused(x)
    np.testing.assert_allclose(b.asnumpy(), np.maximum(a.asnumpy(), 0), rtol=1e-6)
    np.testing.assert_allclose(fused.running_mean.data().asnumpy(),
                               plain.running_mean.data().asnumpy(), rtol=1e-6)
    assert repr(fused).startswith("BatchNormReLU(axis=1, eps=1e-05")


def test_container_repr_as_mxnet():
    net = nn.Sequential()
    net.add(nn.Dense(2), nn.ELU())
    assert repr(net) == ("Sequential(\n  (0): Dense(None -> 2, linear)\n  (1): ELU(\n  \n  )"
                         "\n)")


def test_summary_refuses_a_hybridized_tree():
    # its layers would run inside a cached graph, without the hooks the table needs
    net = nn.HybridSequential()
    net.add(nn.Dense(3, in_units=4), nn.Dense(2, in_units=3))
    net.initialize()
    x = nd.ones((1, 4))
    net.summary(x)
    net[1].hybridize()
    with pytest.raises(AssertionError, match=r'"dense\d+" must not be hybridized'):
        net.summary(x)
    net[1].hybridize(False)
    net.summary(x)
