"""runtime.gluon blocks and parameters: Dense, Embedding, Sequential, Dropout, Activation,
Flatten against NumPy; gradients of whole blocks against float64 central differences;
names, collect_params, deferred initialisation, save/load and their errors;
initialisers' statistics and reproducibility; pool bytes after a training step."""

import re
import warnings

import numpy as np
import pytest

import allocator
import runtime as mx
from runtime import autograd, nd
from runtime.gluon import nn
from runtime.gluon.block import _BlockScope
from runtime import random as rt_random
from runtime import initializer as init
from runtime.gluon.loss import SoftmaxCrossEntropyLoss
from tests.runtime.conftest import free_failing_tests

ACTS = {"relu": lambda x: np.maximum(x, 0), "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
        "tanh": np.tanh, "softrelu": lambda x: np.logaddexp(0, x),
        "softsign": lambda x: x / (1 + np.abs(x)), None: lambda x: x}


def rand(shape, seed=0, dtype="float64"):
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(dtype)


def check_block_grad(loss_fn, params, inputs=(), eps=1e-6, rtol=1e-6, seed=0):
    """Autograd's gradients of the scalar ``loss_fn()`` with respect to every
    Parameter in ``params`` and every NDArray in ``inputs`` (all float64) against
    central differences along random directions."""
    rng = np.random.default_rng(seed)
    for x in inputs:
        x.attach_grad()
    with autograd.record():
        out = loss_fn()
    out.backward()
    targets = [(p.name, p.data(), p.grad()) for p in params] + \
              [(f"input {i}", x, x.grad) for i, x in enumerate(inputs)]
    for name, arr, grad in targets:
        g = grad.tostype("default").asnumpy() if grad.stype != "default" else grad.asnumpy()
        base = arr.asnumpy().copy()
        v = rng.standard_normal(base.shape)
        vals = []
        for sign in (1, -1):
            arr[:] = base + sign * eps * v
            vals.append(float(loss_fn().asnumpy().sum()))
        arr[:] = base
        numeric = (vals[0] - vals[1]) / (2 * eps)
        analytic = float(np.sum(g * v))
        assert np.isclose(analytic, numeric, rtol=rtol, atol=1e-8), (name, analytic, numeric)


# -- Dense ------------------------------------------------------------------------------

@pytest.mark.parametrize("act", list(ACTS))
@pytest.mark.parametrize("flatten", [True, False])
def test_dense_forward_matches_numpy(act, flatten):
    layer = nn.Dense(4, activation=act, flatten=flatten, dtype="float64")
    layer.initialize(init.Normal(0.5))
    assert layer.weight.shape == (4, 0)
    x = rand((3, 2, 5))
    y = layer(nd.array(x, dtype="float64"))
    w, b = layer.weight.data().asnumpy(), layer.bias.data().asnumpy()
    in_units = 10 if flatten else 5
    assert w.shape == (4, in_units) and layer.weight.shape == (4, in_units)
    ref = (x.reshape(3, 10) @ w.T if flatten else x @ w.T) + b
    np.testing.assert_allclose(y.asnumpy(), ACTS[act](ref), rtol=1e-12, atol=1e-12)
    assert y.dtype == np.float64


def test_dense_without_bias_and_with_in_units():
    layer = nn.Dense(3, use_bias=False, in_units=2, weight_initializer=init.One())
    layer.initialize()
    assert layer.bias is None and list(layer.collect_params()) == [layer.weight.name]
    assert layer.weight.data().shape == (3, 2)     # known shape: initialised at once
    y = layer(nd.array([[1.0, 2.0]]))
    np.testing.assert_array_equal(y.asnumpy(), [[3.0, 3.0, 3.0]])
    with pytest.raises(ValueError, match=r"FullyConnected: weight must have shape \(3, 5\)"):
        layer(nd.ones((1, 5)))


def test_dense_bad_arguments():
    with pytest.raises(ValueError, match=r"Dense: units must be an integer >= 1 \(got 0\)"):
        nn.Dense(0)
    with pytest.raises(ValueError, match=r"Dense: in_units must be an integer >= 0 \(got -1\)"):
        nn.Dense(2, in_units=-1)
    with pytest.raises(ValueError, match=r"Dense: activation must be one of .* \(got 'gelu'\)"):
        nn.Dense(2, activation="gelu")
    layer = nn.Dense(2)
    layer.initialize()
    with pytest.raises(ValueError, match=r"Dense: cannot infer in_units from input of shape "
                                         r"\(2, 0\)"):
        layer(nd.zeros((2, 0)))


