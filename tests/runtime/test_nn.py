"""Neural-network operators against NumPy/SciPy: softmax, log_softmax,
softmax_cross_entropy, Dropout (statistics, modes, seeding), Embedding (dense and
row_sparse gradients); requests, gradients (float64 central differences), bad input."""

import numpy as np
import pytest
import scipy.special as sps

import runtime as rt
from runtime import _imperative, autograd, nd
from runtime.gluon import nn
from runtime import random as rt_random
from runtime import _rng
from runtime._imperative import invoke_stateful
from runtime.ops import registry
from tests.runtime.opcheck import check_grad, check_requests, run

FLOATS = ["float16", "float32", "float64"]
TOL = {"float16": 2e-3, "float32": 1e-6, "float64": 1e-12}


def sample(shape, dtype="float64", seed=0, lo=-2.0, hi=2.0):
    return np.random.default_rng(seed).uniform(lo, hi, shape).astype(dtype)


def assert_close(got, want, dtype):
    assert got.shape == want.shape, (got.shape, want.shape)
    assert np.dtype(got.dtype) == np.dtype(dtype)
    np.testing.assert_allclose(got.asnumpy().astype(np.float64), want, rtol=TOL[dtype] * 10,
                               atol=TOL[dtype])


# -- softmax, log_softmax -----------------------------------------------------------------

REFS = {"softmax": sps.softmax, "log_softmax": sps.log_softmax}
SOFTMAX_CASES = [((3, 4), -1), ((3, 4), 0), ((2, 3, 4), 1), ((5,), 0), ((), -1), ((0, 4), -1),
                 ((3, 0), -1), ((1, 1), -1)]


@pytest.mark.parametrize("name", sorted(REFS))
@pytest.mark.parametrize("shape, axis", SOFTMAX_CASES)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("temperature", [None, 2.5])
def test_softmax_matches_scipy(name, shape, axis, dtype, temperature):
    x = sample(shape, dtype)
    got = run(name, [x], {"axis": axis, "temperature": temperature})[0]
    t = 1.0 if temperature is None else temperature
    want = REFS[name](x.astype(np.float64) / t, axis=axis if x.ndim else None) if x.size \
        else x.astype(np.float64)
    assert_close(got, np.asarray(want), dtype)


@pytest.mark.parametrize("name", sorted(REFS))
def test_softmax_is_numerically_stable(name):
    x = np.array([[1000.0, 0.0, -1000.0], [-1e4, -1e4, -1e4]], np.float32)
    got = run(name, [x])[0].asnumpy()
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, REFS[name](x.astype(np.float64), axis=-1), rtol=1e-6)


def test_negative_temperature_is_allowed():
    x = sample((2, 5), "float64")
    got = nd.softmax(nd.array(x, dtype="float64"), temperature=-0.5)
    np.testing.assert_allclose(got.asnumpy(), sps.softmax(x / -0.5, axis=-1), rtol=1e-12)


@pytest.mark.parametrize("name", sorted(REFS))
@pytest.mark.parametrize("shape, axis", [c for c in SOFTMAX_CASES if 0 not in c[0]])
@pytest.mark.parametrize("temperature", [None, 0.7])
def test_softmax_gradients(name, shape, axis, temperature):
    check_grad(name, [sample(shape)], {"axis": axis, "temperature": temperature})


@pytest.mark.parametrize("name", sorted(REFS))
def test_softmax_requests(name):
    check_requests(name, [sample((3, 4), "float32")], {"axis": 0})


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_log_softmax_along_the_last_axis_of_rows(dtype):
    """The compiled road (last axis, no temperature): leading axes flattened into rows,
    a NaN spreads over its row only, -inf gives -inf, requests honoured."""
    x = sample((2, 3, 5), dtype) * 20
    x[0, 1, 2] = np.nan
    x[1, 2, 4] = -np.inf
    got = nd.log_softmax(nd.array(x, dtype=dtype), axis=2).asnumpy()
    want = sps.log_softmax(x.astype(np.float64), axis=-1)
    assert np.isnan(got[0, 1]).all() and not np.isnan(np.delete(got.reshape(6, 5), 1, 0)).any()
    assert got[1, 2, 4] == -np.inf
    np.testing.assert_allclose(got, want, rtol=TOL[dtype] * 10, atol=TOL[dtype])
    check_requests("log_softmax", [sample((3, 4), dtype)], {"axis": -1})


