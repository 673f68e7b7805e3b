"""runtime.test_utils (MXNet's mxnet.test_utils helpers) against NumPy and SciPy, and the
gradient checks of imperative functions (a right gradient passes, a wrong one fails
naming the input)."""

import logging
import os
import sys

import numpy as np
import pytest

import runtime as mx
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


def test_rand_ndarray_takes_mxnets_keywords():
    np.random.seed(2)
    x = tu.rand_ndarray((6, 5), "default", modifier_func=lambda v: v + 10)
    assert ((x.asnumpy() >= 10) & (x.asnumpy() < 11)).all()
    y = tu.rand_ndarray((40, 5), "csr", density=0.3, modifier_func=lambda v: -v - 1,
                        shuffle_csr_indices=True, distribution="uniform")
    stored = y.asscipy().data
    assert y.stype == "csr" and stored.size > 0 and ((stored <= -1) & (stored > -2)).all()
    z = tu.rand_ndarray((8, 3), "row_sparse", 0.5, None, None, False, None, cpu())
    assert z.stype == "row_sparse" and z.context == cpu()
    with pytest.raises(ValueError, match="distribution must be None or 'uniform'"):
        tu.rand_ndarray((2, 2), "csr", distribution="powerlaw")


def test_symbolic_checks_bind_sparse_arguments_with_their_storage():
    rsp = nd.array(np.array([[1.0, 2.0], [0, 0], [3.0, 4.0]])).tostype("row_sparse")
    idx = nd.array([2])
    data, indices = mx.sym.Variable("data"), mx.sym.Variable("indices")
    # _sparse_retain takes only row_sparse data: a dense binding would be refused
    sym = mx.sym.sparse.retain(data=data, indices=indices)
    want = np.array([[0, 0], [0, 0], [3.0, 4.0]])
    tu.check_symbolic_forward(sym, [rsp, idx], [want])
    tu.check_numeric_gradient(sym, [rsp, idx], grad_nodes=["data"],
                              grad_stype_dict={"data": "row_sparse"})
    # the gradient of retain keeps the retained rows of the head gradient
    got = tu.check_symbolic_backward(sym, [rsp, idx], [np.ones((3, 2))],
                                     {"data": (want != 0) * 1.0},
                                     grad_req={"data": "write", "indices": "null"},
                                     grad_stypes={"data": "row_sparse"})
    # the gradient buffers come back as NDArrays in their storage types (MXNet's form)
    assert got["data"].stype == "row_sparse"
    np.testing.assert_array_equal(got["data"].asnumpy(), [[0, 0], [0, 0], [1, 1]])
    outs = tu.check_symbolic_forward(sym, [rsp, idx], [want])
    assert outs[0].stype == "row_sparse"


def test_symbolic_checks_keep_each_arguments_dtype_with_asnumpy():
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    big = np.array([2 ** 40 + 1, 3], np.int64)
    out = tu.check_symbolic_forward(a + 1, [big], [big + 1], dtype="asnumpy")
    assert out[0].dtype == np.int64
    assert tu.check_symbolic_forward(a + 1, [big], [big + 1])[0].dtype == np.float32
    got = tu.check_symbolic_backward(a * b, [np.array([1.5, 2.0]), np.array([4.0, -1.0])],
                                     [np.ones(2)], [[4.0, -1.0], [1.5, 2.0]],
                                     dtype="asnumpy")
    assert got["a"].dtype == np.float64


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


def test_check_numeric_gradient_passes_right_gradients():
    rng = np.random.default_rng(0)
    a, b = rng.random((3, 4)), rng.random((3, 4))
    tu.check_numeric_gradient(lambda x, y: [nd.tanh(x) * y, nd.dot(x, y.T)], [a, b])
    tu.check_numeric_gradient(
        lambda data, weight: nd.FullyConnected(data, weight, num_hidden=2, no_bias=True),
        {"data": a, "weight": rng.random((2, 4))}, grad_nodes=["weight"])
    tu.check_numeric_gradient(nd.sigmoid, [nd.array(a)], dtype=np.float32)