def test_mlp_gradient_matches_central_differences():
    net = nn.Sequential()
    with net.name_scope():
        net.add(nn.Dense(5, activation="tanh", dtype="float64"),
                nn.Dense(4, activation="softrelu", dtype="float64"),
                nn.Dense(3, activation="sigmoid", dtype="float64"), nn.Dense(3, dtype="float64"))
    net.initialize(init.Xavier())
    x = nd.array(rand((6, 2, 3), 1), dtype="float64")
    label = nd.array([0, 2, 1, 1, 0, 2], dtype="float64")
    loss = SoftmaxCrossEntropyLoss()
    net(x)                                  # deferred shapes known
    check_block_grad(lambda: loss(net(x), label).sum(), net.collect_params().values(), [x])


def test_dense_flatten_false_gradient():
    layer = nn.Dense(3, flatten=False, activation="relu", dtype="float64")
    layer.initialize(init.Uniform(1.0))
    x = nd.array(rand((2, 3, 4), 2), dtype="float64")
    layer(x)
    check_block_grad(lambda: (layer(x) ** 2).sum(), layer.collect_params().values(), [x])


# -- Embedding --------------------------------------------------------------------------

def test_embedding_forward_and_dense_gradient():
    emb = nn.Embedding(6, 3, dtype="float64")
    emb.initialize(init.Normal(1.0))
    idx = np.array([[0, 5], [2, 2]])
    w = emb.weight.data().asnumpy()
    out = emb(nd.array(idx))
    np.testing.assert_array_equal(out.asnumpy(), w[idx])
    check_block_grad(lambda: (emb(nd.array(idx)) ** 3).sum(), [emb.weight])
    assert emb.weight.grad().stype == "default"


def test_embedding_sparse_grad_is_row_sparse():
    dense = nn.Embedding(8, 2, dtype="float64")
    sparse = nn.Embedding(8, 2, dtype="float64", sparse_grad=True)
    dense.initialize(init.Normal(1.0))
    sparse.initialize()
    sparse.weight.set_data(dense.weight.data())
    idx = nd.array([3, 1, 3, 6])
    head = rand((4, 2), 3)
    for e in (dense, sparse):
        with autograd.record():
            y = e(idx)
        y.backward(nd.array(head, dtype="float64"))
    g = sparse.weight.grad()
    assert g.stype == "row_sparse"
    np.testing.assert_array_equal(g.indices.asnumpy(), [1, 3, 6])
    np.testing.assert_allclose(g.tostype("default").asnumpy(), dense.weight.grad().asnumpy())
    ref = np.zeros((8, 2))
    np.add.at(ref, [3, 1, 3, 6], head)
    np.testing.assert_allclose(dense.weight.grad().asnumpy(), ref)
    sparse.weight.zero_grad()
    assert sparse.weight.grad().indices.shape == (0,)


def test_embedding_bad_arguments():
    with pytest.raises(ValueError, match=r"Embedding: input_dim must be an integer >= 1"):
        nn.Embedding(0, 2)
    emb = nn.Embedding(3, 2)
    emb.initialize()
    # out-of-range indices are clipped, as MXNet's Embedding does
    w = emb.weight.data().asnumpy()
    np.testing.assert_array_equal(emb(nd.array([0, 3, -1])).asnumpy(), w[[0, 2, 0]])


# -- Sequential, names, collect_params --------------------------------------------------

def test_sequential_of_hybrid_blocks_warns_on_hybridize():
    hybrid = nn.Sequential()
    hybrid.add(nn.Dense(2), nn.Activation("relu"))
    with pytest.warns(UserWarning, match="Consider using HybridSequential"):
        hybrid.hybridize()
    assert hybrid[0]._active                    # the children are hybridized all the same
    mixed = nn.Sequential()
    mixed.add(nn.Dense(2), nn.Lambda(lambda x: x))
    empty = nn.Sequential()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mixed.hybridize()                       # a plain Block child: no advice
        empty.hybridize()
        hybrid.hybridize(active=False)
    assert mixed[0]._active and not hybrid[0]._active


