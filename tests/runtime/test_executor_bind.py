"""Executors: bind/simple_bind, forward, backward with per-argument grad_req, aux states,
reshape; MXNet 1.9.1's outputs and gradients for its own symbol file; the symbolic
checks of runtime.test_utils against float64 central differences and NumPy."""

import os

import numpy as np
import pytest

import runtime as mx
from runtime.test_utils import (check_numeric_gradient, check_symbolic_backward,
                                check_symbolic_forward)

FIX = os.path.join(os.path.dirname(__file__), "..", "fixtures", "mxnet")


def load(name):
    return np.load(os.path.join(FIX, name + ".npy"))


def test_mxnet_mlp_outputs_and_gradients():
    sym = mx.sym.load(os.path.join(FIX, "mlp-symbol.json"))
    exe = sym.simple_bind(mx.cpu(), data=(4, 5), softmax_label=(4,))
    for k in exe.arg_dict:
        exe.arg_dict[k][:] = load("mlp_" + k)
    out = exe.forward(is_train=True)
    np.testing.assert_allclose(out[0].asnumpy(), load("mlp_out"), rtol=1e-5, atol=1e-6)
    exe.backward()
    for k, g in exe.grad_dict.items():
        if k != "softmax_label":
            np.testing.assert_allclose(g.asnumpy(), load("mlp_grad_" + k), rtol=1e-4,
                                       atol=1e-6, err_msg=k)


def _fc_setup():
    x = mx.sym.var("x")
    sym = mx.sym.FullyConnected(x, num_hidden=3, name="fc")
    rng = np.random.RandomState(1)
    vals = {"x": rng.normal(size=(2, 4)), "fc_weight": rng.normal(size=(3, 4)),
            "fc_bias": rng.normal(size=3)}
    return sym, {k: v.astype(np.float32) for k, v in vals.items()}


def test_bind_grad_req_write_add_null():
    sym, vals = _fc_setup()
    args = {k: mx.nd.array(v) for k, v in vals.items()}
    grads = {k: mx.nd.ones(v.shape) for k, v in vals.items()}
    exe = sym.bind(mx.cpu(), args, args_grad=grads,
                   grad_req={"x": "null", "fc_weight": "add", "fc_bias": "write"})
    head = np.random.RandomState(2).normal(size=(2, 3)).astype(np.float32)
    exe.forward(is_train=True)
    np.testing.assert_allclose(exe.outputs[0].asnumpy(),
                               vals["x"] @ vals["fc_weight"].T + vals["fc_bias"], rtol=1e-5)
    exe.backward(mx.nd.array(head))
    np.testing.assert_allclose(grads["fc_weight"].asnumpy(), 1 + head.T @ vals["x"],
                               rtol=1e-5)
    np.testing.assert_allclose(grads["fc_bias"].asnumpy(), head.sum(0), rtol=1e-5)
    np.testing.assert_array_equal(grads["x"].asnumpy(), np.ones((2, 4)))
    assert exe.grad_dict["x"] is grads["x"]
    exe.forward(is_train=False)              # backward after an inference forward
    exe.backward(mx.nd.array(head))          # add accumulates again, write overwrites
    np.testing.assert_allclose(grads["fc_weight"].asnumpy(), 1 + 2 * head.T @ vals["x"],
                               rtol=1e-5)
    np.testing.assert_allclose(grads["fc_bias"].asnumpy(), head.sum(0), rtol=1e-5)


