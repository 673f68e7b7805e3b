"""runtime.initializer: MXNet's InitDesc and the JSON strings of a variable's __init__."""

import numpy as np
import pytest

import runtime as mx
from runtime import _rng
from runtime import initializer as init
from runtime import nd


@pytest.mark.parametrize("spec, want", [
    ('["constant", {"value": 2.5}]', init.Constant(2.5)),
    ('["Constant", {"value": 0.25}]', init.Constant(0.25)),
    ('["zero", {}]', init.Zero()),
    ('["one", {}]', init.One()),
    ('["uniform", {"scale": 0.3}]', init.Uniform(0.3)),
    ('["normal", {"sigma": 0.2}]', init.Normal(0.2)),
    ('["xavier", {"rnd_type": "gaussian", "factor_type": "in", "magnitude": 2}]',
     init.Xavier("gaussian", "in", 2)),
])
def test_create_reads_mxnets_init_strings(spec, want):
    assert init.create(spec) == want


def test_a_variables_init_string_round_trips():
    for given in (init.Constant(3.0), init.Zero(), init.Xavier(magnitude=1.5),
                  init.Normal(0.5)):
        var = mx.sym.Variable("v", init=given)
        assert init.create(var.attr_dict()["v"]["__init__"]) == given


@pytest.mark.parametrize("spec", ['["nosuch", {}]', '["constant"]', '["constant", {"x": 1}]',
                                  '[not json'])
def test_create_refuses_a_bad_init_string(spec):
    with pytest.raises(ValueError, match=r"init must be an initialiser's name or a JSON"):
        init.create(spec)


def test_init_desc_init_attribute_wins_over_the_caller_and_the_name_rules():
    arr = mx.nd.zeros((2, 3))
    # "bias" would be zeros by the name rule; the attribute names Constant(4)
    init.Uniform(1.0)(init.InitDesc("fc_bias", {"__init__": '["constant", {"value": 4}]'}),
                      arr)
    np.testing.assert_array_equal(arr.asnumpy(), np.full((2, 3), 4, np.float32))
    # without the attribute an InitDesc is its name: the name rule applies
    init.Uniform(1.0)(init.InitDesc("fc_bias", {}), arr)
    np.testing.assert_array_equal(arr.asnumpy(), np.zeros((2, 3), np.float32))
    desc = init.InitDesc("w", None, init.One())
    assert desc == "w" and desc.attrs == {} and desc.global_init == init.One()


def test_lstm_bias_sets_the_forget_gate_quarter_only():
    arr = mx.nd.ones((8,))
    init.LSTMBias(2.5)("cell_i2h_bias", arr, own=True)
    np.testing.assert_array_equal(arr.asnumpy(), [0, 0, 2.5, 2.5, 0, 0, 0, 0])
    # through a variable's __init__ string, as a Module initialises it
    var = mx.sym.Variable("b", init=init.LSTMBias(forget_bias=3.0))
    again = init.create(var.attr("__init__"))
    assert again == init.LSTMBias(3.0)
    cell = mx.gluon.rnn.LSTMCell(2, i2h_bias_initializer=init.LSTMBias(1.5), input_size=3)
    cell.initialize()
    np.testing.assert_array_equal(cell.i2h_bias.data().asnumpy(), [0, 0, 1.5, 1.5] + [0] * 4)
    with pytest.raises(ValueError, match=r"LSTMBias: 'w' must be 1-D with a multiple of 4 "
                       r"values, one quarter per gate \(got shape \(6,\)\)"):
        init.LSTMBias()("w", mx.nd.zeros((6,)), own=True)


@pytest.mark.parametrize("make, draw", [
    (lambda: init.Uniform(0.3), lambda g, shape: g.uniform(-0.3, 0.3, shape)),
    (lambda: init.Normal(0.2), lambda g, shape: g.normal(0.0, 0.2, shape)),
    (lambda: init.Xavier("uniform", "in", 2),
     lambda g, shape: g.uniform(-np.sqrt(2 / 7), np.sqrt(2 / 7), shape)),
    (lambda: init.Xavier("gaussian", "out", 3),
     lambda g, shape: g.normal(0.0, np.sqrt(3 / 5), shape)),
])
@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
def test_random_initialisers_drawn_in_chunks_equal_one_float64_draw(monkeypatch, make, draw,
                                                                    dtype):
    # chunks of 4 values across a 5 x 7 array: the chunk edges fall inside rows
    monkeypatch.setattr(init, "_CHUNK", 4)
    arr = mx.nd.zeros((5, 7), dtype=dtype)
    mx.random.seed(11)
    make()("weight", arr)
    mx.random.seed(11)
    want = draw(_rng.generator(), (5, 7)).astype(dtype)     # one draw, rounded once
    np.testing.assert_array_equal(arr.asnumpy(), want)