def test_sequential_structure_and_names():
    net = nn.Sequential()
    with net.name_scope():
        net.add(nn.Dense(4), nn.Activation("relu"))
        net.add(nn.Dense(2))
    assert re.fullmatch(r"sequential\d+_", net.prefix)
    assert len(net) == 3 and isinstance(net[1], nn.Activation)
    assert [type(b) for b in net] == [nn.Dense, nn.Activation, nn.Dense]
    names = list(net.collect_params())
    assert names == [net.prefix + "dense0_weight", net.prefix + "dense0_bias",
                     net.prefix + "dense1_weight", net.prefix + "dense1_bias"]
    assert list(net.collect_params(".*weight")) == names[0::2]
    assert list(net.collect_params(f"{net.prefix}dense1_bias|{net.prefix}dense0_weight")) \
        == [names[0], names[3]]
    head = net[:2]
    assert isinstance(head, nn.Sequential) and len(head) == 2 and head[0] is net[0]
    top = nn.Dense(1)
    other = nn.Dense(1)
    a, b = (int(re.fullmatch(r"dense(\d+)_", d.prefix).group(1)) for d in (top, other))
    assert b == a + 1                           # the process-wide counter
    assert nn.Dense(1, prefix="mine_").weight.name == "mine_weight"
    net.initialize()
    x = np.arange(6.0).reshape(2, 3)
    y = net(nd.array(x))
    w0, b0 = net[0].weight.data().asnumpy(), net[0].bias.data().asnumpy()
    w1, b1 = net[2].weight.data().asnumpy(), net[2].bias.data().asnumpy()
    # float32 against a float64 reference: an output near 0 needs an absolute tolerance
    np.testing.assert_allclose(y.asnumpy(), np.maximum(x @ w0.T + b0, 0) @ w1.T + b1,
                               rtol=1e-5, atol=1e-6)


def test_custom_block_registers_children_and_parameters():
    class Net(nn.Block):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.body = nn.Dense(3)
                self.scale = self.params.get("scale", shape=(1,), init=init.Constant(2.0))

        def forward(self, x):
            return self.body(x) * self.scale.data()

    net = Net()
    net.initialize()
    assert list(net.collect_params()) == [net.prefix + "scale", net.prefix + "dense0_weight",
                                          net.prefix + "dense0_bias"]
    assert net.scale.data().asnumpy().tolist() == [2.0]
    y = net(nd.ones((2, 4)))
    np.testing.assert_allclose(y.asnumpy(), 2 * net.body(nd.ones((2, 4))).asnumpy())
    with pytest.raises(TypeError, match="attribute 'body' holds a Dense"):
        net.body = 3
    with pytest.raises(TypeError, match=r"select must be a str \(a regular expression\) \(got 5\)"):
        net.collect_params(select=5)


def test_shared_parameters():
    a = nn.Dense(3, in_units=2)
    a.initialize()
    b = nn.Dense(3, params=a.collect_params())        # Gluon's sharing
    assert b.weight is a.weight and b.bias is a.bias
    np.testing.assert_array_equal(b(nd.ones((1, 2))).asnumpy(), a(nd.ones((1, 2))).asnumpy())
    with pytest.raises(ValueError, match=r"Parameter 'dense\d+_weight' exists with shape "
                                         r"\(3, 2\), which does not match shape \(4, 0\)"):
        nn.Dense(4, params=a.collect_params())
    # an attribute the shared parameter left unset is filled in, as Gluon's get does;
    # one it set must agree
    nn.Dense(3, params=a.collect_params(), weight_initializer="ones")
    assert a.weight.init == init.One()
    with pytest.raises(ValueError, match=r"Parameter 'dense\d+_weight' exists with "
                                         r"init=One\(\), not 'zeros'"):
        nn.Dense(3, params=a.collect_params(), weight_initializer="zeros")
    # a layer asking for deferred initialisation takes a parameter made without it
    params = mx.gluon.ParameterDict("own_")
    w = params.get("weight", shape=(4, 2))
    assert nn.Dense(4, in_units=2, params=params).weight is w


def test_collect_params_select_bad_regex():
    with pytest.raises(ValueError, match=r"select must be a regular expression \(got '\('"):
        nn.Dense(2).collect_params("(")


# -- Parameter --------------------------------------------------------------------------

