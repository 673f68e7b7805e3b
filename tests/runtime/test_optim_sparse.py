"""The optimizer update operators on row_sparse weights, gradients and states (MXNet 1.x's
``nd.sparse.sgd_update`` ... ``ftrl_update``), the optimizers and gluon's Trainer on
row_sparse Parameters, and ``gluon.contrib.nn.SparseEmbedding``.

Values: MXNet 1.9.1's own, two updates in a row per storage-type combination
(tests/runtime/data/mxnet_sparse_update_values.npz, made by
make_mxnet_sparse_update_values.py there, whose ``inputs`` both sides read), and NumPy
references of the lazy update (only the gradient's rows of the weight and the states
change).  Bad input raises before anything is written."""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

import runtime as mx
from runtime import autograd, nd
from runtime.gluon import contrib
from tests.runtime.conftest import dense_values, free_failing_tests

_DATA_DIR = Path(__file__).parent / "data"
_spec = importlib.util.spec_from_file_location(
    "make_mxnet_sparse_update_values", _DATA_DIR / "make_mxnet_sparse_update_values.py")
FIX = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(FIX)
DATA = np.load(_DATA_DIR / "mxnet_sparse_update_values.npz")
CASES = json.loads(str(DATA["cases"]))
SHAPE = FIX.SHAPE


def full_rsp(values):
    """``values`` as a row_sparse array that stores every row."""
    values = np.asarray(values, np.float32)
    return nd.sparse.row_sparse_array((values, np.arange(values.shape[0])),
                                      shape=values.shape)


def make(values, stype, rows=None):
    """The fixture's array: dense, a row_sparse weight or state (every row, or none
    for zeros) or a row_sparse gradient of ``rows``."""
    if stype == "default":
        return nd.array(values)
    if rows is not None:
        return nd.sparse.row_sparse_array((values[rows], np.array(rows, np.int64)),
                                          shape=values.shape)
    if not values.any():
        return nd.sparse.zeros("row_sparse", values.shape)
    return full_rsp(values)


def run_case(case):
    w0, grads, s0 = FIX.inputs(case)
    w = make(w0, case["w"])
    states = [make(s, case["s"]) for s in s0]
    attrs = dict(FIX.ATTRS[case["op"]])
    if case["lazy"] is not None:
        attrs["lazy_update"] = case["lazy"]
    fn = getattr(nd, case["op"])
    seen = []
    for t, (g, rows) in enumerate(zip(grads, FIX.ROWS), 1):
        if case["op"] == "ftml_update":
            attrs["t"] = t
        fn(w, make(g, case["g"], rows), *states, out=w, **attrs)
        seen.append((dense_values(w), [dense_values(s) for s in states]))
        assert w.stype == case["w"]
        for s in states:
            assert s.stype == case["s"]
            if s.stype == "row_sparse":      # a state that stored none stores every row
                assert s.indices.asnumpy().tolist() == list(range(SHAPE[0]))
        if w.stype == "row_sparse":
            assert w.indices.asnumpy().tolist() == list(range(SHAPE[0]))
    return seen


def _expected(key, n_states):
    return [(DATA[f"{key}_w{t}"], [DATA[f"{key}_s{i}_{t}"] for i in range(n_states)])
            for t in (1, 2)]


def _check(seen, expected):
    for (w, states), (ew, estates) in zip(seen, expected):
        np.testing.assert_allclose(w, ew, rtol=1e-5, atol=1e-6)
        for s, e in zip(states, estates):
            np.testing.assert_allclose(s, e, rtol=1e-5, atol=1e-6)


def _in_place_nag(case):
    """nag_mom_update on a dense weight: MXNet computes it in place, and its in-place
    kernel reads the new weight in the momentum's wd term (runtime.ops.optimizer_op says
    so); ndrt reads the weight that the update started from, which MXNet does for a
    row_sparse weight (its storage fallback writes into a temporary)."""
    return case["op"] == "nag_mom_update" and case["w"] == "default"


@pytest.mark.parametrize("case", [c for c in CASES if f"{c['key']}_error" not in DATA
                                  and not _in_place_nag(c)], ids=lambda c: c["key"])
def test_update_matches_mxnet_1_9_1(case):
    _check(run_case(case), _expected(case["key"], FIX.STATES[case["op"]]))