def test_outputs_before_forward_and_backward_without_one():
    sym, vals = _fc_setup()
    args = {k: mx.nd.array(v) for k, v in vals.items()}
    exe = sym.bind(mx.cpu(), args, args_grad={"fc_bias": mx.nd.zeros(3)})
    # the outputs' shapes and dtypes are there from bind (MXNet allocates them then)
    assert [(o.shape, o.dtype) for o in exe.outputs] == [((2, 3), np.float32)]
    head = np.arange(6.0).reshape(2, 3)
    exe.backward(mx.nd.array(head))         # no forward yet: one runs first
    np.testing.assert_allclose(exe.grad_dict["fc_bias"].asnumpy(), head.sum(0))
    want = vals["x"] @ vals["fc_weight"].T + vals["fc_bias"]
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), want, rtol=1e-5)
    x = mx.sym.Variable("x", dtype=np.int32)
    cast = mx.sym.Cast(x, dtype=np.float16)
    exe = cast.simple_bind(mx.cpu(), x=(2, 2))    # the variable's own dtype, not float32
    assert exe.arg_dict["x"].dtype == np.int32 and exe.outputs[0].dtype == np.float16
    exe = cast.simple_bind(mx.cpu(), type_dict={"x": "float64"}, x=(2, 2))
    assert exe.arg_dict["x"].dtype == np.float64


def test_bind_checks_its_arguments():
    sym, vals = _fc_setup()
    args = {k: mx.nd.array(v) for k, v in vals.items()}
    with pytest.raises(ValueError, match="'nope'"):
        sym.bind(mx.cpu(), {**args, "nope": mx.nd.ones(1)})
    with pytest.raises(TypeError, match="'fc_bias' is missing"):
        sym.bind(mx.cpu(), {"x": args["x"], "fc_weight": args["fc_weight"]})
    with pytest.raises(ValueError, match="grad_req of 'x' must be one of"):
        sym.bind(mx.cpu(), args, args_grad=args, grad_req={"x": "sometimes"})
    with pytest.raises(ValueError, match="cannot be inferred"):
        sym.simple_bind(mx.cpu())
    partial = sym.bind(mx.cpu(), args, args_grad={"fc_bias": mx.nd.zeros(3)})
    assert partial.grad_dict["x"] is None and partial.grad_dict["fc_bias"] is not None
    partial.forward(is_train=True)
    partial.backward(mx.nd.ones((2, 3)))
    np.testing.assert_array_equal(partial.grad_dict["fc_bias"].asnumpy(), [2, 2, 2])
    exe = sym.bind(mx.cpu(), args)
    out = exe.forward()[0].asnumpy()
    exe.backward()               # every grad_req 'null': nothing to compute, as in MXNet
    np.testing.assert_array_equal(exe.outputs[0].asnumpy(), out)
    with pytest.raises(ValueError, match="no argument named 'y'"):
        exe.forward(y=mx.nd.ones(1))
    before = args["x"].asnumpy().copy()
    with pytest.raises(ValueError, match="'fc_bias' must have shape \\(3,\\)"):
        exe.forward(x=mx.nd.zeros((2, 4)), fc_bias=mx.nd.ones(4))
    np.testing.assert_array_equal(args["x"].asnumpy(), before)     # nothing written


def test_simple_bind_forward_kwargs_and_reshape():
    sym, vals = _fc_setup()
    exe = sym.simple_bind(mx.cpu(), x=(2, 4))
    assert exe.arg_dict["fc_weight"].shape == (3, 4)
    assert set(exe.grad_dict) == {"x", "fc_weight", "fc_bias"}
    exe.copy_params_from({"fc_weight": mx.nd.array(vals["fc_weight"]),
                          "fc_bias": mx.nd.array(vals["fc_bias"])})
    out = exe.forward(x=mx.nd.array(vals["x"]))[0]
    np.testing.assert_allclose(out.asnumpy(), vals["x"] @ vals["fc_weight"].T
                               + vals["fc_bias"], rtol=1e-5)
    with pytest.raises(ValueError, match=r"reshape: the new shape \(5, 4\) of 'x' is larger "
                                         r"than its old one \(2, 4\).*allow_up_sizing=True"):
        exe.reshape(x=(5, 4))
    bigger = exe.reshape(allow_up_sizing=True, x=(5, 4))
    assert bigger.arg_dict["fc_weight"] is exe.arg_dict["fc_weight"]
    assert bigger.arg_dict["x"].shape == (5, 4)
    assert bigger.forward()[0].shape == (5, 3)
    nulls = sym.simple_bind(mx.cpu(), grad_req="null", x=(2, 4))
    assert all(g is None for g in nulls.grad_arrays)