def test_parameter_lifecycle_and_errors():
    p = mx.gluon.Parameter("w", shape=(2, 3), lr_mult=0.5, wd_mult=0.0)
    assert (p.lr_mult, p.wd_mult, p.grad_req) == (0.5, 0.0, "write")
    with pytest.raises(RuntimeError, match="Parameter 'w' has not been initialised"):
        p.data()
    p.initialize(init.One())
    np.testing.assert_array_equal(p.data().asnumpy(), np.ones((2, 3)))
    p.initialize(init.Zero())                # already initialised: left alone
    assert p.data().asnumpy().sum() == 6
    p.initialize(init.Zero(), force_reinit=True)
    assert p.data().asnumpy().sum() == 0
    p.set_data(np.full((2, 3), 4.0))
    np.testing.assert_array_equal(p.data().asnumpy(), np.full((2, 3), 4.0))
    with pytest.raises(ValueError, match=r"Parameter 'w': set_data needs shape \(2, 3\) "
                                         r"\(got \(3, 2\)\)"):
        p.set_data(np.zeros((3, 2)))
    with pytest.raises(ValueError, match=r"grad_req must be one of .* \(got 'sum'\)"):
        p.grad_req = "sum"
    q = mx.gluon.Parameter("q", shape=(0, 2), allow_deferred_init=True)
    q.initialize()
    with pytest.raises(mx.gluon.DeferredInitializationError, match=r"Parameter 'q' .* shape "
                                                             r"\(0, 2\) is unknown"):
        q.data()
    with pytest.raises(ValueError, match=r"Parameter 'r': cannot initialise with unknown "
                                         r"shape \(0, 2\)"):
        mx.gluon.Parameter("r", shape=(0, 2)).initialize()
    with pytest.raises(ValueError, match=r"Parameter 's': shape must hold integers >= 0"):
        mx.gluon.Parameter("s", shape=(2, -1))


def test_set_data_between_forward_and_backward_keeps_the_recorded_values():
    # spectral normalisation's pattern: the forward reads u, then sets u's next value
    # under pause() before backward runs
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((3, 4)).astype(np.float32)
    u0 = rng.standard_normal((1, 3)).astype(np.float32)
    u1 = rng.standard_normal((1, 3)).astype(np.float32)
    w = mx.gluon.Parameter("w", shape=(3, 4))
    u = mx.gluon.Parameter("u", shape=(1, 3))
    w.initialize()
    u.initialize()
    w.set_data(w0)
    u.set_data(u0)
    u_array = u.data()
    with autograd.record():
        y = (nd.dot(u.data(), w.data()) ** 2).sum()
        with autograd.pause():
            u.set_data(u1)
    y.backward()
    v = u0 @ w0
    np.testing.assert_allclose(w.grad().asnumpy(), u0.T @ (2 * v), rtol=1e-5)
    np.testing.assert_allclose(u.grad().asnumpy(), (2 * v) @ w0.T, rtol=1e-5)
    assert u.data() is u_array
    np.testing.assert_array_equal(u_array.asnumpy(), u1)


def test_set_data_writes_through_numpy_views():
    p = mx.gluon.Parameter("p", shape=(2, 2))
    p.initialize(init.Zero())
    view = np.asarray(p.data())
    p.set_data(np.full((2, 2), 3.0))
    np.testing.assert_array_equal(view, np.full((2, 2), 3.0))
    np.testing.assert_array_equal(p.data().asnumpy(), np.full((2, 2), 3.0))
    del view


def test_parameter_grad_req_add_null_and_zero_grad():
    p = mx.gluon.Parameter("p", shape=(3,), grad_req="add")
    p.initialize(init.One())
    for _ in range(2):
        with autograd.record():
            y = (p.data() * nd.array([1.0, 2.0, 3.0])).sum()
        y.backward()
    np.testing.assert_array_equal(p.grad().asnumpy(), [2.0, 4.0, 6.0])
    p.zero_grad()
    np.testing.assert_array_equal(p.grad().asnumpy(), [0.0, 0.0, 0.0])
    p.grad_req = "null"
    with pytest.raises(RuntimeError, match="Parameter 'p' has no gradient because its "
                                           "grad_req is 'null'"):
        p.grad()
    net = nn.Dense(2, in_units=2)
    net.collect_params().setattr("grad_req", "null")
    net.initialize()
    with autograd.record():
        y = net(nd.ones((1, 2))).sum()
    assert net.weight.grad_req == "null"


def test_own_initializer_wins_over_the_global_one():
    layer = nn.Dense(2, in_units=3, weight_initializer=init.Constant(0.5))
    layer.initialize(init.One())
    assert np.all(layer.weight.data().asnumpy() == 0.5)
    assert np.all(layer.bias.data().asnumpy() == 0.0)        # bias_initializer='zeros'
    plain = nn.Dense(2, in_units=3, bias_initializer=None)
    plain.initialize(init.One())       # the global init's name rule: a bias gets zeros
    assert np.all(plain.weight.data().asnumpy() == 1.0)
    assert np.all(plain.bias.data().asnumpy() == 0.0)


# -- Dropout, Activation, Flatten -------------------------------------------------------

