"""runtime.symbol: building, naming, listing, attributes and inference, against MXNet
1.9.1's documented behaviour (its outputs are quoted where they fix a name or an order)
and NumPy for values."""

import json

import numpy as np
import pytest

import runtime as mx
from runtime.test_utils import simple_forward


def test_sym_is_symbol_module():
    import runtime.symbol
    assert mx.sym is runtime.symbol
    assert mx.sym.var is mx.sym.Variable


def test_automatic_names_and_auto_variables():
    a = mx.sym.Variable("a")
    with mx.name.NameManager():
        fc = mx.sym.FullyConnected(a, num_hidden=4)
        fc2 = mx.sym.FullyConnected(fc, num_hidden=2)
        assert (fc.name, fc2.name) == ("fullyconnected0", "fullyconnected1")
        assert fc.list_arguments() == ["a", "fullyconnected0_weight", "fullyconnected0_bias"]
        nb = mx.sym.FullyConnected(a, num_hidden=4, no_bias=True)
        assert nb.list_arguments() == ["a", "fullyconnected2_weight"]
        assert mx.sym.LeakyReLU(a, act_type="prelu").list_arguments() == \
            ["a", "leakyrelu0_gamma"]
        assert mx.sym.LeakyReLU(a).list_arguments() == ["a"]
        assert mx.sym.SoftmaxOutput(a).list_arguments() == ["a", "softmaxoutput0_label"]


def test_prefix_and_attr_scope():
    a = mx.sym.Variable("a")
    with mx.name.Prefix("pre_"):
        c = mx.sym.Convolution(a, kernel=(3, 3), num_filter=2)
    assert c.name == "pre_convolution0"
    assert c.list_arguments() == ["a", "pre_convolution0_weight", "pre_convolution0_bias"]
    with mx.AttrScope(ctx_group="g1"):
        with mx.AttrScope(mood="x"):
            d = mx.sym.Activation(a, act_type="relu", name="act")
    # MXNet: {'act_type': 'relu', '__ctx_group__': 'g1', 'ctx_group': 'g1'}
    assert d.list_attr() == {"act_type": "relu", "__ctx_group__": "g1", "ctx_group": "g1",
                             "mood": "x"}
    assert d.attr("ctx_group") == "g1" and d.attr("nothing") is None
    with pytest.raises(ValueError, match="must be a str"):
        mx.AttrScope(x=1)


def test_variable_attributes():
    a = mx.sym.Variable("a", shape=(2, 3), dtype="float16", lr_mult=2, wd_mult=0.5,
                        init=mx.init.Xavier(), stype="csr", __extra__="1")
    attrs = a.list_attr()
    assert attrs["__shape__"] == "(2, 3)" and attrs["__dtype__"] == "2"
    assert attrs["__lr_mult__"] == "2" and attrs["lr_mult"] == "2"
    assert attrs["__storage_type__"] == "2" and attrs["__extra__"] == "1"
    assert attrs["__init__"].startswith('["xavier"')
    assert a.attr_dict() == {"a": attrs}
    with pytest.raises(ValueError, match="double underscores"):
        mx.sym.Variable("b", mood="x")
    with pytest.raises(TypeError, match="name must be"):
        mx.sym.Variable("")
    with pytest.raises(ValueError, match="Variable: shape of 'w' must hold sizes >= 0"):
        mx.sym.Variable("w", shape=(2, -1))
    with pytest.raises(TypeError, match="Variable: dtype of 'w' must be one of"):
        mx.sym.Variable("w", dtype="complex64")


