"""gluon's Trainer with a kvstore: parameters on two contexts give the one-context
result (the copies' gradients summed through 'local'/'device'), gluon's rules for where
the update runs, and the multi-context Parameter API."""

import numpy as np
import pytest

import runtime as mx
from runtime import autograd, gluon, nd
from runtime.gluon import nn


def _net(seed):
    mx.random.seed(seed)
    net = nn.Sequential()
    net.add(nn.Dense(5, activation="relu", in_units=4), nn.Dense(2, in_units=5))
    return net


def _train(ctxs, kvstore, update_on_kvstore, optimizer, steps=4):
    net = _net(0)
    net.initialize(mx.init.Xavier(), ctx=ctxs)
    trainer = gluon.Trainer(net.collect_params(), optimizer[0], dict(optimizer[1]),
                            kvstore=kvstore, update_on_kvstore=update_on_kvstore)
    loss_fn = gluon.loss.L2Loss()
    rng = np.random.default_rng(1)
    for _ in range(steps):
        X = rng.standard_normal((8, 4)).astype(np.float32)
        Y = rng.standard_normal((8, 2)).astype(np.float32)
        xs = gluon.utils.split_and_load(X, ctxs)
        ys = gluon.utils.split_and_load(Y, ctxs)
        with autograd.record():
            losses = [loss_fn(net(x), y) for x, y in zip(xs, ys)]
        for loss in losses:
            loss.backward()
        trainer.step(8)
    return net, trainer


@pytest.mark.parametrize("kvstore", ["local", "device"])
@pytest.mark.parametrize("update_on_kvstore", [None, False])
@pytest.mark.parametrize("optimizer", [("sgd", {"learning_rate": 0.1, "momentum": 0.9}),
                                       ("adam", {"learning_rate": 0.01})])
def test_two_contexts_train_as_one(kvstore, update_on_kvstore, optimizer):
    ref, ref_trainer = _train([mx.cpu(0)], kvstore, update_on_kvstore, optimizer)
    assert ref_trainer.kvstore is None          # one context, one process: no store
    net, trainer = _train([mx.cpu(0), mx.cpu(1)], kvstore, update_on_kvstore, optimizer)
    assert trainer.kvstore.type == kvstore
    assert trainer._update_on_kvstore is (update_on_kvstore is None)
    for (name, p), q in zip(net.collect_params().items(), ref.collect_params().values()):
        copies = p.list_data()
        assert [c.context for c in copies] == [mx.cpu(0), mx.cpu(1)]
        np.testing.assert_allclose(copies[0].asnumpy(), q.data().asnumpy(), rtol=1e-5,
                                   atol=1e-6, err_msg=name)
        assert np.array_equal(copies[0].asnumpy(), copies[1].asnumpy())


def test_allreduce_grads_then_update_and_refusals():
    net = _net(0)
    net.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1},
                            update_on_kvstore=False)
    x = nd.ones((2, 4))
    with autograd.record():
        a = net(x.as_in_context(mx.cpu(0))).sum()
        b = net(x.as_in_context(mx.cpu(1))).sum()
    a.backward()
    b.backward()
    w = net[0].weight
    g0 = w.list_grad()[0].asnumpy().copy()
    trainer.allreduce_grads()
    for g in w.list_grad():
        np.testing.assert_allclose(g.asnumpy(), 2 * g0, rtol=1e-6)
    trainer.update(4)
    on = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1}, kvstore="device")
    with pytest.raises(RuntimeError,
                       match="allreduce_grads.. when parameters are updated on kvstore"):
        on.allreduce_grads()
    with pytest.raises(RuntimeError, match="update.. when parameters are updated on kvstore"):
        on.update(1)
    with pytest.raises(ValueError, match="update_on_kvstore must be None, True or False"):
        gluon.Trainer(net.collect_params(), "sgd", update_on_kvstore="yes")
    with pytest.raises(TypeError, match="kvstore must be a str, a KVStore or None"):
        gluon.Trainer(net.collect_params(), "sgd", kvstore=3)


def test_parameter_on_several_contexts():
    p = gluon.Parameter("w", shape=(3, 2), stype="row_sparse")
    p.initialize(mx.init.One(), ctx=[mx.cpu(0), mx.cpu(1)])
    assert p.list_ctx() == [mx.cpu(0), mx.cpu(1)]
    # Gluon's rules for a row_sparse parameter: no data(), rows once a Trainer holds it
    for read in (p.data, p.list_data):
        with pytest.raises(RuntimeError, match=r"Parameter 'w': (list_)?data\(\) cannot "
                           r"give the array of a row_sparse parameter; use row_sparse_data"):
            read()
    with pytest.raises(RuntimeError, match="row_sparse_data needs a Trainer holding the "
                       "parameter"):
        p.row_sparse_data(nd.array([0], dtype="int64"))
    gluon.Trainer([p], "sgd")
    with pytest.raises(ValueError, match=r"lives on \[cpu\(0\), cpu\(1\)\], not on cpu\(2\)"):
        p.row_sparse_data(nd.array([0], dtype="int64", ctx=mx.cpu(2)))
    rows = p.row_sparse_data(nd.array([2, 0], dtype="int64", ctx=mx.cpu(1)))
    assert rows.context == mx.cpu(1) and rows.stype == "row_sparse"
    assert np.array_equal(rows.indices.asnumpy(), [0, 2])
    assert [r.context for r in p.list_row_sparse_data(nd.array([1], dtype="int64"))] == \
        [mx.cpu(0), mx.cpu(1)]
    d = gluon.Parameter("d", shape=(2,))
    d.initialize(mx.init.Constant(3.0), ctx=[mx.cpu(0), mx.cpu(1)])
    with pytest.raises(RuntimeError, match="row_sparse_data needs stype 'row_sparse'"):
        d.row_sparse_data(nd.array([0], dtype="int64"))
    d.reset_ctx([mx.cpu(2)])
    assert d.list_ctx() == [mx.cpu(2)] and np.array_equal(d.data().asnumpy(), [3.0, 3.0])
    d.set_data(nd.array([1.0, 2.0]))
    d.reset_ctx([mx.cpu(0), mx.cpu(3)])
    assert [a.asnumpy().tolist() for a in d.list_data()] == [[1.0, 2.0], [1.0, 2.0]]
    assert len(d.list_grad()) == 2
    with pytest.raises(ValueError, match="ctx must not repeat a Context"):
        gluon.Parameter("e", shape=(1,)).initialize(ctx=[mx.cpu(0), mx.cpu(0)])


