"""MXNet's graph JSON: files written by MXNet 1.9.1 (tests/fixtures/mxnet, made by
make_fixtures.py there) load and give MXNet's results; what ndrt writes has MXNet's
structure field by field; malformed files raise errors naming the node and the file and
build nothing."""

import json
import os

import numpy as np
import pytest

import runtime as mx

FIX = os.path.join(os.path.dirname(__file__), "..", "fixtures", "mxnet")


def fixture(name):
    return os.path.join(FIX, name)


def _ops_symbol():
    a = mx.sym.Variable("a", shape=(2, 3), lr_mult=2.0, wd_mult=0.5)
    b = mx.sym.Variable("b", dtype="float32")
    c = (a + b) * 2 - 1
    d = mx.sym.broadcast_mul(c, mx.sym.sum(b, axis=1, keepdims=True))
    e = mx.sym.SliceChannel(d, num_outputs=3, axis=1, name="sp")
    f = mx.sym.relu(e[1]) / (1 + mx.sym.exp(-e[2]))
    return mx.sym.Group([f, mx.sym.transpose(e[0]), a > b])


def _mlp_symbol():
    data = mx.sym.Variable("data")
    label = mx.sym.Variable("softmax_label")
    h = mx.sym.FullyConnected(data, num_hidden=8, name="fc1")
    h = mx.sym.Activation(h, act_type="tanh", name="tanh1")
    h = mx.sym.FullyConnected(h, num_hidden=3, name="fc2")
    return mx.sym.SoftmaxOutput(h, label, name="softmax")


@pytest.mark.parametrize("name, build", [("ops", _ops_symbol), ("mlp", _mlp_symbol)])
def test_written_json_has_mxnets_structure(name, build):
    with open(fixture(f"{name}-symbol.json")) as f:
        theirs = json.load(f)
    with mx.name.NameManager():
        ours = json.loads(build().tojson())
    assert set(ours) == set(theirs)
    for key in ("arg_nodes", "node_row_ptr", "heads", "attrs"):
        assert ours[key] == theirs[key], key
    assert len(ours["nodes"]) == len(theirs["nodes"])
    for mine, their in zip(ours["nodes"], theirs["nodes"]):
        assert mine == their


@pytest.mark.parametrize("name", ["ops", "mlp", "cnn"])
def test_mxnet_files_round_trip_exactly(name, tmp_path):
    with open(fixture(f"{name}-symbol.json")) as f:
        theirs = json.load(f)
    sym = mx.sym.load(fixture(f"{name}-symbol.json"))
    if name == "cnn":
        # MXNet's BatchNorm and max Pooling count hidden outputs (the batch statistics,
        # the mask) in node_row_ptr; ndrt's ops have only the visible one
        theirs.pop("node_row_ptr")
    ours = json.loads(sym.tojson())
    ours.pop("node_row_ptr") if name == "cnn" else None
    assert ours == theirs
    path = tmp_path / "again.json"
    sym.save(str(path))
    again = json.loads(mx.sym.load(str(path)).tojson())
    again.pop("node_row_ptr") if name == "cnn" else None
    assert again == theirs
    assert mx.sym.load_json(sym.tojson()).list_outputs() == sym.list_outputs()
    assert os.listdir(tmp_path) == ["again.json"]


def test_loaded_cnn_lists_like_mxnet():
    sym = mx.sym.load(fixture("cnn-symbol.json"))
    assert sym.list_arguments() == [
        "data", "cnn_conv0_weight", "cnn_conv0_bias", "cnn_batchnorm0_gamma",
        "cnn_batchnorm0_beta", "cnn_dense0_weight", "cnn_dense0_bias"]
    assert sym.list_auxiliary_states() == ["cnn_batchnorm0_running_mean",
                                           "cnn_batchnorm0_running_var"]
    args, outs, aux = sym.infer_shape(data=(2, 1, 8, 8))
    assert outs == [(2, 5)] and args[1] == (4, 1, 3, 3) and aux == [(4,), (4,)]