def test_listing_internals_children_outputs():
    a = mx.sym.Variable("a")
    fc = mx.sym.FullyConnected(a, num_hidden=4, name="fc")
    bn = mx.sym.BatchNorm(fc, name="bn")
    assert bn.list_arguments() == ["a", "fc_weight", "fc_bias", "bn_gamma", "bn_beta"]
    assert bn.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    assert bn.list_inputs() == ["a", "fc_weight", "fc_bias", "bn_gamma", "bn_beta",
                                "bn_moving_mean", "bn_moving_var"]
    assert bn.list_outputs() == ["bn_output"]
    assert bn.get_internals().list_outputs() == [
        "a", "fc_weight", "fc_bias", "fc_output", "bn_gamma", "bn_beta",
        "bn_moving_mean", "bn_moving_var", "bn_output"]
    assert fc.get_children().list_outputs() == ["a", "fc_weight", "fc_bias"]
    assert a.get_children() is None
    assert bn.get_internals()["fc_output"].name == "fc"
    sp = mx.sym.split(a, num_outputs=3, name="sp")
    assert sp.list_outputs() == ["sp_output0", "sp_output1", "sp_output2"]
    assert len(sp) == 3 and sp[1].list_outputs() == ["sp_output1"] and sp[-1].name == "sp"
    g = mx.sym.Group([fc, bn])
    assert g.list_outputs() == ["fc_output", "bn_output"] and g.name is None
    with pytest.raises(ValueError, match="no output named"):
        g["nothing"]
    with pytest.raises(IndexError):
        g[2]
    with pytest.raises(ValueError, match="single-output"):
        mx.sym.relu(g)


@pytest.mark.parametrize("expr, ref", [
    (lambda a, b: a + b, lambda a, b: a + b),
    (lambda a, b: a - b, lambda a, b: a - b),
    (lambda a, b: a * b, lambda a, b: a * b),
    (lambda a, b: a / b, lambda a, b: a / b),
    (lambda a, b: a ** 2 + b, lambda a, b: a ** 2 + b),
    (lambda a, b: (2 - a) * b, lambda a, b: (2 - a) * b),
    (lambda a, b: 3 / b - a, lambda a, b: 3 / b - a),
    (lambda a, b: 2 ** a + b, lambda a, b: 2 ** a + b),
    (lambda a, b: -a * 2 + b, lambda a, b: -a * 2 + b),
    (lambda a, b: abs(a - b), lambda a, b: abs(a - b)),
    (lambda a, b: (a > b) + (a <= 0.5) + (a == b) + (a != b),
     lambda a, b: sum(c.astype(np.float32) for c in (a > b, a <= 0.5, a == b, a != b))),
    (lambda a, b: (1 < a) * b, lambda a, b: (1 < a) * b),
    (lambda a, b: a % b, lambda a, b: np.mod(a, b)),
])
def test_arithmetic_matches_numpy(expr, ref):
    rng = np.random.RandomState(0)
    a, b = rng.uniform(0.5, 2, (2, 3)).astype(np.float32), \
        rng.uniform(0.5, 2, (2, 3)).astype(np.float32)
    out = simple_forward(expr(mx.sym.var("a"), mx.sym.var("b")), a=a, b=b)
    np.testing.assert_allclose(out, ref(a, b).astype(np.float32), rtol=1e-5)


def test_operator_names_as_mxnet():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    with mx.name.NameManager():
        # MXNet 1.9.1: _plus0, _plusscalar0, _rminusscalar0, _greater_scalar0
        assert [(a + b).name, (a + 1).name, (1 - a).name, (a > 1).name] == \
            ["_plus0", "_plusscalar0", "_rminusscalar0", "_greater_scalar0"]