def test_check_numeric_gradient_fails_wrong_gradients():
    # BlockGrad hides one of the two paths: the backward gradient is half the true one
    with pytest.raises(AssertionError, match="NUMERICAL_x and BACKWARD_x differ"):
        tu.check_numeric_gradient(lambda x: nd.BlockGrad(x) * x,
                                  {"x": np.array([0.5, 1.0, 2.0])})
    # only the input checked counts
    tu.check_numeric_gradient(lambda x, y: nd.BlockGrad(x) * y, [np.ones(2), np.ones(2)],
                              grad_nodes=[1])
    with pytest.raises(ValueError, match="grad_nodes must name inputs"):
        tu.check_numeric_gradient(nd.exp, [np.ones(2)], grad_nodes=["z"])
    with pytest.raises(TypeError, match="sym must be a Symbol or a function of NDArrays"):
        tu.check_numeric_gradient("sym", [np.ones(2)])


def test_numeric_grad_is_the_projected_derivative():
    x = np.array([0.3, -1.2, 2.0])
    heads = [np.array([1.0, 2.0, 3.0])]
    g = tu.numeric_grad(lambda a: a * a * a, [x], heads, eps=1e-5)[0]
    np.testing.assert_allclose(g, 3 * x ** 2 * heads[0], rtol=1e-8)


def test_small_helpers():
    a = np.array([1.0, np.nan, 3.0])
    tu.assert_almost_equal_ignore_nan(a, np.array([1.0, 5.0, np.nan]))
    with pytest.raises(AssertionError):
        tu.assert_almost_equal_ignore_nan(a, np.array([2.0, np.nan, 3.0]))
    x = nd.ones(3)
    assert tu.same_array(x, x[:]) and not tu.same_array(x, x.copy())
    assert x.asnumpy().tolist() == [1, 1, 1]                # restored
    arrs = tu.random_arrays((2, 3), (4,))
    assert [r.shape for r in arrs] == [(2, 3), (4,)] and arrs[0].dtype == np.float32
    (u,) = tu.random_uniform_arrays((500,), low=-0.5, high=0.25)   # a list, also for one
    assert u.dtype == np.float32 and u.min() >= -0.5 and u.max() < 0.25
    assert u.min() < -0.4 and u.max() > 0.15                       # spread over the range
    (h,) = tu.random_uniform_arrays((3,), dtype="float16")
    assert h.dtype == np.float16 and ((0.0 <= h) & (h <= 1.0)).all()
    assert sorted(tu.random_sample(list(range(5)), 5)) == list(range(5))
    assert len(set(tu.random_sample(list(range(10)), 4))) == 4
    d = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(tu.np_reduce(d, (0, 2), True, np.sum),
                                  d.sum(axis=(0, 2), keepdims=True))
    np.testing.assert_array_equal(tu.np_reduce(d, -1, False, np.max), d.max(axis=-1))
    arr, (data, indices, indptr) = tu.rand_sparse_ndarray((5, 4), "csr", density=0.5)
    np.testing.assert_array_equal(arr.data.asnumpy(), data)
    assert arr.stype == "csr" and indptr[-1] == data.size
    rsp, (values, rows) = tu.rand_sparse_ndarray((6, 2), "row_sparse", density=0.5)
    np.testing.assert_array_equal(rsp.asnumpy()[rows], values)
    assert tu.list_gpus() == range(mx.num_gpus())
    prev = tu.set_env_var("NDRT_TEST_UTILS_VAR", 3, default_val="unset")
    assert prev == "unset" and os.environ.pop("NDRT_TEST_UTILS_VAR") == "3"


def test_retry_and_discard_stderr():
    calls = []

    @tu.retry(3)
    def flaky():
        calls.append(1)
        assert len(calls) == 3
    flaky()
    assert len(calls) == 3

    @tu.retry(2)
    def always():
        raise AssertionError("no")
    with pytest.raises(AssertionError, match="no"):
        always()
    with tu.discard_stderr():
        os.write(2, b"this line goes to /dev/null\n")