@pytest.mark.parametrize("case", [c for c in CASES if _in_place_nag(c)],
                         ids=lambda c: c["key"])
def test_nag_on_a_dense_weight_matches_mxnet_on_a_row_sparse_one(case):
    twin = "nag_mom_update-r" + case["key"][len("nag_mom_update-d"):]
    _check(run_case(case), _expected(twin, 1))


@pytest.mark.parametrize("case", [c for c in CASES if c["op"] == "adagrad_update"
                                  and f"{c['key']}_error" in DATA], ids=lambda c: c["key"])
def test_adagrad_refuses_the_storage_types_that_mxnet_refuses(case):
    w0, grads, s0 = FIX.inputs(case)
    w, h = make(w0, case["w"]), make(s0[0] + 1, case["s"])
    before = dense_values(w), dense_values(h)
    with pytest.raises(NotImplementedError, match=r"adagrad_update: storage types \(weight, "
                       r"grad, history\) must be .* as MXNet's \(got"):
        nd.sparse.adagrad_update(w, make(grads[0], case["g"], FIX.ROWS[0]), h, lr=0.1, out=w)
    np.testing.assert_array_equal(dense_values(w), before[0])
    np.testing.assert_array_equal(dense_values(h), before[1])


def test_adam_all_row_sparse_standard_update_equals_the_dense_states_one():
    """MXNet 1.9.1 fails on adam_update(rsp, rsp, rsp, rsp, lazy_update=False) with states
    that store no rows; ndrt takes the standard update, which MXNet computes for the
    same call with dense states."""
    key = "adam_update-rrr-zero-lazy0"
    assert f"{key}_error" in DATA
    case = next(c for c in CASES if c["key"] == key)
    _check(run_case(case), _expected("adam_update-rrd-zero-lazy0", 2))


def test_lazy_update_touches_only_the_gradient_rows_against_numpy():
    rng = np.random.default_rng(3)
    w0 = rng.uniform(-1, 1, (8, 4)).astype(np.float32)
    g0 = rng.uniform(-1, 1, (2, 4)).astype(np.float32)
    rows = np.array([2, 5])
    w, mean, var = full_rsp(w0), nd.sparse.zeros("row_sparse", w0.shape), \
        nd.sparse.zeros("row_sparse", w0.shape)
    g = nd.sparse.row_sparse_array((g0, rows), shape=w0.shape)
    nd.sparse.adam_update(w, g, mean, var, lr=0.1, beta1=0.9, beta2=0.99, epsilon=1e-8,
                          wd=0.1, out=w)
    gr = g0.astype(np.float64) + 0.1 * w0[rows]
    m, v = 0.1 * gr, 0.01 * gr * gr
    want = w0.astype(np.float64).copy()
    want[rows] -= 0.1 * m / (np.sqrt(v) + 1e-8)
    np.testing.assert_allclose(dense_values(w), want, rtol=1e-5, atol=1e-7)
    untouched = [r for r in range(8) if r not in rows]
    np.testing.assert_array_equal(dense_values(w)[untouched], w0[untouched])
    want_m = np.zeros((8, 4))
    want_m[rows] = m
    np.testing.assert_allclose(dense_values(mean), want_m, rtol=1e-5, atol=1e-8)


def test_without_out_a_new_row_sparse_weight_and_the_old_one_unchanged():
    w0 = np.arange(12, dtype=np.float32).reshape(4, 3)
    w = full_rsp(w0)
    g = nd.sparse.row_sparse_array((np.ones((1, 3), np.float32), [2]), shape=(4, 3))
    r = nd.sparse.sgd_update(w, g, lr=0.5)
    assert r.stype == "row_sparse" and r.chunk is not w.chunk
    want = w0.copy()
    want[2] -= 0.5
    np.testing.assert_array_equal(dense_values(r), want)
    np.testing.assert_array_equal(dense_values(w), w0)
    other = nd.sparse.zeros("row_sparse", (4, 3))
    nd.sparse.sgd_update(w, g, lr=0.5, out=other)
    np.testing.assert_array_equal(dense_values(other), want)
    assert other.indices.asnumpy().tolist() == [0, 1, 2, 3]