def test_functions_share_nd_signature():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    s = mx.sym.var("x")
    np.testing.assert_array_equal(simple_forward(mx.sym.sum(s, 1), x=x), x.sum(1))
    np.testing.assert_array_equal(simple_forward(mx.sym.clip(s, 1, 4), x=x), np.clip(x, 1, 4))
    np.testing.assert_array_equal(simple_forward(s.reshape((3, 2)), x=x), x.reshape(3, 2))
    np.testing.assert_array_equal(simple_forward(mx.sym.concat(s, s, dim=0), x=x),
                                  np.concatenate([x, x]))
    np.testing.assert_array_equal(simple_forward(mx.sym.add(s, 2), x=x), x + 2)
    np.testing.assert_array_equal(simple_forward(mx.sym.maximum(3, s), x=x),
                                  np.maximum(3, x))
    half = simple_forward(s.astype("float16"), x=x)
    assert half.dtype == np.float16 and np.array_equal(half, x.astype(np.float16))
    assert mx.sym.concat(s, s).list_attr()["num_args"] == "2"
    with pytest.raises(TypeError, match="input rhs must be a Symbol"):
        mx.sym.elemwise_add(s, "x")
    with pytest.raises(TypeError, match="clip.*a_min"):
        mx.sym.clip(s, "low", 1)
    with pytest.raises(TypeError, match="attribute"):
        mx.sym.sum(s, 1, True, False, 5)
    with pytest.raises(mx.base.NotImplementedForSymbol, match="bool"):
        bool(s)


def test_infer_shape_forward_and_backward():
    a = mx.sym.Variable("a")
    bn = mx.sym.BatchNorm(mx.sym.FullyConnected(a, num_hidden=4, name="fc"), name="bn")
    # MXNet 1.9.1's result
    assert bn.infer_shape(a=(2, 3)) == ([(2, 3), (4, 3), (4,), (4,), (4,)], [(2, 4)],
                                        [(4,), (4,)])
    assert bn.infer_shape((2, 3)) == bn.infer_shape(a=(2, 3))
    assert bn.infer_shape() == (None, None, None)
    args, outs, aux = bn.infer_shape_partial()
    assert args[:2] == [(), ()] and args[2] == (4,) and outs == [()]
    conv = mx.sym.Convolution(mx.sym.var("x"), kernel=(3, 3), num_filter=8, num_group=2,
                              name="c")
    assert conv.infer_shape(x=(1, 4, 7, 7))[0][1] == (8, 2, 3, 3)
    assert conv.infer_shape(x=(1, 4, 7, 7))[1] == [(1, 8, 5, 5)]
    emb = mx.sym.Embedding(mx.sym.var("i"), input_dim=10, output_dim=3, name="e")
    assert emb.infer_shape(i=(4,)) == ([(4,), (10, 3)], [(4, 3)], [])
    sm = mx.sym.SoftmaxOutput(mx.sym.var("d"), name="s")
    assert sm.infer_shape(d=(5, 3))[0] == [(5, 3), (5,)]
    v = mx.sym.Variable("v", shape=(2, 2))
    assert (v * 2).infer_shape() == ([(2, 2)], [(2, 2)], [])


def test_infer_shape_errors_name_the_node():
    fc = mx.sym.FullyConnected(mx.sym.var("a"), num_hidden=4, name="fc")
    with pytest.raises(ValueError, match="node 'fc' \\(FullyConnected\\)"):
        fc.infer_shape(a=(2, 3), fc_weight=(5, 3))
    with pytest.raises(ValueError, match="no argument named 'b'"):
        fc.infer_shape(b=(2, 3))
    with pytest.raises(ValueError, match="node '_plus"):
        (mx.sym.var("x") + mx.sym.var("y")).infer_shape(x=(2, 3), y=(3, 2))


def test_infer_type_and_storage_type():
    a = mx.sym.Variable("a")
    fc = mx.sym.FullyConnected(a, num_hidden=4, name="fc")
    assert fc.infer_type(a="float64") == ([np.float64] * 3, [np.float64], [])
    assert fc.infer_type() == (None, None, None)
    assert mx.sym.Variable("h", dtype="float16").infer_type() == ([np.float16],
                                                                   [np.float16], [])
    # an integer input is an index: the weight's dtype stays open (float32 at bind)
    emb = mx.sym.Embedding(a, input_dim=10, output_dim=4, name="emb")
    assert emb.infer_type(a="int32") == (None, None, None)
    exe = emb.simple_bind(mx.cpu(), a=(2, 3), type_dict={"a": "int32"})
    assert exe.arg_dict["emb_weight"].dtype == np.float32
    s = mx.sym.dot(mx.sym.var("c"), mx.sym.var("d"))
    assert s.infer_storage_type(c="csr", d="default") == (["csr", "default"], ["default"],
                                                          [])
    with pytest.raises(ValueError, match="storage type of 'c'"):
        s.infer_storage_type(c="coo")