@pytest.mark.parametrize("name", sorted(REFS))
def test_softmax_bad_input(name):
    with pytest.raises(TypeError, match=rf"^{name}: needs a floating-point input \(got int32\)"):
        getattr(nd, name)(nd.zeros((2, 3), dtype="int32"))
    with pytest.raises(ValueError, match=rf"^{name}: axis 2 is out of range for an array of 2"):
        getattr(nd, name)(nd.zeros((2, 3)), axis=2)
    with pytest.raises(ValueError, match=rf"^{name}: temperature must be a finite non-zero "
                                         r"number \(got 0\)"):
        getattr(nd, name)(nd.zeros((2, 3)), temperature=0)
    with pytest.raises(TypeError, match=rf"^{name}: temperature must be a number or None"):
        getattr(nd, name)(nd.zeros((2, 3)), temperature="hot")


# -- softmax_cross_entropy ----------------------------------------------------------------

def ref_ce(x, label):
    logp = sps.log_softmax(x.astype(np.float64), axis=1)
    return np.array([-logp[np.arange(len(label)), label.astype(np.int64)].sum()])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("label_dtype", ["float32", "int32", "int64", "uint8"])
@pytest.mark.parametrize("n, k", [(4, 3), (1, 1), (0, 3), (7, 10)])
def test_softmax_cross_entropy_matches_reference(dtype, label_dtype, n, k):
    x = sample((n, k), dtype, 1, -5, 5)
    label = np.random.default_rng(2).integers(0, k, n).astype(label_dtype)
    got = run("softmax_cross_entropy", [x, label])[0]
    tol = {"float16": 1e-2, "float32": 1e-5, "float64": 1e-12}[dtype]
    assert got.shape == (1,) and np.dtype(got.dtype) == np.dtype(dtype)
    np.testing.assert_allclose(got.asnumpy().astype(np.float64), ref_ce(x, label), rtol=tol,
                               atol=tol)


def test_softmax_cross_entropy_is_stable_for_large_logits():
    x = np.array([[1000.0, -1000.0], [0.0, 2000.0]], np.float32)
    got = nd.softmax_cross_entropy(nd.array(x), nd.array([1, 0]))
    np.testing.assert_allclose(got.asnumpy(), [4000.0], rtol=1e-6)