def test_attribute_strings_of_every_kind():
    nodes = [X, {"op": "clip", "name": "c", "attrs": {"a_min": "-inf", "a_max": "1e-05"},
                 "inputs": [[0, 0, 0]]},
             {"op": "sum", "name": "s", "attrs": {"axis": "(0, 1)", "keepdims": "true"},
              "inputs": [[1, 0, 0]]},
             {"op": "reshape", "name": "r", "attrs": {"shape": "[1, -1]"},
              "inputs": [[2, 0, 0]]}]
    sym = mx.sym.load_json(_graph(nodes, heads=[(3, 0, 0)]))
    x = np.array([[-2.0, 0.5], [3.0, 1e-6]], np.float32)
    out = sym.eval(x=mx.nd.array(x))[0].asnumpy()
    np.testing.assert_allclose(out, np.clip(x, -np.inf, 1e-5).sum(keepdims=True)
                               .reshape(1, -1), rtol=1e-6)


def test_legacy_param_and_attr_keys():
    legacy = {"nodes": [
        {"op": "null", "name": "x", "attr": {"__shape__": "(2, 3)"}, "inputs": []},
        {"op": "null", "name": "w", "inputs": []},
        {"op": "FullyConnected", "name": "fc", "param": {"num_hidden": "4",
                                                         "no_bias": "True"},
         "attr": {"__lr_mult__": "0.5"}, "inputs": [[0, 0], [1, 0]],
         "backward_source_id": -1}],
        "arg_nodes": [0, 1], "heads": [[2, 0]]}
    sym = mx.sym.load_json(json.dumps(legacy))
    assert sym.list_arguments() == ["x", "w"]
    assert sym.attr("lr_mult") == "0.5" and sym.attr("num_hidden") == "4"
    assert sym.infer_shape() == ([(2, 3), (4, 3)], [(2, 4)], [])
    x, w = np.ones((2, 3), np.float32), np.arange(12, dtype=np.float32).reshape(4, 3)
    out = sym.eval(x=mx.nd.array(x), w=mx.nd.array(w))[0]
    np.testing.assert_allclose(out.asnumpy(), x @ w.T)


def test_pre_1_0_files_attributes_and_aux_states():
    """As MXNet 0.8 wrote them: symbol attributes under 'attr' without underscores,
    BatchNorm without its moving statistics, two-element inputs, backward_source_id."""
    def var(name, **attr):
        return {"op": "null", "param": {}, "name": name, "inputs": [],
                "backward_source_id": -1, "attr": attr}
    nodes = [var("data", ctx_group="stage1", lr_mult="0.2"), var("fc_weight"),
             var("fc_bias"),
             {"op": "FullyConnected", "param": {"no_bias": "False", "num_hidden": "4"},
              "name": "fc", "inputs": [[0, 0], [1, 0], [2, 0]], "backward_source_id": -1,
              "attr": {"ctx_group": "stage1", "wd_mult": "0.3", "weight_lr_mult": "1.2",
                       "gamma_wd_mult": "0.5"}},
             var("bn_gamma"), var("bn_beta"),
             {"op": "BatchNorm", "param": {"eps": "0.001", "fix_gamma": "True",
                                           "momentum": "0.9", "use_global_stats": "False"},
              "name": "bn", "inputs": [[3, 0], [4, 0], [5, 0]], "backward_source_id": -1,
              "attr": {"ctx_group": "stage2"}}]
    sym = mx.sym.load_json(json.dumps({"nodes": nodes, "arg_nodes": [0, 1, 2, 4, 5],
                                       "heads": [[6, 0]]}))
    assert sym.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    attrs = sym.attr_dict()
    assert attrs["data"]["__ctx_group__"] == "stage1" and attrs["data"]["lr_mult"] == "0.2"
    assert attrs["fc"]["__wd_mult__"] == "0.3" and attrs["bn"]["__ctx_group__"] == "stage2"
    # an operator's <argument>_lr_mult belongs to the variable of that argument (MXNet's
    # upgrade); one naming no argument of the operator stays where it is
    assert attrs["fc_weight"]["__lr_mult__"] == "1.2" and "weight_lr_mult" not in attrs["fc"]
    assert "__lr_mult__" not in attrs.get("fc_bias", {})
    assert attrs["fc"]["__gamma_wd_mult__"] == "0.5"
    again = mx.sym.load_json(sym.tojson()).attr_dict()
    assert again["fc_weight"]["__lr_mult__"] == "1.2" and again["fc"] == attrs["fc"]
    # the moving statistics made for BatchNorm carry its ctx_group and their __init__
    assert attrs["bn_moving_mean"]["__ctx_group__"] == "stage2"
    assert json.loads(attrs["bn_moving_mean"]["__init__"]) == ["zero", {}]
    assert json.loads(attrs["bn_moving_var"]["__init__"]) == ["one", {}]
    args, outs, aux = sym.infer_shape(data=(2, 3))
    assert outs == [(2, 4)] and aux == [(4,), (4,)]