def test_eval_and_methods():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    s = mx.sym.var("x")
    out = (s.sum(axis=1) * 2).eval(x=mx.nd.array(x))
    assert isinstance(out, list) and len(out) == 1
    np.testing.assert_array_equal(out[0].asnumpy(), x.sum(1) * 2)
    with pytest.raises(AttributeError):
        s.no_such_operator


def test_compose_replaces_variables():
    x, y = mx.sym.var("x"), mx.sym.var("y")
    net = mx.sym.FullyConnected(x, num_hidden=2, name="fc") * 2
    composed = net(x=mx.sym.tanh(y, name="t"))
    assert composed.list_arguments() == ["y", "fc_weight", "fc_bias"]
    assert net.list_arguments() == ["x", "fc_weight", "fc_bias"]     # unchanged
    rng = np.random.RandomState(5)
    v, w, b = rng.normal(size=(3, 4)), rng.normal(size=(2, 4)), rng.normal(size=2)
    out = simple_forward(composed, y=v, fc_weight=w, fc_bias=b)
    np.testing.assert_allclose(out, (np.tanh(v) @ w.T + b) * 2, rtol=1e-5)
    assert net(mx.sym.var("z")).list_arguments()[0] == "z"
    # MXNet's test_symbol_compose: an input made by the op (fc3_data) replaced, renamed
    net2 = mx.sym.FullyConnected(mx.sym.Activation(
        mx.sym.FullyConnected(name="fc3", num_hidden=4), act_type="relu"), name="fc4",
        num_hidden=2)
    composed = net2(fc3_data=net, name="composed")
    assert composed.name == "composed" and net2.name == "fc4"
    assert composed.list_arguments()[:3] == ["x", "fc_weight", "fc_bias"]
    with pytest.raises(ValueError, match="no variable named 'q'"):
        net(q=y)
    with pytest.raises(TypeError, match="must be a Symbol"):
        net(x=1)


def test_source_symbols_zeros_ones_full_arange():
    x = mx.sym.var("x")
    graph = mx.sym.Group([x + mx.sym.ones((2, 2)) * 3, mx.sym.zeros((3,), dtype="int32"),
                          mx.sym.full((2,), 7), mx.sym.arange(1, 8, 3, repeat=2)])
    assert graph.list_arguments() == ["x"]
    assert graph.infer_shape(x=(2, 2))[1] == [(2, 2), (3,), (2,), (6,)]
    for sym in (graph, mx.sym.load_json(graph.tojson())):
        outs = [o.asnumpy() for o in sym.eval(x=mx.nd.ones((2, 2)))]
        np.testing.assert_array_equal(outs[0], np.full((2, 2), 4.0))
        assert outs[1].dtype == np.int32 and not outs[1].any()
        np.testing.assert_array_equal(outs[2], [7.0, 7.0])
        np.testing.assert_array_equal(outs[3], np.repeat(np.arange(1, 8, 3), 2))
    # MXNet 1.9.1 writes these nodes so
    node = json.loads(mx.sym.full((2, 2), 7, name="f").tojson())["nodes"][-1]
    assert node == {"op": "_full", "name": "f", "attrs": {"dtype": "float32",
                    "shape": "(2, 2)", "value": "7.0"}, "inputs": []}
    with pytest.raises(ValueError, match="_arange: step must not be 0"):
        mx.sym.arange(0, 3, 0)
    with pytest.raises(TypeError, match="_zeros: unknown attribute 'colour'"):
        mx.sym.zeros((2,), colour="red")