@pytest.mark.parametrize("label_dtype", ["float64", "int64"])
def test_softmax_cross_entropy_gradient(label_dtype):
    x = sample((5, 4), seed=3)
    label = np.array([0, 3, 1, 1, 2], label_dtype)
    check_grad("softmax_cross_entropy", [x, label], wrt=[0])
    op = registry.get("softmax_cross_entropy")
    xs = [nd.array(x, dtype="float64"), nd.array(label, dtype=label_dtype)]
    g = op.gradient({}, xs, [], [nd.array([2.0], dtype="float64")])
    assert g[1] is None
    want = (sps.softmax(x, axis=1) - np.eye(4)[label.astype(int)]) * 2.0
    np.testing.assert_allclose(g[0].asnumpy(), want, rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("label_dtype", ["float32", "int32", "int64"])
def test_softmax_cross_entropy_backward_from_the_forward_softmax(dtype, label_dtype):
    """The forward's compiled pass keeps each row's softmax; backward reads it."""
    x = sample((6, 5), dtype, 4, -5, 5)
    label = np.array([0, 4, 2, 2, 1, 3], label_dtype)
    xn = nd.array(x, dtype=dtype)
    xn.attach_grad()
    with autograd.record():
        loss = nd.softmax_cross_entropy(xn, nd.array(label, dtype=label_dtype))
    loss.backward(nd.array([0.5], dtype=dtype))
    np.testing.assert_allclose(loss.asnumpy(), ref_ce(x, label), rtol=TOL[dtype] * 10)
    want = (sps.softmax(x.astype(np.float64), axis=1) - np.eye(5)[label.astype(int)]) * 0.5
    np.testing.assert_allclose(xn.grad.asnumpy(), want, rtol=TOL[dtype] * 10,
                               atol=TOL[dtype])


def test_softmax_cross_entropy_requests():
    check_requests("softmax_cross_entropy", [sample((3, 4), "float32"),
                                             np.array([0, 3, 1], np.float32)])
    check_requests("_label_one_hot", [sample((3, 4), "float32"), np.array([0, 3, 1], "int32")])


def test_label_one_hot_values():
    got = run("_label_one_hot", [np.zeros((3, 4), np.float64), np.array([2, 0, 3])])[0]
    np.testing.assert_array_equal(got.asnumpy(), np.eye(4)[[2, 0, 3]])


@pytest.mark.parametrize("bad, shown", [(3, "3.0"), (-1, "-1.0"), (1.5, "1.5"), (np.nan, "nan")])
def test_softmax_cross_entropy_bad_labels_write_nothing(bad, shown):
    x = nd.array(sample((3, 3), "float32"))
    label = nd.array([0, bad, 4])
    before = x.asnumpy()
    for req in ("write", "add"):
        out = nd.full((1,), 7.0)
        with pytest.raises(ValueError, match=rf"^softmax_cross_entropy: label must hold integers "
                                             rf"in \[0, 3\) \(got {shown} at position 1\)"):
            nd.softmax_cross_entropy(x, label, out=out, req=req)
        assert out.asnumpy().tolist() == [7.0]
    np.testing.assert_array_equal(x.asnumpy(), before)


def test_softmax_cross_entropy_bad_shapes_and_types():
    with pytest.raises(ValueError, match=r"^softmax_cross_entropy: data must be 2-D"):
        nd.softmax_cross_entropy(nd.zeros(3), nd.zeros(3))
    with pytest.raises(ValueError, match=r"^softmax_cross_entropy: label must have shape \(3,\) "
                                         r"for data of shape \(3, 4\) \(got \(2,\)\)"):
        nd.softmax_cross_entropy(nd.zeros((3, 4)), nd.zeros(2))
    with pytest.raises(TypeError, match=r"^softmax_cross_entropy: needs a floating-point data"):
        nd.softmax_cross_entropy(nd.zeros((3, 4), dtype="int32"), nd.zeros(3))
    with pytest.raises(TypeError, match=r"^softmax_cross_entropy: label must hold integer or "
                                        r"floating-point indices \(got bool\)"):
        nd.softmax_cross_entropy(nd.zeros((3, 4)), nd.zeros(3, dtype="bool"))


# -- Dropout ------------------------------------------------------------------------------

@pytest.fixture
def fixed_masks(monkeypatch):
    """Every Dropout call draws the same mask (so finite differences see one function)."""
    monkeypatch.setattr(_rng, "generator", lambda: np.random.default_rng(1234))


@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
@pytest.mark.parametrize("dtype", FLOATS)
def test_dropout_statistics_and_scaling(p, dtype):
    rt.random.seed(0)
    x = np.full((200, 500), 1.5, dtype)
    with autograd.train_mode():
        got = nd.Dropout(nd.array(x, dtype=dtype), p=p).asnumpy()
    assert got.dtype == np.dtype(dtype)
    kept = got != 0
    assert abs(kept.mean() - (1 - p)) < 0.01
    np.testing.assert_allclose(got[kept], np.asarray(1.5 / (1 - p), dtype), rtol=1e-3)
    assert abs(got.astype(np.float64).mean() - 1.5) < 0.05   # unbiased


def test_dropout_is_the_identity_in_predict_mode():
    x = sample((4, 5), "float32")
    assert not autograd.is_training()
    np.testing.assert_array_equal(nd.Dropout(nd.array(x), p=0.7).asnumpy(), x)
    with autograd.predict_mode():
        np.testing.assert_array_equal(nd.Dropout(nd.array(x), p=0.7).asnumpy(), x)
    with autograd.train_mode():
        np.testing.assert_array_equal(nd.Dropout(nd.array(x), p=0.0).asnumpy(), x)


def test_dropout_mode_always_drops_outside_training():
    rt.random.seed(3)
    got = nd.Dropout(nd.ones((100, 100)), p=0.5, mode="always").asnumpy()
    assert 0.4 < (got == 0).mean() < 0.6


def test_dropout_is_reproducible_under_seed():
    x = nd.ones((50, 50))
    with autograd.train_mode():
        rt.random.seed(42)
        a = nd.Dropout(x).asnumpy()
        b = nd.Dropout(x).asnumpy()
        rt.random.seed(42)
        c = nd.Dropout(x).asnumpy()
    np.testing.assert_array_equal(a, c)
    assert (a != b).any()


def test_dropout_axes_share_the_mask():
    rt.random.seed(5)
    got = nd.Dropout(nd.ones((6, 40, 3)), p=0.5, mode="always", axes=(1,)).asnumpy()
    assert (got == got[:, :1, :]).all()
    assert (got == 0).any() and (got != 0).any()
    got = nd.Dropout(nd.ones((6, 40, 3)), p=0.5, mode="always", axes=(0, -1)).asnumpy()
    assert (got == got[:1, :, :1]).all()


@pytest.mark.parametrize("mode", ["always", "training"])
def test_dropout_gradient(fixed_masks, mode):
    x = sample((6, 7), lo=0.5, hi=2.0)       # no zero inputs (see the op's doc)
    with autograd.train_mode():
        check_grad("Dropout", [x], {"p": 0.4, "mode": mode})
    check_grad("Dropout", [x], {"p": 0.4, "mode": mode})   # identity unless 'always'


def test_dropout_gradient_uses_the_forward_decision():
    """The call's state (``prepare``) holds the decision; the gradient takes it."""
    op = registry.get("Dropout")
    x = nd.array(sample((20, 20), lo=0.5, hi=2.0), dtype="float64")
    attrs = op.parse_attrs({"p": 0.5})
    with autograd.train_mode():
        out, state = invoke_stateful(op, [x], attrs)
    assert state and state.mask is not None
    assert attrs == op.parse_attrs({"p": 0.5})           # inference wrote nothing there
    g = nd.ones(x.shape, dtype="float64")
    (dx,) = op.gradient(attrs, [x], [out], [g], state)   # backward outside train_mode
    np.testing.assert_array_equal(dx.asnumpy(), (out.asnumpy() != 0) * 2.0)
    out, state = invoke_stateful(op, [x], attrs)         # predict mode: identity
    assert not state
    with autograd.train_mode():
        (dx,) = op.gradient(attrs, [x], [out], [g], state)
    np.testing.assert_array_equal(dx.asnumpy(), np.ones((20, 20)))


def test_dropout_gradient_through_the_tape_uses_the_mask_where_data_is_zero():
    # the output is 0 wherever data is 0, so only the forward's own mask gives the gradient
    x = nd.array(np.zeros((40, 50)), dtype="float64")
    x.attach_grad()
    rt.random.seed(7)
    with autograd.record():
        y = nd.Dropout(x, p=0.5)
    y.backward()
    rt.random.seed(7)          # the same draw as the forward
    u = _rng.generator().random((40, 50), dtype=np.float32)
    np.testing.assert_array_equal(x.grad.asnumpy(), (u >= np.float32(0.5)) * 2.0)
    assert 0.4 < (x.grad.asnumpy() != 0).mean() < 0.6


def test_dropout_state_is_made_once_per_call(monkeypatch, request):
    request.addfinalizer(_imperative.clear_inference_cache)   # forget the replaced prepare
    op = registry.get("Dropout")
    calls = []
    prepare = op.prepare
    monkeypatch.setattr(op, "prepare", lambda attrs: calls.append(1) or prepare(attrs))
    _imperative.clear_inference_cache()       # prepare is read with a new signature
    x = nd.ones((3, 4))
    with autograd.train_mode():
        for _ in range(3):
            nd.Dropout(x, p=0.5)
    assert len(calls) == 3
    assert invoke_stateful(registry.get("relu"), [x], {})[1] is None   # no prepare


def test_dropout_requests(fixed_masks):
    check_requests("Dropout", [sample((3, 4), "float32")], {"p": 0.3})
    check_requests("Dropout", [sample((3, 4), "float32")], {"p": 0.3, "mode": "always"})


def test_dropout_bad_input():
    for p in (1.0, -0.1, 1.5):
        with pytest.raises(ValueError, match=rf"^Dropout: p must be in \[0, 1\) \(got {p}\)"):
            nd.Dropout(nd.ones(3), p=p)
    with pytest.raises(ValueError, match=r"^Dropout: mode must be one of 'training', 'always'"):
        nd.Dropout(nd.ones(3), mode="sometimes")
    with pytest.raises(TypeError, match=r"^Dropout: needs a floating-point input \(got int32\)"):
        nd.Dropout(nd.ones(3, dtype="int32"))
    with pytest.raises(ValueError, match=r"^Dropout: axes 2 is out of range"):
        nd.Dropout(nd.ones((2, 2)), axes=2)


# -- Embedding ----------------------------------------------------------------------------

EMBED_CASES = [((4,), 5, 3), ((2, 3), 5, 3), ((), 4, 2), ((0,), 5, 3), ((2, 0, 2), 3, 1),
               ((6,), 1, 4)]


def embed_inputs(ds, n, d, idx_dtype="int64", dtype="float64"):
    idx = np.random.default_rng(1).integers(0, n, ds).astype(idx_dtype)
    return idx, sample((n, d), dtype, 2)


@pytest.mark.parametrize("ds, n, d", EMBED_CASES)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("idx_dtype", ["float32", "int32", "int64", "uint8"])
def test_embedding_looks_up_rows(ds, n, d, dtype, idx_dtype):
    idx, w = embed_inputs(ds, n, d, idx_dtype, dtype)
    got = run("Embedding", [idx, w], {"input_dim": n, "output_dim": d, "dtype": dtype})[0]
    assert got.shape == ds + (d,) and np.dtype(got.dtype) == np.dtype(dtype)
    np.testing.assert_array_equal(got.asnumpy(), w[idx.astype(np.int64)])


def test_embedding_default_dtype_is_float32():
    got = nd.Embedding(nd.array([1, 0]), nd.array([[1, 2], [3, 4]]), input_dim=2, output_dim=2)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got.asnumpy(), [[3, 4], [1, 2]])