def _graph(nodes, heads=((1, 0, 0),)):
    return json.dumps({"nodes": nodes, "arg_nodes": [0], "heads": [list(h) for h in heads]})


X = {"op": "null", "name": "x", "inputs": []}


@pytest.mark.parametrize("text, match", [
    ("{\"nodes\": [", "not valid JSON"),
    ("[1, 2]", "needs a 'nodes' list"),
    (_graph([X, {"op": "relu", "name": "r", "inputs": [[1, 0, 0]]}]),
     "node 1 'r' input 0: refers to node 1, which is not before it"),
    (_graph([X, {"op": "relu", "name": "r", "inputs": [[7, 0, 0]]}]),
     "node 1 'r' input 0: refers to node 7"),
    (_graph([X, {"op": "relu", "name": "r", "inputs": [[0, 1, 0]]}]),
     "refers to output 1 of node 0"),
    (_graph([X, {"op": "NoSuchOp", "name": "n", "inputs": [[0, 0, 0]]}]),
     "node 1 'n': unknown operator 'NoSuchOp'"),
    (_graph([X, {"op": "relu", "name": "r", "attrs": {"colour": "red"},
                 "inputs": [[0, 0, 0]]}]),
     "node 1 'r': unknown attribute 'colour' of operator 'relu'"),
    (_graph([X, {"op": "sum", "name": "s", "attrs": {"keepdims": "maybe"},
                 "inputs": [[0, 0, 0]]}]),
     "node 1 's': sum: attribute keepdims must be a bool"),
    (_graph([X, {"op": "Activation", "name": "a", "attrs": {"act_type": "swish"},
                 "inputs": [[0, 0, 0]]}]),
     "node 1 'a': Activation: act_type"),
    (_graph([X, {"op": "elemwise_add", "name": "p", "inputs": [[0, 0, 0]]}]),
     "elemwise_add takes 2 input"),
    (_graph([X], heads=[(3, 0, 0)]), "head 0: refers to node 3"),
    (_graph([X], heads=[]), "'heads' is empty"),
    (_graph([{"op": "null", "name": 5, "inputs": []}]), "node 0: a node must be"),
])
def test_malformed_json_is_refused_with_the_node(text, match):
    with pytest.raises(ValueError, match=match) as info:
        mx.sym.load_json(text)
    assert "<string>" in str(info.value)


def test_errors_name_the_file_and_truncated_files(tmp_path):
    with open(fixture("mlp-symbol.json")) as f:
        text = f.read()
    path = tmp_path / "truncated-symbol.json"
    path.write_text(text[: len(text) // 2])
    with pytest.raises(ValueError, match="truncated-symbol.json.*not valid JSON"):
        mx.sym.load(str(path))
    bad = json.loads(text)
    bad["nodes"][3]["op"] = "FullyConnectedX"
    path.write_text(json.dumps(bad))
    with pytest.raises(ValueError, match="truncated-symbol.json.*'fc1'.*unknown operator "
                                         "'FullyConnectedX'"):
        mx.sym.load(str(path))


def test_shape_conflict_at_inference_names_the_node():
    sym = mx.sym.load(fixture("mlp-symbol.json"))
    with pytest.raises(ValueError, match="node 'fc1' \\(FullyConnected\\)"):
        sym.infer_shape(data=(4, 5), fc1_weight=(8, 6))


def test_failed_save_leaves_no_file(tmp_path):
    sym = _mlp_symbol()
    target = tmp_path / "missing" / "x.json"
    with pytest.raises(OSError):
        sym.save(str(target))
    assert not target.exists()


def test_pickle_round_trip():
    import pickle
    sym = _mlp_symbol()
    again = pickle.loads(pickle.dumps(sym))
    assert again.tojson() == sym.tojson()