def test_infer_shape_through_elementwise_inputs():
    """MXNet's test_symbol_infer_shape: a partial inference tells the state's shape."""
    data, prev = mx.sym.var("data"), mx.sym.var("prevstate")
    x2h = mx.sym.FullyConnected(data=data, name="x2h", num_hidden=8)
    h2h = mx.sym.FullyConnected(data=prev, name="h2h", num_hidden=8)
    out = mx.sym.Activation(mx.sym.elemwise_add(x2h, h2h), name="out", act_type="relu")
    assert out.infer_shape(data=(10, 4)) == (None, None, None)
    args, outs, _ = out.infer_shape_partial(data=(10, 4))
    shapes = dict(zip(out.list_arguments(), args))
    assert shapes["x2h_weight"] == (8, 4) and shapes["h2h_weight"] == ()
    assert outs == [(10, 8)]
    args, _, _ = out.infer_shape(data=(10, 4), prevstate=outs[0])
    assert dict(zip(out.list_arguments(), args))["h2h_weight"] == (8, 8)
    a, b = mx.sym.Variable("a", shape=(2, 3)), mx.sym.var("b")
    assert mx.sym.elemwise_add(a, b).infer_shape(a=(5, 6))[0] == [(5, 6), (5, 6)]


@pytest.mark.parametrize("op", ["LinearRegressionOutput", "LogisticRegressionOutput",
                                "MAERegressionOutput"])
def test_regression_outputs_infer_the_label_from_data(op):
    # MXNet 1.9.1: LinearRegressionOutput(x).infer_shape(x=(2, 5)) gives the label (2, 5)
    out = getattr(mx.sym, op)(mx.sym.var("x"), name="r")
    assert out.infer_shape(x=(2, 5)) == ([(2, 5), (2, 5)], [(2, 5)], [])
    # and, as MXNet's, a label alone does not fix data
    assert out.infer_shape(r_label=(3, 1)) == (None, None, None)
    assert out.infer_shape_partial(r_label=(3, 1)) == ([(), (3, 1)], [()], [])


def test_sym_sparse_holds_mxnets_sparse_operators():
    # MXNet 1.9.1's mx.sym.sparse lists these 72 operators; its dot keeps csr x row_sparse
    names = {n for n in dir(mx.sym.sparse) if not n.startswith("_")}
    assert len(names) == 72 and {"dot", "retain", "cast_storage", "ElementWiseSum",
                                 "adam_update", "zeros_like"} <= names
    x = mx.sym.Variable("x", stype="csr")
    w = mx.sym.Variable("w", stype="row_sparse")
    out = mx.sym.sparse.dot(x, w)
    assert out.infer_storage_type(x="csr", w="row_sparse")[1] == ["default"]
    import scipy.sparse as sp
    a = sp.random(4, 6, density=0.3, format="csr", random_state=0, dtype=np.float32)
    b = np.random.RandomState(1).rand(6, 3).astype(np.float32)
    got = out.eval(x=mx.nd.sparse.csr_matrix(a), w=mx.nd.array(b).tostype("row_sparse"))[0]
    np.testing.assert_allclose(got.asnumpy(), a @ b, rtol=1e-6)


def test_prelu_gamma_takes_one_slope_per_channel_and_starts_at_quarter():
    # MXNet 1.x infers an implicit gamma as (channels,) and gives it the initializer
    # Constant(0.25) (its FSetInputVarAttrOnCompose), not gamma's usual ones
    data = mx.sym.Variable("data")
    act = mx.sym.LeakyReLU(data, act_type="prelu", name="act")
    args, _, _ = act.infer_shape(data=(4, 6, 3))
    assert dict(zip(act.list_arguments(), args))["act_gamma"] == (6,)
    assert json.loads(act.attr_dict()["act_gamma"]["__init__"]) == \
        ["Constant", {"value": 0.25}]
    # a gamma the caller made without an initializer takes the op's; one with its own
    # keeps it
    bare = mx.sym.Variable("g1")
    mx.sym.LeakyReLU(data, gamma=bare, act_type="prelu")
    assert "__init__" in bare.attr_dict()["g1"]
    own = mx.sym.Variable("g2", init=mx.init.One())
    mx.sym.LeakyReLU(data, gamma=own, act_type="prelu")
    assert json.loads(own.attr_dict()["g2"]["__init__"])[0] == "one"
    # other act_types take no gamma at all
    assert mx.sym.LeakyReLU(data, act_type="leaky").list_arguments() == ["data"]