def _snapshot(*arrays):
    return [(a.stype, dense_values(a), a.version,
             None if a.stype == "default" else a.indices.asnumpy().copy()) for a in arrays]


def _same(before, arrays):
    for (stype, values, version, idx), a in zip(before, arrays):
        assert a.stype == stype and a.version == version
        np.testing.assert_array_equal(dense_values(a), values)
        if idx is not None:
            np.testing.assert_array_equal(a.indices.asnumpy(), idx)


def test_weight_missing_rows_is_refused_and_nothing_changes():
    w = nd.sparse.row_sparse_array((np.ones((2, 3), np.float32), [1, 3]), shape=(5, 3))
    g = nd.sparse.row_sparse_array((np.ones((1, 3), np.float32), [1]), shape=(5, 3))
    m = nd.sparse.zeros("row_sparse", (5, 3))
    before = _snapshot(w, m)
    with pytest.raises(ValueError, match=r"sgd_mom_update: a row_sparse weight must store "
                       r"all its 5 rows, .* \(got 2 stored rows\)"):
        nd.sparse.sgd_mom_update(w, g, m, lr=0.1, momentum=0.9, out=w)
    _same(before, [w, m])


def test_state_with_some_rows_is_refused_and_no_state_is_filled():
    w = full_rsp(np.ones((4, 2)))
    g = nd.sparse.row_sparse_array((np.ones((1, 2), np.float32), [0]), shape=(4, 2))
    mean = nd.sparse.zeros("row_sparse", (4, 2))            # would be filled ...
    var = nd.sparse.row_sparse_array((np.ones((1, 2), np.float32), [3]), shape=(4, 2))
    before = _snapshot(w, mean, var)
    with pytest.raises(ValueError, match=r"adam_update: a row_sparse var must store all "
                       r"its 4 rows or none \(none: it starts at zeros\) \(got 1 stored"):
        nd.sparse.adam_update(w, g, mean, var, lr=0.1, out=w)
    _same(before, [w, mean, var])                           # ... but is not


def test_csr_weight_is_refused():
    w = nd.array(np.ones((3, 3))).tostype("csr")
    with pytest.raises(NotImplementedError, match=r"sgd_update: weight must have storage "
                       r"type 'default' or 'row_sparse' \(got 'csr'\)"):
        nd.sgd_update(w, nd.ones((3, 3)), lr=0.1)


def test_bad_attribute_with_row_sparse_arrays_changes_nothing():
    w = full_rsp(np.ones((3, 2)))
    g = nd.sparse.row_sparse_array((np.ones((1, 2), np.float32), [1]), shape=(3, 2))
    z, n = nd.sparse.zeros("row_sparse", (3, 2)), nd.sparse.zeros("row_sparse", (3, 2))
    before = _snapshot(w, z, n)
    with pytest.raises(ValueError, match=r"ftrl_update: lr must be finite and >= 0 \(got "
                       r"-1.0\)"):
        nd.sparse.ftrl_update(w, g, z, n, lr=-1.0, out=w)
    _same(before, [w, z, n])


# -- the optimizers and gluon -----------------------------------------------------------

@pytest.mark.parametrize("name,kw", [("sgd", {"momentum": 0.9}), ("adam", {}),
                                     ("adagrad", {}), ("ftrl", {}), ("rmsprop", {})])
def test_optimizer_states_take_the_weight_storage_type(name, kw):
    opt = mx.optimizer.create(name, learning_rate=0.1, **kw)
    w = full_rsp(np.ones((4, 2)))
    state = opt.create_state(0, w)
    for s in state if isinstance(state, tuple) else [state]:
        assert s.stype == "row_sparse" and s.shape == (4, 2)