def test_dropout_only_in_training():
    rt_random.seed(3)
    layer = nn.Dropout(0.25)
    x = nd.ones((200, 50))
    np.testing.assert_array_equal(layer(x).asnumpy(), np.ones((200, 50)))
    with autograd.record(train_mode=False):
        np.testing.assert_array_equal(layer(x).asnumpy(), np.ones((200, 50)))
    with autograd.record():
        y = layer(x).asnumpy()
    kept = y != 0
    assert abs(kept.mean() - 0.75) < 0.02
    np.testing.assert_allclose(y[kept], 1 / 0.75, rtol=1e-6)
    with autograd.record():
        y = nn.Dropout(0.5, axes=(1,))(x).asnumpy()
    assert np.all((y == 0).all(axis=1) | (y != 0).all(axis=1))     # one mask value a row
    with pytest.raises(ValueError, match=r"Dropout: rate must be a number in \[0, 1\) "
                                         r"\(got 1.0\)"):
        nn.Dropout(1.0)


def test_activation_and_flatten():
    x = rand((2, 3, 2), 4)
    for act, ref in ACTS.items():
        if act is not None:
            np.testing.assert_allclose(nn.Activation(act)(nd.array(x, dtype="float64"))
                                       .asnumpy(), ref(x), rtol=1e-12)
    with pytest.raises(ValueError, match=r"Activation: activation must be one of .* "
                                         r"\(got 'swish'\)"):
        nn.Activation("swish")
    assert nn.Flatten()(nd.array(x)).shape == (2, 6)


# -- save / load ------------------------------------------------------------------------

def _mlp(**kw):
    net = nn.Sequential(**kw)
    net.add(nn.Dense(4, activation="relu"), nn.Dense(2))
    return net


def test_save_load_round_trip(tmp_path):
    f = str(tmp_path / "net.params")
    net = _mlp()
    net.initialize(init.Xavier())
    x = nd.array(rand((3, 5), 5))
    y = net(x).asnumpy()
    net.save_parameters(f)
    assert sorted(nd.load(f)) == ["0.bias", "0.weight", "1.bias", "1.weight"]
    fresh = _mlp()                        # other names, shapes unknown: taken from the file
    fresh.load_parameters(f)
    np.testing.assert_array_equal(fresh(x).asnumpy(), y)
    emb = nn.Embedding(5, 2, sparse_grad=True)
    emb.initialize()
    emb.save_parameters(f)
    other = nn.Embedding(5, 2, sparse_grad=True)
    other.load_parameters(f)
    np.testing.assert_array_equal(other.weight.data().asnumpy(), emb.weight.data().asnumpy())
    assert other.weight.grad().stype == "row_sparse"


def test_load_errors_name_the_parameter(tmp_path):
    f = str(tmp_path / "net.params")
    net = _mlp()
    net.initialize()
    net(nd.ones((1, 5)))
    net.save_parameters(f)
    small = nn.Sequential()
    small.add(nn.Dense(4, activation="relu"))
    with pytest.raises(ValueError, match=r"parameter '1.weight' in file .* is not present in "
                                         r"this block"):
        small.load_parameters(f)
    small.load_parameters(f, ignore_extra=True)
    big = _mlp()
    big.add(nn.Dense(3))
    with pytest.raises(ValueError, match=r"parameter '2.weight' is missing in file"):
        big.load_parameters(f)
    big.load_parameters(f, allow_missing=True)
    with pytest.raises(RuntimeError, match=r"Parameter '.*dense\d+_weight' has not been "
                                           r"initialised: call .initialize\(\)"):
        big[2].weight.data()
    wrong = nn.Sequential()
    wrong.add(nn.Dense(4, in_units=5), nn.Dense(3, in_units=4))
    wrong.initialize(init.Zero())
    with pytest.raises(ValueError, match=r"parameter '1.weight' \(.*\) has shape \(3, 4\) "
                                         r"but file .* holds shape \(2, 4\)"):
        wrong.load_parameters(f)
    # nothing changed before the error: the first layer still holds zeros
    assert not wrong[0].weight.data().asnumpy().any()
    nd.save(f, [nd.ones((2,))])
    with pytest.raises(ValueError, match="holds a list of arrays"):
        net.load_parameters(f)


def test_save_needs_initialised_parameters(tmp_path):
    with pytest.raises(RuntimeError, match="has not been initialised"):
        _mlp().save_parameters(str(tmp_path / "x"))


# -- initialisers -----------------------------------------------------------------------

def _draw(initializer, shape, name="w_weight"):
    arr = nd.zeros(shape, dtype="float64")
    initializer(name, arr)
    return arr.asnumpy()