def ref_embedding_grad(idx, g, n):
    want = np.zeros((n, g.shape[-1]))
    np.add.at(want, idx.reshape(-1).astype(np.int64), g.reshape(-1, g.shape[-1]))
    return want


@pytest.mark.parametrize("ds, n, d", [c for c in EMBED_CASES if 0 not in c[0]])
def test_embedding_gradients(ds, n, d):
    idx, w = embed_inputs(ds, n, d)
    attrs = {"input_dim": n, "output_dim": d, "dtype": "float64"}
    check_grad("Embedding", [idx, w], attrs, wrt=[1])
    # the hidden scatter-add, and its own gradient (an Embedding lookup)
    g = sample(ds + (d,), seed=4)
    got = run("_embedding_grad", [idx, g], {"input_dim": n, "output_dim": d})[0]
    np.testing.assert_allclose(got.asnumpy(), ref_embedding_grad(idx, g, n), rtol=1e-12)
    check_grad("_embedding_grad", [idx, g], {"input_dim": n, "output_dim": d}, wrt=[1])


@pytest.mark.parametrize("ds, n, d", EMBED_CASES)
@pytest.mark.parametrize("idx_dtype", ["float32", "int64"])
def test_embedding_sparse_grad_is_row_sparse_and_equals_the_dense_one(ds, n, d, idx_dtype):
    idx, w = embed_inputs(ds, n, d, idx_dtype)
    op = registry.get("Embedding")
    g = nd.array(sample(ds + (d,), seed=4), dtype="float64")
    data = nd.array(idx, dtype=idx_dtype)
    weight = nd.array(w, dtype="float64")
    dense = op.gradient(op.parse_attrs({"input_dim": n, "output_dim": d, "dtype": "float64"}),
                        [data, weight], [], [g])
    sparse = op.gradient(op.parse_attrs({"input_dim": n, "output_dim": d, "dtype": "float64",
                                         "sparse_grad": True}), [data, weight], [], [g])
    assert dense[0] is None and sparse[0] is None
    assert dense[1].stype == "default" and sparse[1].stype == "row_sparse"
    assert sparse[1].shape == (n, d) and sparse[1].dtype == np.float64
    np.testing.assert_allclose(sparse[1].tostype("default").asnumpy(), dense[1].asnumpy(),
                               rtol=1e-12)
    np.testing.assert_array_equal(sparse[1].indices.asnumpy(),
                                  np.unique(idx.astype(np.int64)))