def test_star_import_gives_mx_and_np_as_mxnets_does():
    # MXNet's test_utils has no __all__; 1.x test files use mx and np from its star import
    names = {}
    exec("from runtime.test_utils import *", names)
    assert names["mx"] is mx
    assert names["np"] is np
    assert names["rnd"] is np.random and names["os"] is os
    # test_module.py calls sys.path.insert with sys taken from there
    assert names["sys"] is sys and names["logging"] is logging
    assert names["Symbol"] is mx.sym.Symbol and names["Context"] is mx.Context
    assert "assert_almost_equal" in names
    assert names["array"] is nd.array


def test_np_softmax_normalises_and_survives_large_inputs():
    x = np.array([[1.0, 2.0, 3.0], [1e30, 1e30, -1e30]])
    got = tu.np_softmax(x, axis=1)
    e = np.exp([1.0, 2.0, 3.0])
    np.testing.assert_allclose(got[0], e / e.sum())
    np.testing.assert_allclose(got[1], [0.5, 0.5, 0.0])
    hot = tu.np_softmax(x[:1], axis=-1, temperature=2.0)
    e2 = np.exp(np.array([1.0, 2.0, 3.0]) / 2.0)
    np.testing.assert_allclose(hot[0], e2 / e2.sum())


def test_gen_buckets_probs_with_ppf_splits_into_equal_probabilities():
    import scipy.stats as ss
    buckets, probs = tu.gen_buckets_probs_with_ppf(lambda q: ss.uniform.ppf(q, 2, 4), 4)
    assert probs == [0.25] * 4
    np.testing.assert_allclose(buckets, [(2, 3), (3, 4), (4, 5), (5, 6)])
    with pytest.raises(ValueError, match=r"nbuckets must be an integer >= 1 \(got 0\)"):
        tu.gen_buckets_probs_with_ppf(lambda q: q, 0)


def test_verify_generator_accepts_the_right_distribution_and_refuses_a_wrong_one():
    import scipy.stats as ss
    rng = np.random.default_rng(5)
    buckets, probs = tu.gen_buckets_probs_with_ppf(ss.norm.ppf, 5)
    pvalues = tu.verify_generator(lambda n: rng.normal(size=n), buckets, probs,
                                  nsamples=20000)
    assert len(pvalues) == 5 and sum(p > 0.05 for p in pvalues) >= 1
    with pytest.raises(AssertionError, match="generator test failed"):
        tu.verify_generator(lambda n: rng.normal(0.3, 1, size=n), buckets, probs,
                            nsamples=20000)
    # discrete: the buckets are the values
    p, observed, expected = tu.chi_square_check(
        lambda n: nd.array(rng.integers(0, 3, size=n)), [0, 1, 2], [1 / 3] * 3, nsamples=3000)
    assert observed.sum() == 3000 and np.allclose(expected, 1000) and 0 <= p <= 1
    with pytest.raises(ValueError, match=r"the generator must return 10 samples \(got 9\)"):
        tu.chi_square_check(lambda n: np.zeros(n - 1), [0, 1], [0.5, 0.5], nsamples=10)


def test_download_keeps_an_existing_file(tmp_path, caplog):
    target = tmp_path / "data" / "mnist.zip"
    target.parent.mkdir()
    target.write_bytes(b"here")
    with caplog.at_level(logging.INFO):
        got = tu.download("http://example.invalid/mnist.zip", dirname=str(target.parent))
    assert got == str(target) and target.read_bytes() == b"here"
    assert "exists, skipping download" in caplog.text
    # dirname defaults to fname's folder
    fname = tmp_path / "new" / "f.bin"
    fname.parent.mkdir()
    fname.write_bytes(b"x")
    assert tu.download("http://example.invalid/other", fname=str(fname)) == str(fname)