def test_initializer_statistics():
    rt_random.seed(0)
    u = _draw(init.Uniform(0.5), (400, 300))
    assert u.min() >= -0.5 and u.max() <= 0.5
    assert abs(u.mean()) < 0.005 and abs(u.var() - 0.25 / 3) < 0.002
    assert abs(_draw(init.Uniform(), (10,)).max()) <= 0.07
    n = _draw(init.Normal(2.0), (400, 300))
    assert abs(n.mean()) < 0.03 and abs(n.std() - 2.0) < 0.02
    x = _draw(init.Xavier(), (300, 200))
    bound = np.sqrt(3.0 / ((300 + 200) / 2))
    assert x.min() >= -bound and x.max() <= bound and abs(x.var() - bound ** 2 / 3) < 1e-4
    g = _draw(init.Xavier("gaussian", "in", 2), (300, 100, 2))
    assert abs(g.std() - np.sqrt(2.0 / 200)) < 0.002
    assert np.all(_draw(init.Constant(1.5), (3,)) == 1.5)
    assert np.all(_draw(init.One(), (3,)) == 1) and np.all(_draw(init.Zero(), (3,)) == 0)
    assert np.all(_draw(init.Normal(), (3,), name="x_bias") == 0)     # name rule
    assert np.all(_draw(init.Normal(), (3,), name="bn_gamma") == 1)
    assert init.create("xavier") == init.Xavier() and isinstance(init.create("ones"), init.One)


def test_custom_initializer_as_mxnet():
    class Arange(init.Initializer):
        def _init_weight(self, name, arr):        # MXNet's hook: fill arr in place
            arr[:] = np.arange(arr.size, dtype=np.float64).reshape(arr.shape)

    layer = nn.Dense(2, in_units=3)
    layer.initialize(Arange())
    np.testing.assert_array_equal(layer.weight.data().asnumpy(), np.arange(6.0).reshape(2, 3))
    assert not layer.bias.data().asnumpy().any()
    with pytest.raises(NotImplementedError, match=r"Initializer: no rule to initialise 'w'"):
        mx.gluon.Parameter("w", shape=(2,)).initialize(init.Initializer())


def test_initializer_reproducible_with_seed():
    def make():
        net = _mlp()
        net.initialize(init.Xavier())
        net(nd.ones((1, 3)))
        return [p.data().asnumpy() for p in net.collect_params().values()]
    rt_random.seed(42)
    a = make()
    rt_random.seed(42)
    b = make()
    c = make()
    for x, y, z in zip(a, b, c):
        np.testing.assert_array_equal(x, y)
    assert any((x != z).any() for x, z in zip(a, c))


def test_initializer_bad_arguments():
    with pytest.raises(ValueError, match=r"Uniform: scale must be a finite number >= 0 "
                                         r"\(got -1\)"):
        init.Uniform(-1)
    with pytest.raises(ValueError, match=r"Xavier: rnd_type must be 'uniform' or 'gaussian' "
                                         r"\(got 'cauchy'\)"):
        init.Xavier("cauchy")
    with pytest.raises(ValueError, match=r"Xavier: factor_type must be"):
        init.Xavier(factor_type="sum")
    with pytest.raises(ValueError, match=r"Xavier: the array must have at least 2 "
                                         r"dimensions to initialise 'b_weight'"):
        _draw(init.Xavier(), (3,), "b_weight")
    with pytest.raises(ValueError, match=r"init must be an Initializer or one of"):
        init.create("glorot")


# -- a training step --------------------------------------------------------------------

def test_training_step_returns_pool_bytes():
    def step():
        rt_random.seed(1)
        net = nn.Sequential()
        net.add(nn.Embedding(20, 4, sparse_grad=True), nn.Flatten(),
                nn.Dense(8, activation="relu"), nn.Dropout(0.2), nn.Dense(3))
        net.initialize(init.Xavier())
        loss_fn = SoftmaxCrossEntropyLoss()
        x = nd.array(np.random.default_rng(0).integers(0, 20, (16, 3)))
        label = nd.array(np.arange(16) % 3)
        losses = []
        for _ in range(3):
            with autograd.record():
                loss = loss_fn(net(x), label)
            loss.backward()
            losses.append(float(loss.mean().asscalar()))
            for p in net.collect_params().values():
                w, g = p.data(), p.grad()
                if g.stype == "row_sparse":
                    g = g.tostype("default")
                w[:] = w - (0.5 / 16) * g
        assert net[0].weight.grad().stype == "row_sparse"
        assert losses[-1] < losses[0]

    pool = allocator.pools()[next(iter(allocator.pools()))]
    step()                                       # warm caches
    before = pool.memory_stats()["allocated_bytes.all.current"]
    step()
    assert pool.memory_stats()["allocated_bytes.all.current"] == before