def test_updater_lazy_adam_on_a_row_sparse_weight_against_numpy():
    rng = np.random.default_rng(5)
    w0 = rng.uniform(-1, 1, (6, 3)).astype(np.float32)
    w = full_rsp(w0)
    upd = mx.optimizer.get_updater(mx.optimizer.Adam(learning_rate=0.01))
    want, m, v = w0.astype(np.float64), np.zeros((6, 3)), np.zeros((6, 3))
    for t, rows in enumerate(([0, 4], [4, 5]), 1):
        g0 = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
        upd(0, nd.sparse.row_sparse_array((g0, rows), shape=(6, 3)), w)
        m[rows] = 0.9 * m[rows] + 0.1 * g0
        v[rows] = 0.999 * v[rows] + 0.001 * g0.astype(np.float64) ** 2
        lr = 0.01 * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
        want[rows] -= lr * m[rows] / (np.sqrt(v[rows]) + 1e-8)
    assert w.stype == "row_sparse"
    np.testing.assert_allclose(dense_values(w), want, rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(dense_values(w)[[1, 2, 3]], w0[[1, 2, 3]])


def _embedding_net(sparse_weight):
    net = contrib.nn.SparseEmbedding(10, 3) if sparse_weight else \
        mx.gluon.nn.Embedding(10, 3, sparse_grad=True)
    net.initialize(mx.init.Uniform(1.0))
    return net


def test_embedding_of_a_row_sparse_weight_reads_its_rows_without_fallback():
    w = nd.sparse.row_sparse_array((np.arange(6, dtype=np.float32).reshape(2, 3), [1, 4]),
                                   shape=(5, 3))
    x = nd.array([[4, 0], [1, 9]])
    with _no_fallback():
        y = nd.Embedding(x, w, input_dim=5, output_dim=3)
    np.testing.assert_array_equal(y.asnumpy(), dense_values(w)[[[4, 0], [1, 4]]])


class _no_fallback:
    """Any storage fallback raises inside."""

    def __enter__(self):
        self.old = mx.set_storage_fallback("error")

    def __exit__(self, *exc):
        mx.set_storage_fallback(self.old)


def test_sparse_embedding_forward_backward_and_a_lazy_sgd_step():
    net = _embedding_net(True)
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd",
                               {"learning_rate": 0.5, "momentum": 0.5, "wd": 0.1})
    p = net.weight
    assert p.stype == "row_sparse" and p.grad_stype == "row_sparse"
    every_row = nd.arange(10, dtype="int64")
    w0 = dense_values(p.row_sparse_data(every_row))
    assert p.row_sparse_data(every_row).indices.asnumpy().tolist() == list(range(10))
    x = nd.array([[1, 7], [7, 2]])
    head = np.arange(12, dtype=np.float32).reshape(2, 2, 3)
    with autograd.record():
        y = net(x)
        loss = (y * nd.array(head)).sum()
    loss.backward()
    np.testing.assert_array_equal(y.asnumpy(), w0[[[1, 7], [7, 2]]])
    grad = p.grad()
    assert grad.stype == "row_sparse"
    want = np.zeros((10, 3), np.float32)
    np.add.at(want, [1, 7, 7, 2], head.reshape(4, 3))
    np.testing.assert_allclose(dense_values(grad), want)
    trainer.step(2)
    after = dense_values(p.row_sparse_data(every_row))
    assert p.row_sparse_data(every_row).stype == "row_sparse"
    for r in (1, 2, 7):
        mom = -0.5 * 0.1 * w0[r] - 0.5 * want[r] / 2
        np.testing.assert_allclose(after[r], w0[r] + mom, rtol=1e-5, atol=1e-6)
    untouched = [0, 3, 4, 5, 6, 8, 9]
    np.testing.assert_array_equal(after[untouched], w0[untouched])


def test_sparse_embedding_matches_embedding_with_a_dense_weight():
    sparse, dense = _embedding_net(True), _embedding_net(False)
    mx.gluon.Trainer(sparse.collect_params(), "sgd")
    dense.weight.set_data(dense_values(sparse.weight.row_sparse_data(nd.arange(10))))
    x = nd.array([3, 3, 9, 0])
    for net in (sparse, dense):
        with autograd.record():
            loss = (net(x) ** 2).sum()
        loss.backward()
    np.testing.assert_allclose(dense_values(sparse.weight.grad()),
                               dense_values(dense.weight.grad()), rtol=1e-6)
    assert "SparseEmbedding(10 -> 3, float32)" == repr(sparse)