@pytest.mark.parametrize("init", [mx.init.Xavier(factor_type="in", magnitude=2.34),
                                  mx.init.Uniform(0.5), mx.init.Constant(3.0)])
def test_a_row_sparse_array_gets_every_row_as_a_dense_one_would(init):
    # a Module's row_sparse weight (SparseEmbedding) is initialised in place, as MXNet's
    dense, sparse = nd.zeros((6, 4)), nd.zeros((6, 4), stype="row_sparse")
    mx.random.seed(5)
    init("embed_weight", dense)
    mx.random.seed(5)
    init("embed_weight", sparse)
    assert sparse.stype == "row_sparse"
    np.testing.assert_array_equal(sparse.indices.asnumpy(), np.arange(6))
    np.testing.assert_array_equal(sparse.asnumpy(), dense.asnumpy())
    assert np.count_nonzero(dense.asnumpy()) == 24
    bias = nd.ones((6, 4)).tostype("row_sparse")
    init("embed_bias", bias)
    np.testing.assert_array_equal(bias.asnumpy(), np.zeros((6, 4)))


def test_a_csr_array_is_refused():
    with pytest.raises(TypeError, match=r"Uniform: cannot initialise 'w_weight': arr must be "
                                        r"a dense or row_sparse NDArray \(got csr\)"):
        mx.init.Uniform()("w_weight", nd.zeros((2, 2), stype="csr"))


# -- MSRAPrelu, Orthogonal, Bilinear, Mixed, Load, register -------------------------------------

def test_msraprelu_draws_normal_values_with_he_deviation():
    arr = nd.zeros((200, 300))
    _rng.seed(4)
    init.MSRAPrelu(factor_type="in", slope=0.5)("weight", arr)
    # He et al.: deviation sqrt(2 / ((1 + slope^2) * fan_in))
    want = np.sqrt(2.0 / (1.25 * 300))
    got = arr.asnumpy()
    assert abs(got.mean()) < 0.05 * want
    assert abs(got.std() / want - 1) < 0.02
    assert init.create('["msraprelu", {"factor_type": "in", "slope": 0.5}]') == \
        init.MSRAPrelu("in", 0.5)
    assert init.create("MSRAPrelu") == init.MSRAPrelu()


@pytest.mark.parametrize("shape", [(4, 6), (6, 4), (3, 2, 2, 2), (5, 5)])
@pytest.mark.parametrize("rand_type", ["uniform", "normal"])
def test_orthogonal_rows_or_columns_are_orthonormal_times_scale(shape, rand_type):
    arr = nd.zeros(shape, dtype="float64")
    init.Orthogonal(scale=2.0, rand_type=rand_type)("weight", arr)
    m = arr.asnumpy().reshape(shape[0], -1)
    gram = m @ m.T if m.shape[0] <= m.shape[1] else m.T @ m
    np.testing.assert_allclose(gram, 4.0 * np.eye(gram.shape[0]), atol=1e-10)


def test_bilinear_is_the_upsampling_kernel():
    arr = nd.zeros((2, 3, 4, 4))
    init.Bilinear()("weight", arr)
    # f = 2, c = 0.75: the 1-D factors are 1 - |x/2 - 0.75| = 0.25, 0.75, 0.75, 0.25
    k = np.array([0.25, 0.75, 0.75, 0.25])
    want = np.broadcast_to(np.outer(k, k), (2, 3, 4, 4))
    np.testing.assert_allclose(arr.asnumpy(), want, rtol=1e-7)
    odd = nd.zeros((1, 1, 3, 3))
    init.Bilinear()("weight", odd)      # f = 2, c = 0.75 again: 0.25, 0.75, 0.75
    np.testing.assert_allclose(odd.asnumpy()[0, 0],
                               np.outer([0.25, 0.75, 0.75], [0.25, 0.75, 0.75]))
    with pytest.raises(ValueError, match=r"^Bilinear: the array must be 4-D"):
        init.Bilinear()("weight", nd.zeros((3, 3)))


def test_mixed_takes_the_first_matching_pattern():
    mixed = init.Mixed(["bias", ".*"], [init.Constant(0.5), init.One()])
    b, w = nd.zeros(3), nd.zeros((2, 2))
    mixed("bias_0", b)
    mixed("dense0_weight", w)
    np.testing.assert_array_equal(b.asnumpy(), 0.5)
    np.testing.assert_array_equal(w.asnumpy(), 1.0)
    with pytest.raises(ValueError, match=r"^Mixed: parameter 'w' must match one of the "
                                         r"patterns \['bias'\]"):
        init.Mixed(["bias"], [init.Zero()])("w", nd.zeros(2))
    # a block's global initialiser: Dense's bias keeps its own 'zeros', as in Gluon
    net = mx.gluon.nn.Dense(2, in_units=3)
    net.initialize(init.Mixed([".*bias", ".*"], [init.Constant(7.0), init.Constant(2.0)]))
    np.testing.assert_array_equal(net.bias.data().asnumpy(), 0.0)
    np.testing.assert_array_equal(net.weight.data().asnumpy(), 2.0)


