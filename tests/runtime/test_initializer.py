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