def test_constant_parameter_never_trains():
    c = mx.gluon.Constant("c", [[1.0, 2.0], [3.0, 4.0]])
    assert c.grad_req == "null" and c.shape == (2, 2) and np.dtype(c.dtype) == np.float32
    c.initialize(default_init=mx.init.Zero())        # as a block's initialize() passes it
    np.testing.assert_array_equal(c.data().asnumpy(), [[1, 2], [3, 4]])
    c.grad_req = "write"
    assert c.grad_req == "null"
    # nd.array's rule, as MXNet's: a NumPy array becomes float32, an NDArray keeps its dtype
    assert np.dtype(mx.gluon.Constant("f", np.array([1, 2], np.int32)).dtype) == np.float32
    ints = mx.gluon.Constant("i", nd.array([1, 2], dtype="int32"))
    assert np.dtype(ints.dtype) == np.int32


def test_scope_of_a_block_with_empty_prefix_is_its_parents():
    # Gluon: a container made with prefix='' names nothing itself, so layers made in its
    # name_scope() count in the enclosing scope (the model zoo's AlexNet relies on it).
    from runtime.gluon import nn
    outer = nn.Sequential(prefix="net_")
    with outer.name_scope():
        inner = nn.Sequential(prefix="")
        with inner.name_scope():
            inner.add(nn.Dense(2, in_units=2), nn.Dense(2, in_units=2))
        outer.add(inner)
        outer.add(nn.Dense(2, in_units=2))
    assert sorted(outer.collect_params().keys()) == [
        f"net_dense{i}_{p}" for i in range(3) for p in ("bias", "weight")]


free_failing_tests(globals())


class _TwoDense(mx.gluon.Block):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.first = nn.Dense(3, in_units=2)
            self.second = nn.Dense(3, in_units=3)

    def forward(self, x):
        return self.second(self.first(x))


def test_params_of_another_block_are_shared_by_its_children_too():
    # Gluon 1.x: Net(params=other.collect_params()) names the children's parameters after
    # the shared dict's prefix, so every layer below reuses other's parameters
    a = _TwoDense(prefix="a_")
    b = _TwoDense(prefix="b_", params=a.collect_params())
    assert b.first.weight is a.first.weight and b.second.bias is a.second.bias
    assert b.first.prefix == "b_dense0_"                 # block names keep their own
    assert sorted(b.collect_params()) == sorted(a.collect_params())
    a.initialize()
    x = nd.array([[1.0, 2.0]])
    np.testing.assert_array_equal(b(x).asnumpy(), a(x).asnumpy())
    unshared = _TwoDense(prefix="c_")
    assert unshared.first.weight is not a.first.weight
    assert sorted(unshared.collect_params()) == ["c_dense0_bias", "c_dense0_weight",
                                                  "c_dense1_bias", "c_dense1_weight"]


def test_parameter_dict_text_is_gluons():
    params = mx.gluon.ParameterDict("net_")
    params.get("w", shape=(2, 3))
    lines = str(params).splitlines()
    assert lines[0] == "net_ (" and lines[-1] == ")"
    assert "net_w" in lines[1] and "(2, 3)" in lines[1]
    assert str(mx.gluon.ParameterDict()).splitlines()[0] == "("
    with pytest.raises(TypeError, match="ParameterDict: shared must be a ParameterDict"):
        mx.gluon.ParameterDict("x_", shared={})


def test_get_constant():
    params = mx.gluon.ParameterDict("net_")
    const = params.get_constant("c", [[1, 2], [3, 4]])
    assert isinstance(const, mx.gluon.Constant) and const.name == "net_c"
    assert params.get_constant("c") is const
    assert params.get_constant("c", np.array([[1, 2], [3, 4]])) is const
    with pytest.raises(ValueError, match="constant 'net_c' exists with another value"):
        params.get_constant("c", [[1, 2], [3, 5]])
    with pytest.raises(KeyError, match="no constant named 'net_d'"):
        params.get_constant("d")
    params.get("w", shape=(2,))
    with pytest.raises(ValueError, match="parameter 'net_w' exists and is not a Constant"):
        params.get_constant("w", [1, 2])
    params.initialize()
    np.testing.assert_array_equal(const.data().asnumpy(), [[1, 2], [3, 4]])