def test_sparse_array_makers_take_mxnets_arguments():
    # MXNet's test_sparse_operator.py builds its inputs with these
    rows = [7.0, 2, 4]                     # MXNet's tests pass float row ids too
    a = tu.create_sparse_array_zd((9, 3), "row_sparse", 0.5, rsp_indices=rows,
                                  modifier_func=lambda v: v + 10)
    assert a.stype == "row_sparse" and a.indices.asnumpy().tolist() == [2, 4, 7]
    assert ((a.data.asnumpy() >= 10) & (a.data.asnumpy() < 11)).all()
    assert tu.create_sparse_array_zd((9, 3), "row_sparse", 0.5).indices.shape == (0,)
    c = tu.create_sparse_array((6, 5), "csr", data_init=0.25, density=1.0, dtype=np.float64)
    assert c.stype == "csr" and c.dtype == np.float64
    np.testing.assert_array_equal(c.asnumpy(), np.full((6, 5), 0.25))
    arr, (data, indices) = tu.rand_sparse_ndarray((5, 2), "row_sparse", rsp_indices=[0, 3],
                                                  data_init=3)
    np.testing.assert_array_equal(indices, [0, 3])
    np.testing.assert_array_equal(arr.asnumpy()[[0, 3]], np.full((2, 2), 3.0))
    with pytest.raises(AssertionError, match="stype must be 'row_sparse' or 'csr'"):
        tu.create_sparse_array((2, 2), "default")
    shuffled = tu.shuffle_csr_column_indices(c)
    np.testing.assert_array_equal(shuffled.asnumpy(), c.asnumpy())


def test_assign_each_maps_elements_as_numpy():
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(tu.assign_each(x, lambda v: v * v), x * x)
    np.testing.assert_array_equal(tu.assign_each2(x, x + 1, lambda u, v: u - v),
                                  -np.ones((2, 3)))
    copy = tu.assign_each(x, None)
    assert copy is not x and (copy == x).all()


def test_tolerance_helpers_find_and_count_violations():
    a, b = np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 2.0, 3.0, 5.0])
    loc, worst = tu.find_max_violation(a, b, rtol=1e-5, atol=1e-5)
    assert loc == (3,) and worst == pytest.approx(1 / (1e-5 + 5e-5))
    tu.assert_almost_equal_with_err(a, b, etol=0.25)
    with pytest.raises(AssertionError, match="25.00% of the elements differ"):
        tu.assert_almost_equal_with_err(a, b, etol=0.2)
    assert tu.almost_equal_ignore_nan(np.array([np.nan, 1.0]), np.array([2.0, 1.0]))
    tu.compare_ndarray_tuple((nd.ones(2), None), (nd.ones(2), nd.zeros(1)))
    with pytest.raises(AssertionError):
        tu.compare_ndarray_tuple((nd.ones(2),), (nd.zeros(2),))


def test_moment_checks_and_small_helpers():
    rng = np.random.default_rng(0)
    assert tu.mean_check(lambda n: rng.normal(3.0, 2.0, n), 3.0, 2.0, nsamples=100000)
    assert not tu.mean_check(lambda n: rng.normal(3.5, 2.0, n), 3.0, 2.0, nsamples=100000)
    assert tu.var_check(lambda n: rng.normal(0.0, 2.0, n), 2.0, nsamples=100000)
    assert not tu.var_check(lambda n: rng.normal(0.0, 2.5, n), 2.0, nsamples=100000)
    x, y = tu.rand_coord_2d(1, 3, 5, 6)
    assert 1 <= x < 3 and y == 5
    assert tu.effective_dtype(nd.ones(1, dtype="float16")) == np.float16
    assert not tu.has_tvm_ops() and tu.is_op_runnable()
    os.environ.pop("NDRT_TEST_ENVMANAGER", None)
    with tu.EnvManager("NDRT_TEST_ENVMANAGER", 1):
        assert os.environ["NDRT_TEST_ENVMANAGER"] == "1"
    assert "NDRT_TEST_ENVMANAGER" not in os.environ