def test_get_children_lists_a_multi_output_nodes_inputs_once():
    data = mx.sym.Variable("data")
    parts = mx.sym.SliceChannel(data, num_outputs=3, name="parts")
    assert parts.get_children().list_outputs() == ["data"]
    both = mx.sym.Group([mx.sym.exp(data, name="e"), mx.sym.log(data, name="l")])
    assert both.get_children().list_outputs() == ["data", "data"]
    assert data.get_children() is None


def test_hidden_keys_given_to_an_operator_become_node_attributes():
    # FullyConnected(x, lr_mult=...) is MXNet's way to set __lr_mult__ on the node and the
    # weight and bias variables it makes
    data = mx.sym.Variable("data")
    fc = mx.sym.FullyConnected(data, num_hidden=3, name="fc", lr_mult=0.5, wd_mult=0)
    attrs = fc.attr_dict()
    for name in ("fc", "fc_weight", "fc_bias"):
        assert attrs[name]["__lr_mult__"] == "0.5"
        assert attrs[name]["__wd_mult__"] == "0"
    assert "__lr_mult__" not in attrs.get("data", {})
    saved = json.loads(fc.tojson())["nodes"][-1]["attrs"]
    assert saved["__lr_mult__"] == "0.5" and "lr_mult" not in saved
    with pytest.raises(TypeError, match="FullyConnected: lr_mult must be a number"):
        mx.sym.FullyConnected(data, num_hidden=3, lr_mult=[1])


def test_dunder_keyword_arguments_are_node_attributes():
    # MXNet's parameter parser lets __key__ arguments through as attributes (__layout__)
    data = mx.sym.var("data")
    act = mx.sym.Activation(data=data, act_type="relu", __layout__="TNC")
    assert act.attr("__layout__") == "TNC"
    assert act.list_attr() == {"act_type": "relu", "__layout__": "TNC"}
    again = mx.sym.load_json(act.tojson())
    assert again.attr("__layout__") == "TNC"
    np.testing.assert_array_equal(simple_forward(again, data=np.array([-1.0, 2.0])), [0, 2])
    with pytest.raises(TypeError, match="Activation: unknown attribute 'layout'"):
        mx.sym.Activation(data=data, act_type="relu", layout="TNC")


# -- partly known shapes (MXNet's 0, or -1 under NumPy shape semantics) ---------------

def test_unknown_dimensions_flow_through_operators_that_keep_them():
    x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
    dot = mx.sym.dot(x, y)
    assert dot.infer_shape_partial(x=(0, 3, 4), y=(4, 5))[1] == [(0, 3, 5)]
    assert dot.infer_shape(x=(0, 3, 4), y=(4, 5)) == (None, None, None)
    t = mx.sym.transpose(x, axes=(0, 3, 2, 1))
    assert t.infer_shape_partial(x=(0, 3, 7, 5))[1] == [(0, 5, 7, 3)]
    # the same unknown batch on both sides of batch_dot is kept; an unknown inner size
    # leaves the output unknown rather than raising
    bd = mx.sym.batch_dot(x, y)
    assert bd.infer_shape_partial(x=(0, 3, 4), y=(0, 4, 5))[1] == [(0, 3, 5)]
    assert bd.infer_shape_partial(x=(0, 3, 4), y=(0, 0, 5))[1] == [()]
    # fully known shapes still raise on a mismatch, naming the node
    with pytest.raises(mx.MXNetError, match="batch_dot"):
        bd.infer_shape(x=(2, 3, 4), y=(2, 3, 5))