def test_save_params_and_load_params_are_the_deprecated_forms(tmp_path):
    a = _TwoDense(prefix="a_")
    a.initialize()
    fname = str(tmp_path / "a.params")
    with pytest.warns(DeprecationWarning, match="save_params is deprecated"):
        a.save_params(fname)
    # the file holds full names without the block's prefix (Gluon 1.x's format)
    assert sorted(nd.load(fname)) == ["dense0_bias", "dense0_weight", "dense1_bias",
                                      "dense1_weight"]
    b = _TwoDense(prefix="b_")
    with pytest.warns(DeprecationWarning, match="load_params is deprecated"):
        b.load_params(fname)
    x = nd.array([[0.5, -1.0]])
    np.testing.assert_array_equal(b(x).asnumpy(), a(x).asnumpy())


def test_hybrid_block_takes_a_row_sparse_parameter():
    # Gluon 1.x refuses sparse parameters in a hybrid forward; ndrt runs them
    # (docs/differences.md)
    params = mx.gluon.ParameterDict("net_")
    params.get("weight", shape=(2, 3), stype="row_sparse")
    params.get("bias", shape=(2,))
    layer = nn.Dense(2, in_units=3, params=params)
    layer.initialize(init.One())
    layer.hybridize()
    assert layer.weight.stype == "row_sparse"
    x = nd.array([[1.0, 2.0, 3.0]])
    with pytest.warns(Warning, match="dense temporaries"):
        got = layer(x)
    np.testing.assert_array_equal(got.asnumpy(), [[6.0, 6.0]])


def test_symbols_made_in_a_name_scope_take_the_block_prefix():
    net = nn.Dense(2, prefix="net0_")
    with net.name_scope():
        inner = mx.sym.FullyConnected(mx.sym.Variable("x"), num_hidden=2)
    outer = mx.sym.FullyConnected(mx.sym.Variable("x"), num_hidden=2, name="plain")
    assert inner.name == "net0_fullyconnected0" and outer.name == "plain"


def test_block_scope_create_gives_gluon_prefixes_and_parameter_dicts():
    prefix, params = _BlockScope.create("top_", None, "dense")
    assert prefix == "top_" and params.prefix == "top_" and len(params) == 0
    parent = nn.HybridSequential(prefix="seq_")
    with parent.name_scope():
        prefix, params = _BlockScope.create(None, None, "dense")
        assert prefix == "seq_dense0_" and params.prefix == "seq_dense0_"
        assert _BlockScope.create(None, None, "dense")[0] == "seq_dense1_"
    shared = parent.collect_params()
    prefix, params = _BlockScope.create("other_", shared, "dense")
    assert prefix == "other_" and params.prefix == shared.prefix


@pytest.mark.parametrize("hybridize", [False, True])
def test_deferred_init_under_numpy_shape_semantics(hybridize):
    # under mx.np_shape a 0 is a real size: the unknown in_units/in_channels still
    # follow from the input (Gluon writes them -1 there), and the layers compute
    # x @ W.T + b and the convolution of the NumPy reference
    x = np.linspace(-1.0, 1.0, 2 * 7).reshape(2, 7).astype("float32")
    img = np.linspace(-1.0, 1.0, 2 * 5 * 5).reshape(1, 2, 5, 5).astype("float32")
    with mx.np_shape(True):
        net = nn.HybridSequential()
        net.add(nn.Dense(4), nn.Dense(3))
        conv = nn.Conv2D(2, 3)
        for block in (net, conv):
            block.initialize()
            if hybridize:
                block.hybridize()
        out = net(nd.array(x)).asnumpy()
        got = conv(nd.array(img)).asnumpy()
    w0, b0 = net[0].weight.data().asnumpy(), net[0].bias.data().asnumpy()
    w1, b1 = net[1].weight.data().asnumpy(), net[1].bias.data().asnumpy()
    assert w0.shape == (4, 7) and w1.shape == (3, 4)
    np.testing.assert_allclose(out, (x @ w0.T + b0) @ w1.T + b1, rtol=1e-5, atol=1e-6)
    k, kb = conv.weight.data().asnumpy(), conv.bias.data().asnumpy()
    assert k.shape == (2, 2, 3, 3)
    windows = np.lib.stride_tricks.sliding_window_view(img[0], (3, 3), axis=(1, 2))
    want = np.einsum("cijkl,ockl->oij", windows, k) + kb[:, None, None]
    np.testing.assert_allclose(got[0], want, rtol=1e-5, atol=1e-5)