@pytest.mark.parametrize("on_kvstore", [None, True])
def test_sparse_embedding_on_two_contexts_sums_the_gradients_of_both(on_kvstore):
    net = contrib.nn.SparseEmbedding(10, 3)
    net.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1},
                               update_on_kvstore=on_kvstore)
    every_row = nd.arange(10)
    w0 = dense_values(net.weight.list_row_sparse_data(every_row)[0])
    for ctx, rows in ((mx.cpu(0), [1, 2]), (mx.cpu(1), [2, 5])):
        with autograd.record():
            loss = net(nd.array(rows, ctx=ctx)).sum()
        loss.backward()
    trainer.step(1)
    want = w0.copy()
    want[[1, 5]] -= 0.1
    want[2] -= 0.2
    assert trainer._update_on_kvstore          # the store keeps a sparse weight's rows
    for copy in net.weight.list_row_sparse_data(every_row):
        assert copy.stype == "row_sparse" and copy.indices.shape == (10,)
        np.testing.assert_allclose(dense_values(copy), want, rtol=1e-6, atol=1e-7)


def test_rows_taken_outside_record_still_carry_the_gradient_to_the_parameter():
    # Gluon hands out the parameter's own arrays, so a use recorded later reaches the
    # gradient even though row_sparse_data ran outside autograd.record()
    # (MXNet's test_gluon_trainer.py::test_trainer_sparse_kv does this).
    params = mx.gluon.ParameterDict()
    x = params.get("x", shape=(10, 1), stype="row_sparse", grad_stype="row_sparse")
    params.initialize(ctx=[mx.cpu(0), mx.cpu(1)], init="zeros")
    trainer = mx.gluon.Trainer(params, "sgd", {"learning_rate": 0.1})
    rows = nd.array([1, 4], dtype="int64")
    copies = x.list_row_sparse_data(rows)
    assert not autograd.is_recording()
    with autograd.record():
        for w in copies:
            (w * nd.array(np.arange(10.0).reshape(10, 1), ctx=w.context)).sum().backward()
    want = np.zeros((10, 1), np.float32)
    want[[1, 4], 0] = [1.0, 4.0]
    for g in x.list_grad():
        assert g.stype == "row_sparse"
        np.testing.assert_array_equal(dense_values(g), want)
    assert not autograd.is_recording() and not autograd.is_training()
    trainer.step(1)
    got = dense_values(x.row_sparse_data(nd.arange(10, dtype="int64")))
    np.testing.assert_allclose(got, -0.1 * 2 * want, rtol=1e-6)


def test_a_sparse_weight_refuses_updates_outside_the_store_and_a_second_trainer():
    net = contrib.nn.SparseEmbedding(10, 3)
    net.initialize()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", update_on_kvstore=False)
    with autograd.record():
        net(nd.array([1, 2])).sum().backward()
    before = dense_values(net.weight.row_sparse_data(nd.arange(10)))
    with pytest.raises(ValueError, match="update_on_kvstore must not be False when a "
                       "parameter's stype is row_sparse"):
        trainer.step(1)
    np.testing.assert_array_equal(dense_values(net.weight.row_sparse_data(nd.arange(10))),
                                  before)
    dense = mx.gluon.Parameter("d", shape=(2,))
    dense.initialize()
    with pytest.raises(RuntimeError, match="takes one Trainer only"):
        mx.gluon.Trainer([dense, net.weight], "sgd")
    assert dense._trainer is None and net.weight._trainer is trainer
    second = mx.gluon.Trainer([dense], "sgd")
    assert mx.gluon.Trainer([dense], "adam") is not second     # dense: any number


def test_row_sparse_parameter_stores_every_row_even_zero_ones():
    p = mx.gluon.Parameter("w", shape=(5, 2), stype="row_sparse", grad_stype="row_sparse")
    p.initialize(init=mx.init.Zero())
    mx.gluon.Trainer([p], "sgd")
    every_row = nd.arange(5)
    assert p.row_sparse_data(every_row).stype == "row_sparse"
    assert p.row_sparse_data(every_row).indices.asnumpy().tolist() == [0, 1, 2, 3, 4]
    p.set_data(nd.array(np.diag([1.0, 0.0])[[0, 1, 1, 0, 1]]))
    assert p.row_sparse_data(every_row).indices.asnumpy().tolist() == [0, 1, 2, 3, 4]
    rows = p.row_sparse_data(nd.array([3, 1], dtype="int64"))
    assert rows.stype == "row_sparse" and rows.indices.asnumpy().tolist() == [1, 3]


free_failing_tests(globals())
