"""runtime.test_utils (MXNet's mxnet.test_utils helpers) against NumPy and SciPy."""

import os

import numpy as np
import pytest

from runtime import cpu, nd, test_utils as tu


def test_tolerances_follow_the_looser_dtype():
    a32 = np.array([1.0], np.float32)
    assert tu.almost_equal(a32, a32 + 5e-4)                 # float32: atol 1e-3
    assert not tu.almost_equal(np.float64(1.0), 1.0 + 5e-4)
    assert tu.almost_equal(np.array([1.0]), a32 + 5e-4)      # mixed: the float32 tolerance
    assert tu.get_rtol(None, np.float16) == 1e-2 and tu.get_atol(0.5) == 0.5
    assert not tu.almost_equal(np.zeros(3), np.zeros((2, 3)), use_broadcast=False)
    assert tu.almost_equal(np.zeros(3), np.zeros((2, 3)))


def test_assert_almost_equal_names_the_arrays():
    tu.assert_almost_equal(nd.array([1, 2]), np.array([1, 2], np.float32))
    with pytest.raises(AssertionError, match="x and y differ"):
        tu.assert_almost_equal(np.array([1.0]), np.array([2.0]), names=("x", "y"))
    with pytest.raises(AssertionError, match=r"one shape \(got \(2,\) and \(1,\)\)"):
        tu.assert_almost_equal(np.zeros(2), np.zeros(1), use_broadcast=False)
    tu.assert_almost_equal(np.array([np.nan]), np.array([np.nan]), equal_nan=True)


def test_same_and_shapes():
    assert tu.same(nd.array([1, 2]), [1, 2]) and not tu.same([1, 2], [1, 3])
    np.random.seed(0)
    for _ in range(20):
        s2, s3 = tu.rand_shape_2d(3, 4), tu.rand_shape_3d(2, 2, 5)
        assert len(s2) == 2 and 1 <= s2[0] <= 3 and 1 <= s2[1] <= 4
        assert len(s3) == 3 and s3[2] <= 5 and min(s3) >= 1
        assert all(0 <= d <= 2 for d in tu.rand_shape_nd(4, 2, allow_zero_size=True))


@pytest.mark.parametrize("stype", ["default", "row_sparse", "csr"])
def test_rand_ndarray(stype):
    np.random.seed(1)
    x = tu.rand_ndarray((30, 4), stype, density=0.5)
    assert x.stype == stype and x.shape == (30, 4) and x.dtype == np.float32
    dense = x.asnumpy()
    assert ((dense >= 0) & (dense < 1)).all()
    if stype != "default":
        stored = (dense != 0).any(axis=1) if stype == "row_sparse" else dense != 0
        assert 0.2 < stored.mean() < 0.8
    if stype == "csr":
        np.testing.assert_array_equal(x.asscipy().toarray(), dense)
    if stype != "default":
        with pytest.raises(ValueError, match="density must be in"):
            tu.rand_ndarray((2, 2), stype, density=2.0)


def test_default_context_and_exceptions():
    assert tu.default_context() == cpu()
    tu.assert_exception(lambda: 1 / 0, ZeroDivisionError)
    with pytest.raises(AssertionError, match="did not raise"):
        tu.assert_exception(lambda: None, ValueError)
    with pytest.raises(TypeError, match="must be a Context"):
        tu.set_default_context("cpu")


def test_environment_restores():
    os.environ.pop("NDRT_TEST_ENV", None)
    with tu.environment("NDRT_TEST_ENV", "1"):
        assert os.environ["NDRT_TEST_ENV"] == "1"
        with tu.environment({"NDRT_TEST_ENV": None}):
            assert "NDRT_TEST_ENV" not in os.environ
        assert os.environ["NDRT_TEST_ENV"] == "1"
    assert "NDRT_TEST_ENV" not in os.environ
