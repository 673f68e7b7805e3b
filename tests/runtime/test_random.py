"""nd.random: seeding, ranges, dtypes, out=, bad input."""

import numpy as np
import pytest

import runtime as rt
from runtime import nd


def test_seed_makes_draws_reproducible():
    rt.random.seed(7)
    a = nd.random.uniform(shape=(5,)).asnumpy()
    b = nd.random.normal(shape=(3,)).asnumpy()
    rt.random.seed(7)
    np.testing.assert_array_equal(nd.random.uniform(shape=(5,)).asnumpy(), a)
    np.testing.assert_array_equal(nd.random.normal(shape=(3,)).asnumpy(), b)
    rt.random.seed(8)
    assert not np.array_equal(nd.random.uniform(shape=(5,)).asnumpy(), a)


def test_defaults_follow_mxnet():
    x = nd.random.uniform()
    assert x.shape == (1,) and x.dtype == np.float32
    assert nd.random.randint(0, 5).dtype == np.int32


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_uniform_range_and_moments(dtype):
    rt.random.seed(0)
    x = nd.random.uniform(-2, 3, shape=(200, 100), dtype=dtype).asnumpy()
    assert x.dtype == np.dtype(dtype) and x.min() >= -2 and x.max() <= 3
    assert abs(float(x.astype(np.float64).mean()) - 0.5) < 0.05


def test_normal_moments():
    rt.random.seed(0)
    x = nd.random.normal(1.5, 2.0, shape=(400, 100), dtype="float64").asnumpy()
    assert abs(x.mean() - 1.5) < 0.03 and abs(x.std() - 2.0) < 0.03


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "int8"])
def test_randint_range(dtype):
    x = nd.random.randint(0, 7, shape=(1000,), dtype=dtype).asnumpy()
    assert x.dtype == np.dtype(dtype) and x.min() >= 0 and x.max() <= 6
    assert set(np.unique(x)) == set(range(7))


def test_out_parameter_writes_in_place_and_bumps_version():
    out = nd.zeros((3, 2))
    v0 = out.version
    assert nd.random.uniform(5, 6, out=out) is out
    assert out.version > v0 and np.all((out.asnumpy() >= 5) & (out.asnumpy() <= 6))


def test_ctx_is_honoured():
    assert nd.random.normal(shape=(2,), ctx=rt.cpu()).ctx == rt.cpu()


@pytest.mark.parametrize("call, exc, match", [
    (lambda: nd.random.uniform(2, 1), ValueError, r"uniform: low must be <= high \(got low=2, high=1\)"),
    (lambda: nd.random.normal(0, -1), ValueError, r"normal: scale must be >= 0 \(got -1\)"),
    (lambda: nd.random.randint(3, 3), ValueError, "randint: low must be < high"),
    (lambda: nd.random.randint(0.5, 3), TypeError, "randint: low must be an integer"),
    (lambda: nd.random.randint(0, 300, dtype="uint8"), ValueError, "does not fit uint8"),
    (lambda: nd.random.uniform(dtype="int32"), TypeError, "uniform: dtype must be one of"),
    (lambda: nd.random.randint(0, 3, dtype="float32"), TypeError, "integer type"),
    (lambda: nd.random.uniform(shape=(-1,)), ValueError, "shape must contain non-negative"),
    (lambda: rt.random.seed(-3), ValueError, "seed_state must be a non-negative integer"),
])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