def test_batchnorm_aux_states_update_in_training_only():
    x = mx.sym.var("x")
    sym = mx.sym.BatchNorm(x, fix_gamma=False, momentum=0.9, eps=1e-5, name="bn")
    exe = sym.simple_bind(mx.cpu(), x=(6, 2))
    data = np.random.RandomState(3).normal(size=(6, 2)).astype(np.float32)
    exe.arg_dict["x"][:] = data
    exe.arg_dict["bn_gamma"][:] = 1
    exe.aux_dict["bn_moving_var"][:] = 1
    exe.forward(is_train=False)
    np.testing.assert_array_equal(exe.aux_dict["bn_moving_mean"].asnumpy(), [0, 0])
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), data / np.sqrt(1 + 1e-5),
                               rtol=1e-5)
    exe.forward(is_train=True)
    np.testing.assert_allclose(exe.aux_dict["bn_moving_mean"].asnumpy(),
                               0.1 * data.mean(0), rtol=1e-5)
    np.testing.assert_allclose(exe.aux_dict["bn_moving_var"].asnumpy(),
                               0.9 + 0.1 * data.var(0), rtol=1e-5)
    norm = (data - data.mean(0)) / np.sqrt(data.var(0) + 1e-5)
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), norm, rtol=1e-4, atol=1e-5)


def test_check_numeric_gradient_on_graphs():
    rng = np.random.RandomState(4)
    x, y = mx.sym.var("x"), mx.sym.var("y")
    check_numeric_gradient(mx.sym.tanh(x) * y + x ** 2 / (1 + y * y),
                           {"x": rng.normal(size=(3, 2)), "y": rng.normal(size=(3, 2))})
    net = mx.sym.FullyConnected(mx.sym.Activation(
        mx.sym.FullyConnected(x, num_hidden=4, name="f1"), act_type="sigmoid"),
        num_hidden=2, name="f2")
    shapes = dict(zip(net.list_arguments(), net.infer_shape(x=(3, 5))[0]))
    check_numeric_gradient(net, {k: rng.normal(size=s) for k, s in shapes.items()})
    with pytest.raises(AssertionError):
        # a wrong "gradient": stop_gradient hides the dependence on x
        check_numeric_gradient(mx.sym.stop_gradient(x) * x, {"x": rng.normal(size=(2,))})


def test_check_symbolic_forward_backward():
    x, y = mx.sym.var("x"), mx.sym.var("y")
    sym = mx.sym.Group([x * y, mx.sym.exp(x)])
    a, b = np.array([1.0, 2.0], np.float32), np.array([3.0, -1.0], np.float32)
    check_symbolic_forward(sym, [a, b], [a * b, np.exp(a)])
    with pytest.raises(AssertionError):
        check_symbolic_forward(sym, [a, b], [a * b + 1, np.exp(a)])
    g1, g2 = np.array([1.0, 0.5], np.float32), np.array([2.0, 1.0], np.float32)
    check_symbolic_backward(sym, {"x": a, "y": b}, [g1, g2],
                            {"x": g1 * b + g2 * np.exp(a), "y": g1 * a}, rtol=1e-5)
    # as in MXNet's check: 'add' gradients must grow by the expected value from their
    # random start, 'null' gradients must keep it
    want = [g1 * b + g2 * np.exp(a), g1 * a]
    check_symbolic_backward(sym, [a, b], [g1, g2], want, grad_req="add", rtol=1e-5)
    with pytest.raises(AssertionError, match="grad_req 'add'"):
        check_symbolic_backward(sym, [a, b], [g1, g2], [w + 1 for w in want],
                                grad_req="add", rtol=1e-5)
    check_symbolic_backward(sym, [a, b], [g1, g2], [np.zeros(2), np.zeros(2)],
                            grad_req="null")
    mixed = check_symbolic_backward(sym, [a, b], [g1, g2], [want[0], None],
                                    grad_req={"x": "write", "y": "null"}, rtol=1e-5)
    np.testing.assert_allclose(mixed["x"], want[0], rtol=1e-5)


