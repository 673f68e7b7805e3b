"""The image operators (runtime/ops/image.py, ``nd.image`` and ``sym.image``) against
NumPy: to_tensor is a transpose to channels first and a division by 255, normalize is
``(x - mean) / std`` per channel, the flips reverse the width or the height axis; their
refusals follow MXNet 1.x's rules (tests/runtime/test_all_ops.py checks the generic
behaviour from op_samples_image.py)."""

import numpy as np
import pytest

import runtime as mx
from runtime import autograd, nd
from runtime.base import MXNetError
from runtime.gluon.data.vision import transforms as T

RNG = np.random.default_rng(5)
IMG = RNG.integers(0, 256, (6, 7, 3)).astype(np.uint8)


def test_to_tensor_is_channels_first_over_255():
    got = nd.image.to_tensor(nd.array(IMG, dtype=np.uint8))
    assert got.dtype == np.float32 and got.shape == (3, 6, 7)
    np.testing.assert_allclose(got.asnumpy(), IMG.transpose(2, 0, 1) / 255.0, rtol=1e-6)
    batch = np.stack([IMG, IMG[::-1]]).astype(np.float64)
    got = nd.image.to_tensor(nd.array(batch, dtype=np.float64))
    assert got.dtype == np.float32 and got.shape == (2, 3, 6, 7)
    np.testing.assert_allclose(got.asnumpy(), batch.transpose(0, 3, 1, 2) / 255.0, rtol=1e-6)


@pytest.mark.parametrize("shape", [(3, 4, 5), (2, 3, 4, 5), (1, 4, 5), (2, 1, 4, 5)])
def test_normalize_per_channel(shape):
    x = RNG.uniform(0, 1, shape).astype(np.float32)
    c = shape[-3]
    mean, std = (0.485, 0.456, 0.406)[:c], (0.229, 0.224, 0.225)[:c]
    got = nd.image.normalize(nd.array(x), mean=mean, std=std)
    want = (x - np.reshape(mean, (-1, 1, 1))) / np.reshape(std, (-1, 1, 1))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)
    # one value serves every channel; the defaults leave the data as it is
    np.testing.assert_allclose(nd.image.normalize(nd.array(x), mean=0.5, std=2.0).asnumpy(),
                               (x - 0.5) / 2.0, rtol=1e-6)
    np.testing.assert_array_equal(nd.image.normalize(nd.array(x)).asnumpy(), x)


def test_normalize_gradient_divides_by_std():
    x = nd.array(RNG.uniform(0, 1, (2, 3, 2, 2)), dtype=np.float64)
    head = RNG.uniform(-1, 1, (2, 3, 2, 2))
    x.attach_grad()
    with autograd.record():
        y = nd.image.normalize(x, mean=(1.0, 2.0, 3.0), std=(0.5, 2.0, 4.0))
    y.backward(nd.array(head, dtype=np.float64))
    np.testing.assert_allclose(x.grad.asnumpy(),
                               head / np.reshape([0.5, 2.0, 4.0], (-1, 1, 1)), rtol=1e-12)


@pytest.mark.parametrize("data,rule", [
    (np.zeros((4, 2, 2), np.float32), r"data must have 1 or 3 channels \(got 4"),
    (np.zeros((5, 5, 3, 2, 2), np.float32), r"data must be a tensor \(C, H, W\) or a batch"),
    (np.zeros((3, 2, 2), np.float32), r"mean must hold 1 or 3 values for 3 channels"),
])
def test_normalize_refusals_are_mxnet_errors(data, rule):
    before = data.copy()
    with pytest.raises(MXNetError, match=r"^_image_normalize: " + rule):
        nd.image.normalize(nd.array(data), mean=(0.0, 1.0), std=1.0) if "mean" in rule \
            else nd.image.normalize(nd.array(data), mean=0.0, std=1.0)
    np.testing.assert_array_equal(data, before)
    with pytest.raises(MXNetError):
        T.Normalize(mean=(0, 1, 2), std=(3, 2, 1))(nd.array(np.zeros((5, 4, 3, 3), "f4")))


@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.float32, np.float64])
def test_flips_reverse_width_and_height(dtype):
    img = IMG.astype(dtype)
    x = nd.array(img, dtype=dtype)
    np.testing.assert_array_equal(nd.image.flip_left_right(x).asnumpy(), img[:, ::-1])
    np.testing.assert_array_equal(nd.image.flip_top_bottom(x).asnumpy(), img[::-1])
    batch = np.stack([img, img[::-1]])
    b = nd.array(batch, dtype=dtype)
    np.testing.assert_array_equal(nd.image.flip_left_right(b).asnumpy(), batch[:, :, ::-1])
    np.testing.assert_array_equal(nd.image.flip_top_bottom(b).asnumpy(), batch[:, ::-1])


def test_flip_gradient_is_the_flipped_head():
    x = nd.array(RNG.uniform(0, 1, (3, 4, 2)))
    head = RNG.uniform(-1, 1, (3, 4, 2)).astype(np.float32)
    x.attach_grad()
    with autograd.record():
        y = nd.image.flip_left_right(x)
    y.backward(nd.array(head))
    np.testing.assert_array_equal(x.grad.asnumpy(), head[:, ::-1])


def test_image_operators_in_graphs():
    data = mx.sym.Variable("data")
    net = mx.sym.image.normalize(mx.sym.image.to_tensor(data), mean=0.5, std=0.25)
    exe = net.bind(mx.cpu(), {"data": nd.array(IMG, dtype=np.uint8)})
    got = exe.forward()[0].asnumpy()
    np.testing.assert_allclose(got, (IMG.transpose(2, 0, 1) / 255.0 - 0.5) / 0.25, rtol=1e-5,
                               atol=1e-6)


@pytest.mark.parametrize("size", [-150, 0, (100, 100, 100), (10, -1), 2.5])
def test_resize_refuses_sizes_as_mxnet_errors(size):
    with pytest.raises(MXNetError, match=r"^Resize: size must be an int > 0 or \(width, "
                                         r"height\), two ints > 0 \(got "):
        T.Resize(size, keep_ratio=True)


def test_the_image_namespaces_hold_the_four_operators():
    names = {"to_tensor", "normalize", "flip_left_right", "flip_top_bottom"}
    assert set(nd.image.__all__) == names
    assert {n for n in vars(mx.sym.image) if not n.startswith("_")} == names