def test_numpy_shape_semantics_mark_unknowns_with_minus_one_and_none():
    x, w = mx.sym.Variable("x"), mx.sym.Variable("w")
    emb = mx.sym.Embedding(data=x, weight=w, input_dim=100, output_dim=10)
    with mx.util.np_shape(True):
        args, outs, _ = emb.infer_shape_partial(x=(-1, 5), w=(100, 10))
        assert outs == [(-1, 5, 10)] and args == [(-1, 5), (100, 10)]
        assert mx.sym.sin(mx.sym.Variable("d")).infer_shape_partial() == ([None], [None], [])
        # under NumPy semantics 0 is a real size
        assert emb.infer_shape(x=(0, 5), w=(100, 10))[1] == [(0, 5, 10)]
    assert mx.sym.sin(mx.sym.Variable("d")).infer_shape_partial() == ([()], [()], [])
    with pytest.raises(ValueError, match=r"shape of 'x' must hold sizes >= 0 \(got "
                                         r"\(-1, 5\)\)"):
        emb.infer_shape(x=(-1, 5), w=(100, 10))


def test_elementwise_ops_unify_partly_known_inputs():
    a = mx.sym.Variable("a", shape=(0, 10))
    b = mx.sym.Variable("b", shape=(12, 0))
    args, outs, _ = (a + b).infer_shape()
    assert args == [(12, 10), (12, 10)] and outs == [(12, 10)]
    # the known dimensions flow back through a chain of elementwise ops
    c, d = mx.sym.Variable("c"), mx.sym.Variable("d")
    args, outs, _ = ((c * d) + a).infer_shape_partial(c=(0, 0), d=(7, 0))
    assert args == [(7, 10), (7, 10), (7, 10)] and outs == [(7, 10)]
    with pytest.raises(mx.MXNetError, match=r"inconsistent shape for input 'a': \(\?, 10\) "
                                            r"and \(12, 11\)"):
        (a + b).infer_shape_partial(b=(12, 11))


def test_identity_with_attr_like_rhs_ties_shapes_both_ways_and_passes_lhs():
    # the weight's shape comes back from FullyConnected through the tie, then through
    # the broadcast_add that computed it
    w, shift, data = mx.sym.Variable("w"), mx.sym.Variable("shift", shape=(1,)), \
        mx.sym.Variable("data")
    tied = mx.sym._internal._identity_with_attr_like_rhs(mx.sym.broadcast_add(w, shift), w)
    net = mx.sym.FullyConnected(data=data, weight=tied, num_hidden=11, no_bias=True)
    args, outs, _ = net.infer_shape(data=(7, 100))
    assert dict(zip(net.list_arguments(), args)) == {"data": (7, 100), "w": (11, 100),
                                                     "shift": (1,)}
    assert outs == [(7, 11)]
    assert mx.sym.op.FullyConnected is not None and mx.sym._internal._plus_scalar is not None
    x, y = mx.nd.array([[1.0, 2.0]]), mx.nd.zeros((1, 2))
    x.attach_grad()
    y.attach_grad()
    with mx.autograd.record():
        z = mx.nd._internal._identity_with_attr_like_rhs(x * 3, y)
    z.backward()
    np.testing.assert_array_equal(z.asnumpy(), [[3.0, 6.0]])
    np.testing.assert_array_equal(x.grad.asnumpy(), [[3.0, 3.0]])
    np.testing.assert_array_equal(y.grad.asnumpy(), [[0.0, 0.0]])
    with pytest.raises(mx.MXNetError, match="_identity_with_attr_like_rhs: inputs must have "
                                            "one shape"):
        mx.nd._internal._identity_with_attr_like_rhs(x, mx.nd.zeros((2, 1)))