def test_check_consistency_across_dtypes():
    from runtime.test_utils import check_consistency
    x = mx.sym.var("x")
    sym = mx.sym.FullyConnected(mx.sym.tanh(x), num_hidden=3, name="fc")
    ctx_list = [{"ctx": mx.cpu(), "x": (4, 5), "type_dict": {"x": np.float64}},
                {"ctx": mx.cpu(), "x": (4, 5), "type_dict": {"x": np.float32}},
                {"ctx": mx.cpu(), "x": (4, 5), "type_dict": {"x": np.float16}}]
    results = check_consistency(sym, ctx_list)
    assert [r[0].dtype for r in results] == [np.float64, np.float32, np.float16]
    assert len(results[0]) == 4                         # output and three gradients
    wrong = mx.sym.FullyConnected(mx.sym.sigmoid(x), num_hidden=3, name="fc")
    with pytest.raises(AssertionError):
        check_consistency([sym, wrong], ctx_list[:2])


def test_sparse_argument_through_the_executor():
    import scipy.sparse as sp
    x, w = mx.sym.var("x", stype="csr"), mx.sym.var("w")
    y = mx.sym.dot(x, w)
    assert y.infer_storage_type() == (["csr", "default"], ["default"], [])
    a = sp.random(4, 6, density=0.3, format="csr", dtype=np.float32, random_state=0)
    wv = np.random.RandomState(0).rand(6, 3).astype(np.float32)
    gw = mx.nd.zeros((6, 3))
    exe = y.bind(mx.cpu(), {"x": mx.nd.sparse.csr_matrix(a), "w": mx.nd.array(wv)},
                 args_grad={"w": gw})
    head = np.random.RandomState(1).rand(4, 3).astype(np.float32)
    exe.forward(is_train=True)
    exe.backward(mx.nd.array(head))
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), a @ wv, rtol=1e-6)
    np.testing.assert_allclose(gw.asnumpy(), a.T @ head, rtol=1e-6)


def test_reshape_down_shares_the_first_elements():
    # MXNet: a smaller argument is a view of the old one's memory; a larger one is new
    sym, _ = _fc_setup()
    exe = sym.simple_bind(mx.cpu(), x=(4, 4))
    exe.arg_dict["x"][:] = 1
    small = exe.reshape(x=(2, 4))
    assert small.grad_dict["x"].shape == (2, 4)
    small.arg_dict["x"][:] = 7
    np.testing.assert_array_equal(exe.arg_dict["x"].asnumpy(),
                                  np.float32([[7] * 4, [7] * 4, [1] * 4, [1] * 4]))
    big = exe.reshape(allow_up_sizing=True, x=(6, 4))
    big.arg_dict["x"][:] = 0
    assert exe.arg_dict["x"].asnumpy().sum() == 2 * 4 * 7 + 2 * 4
    with pytest.raises(ValueError, match="the shape of 'fc_weight' changes"):
        exe.reshape(x=(2, 5))


def test_two_variables_of_one_name_share_one_argument():
    # docs/differences.md: an executor keeps one array per argument name
    a, b = mx.sym.Variable("data"), mx.sym.Variable("data")
    sym = mx.sym.maximum(a, b) + mx.sym.minimum(a, b)
    assert sym.list_arguments() == ["data", "data"]
    exe = sym.bind(mx.cpu(), [mx.nd.full((2,), 2.0), mx.nd.full((2,), 3.0)])
    np.testing.assert_array_equal(exe.forward()[0].asnumpy(), [6.0, 6.0])