def test_embedding_grad_rsp_sums_repeated_rows():
    idx = np.array([3, 1, 3, 3])
    g = np.arange(8, dtype=np.float32).reshape(4, 2)
    got = run("_embedding_grad_rsp", [idx, g], {"input_dim": 5, "output_dim": 2})[0]
    assert got.stype == "row_sparse"
    np.testing.assert_array_equal(got.indices.asnumpy(), [1, 3])
    np.testing.assert_array_equal(got.data.asnumpy(), [[2, 3], [0 + 4 + 6, 1 + 5 + 7]])


def test_embedding_requests():
    idx, w = embed_inputs((2, 3), 5, 4, "int32", "float32")
    check_requests("Embedding", [idx, w], {"input_dim": 5, "output_dim": 4})
    check_requests("_embedding_grad", [idx, sample((2, 3, 4), "float32")],
                   {"input_dim": 5, "output_dim": 4})


@pytest.mark.parametrize("bad, row, dtype", [(5, 4, "float32"), (-1, 0, "int32"),
                                             (0.5, 0, "float64"), (7, 4, "uint8"),
                                             (3.9, 3, "float32"), (-2.5, 0, "float32")])
def test_embedding_out_of_range_indices_are_clipped(bad, row, dtype):
    # MXNet's documented rule: an index too large addresses the last row (negative ones
    # the first; floats are truncated), in the forward and in the weight gradient.
    wv = sample((5, 2), "float32")
    w = nd.array(wv)
    data = nd.array([[0, 1], [bad, 2]], dtype=dtype)
    rows = np.array([[0, 1], [row, 2]])
    np.testing.assert_array_equal(nd.Embedding(data, w, input_dim=5, output_dim=2).asnumpy(),
                                  wv[rows])
    g = sample((2, 2, 2), "float32", seed=3)
    want = np.zeros((5, 2), np.float32)
    np.add.at(want, rows.reshape(-1), g.reshape(-1, 2))
    for name in ("_embedding_grad", "_embedding_grad_rsp"):
        got = getattr(nd, name)(data, nd.array(g), input_dim=5, output_dim=2)
        np.testing.assert_allclose(got.tostype("default").asnumpy(), want, rtol=1e-6)