def test_variable_shape_marks_unknown_dimensions_by_the_shape_semantics():
    # legacy semantics: 0 is unknown and -1 refused; NumPy shape semantics: -1 is
    # unknown (0 a real size), and inference fills it
    with pytest.raises(ValueError, match=r"Variable: shape of 'w' must hold sizes >= 0"):
        mx.sym.Variable("w", shape=(3, -1))
    with mx.np_shape(True):
        w = mx.sym.Variable("w", shape=(3, -1))
        out = mx.sym.FullyConnected(mx.sym.Variable("x"), w, num_hidden=3, no_bias=True)
        arg_shapes, out_shapes, _ = out.infer_shape_partial(x=(2, 5))
        assert dict(zip(out.list_arguments(), arg_shapes)) == {"x": (2, 5), "w": (3, 5)}
        assert out_shapes == [(2, 3)]


def test_zeros_of_unknown_batch_take_it_from_the_graph():
    """An RNN cell's begin state: ``sym.zeros(shape=(0, n))`` whose batch size (0:
    unknown) inference fills from the data through FullyConnected and the sum, as
    MXNet 1.9.1 does (its shapes quoted); bound, the node makes zeros of that size."""
    data = mx.sym.var("data")
    state = mx.sym.zeros(shape=(0, 3), name="begin", __layout__="NC")
    assert state.list_attr() == {"shape": "(0, 3)", "dtype": "float32", "__layout__": "NC"}
    with mx.name.NameManager():          # the sum's name counts from 0, as in a new process
        out = mx.sym.FullyConnected(data, num_hidden=3, name="x2h") + \
            mx.sym.FullyConnected(state, num_hidden=3, name="h2h")
    inner = out.get_internals()
    assert inner.list_outputs() == ["data", "x2h_weight", "x2h_bias", "x2h_output",
                                    "begin_output", "h2h_weight", "h2h_bias",
                                    "h2h_output", "_plus0_output"]
    assert inner.infer_shape(data=(5, 2))[1] == [(5, 2), (3, 2), (3,), (5, 3), (5, 3),
                                                 (3, 3), (3,), (5, 3), (5, 3)]
    # MXNet also gives h2h_weight (3, 3) without the data's shape
    assert out.infer_shape_partial()[0][3:] == [(3, 3), (3,)]
    exe = out.simple_bind(mx.cpu(), data=(5, 2), grad_req="null")
    rng = np.random.default_rng(0)
    values = {k: rng.standard_normal(a.shape) for k, a in exe.arg_dict.items()}
    for k, a in exe.arg_dict.items():
        a[:] = values[k]
    want = values["data"] @ values["x2h_weight"].T + values["x2h_bias"] + values["h2h_bias"]
    np.testing.assert_allclose(exe.forward()[0].asnumpy(), want, rtol=1e-5)
    # another batch size binds the same symbol to other zeros
    assert out.simple_bind(mx.cpu(), data=(2, 2)).forward()[0].shape == (2, 3)
    lone = mx.sym.zeros((0, 3)) + mx.sym.var("x")
    with pytest.raises(mx.MXNetError, match=r"bind: the shape of node '_zeros\d+' "
                                            r"\(_zeros\) must follow .* \(got \(\?, 3\)\)"):
        lone.simple_bind(mx.cpu(), x=(0, 3))


def test_rnn_fills_parameters_and_states_from_data():
    out = mx.sym.RNN(mx.sym.var("data"), state_size=3, num_layers=2, mode="lstm",
                     bidirectional=True, name="rnn")
    args, outs, _ = out.infer_shape(data=(4, 2, 5))
    # MXNet 1.9.1: parameters (2*4*3*(5+3+2) + 2*4*3*(6+3+2),) = (504,)
    assert dict(zip(out.list_arguments(), args)) == {
        "data": (4, 2, 5), "rnn_parameters": (504,), "rnn_state": (4, 2, 3),
        "rnn_state_cell": (4, 2, 3)}
    assert outs == [(4, 2, 6)]