def test_load_fills_saved_arrays_and_the_default_elsewhere(tmp_path):
    saved = {"arg:fc_weight": nd.array(np.arange(6.0).reshape(2, 3)), "aux:fc_mean": nd.ones(2)}
    fname = str(tmp_path / "p.params")
    nd.save(fname, saved, format="mxnet")
    loader = init.Load(fname, default_init=init.Constant(3.0))
    w, m, b = nd.zeros((2, 3)), nd.zeros(2), nd.zeros(2)
    loader("fc_weight", w)
    loader("fc_mean", m)
    loader("fc_scale", b)
    np.testing.assert_array_equal(w.asnumpy(), np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(m.asnumpy(), 1.0)
    np.testing.assert_array_equal(b.asnumpy(), 3.0)
    # the default keeps a global initialiser's name rule (MXNet's too): a bias gets zeros
    b[:] = 5
    loader("fc_bias", b)
    np.testing.assert_array_equal(b.asnumpy(), 0.0)
    with pytest.raises(ValueError, match=r"^Load: the saved 'fc_weight' must have the "
                                         r"parameter's shape \(3, 2\) \(got \(2, 3\)\)"):
        loader("fc_weight", nd.zeros((3, 2)))
    with pytest.raises(ValueError, match=r"^Load: cannot initialise 'other'"):
        init.Load(saved)("other", nd.zeros(2))


def test_register_makes_a_custom_initializer_known_by_name():
    @init.register
    class HalfOnes(init.Initializer):
        def _init_weight(self, name, arr):
            arr[:] = 0.5

    arr = nd.zeros(3)
    init.create("halfones")("weight", arr)
    np.testing.assert_array_equal(arr.asnumpy(), 0.5)
    assert isinstance(init.create('["HalfOnes", {}]'), HalfOnes)
    with pytest.raises(TypeError, match=r"^register: klass must be a subclass of Initializer"):
        init.register(int)


def test_dumps_gives_the_json_that_create_reads():
    for given in (init.Xavier("gaussian", "out", 2.0), init.MSRAPrelu(slope=0.1),
                  init.Orthogonal(0.5, "normal"), init.Bilinear(), init.Constant(-1.5)):
        assert init.create(given.dumps()) == given
    assert init.Uniform(0.2).dumps() == '["uniform", {"scale": 0.2}]'


def test_fused_rnn_fills_each_gate_by_its_rule_and_round_trips_as_json():
    # 1 layer, bidirectional GRU, 3 hidden, 4 inputs: 2*3*3*(4+3+2) = 162 values, the
    # biases the last 36 (MXNet's packing: every weight, then every bias)
    fused = init.FusedRNN(init.Constant(0.5), 3, 1, "gru", bidirectional=True,
                          forget_bias=2.0)
    again = init.create(mx.sym.Variable("p", init=fused).attr("__init__"))
    assert again._kwargs() == fused._kwargs() and again._init == init.Constant(0.5)
    arr = nd.zeros((162,))
    again(init.InitDesc("p_parameters", {}), arr)
    values = arr.asnumpy()
    np.testing.assert_array_equal(values[:126], 0.5)        # weights: Constant(0.5)
    np.testing.assert_array_equal(values[126:], 0.0)        # biases: the name rule
    # lstm: the forget gates' biases (the second of four gate blocks of each bias)
    # take forget_bias; the rest follows the caller's global initialiser
    lstm = init.FusedRNN(None, 2, 1, "lstm", forget_bias=3.0)
    arr = nd.zeros((4 * 2 * (1 + 2 + 2),))                   # 1 input
    lstm(init.InitDesc("p", {}, global_init=init.One()), arr)
    biases = arr.asnumpy()[24:].reshape(2, 4, 2)             # i2h, h2h x gates x hidden
    np.testing.assert_array_equal(biases[:, 1], 3.0)
    np.testing.assert_array_equal(biases[:, [0, 2, 3]], 0.0)
    np.testing.assert_array_equal(arr.asnumpy()[:24], 1.0)
    with pytest.raises(ValueError, match="FusedRNN: 7 parameters fit no input width"):
        lstm(init.InitDesc("p", {}, global_init=init.One()), nd.zeros((7,)))
    with pytest.raises(ValueError, match="needs init or a global initialiser"):
        lstm("p", nd.zeros((40,)))