def test_split_data_follows_gluon():
    x = nd.arange(10).reshape(5, 2)
    with pytest.raises(ValueError, match="cannot be evenly split into 2 slices along axis 0"):
        gluon.utils.split_data(x, 2)
    parts = gluon.utils.split_data(x, 2, even_split=False)
    assert [p.asnumpy().tolist() for p in parts] == [x.asnumpy()[:2].tolist(),
                                                     x.asnumpy()[2:].tolist()]
    cols = gluon.utils.split_data(nd.arange(8).reshape(2, 4), 2, batch_axis=1)
    assert [c.asnumpy().tolist() for c in cols] == [[[0, 1], [4, 5]], [[2, 3], [6, 7]]]
    loaded = gluon.utils.split_and_load(np.arange(4, dtype=np.float32), [mx.cpu(0), mx.cpu(1)])
    assert [(a.context, a.asnumpy().tolist()) for a in loaded] == [(mx.cpu(0), [0, 1]),
                                                                    (mx.cpu(1), [2, 3])]


@pytest.mark.parametrize("on_kvstore", [True, False])
def test_set_data_between_steps_is_where_the_next_step_starts(on_kvstore):
    # Gluon's rule: new values (set_data, a load) drop a store that runs the updates,
    # which would otherwise write its own weights back over them
    x = gluon.Parameter("x", shape=(4,))
    x.initialize(mx.init.Zero(), ctx=[mx.cpu(0), mx.cpu(1)])
    trainer = gluon.Trainer([x], "sgd", {"learning_rate": 0.1}, kvstore="local",
                            update_on_kvstore=on_kvstore)

    def step():
        with autograd.record():
            for w in x.list_data():
                (w + 1).backward()
        trainer.step(1)
    step()
    assert trainer._update_on_kvstore is on_kvstore
    x.set_data(nd.ones((4,)) * 5)
    step()
    for w in x.list_data():       # 5 - 0.1 * (1 + 1): both copies' gradients summed
        np.testing.assert_allclose(w.asnumpy(), 4.8, rtol=1e-6)


def test_a_parameter_away_from_the_current_context_trains():
    x = gluon.Parameter("x", shape=(3,))
    x.initialize(mx.init.Zero(), ctx=[mx.cpu(1), mx.cpu(2)])
    trainer = gluon.Trainer([x], "sgd", {"learning_rate": 1.0})
    with autograd.record():
        for w in x.list_data():
            (w * 2).backward()
    trainer.step(1)
    for w in x.list_data():
        np.testing.assert_array_equal(w.asnumpy(), -4.0)


def test_parameter_dict_reset_ctx_moves_every_parameter_or_none():
    net = nn.Dense(2, in_units=3)
    net.initialize(mx.init.One())
    params = net.collect_params()
    before = {k: p.data().asnumpy() for k, p in params.items()}
    params.reset_ctx([mx.cpu(1), mx.cpu(2)])
    for k, p in params.items():
        assert p.list_ctx() == [mx.cpu(1), mx.cpu(2)]
        for a in p.list_data():
            np.testing.assert_array_equal(a.asnumpy(), before[k])
    params.get("fresh", shape=(2,))               # not initialised: refused before any move
    with pytest.raises(RuntimeError, match="reset_ctx: parameter 'dense.*fresh' has not been "
                       "initialised"):
        params.reset_ctx(mx.cpu(3))
    assert net.weight.list_ctx() == [mx.cpu(1), mx.cpu(2)]
    with pytest.raises(TypeError, match="ctx must be a Context"):
        params.reset_ctx("cpu")


def test_update_and_allreduce_refused_when_the_store_updates():
    # Gluon asserts here; ndrt's error is a RuntimeError that is also an AssertionError
    x = gluon.Parameter("x", shape=(2,))
    x.initialize(mx.init.Zero(), ctx=[mx.cpu(0), mx.cpu(1)])
    trainer = gluon.Trainer([x], "sgd", kvstore="local", update_on_kvstore=True)
    with autograd.record():
        for w in x.list_data():
            (w + 1).backward()
    for call, what in ((lambda: trainer.update(1), "update"),
                       (trainer.allreduce_grads, "allreduce_grads")):
        with pytest.raises(RuntimeError, match=rf"{what}\(\) when parameters are updated "
                           "on kvstore is not supported") as info:
            call()
        assert isinstance(info.value, AssertionError)
    for w in x.list_data():
        np.testing.assert_array_equal(w.asnumpy(), 0)