@pytest.mark.parametrize("bad, pos", [(np.nan, 1), (np.inf, 2), (-np.inf, 0)])
def test_embedding_refuses_nan_and_infinite_indices(bad, pos):
    """As take: a NaN or infinite index is an IndexError naming it and its position, in
    the lookup, the Gluon layer and both weight gradients; out= stays as it was."""
    data = np.array([[0.0, 1.0, 2.0]])
    data.flat[pos] = bad
    w = nd.array(sample((5, 2), "float32"))
    out = nd.full((1, 3, 2), 9.0)
    match = rf"index {float(bad)} at position {pos} is not a finite number"
    with pytest.raises(IndexError, match=r"^Embedding: " + match):
        nd.Embedding(nd.array(data), w, input_dim=5, output_dim=2, out=out)
    np.testing.assert_array_equal(out.asnumpy(), 9.0)
    layer = nn.Embedding(5, 2)
    layer.initialize()
    with pytest.raises(IndexError, match=r"^Embedding: " + match):
        layer(nd.array(data))
    for name in ("_embedding_grad", "_embedding_grad_rsp"):
        with pytest.raises(IndexError, match=rf"^{name}: " + match):
            getattr(nd, name)(nd.array(data), nd.ones((1, 3, 2)), input_dim=5, output_dim=2)


def test_embedding_bad_shapes_and_types():
    w = nd.zeros((5, 2))
    with pytest.raises(ValueError, match=r"^Embedding: weight must have shape \(5, 3\) "
                                         r"\(input_dim, output_dim\) \(got \(5, 2\)\)"):
        nd.Embedding(nd.zeros(2), w, input_dim=5, output_dim=3)
    with pytest.raises(TypeError, match=r"^Embedding: weight has dtype float64 but dtype is "
                                        r"float32; pass dtype='float64' or leave it out"):
        nd.Embedding(nd.zeros(2), nd.zeros((5, 2), dtype="float64"), input_dim=5,
                     output_dim=2, dtype="float32")
    for dt in ("float16", "float64"):        # MXNet: the weight's dtype without dtype=
        y = nd.Embedding(nd.zeros(2), nd.ones((5, 2), dtype=dt), input_dim=5, output_dim=2)
        assert y.dtype == np.dtype(dt)
        np.testing.assert_array_equal(y.asnumpy(), np.ones((2, 2), dt))
    with pytest.raises(TypeError, match=r"^Embedding: data must hold integer or floating-point "
                                        r"indices \(got bool\)"):
        nd.Embedding(nd.zeros(2, dtype="bool"), w, input_dim=5, output_dim=2)
    with pytest.raises(TypeError, match=r"^Embedding: attribute 'output_dim' is required"):
        nd.Embedding(nd.zeros(2), w, input_dim=5)
    with pytest.raises(ValueError, match=r"^Embedding: input_dim must be >= 1 \(got 0\)"):
        nd.Embedding(nd.zeros(2), nd.zeros((0, 2)), input_dim=0, output_dim=2)
    with pytest.raises(ValueError, match=r"^_embedding_grad: grad must have shape \(2, 2\)"):
        nd._embedding_grad(nd.zeros(2), nd.zeros((2, 3)), input_dim=5, output_dim=2)
