"""Elementwise operators against NumPy/SciPy: values, dtypes, broadcasting, requests,
gradients (float64 central differences), bad input."""

import platform

import numpy as np
import pytest
import scipy.special as sps
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import runtime as mx
from runtime import _executor, _imperative, nd
from runtime.ops import registry
from tests.runtime.conftest import assert_same
from tests.runtime.opcheck import check_grad, check_requests, run

FLOATS = ["float16", "float32", "float64"]

# name: (NumPy/SciPy reference, input domain (lo, hi))
UNARY = {
    "negative": (np.negative, (-3, 3)), "abs": (np.abs, (-3, 3)), "sign": (np.sign, (-3, 3)),
    "exp": (np.exp, (-3, 3)), "expm1": (np.expm1, (-3, 3)), "log": (np.log, (0.2, 4)),
    "log1p": (np.log1p, (-0.5, 3)), "log2": (np.log2, (0.2, 4)), "log10": (np.log10, (0.2, 4)),
    "sqrt": (np.sqrt, (0.2, 4)), "rsqrt": (lambda x: 1 / np.sqrt(x), (0.2, 4)),
    "cbrt": (np.cbrt, (0.2, 4)), "square": (np.square, (-3, 3)),
    "reciprocal": (np.reciprocal, (0.5, 3)), "sin": (np.sin, (-3, 3)),
    "cos": (np.cos, (-3, 3)), "tan": (np.tan, (-1.2, 1.2)), "arcsin": (np.arcsin, (-0.9, 0.9)),
    "arccos": (np.arccos, (-0.9, 0.9)), "arctan": (np.arctan, (-3, 3)),
    "sinh": (np.sinh, (-3, 3)), "cosh": (np.cosh, (-3, 3)), "tanh": (np.tanh, (-3, 3)),
    "arcsinh": (np.arcsinh, (-3, 3)), "arctanh": (np.arctanh, (-0.9, 0.9)),
    "sigmoid": (sps.expit, (-4, 4)), "relu": (lambda x: np.maximum(x, 0), (-3, 3)),
    "softrelu": (lambda x: np.log1p(np.exp(x)), (-3, 3)), "erf": (sps.erf, (-2, 2)),
    "gamma": (sps.gamma, (0.5, 4)), "gammaln": (sps.gammaln, (0.5, 4)),
    "floor": (np.floor, (-3, 3)), "ceil": (np.ceil, (-3, 3)), "round": (lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5), (-3, 3)),   # MXNet: ties away
    "rint": (lambda x: np.ceil(x - 0.5), (-3, 3)),          # MXNet: ties to floor (down) "trunc": (np.trunc, (-3, 3)),
    "fix": (lambda x: np.sign(x) * np.floor(np.abs(x)), (-3, 3)),
}
ZERO_GRAD = {"sign", "floor", "ceil", "round", "rint", "trunc", "fix"}


def sample(shape, lo, hi, dtype="float64", seed=0):
    x = np.random.default_rng(seed).uniform(lo, hi, shape)
    if lo < 0 < hi:  # keep away from kinks and rounding ties
        x = np.where(np.abs(x - np.round(x)) < 0.05, x + 0.1, x)
        x = np.where(np.abs(x) < 0.05, 0.3, x)
    return x.astype(dtype)


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(), (0,), (1,), (3, 4), (1000,)])
def test_unary_values(name, dtype, shape):
    ref, (lo, hi) = UNARY[name]
    x = sample(shape, lo, hi, dtype)
    got = run(name, [x])[0]
    assert got.shape == shape and np.dtype(got.dtype) == np.dtype(dtype)
    want = ref(x.astype(np.float64)).astype(dtype)
    tol = {"float16": 2e-3, "float32": 2e-6, "float64": 1e-12}[dtype]
    np.testing.assert_allclose(got.asnumpy().astype(np.float64), want.astype(np.float64),
                               rtol=tol * 10, atol=tol)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_gradients(name):
    _, (lo, hi) = UNARY[name]
    if name in ZERO_GRAD:
        g = registry.get(name).gradient({}, [nd.array([1.3])], [nd.array([1.0])],
                                         [nd.array([1.0])])
        assert_same(g[0], np.zeros(1, np.float32))
        return
    check_grad(name, [sample((3, 4), lo, hi)])


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_requests(name):
    _, (lo, hi) = UNARY[name]
    check_requests(name, [sample((2, 3), lo, hi, "float32")])


@pytest.mark.parametrize("name", ["abs", "negative", "square", "relu", "sign"])
@pytest.mark.parametrize("dtype", ["int8", "int32", "int64"])
def test_unary_integer_inputs(name, dtype):
    x = np.array([-3, 0, 2], dtype)
    assert_same(run(name, [x])[0], UNARY[name][0](x).astype(dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [7, 3 * (1 << 16) + 5], ids=["small", "blocked"])
@pytest.mark.parametrize("path", ["relu", "Activation", "hidden_op", "grad_req_add",
                                  "relu_python_rule", "Activation_python_rule"])
def test_relu_gradient_passes_nan_on(path, n, dtype):
    # MXNet's relu_grad: 1 above 0, 0 at or below, NaN at NaN (a NaN input is not
    # silently turned into a zero gradient); +inf is above 0
    v = np.linspace(-2.0, 2.0, n)
    v[[1, n // 2, n - 1]] = np.nan
    v[2] = np.inf
    v[3] = 0.0
    head = np.full(n, 3.0)
    want = np.where(np.isnan(v), np.nan, np.where(v > 0, 3.0, 0.0))
    if path == "hidden_op":
        got = nd._internal._backward_relu(nd.array(head, dtype=dtype),
                                          nd.relu(nd.array(v, dtype=dtype)))
    else:
        x = nd.array(v, dtype=dtype)
        x.attach_grad(grad_req="add" if path == "grad_req_add" else "write")
        if path == "grad_req_add":
            x.grad[:] = 1.0
            want = want + 1.0
        with mx.autograd.record():
            y = (nd.Activation(x, act_type="relu") if path.startswith("Activation")
                 else nd.relu(x))
        _executor.set_c_rules(not path.endswith("python_rule"))
        try:
            y.backward(nd.array(head, dtype=dtype))
        finally:
            _executor.set_c_rules(True)
        got = x.grad
    np.testing.assert_array_equal(got.asnumpy(), want.astype(dtype))


def test_relu_gradient_passes_nan_on_row_sparse():
    v = np.zeros((4, 3))
    v[1] = [1.0, -2.0, np.nan]
    v[3] = [-1.0, 0.0, 5.0]
    x = nd.array(v).tostype("row_sparse")
    x.attach_grad()
    with mx.autograd.record():
        y = nd.relu(x)
    y.backward(nd.full((4, 3), 2.0).tostype("row_sparse"))
    assert x.grad.stype == "row_sparse"
    want = np.where(np.isnan(v), np.nan, np.where(v > 0, 2.0, 0.0))
    np.testing.assert_array_equal(x.grad.asnumpy(), want.astype("float32"))


def test_float_only_ops_refuse_integers():
    # exp, log, sqrt and sigmoid take integers as MXNet (test_mxnet_api.py); the others not
    with pytest.raises(TypeError, match=r"expm1: needs a floating-point input \(got int32\)"):
        nd.expm1(nd.array([1], dtype="int32"))


BINARY = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
          "divide": np.divide, "mod": np.mod, "power": np.power, "maximum": np.maximum,
          "minimum": np.minimum, "hypot": np.hypot}
COMPARE = {"equal": np.equal, "not_equal": np.not_equal, "greater": np.greater,
           "greater_equal": np.greater_equal, "lesser": np.less,
           "lesser_equal": np.less_equal}
SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (1, 4)), ((2, 1, 4), (3, 1)),
          ((), (2, 2)), ((0, 3), (1, 3)), ((1,), (1,))]


def positive(shape, seed):
    return np.random.default_rng(seed).uniform(0.5, 2.0, shape)


@pytest.mark.parametrize("name", sorted(BINARY) + sorted(COMPARE))
@pytest.mark.parametrize("shapes", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_binary_values_and_broadcasting(name, shapes, dtype):
    ref = {**BINARY, **COMPARE}[name]
    a, b = positive(shapes[0], 1).astype(dtype), positive(shapes[1], 2).astype(dtype)
    if name in COMPARE:
        pick = a.flat[0] if a.size else 1.0
        b = np.where(np.random.default_rng(3).random(b.shape) < 0.3, pick, b).astype(dtype)
    got = run(name, [a, b])[0]
    want = ref(a, b).astype(dtype)
    assert got.shape == want.shape and np.dtype(got.dtype) == np.dtype(dtype)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (1, 4)),
                                    ((2, 1, 3), (3,))])
def test_binary_gradients_undo_broadcasting(name, shapes):
    check_grad(name, [positive(shapes[0], 1), positive(shapes[1], 2) + 0.1])


@pytest.mark.parametrize("name", sorted(BINARY) + sorted(COMPARE))
def test_binary_requests(name):
    check_requests(name, [positive((2, 3), 1).astype("float32"),
                          positive((2, 3), 2).astype("float32")])


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8"])
def test_integer_arithmetic(dtype):
    a, b = np.array([7, 8, 9], dtype), np.array([2, 3, 4], dtype)
    for name in ("add", "multiply", "maximum", "minimum", "mod"):
        assert_same(run(name, [a, b])[0], BINARY[name](a, b).astype(dtype))


def test_binary_dtype_mix_and_shape_errors_name_the_op():
    with pytest.raises(TypeError, match=r"add: inputs must have one dtype \(got float32, int32\)"):
        nd.array([1]) + nd.array([1], dtype="int32")
    with pytest.raises(ValueError, match=r"multiply: shapes \(2, 3\), \(4,\) are not broadcastable"):
        nd.multiply(nd.zeros((2, 3)), nd.zeros(4))
    with pytest.raises(TypeError, match="add: input rhs must be an NDArray"):
        nd.add(nd.zeros(2), "a")


# -- Python operators, scalars, the fast path ----------------------------------------------

OPERATORS = [("+", np.add), ("-", np.subtract), ("*", np.multiply), ("/", np.divide),
             ("%", np.mod), ("**", np.power)]


@pytest.mark.parametrize("sym, ref", OPERATORS)
@pytest.mark.parametrize("fast", [True, False])
def test_python_operators_match_numpy(sym, ref, fast):
    a, b = positive((2, 3), 1).astype(np.float32), positive((2, 3), 2).astype(np.float32)
    x, y = nd.array(a), nd.array(b)
    _imperative.set_fast_path(fast)
    try:
        env = dict(x=x, y=y, a=a, b=b)
        np.testing.assert_allclose(eval(f"x {sym} y", env).asnumpy(), eval(f"a {sym} b", env),
                                   rtol=1e-6)
        np.testing.assert_allclose(eval(f"x {sym} 1.5", env).asnumpy(),
                                   ref(a, np.float32(1.5)), rtol=1e-6)
        np.testing.assert_allclose(eval(f"1.5 {sym} x", env).asnumpy(),
                                   ref(np.float32(1.5), a), rtol=1e-6)
        z = x.copy()
        v0 = z.version
        exec(f"z {sym}= y", dict(z=z, y=y))
        assert z.version > v0
    finally:
        _imperative.set_fast_path(True)


def test_inplace_operator_updates_the_same_array():
    x = nd.array([1, 2, 3])
    before = x
    x += nd.array([1, 1, 1])
    assert x is before
    x *= 2
    assert x is before
    assert_same(x, np.array([4, 6, 8], np.float32))


@pytest.mark.parametrize("sym, ref", [("==", np.equal), ("!=", np.not_equal), ("<", np.less),
                                      ("<=", np.less_equal), (">", np.greater),
                                      (">=", np.greater_equal)])
def test_comparisons_give_the_input_dtype_like_mxnet(sym, ref):
    a = np.array([1, 2, 3], np.float32)
    x = nd.array(a)
    got = eval(f"x {sym} 2", dict(x=x))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got.asnumpy(), ref(a, 2).astype(np.float32))
    got = eval(f"2 {sym} x", dict(x=x))
    np.testing.assert_array_equal(got.asnumpy(), ref(2, a).astype(np.float32))


def test_unary_python_operators():
    x = nd.array([-1.5, 2])
    assert_same(-x, np.array([1.5, -2], np.float32))
    assert_same(abs(x), np.array([1.5, 2], np.float32))
    assert +x is x


def test_scalar_is_cast_to_the_array_dtype_like_mxnet():
    x = nd.array([1, 2], dtype="int32")
    assert_same(x * 2.7, np.array([2, 4], np.int32))     # 2.7 -> int32 2
    assert_same(nd.add(x, 1), np.array([2, 3], np.int32))
    assert_same(nd.subtract(10, x), np.array([9, 8], np.int32))


def test_unsupported_operand_is_a_type_error():
    with pytest.raises(TypeError):
        nd.zeros(2) + "a"
    with pytest.raises(TypeError):
        nd.zeros(2) + np.zeros(2)


@pytest.mark.parametrize("name", ["_plus_scalar", "_minus_scalar", "_rminus_scalar",
                                  "_mul_scalar", "_div_scalar", "_rdiv_scalar",
                                  "_power_scalar", "_rpower_scalar", "_maximum_scalar",
                                  "_minimum_scalar", "_hypot_scalar", "_mod_scalar",
                                  "_rmod_scalar"])
def test_scalar_op_gradients_and_requests(name):
    x = positive((2, 3), 4) + 0.3
    check_grad(name, [x], {"scalar": 1.7})
    check_requests(name, [x.astype(np.float32)], {"scalar": 1.7})


# -- where, clip, cast, copies, add_n -----------------------------------------------------

def test_where():
    c = np.array([[1, 0, 1], [0, 0, 1]], np.float32)
    x, y = positive((2, 3), 1), positive((2, 3), 2)
    assert_same(run("where", [c, x, y])[0], np.where(c != 0, x, y))
    check_grad("where", [c, x, y], wrt=[1, 2])
    check_requests("where", [c, x.astype(np.float32), y.astype(np.float32)])


def test_where_row_form_and_its_length_rule():
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    y = -x
    rows = np.array([1.0, 0.0, 1.0], np.float32)
    assert_same(nd.where(nd.array(rows), nd.array(x), nd.array(y)),
                np.where(rows[:, None] != 0, x, y))
    out = nd.zeros((3, 2))
    with pytest.raises(mx.MXNetError, match=r"where: a 1-D condition selects rows of x and "
                       r"must have x.shape\[0\] = 3 values \(got shape \(2,\)\)"):
        nd.where(nd.array([1.0, 0.0]), nd.array(x), nd.array(y), out=out)
    np.testing.assert_array_equal(out.asnumpy(), 0)
    c, xs, ys = mx.sym.var("c"), mx.sym.var("x"), mx.sym.var("y")
    with pytest.raises(mx.MXNetError, match="1-D condition selects rows"):
        mx.sym.where(c, xs, ys).eval(c=nd.array([1.0, 0.0]), x=nd.array(x), y=nd.array(y))


def test_clip():
    x = sample((3, 4), -3, 3)
    assert_same(nd.clip(nd.array(x, dtype="float64"), a_min=-1, a_max=2), np.clip(x, -1, 2))
    check_grad("clip", [x], {"a_min": -1.0, "a_max": 2.0})
    check_requests("clip", [x.astype(np.float32)], {"a_min": -1.0, "a_max": 2.0})
    with pytest.raises(ValueError, match="clip: a_min must be <= a_max"):
        nd.clip(nd.zeros(2), a_min=2, a_max=1)
    with pytest.raises(TypeError, match="clip: attribute 'a_min' is required"):
        nd.clip(nd.zeros(2), a_max=1)


@pytest.mark.parametrize("dtype", ["float16", "float64", "int32", "uint8", "bool"])
def test_cast(dtype):
    x = np.array([0.0, 1.7, -2.2, 300.0], np.float32)
    assert_same(nd.cast(nd.array(x), dtype=dtype), x.astype(dtype))
    check_grad("cast", [x.astype(np.float64)], {"dtype": "float64"})
    with pytest.raises(TypeError, match="cast: dtype must be one of"):
        nd.cast(nd.array(x), dtype="complex64")


@pytest.mark.parametrize("name", ["copy", "identity", "stop_gradient", "BlockGrad"])
def test_copies(name):
    x = positive((2, 2), 0).astype(np.float32)
    y = run(name, [x])[0]
    assert_same(y, x)
    check_requests(name, [x])


def test_copy_gradient_and_stop_gradient_has_none():
    check_grad("copy", [positive((3,), 0)])
    assert not registry.get("stop_gradient").differentiable


def test_zeros_like_ones_like_ops():
    x = positive((2, 3), 0).astype(np.float32)
    assert_same(run("zeros_like", [x])[0], np.zeros_like(x))
    assert_same(run("ones_like", [x])[0], np.ones_like(x))
    check_requests("zeros_like", [x])


def test_add_n():
    xs = [positive((2, 3), s) for s in range(4)]
    assert_same(nd.add_n(*[nd.array(x, dtype="float64") for x in xs]), sum(xs))
    assert_same(nd.ElementWiseSum(nd.array(xs[0])), xs[0].astype(np.float32))
    check_grad("add_n", xs)
    check_requests("add_n", [x.astype(np.float32) for x in xs])
    with pytest.raises(ValueError, match="add_n: all inputs must have one shape"):
        nd.add_n(nd.zeros(2), nd.zeros(3))


# -- out=, failures, contexts ------------------------------------------------------------------

def test_out_is_checked_and_untouched_on_failure():
    x = nd.array([1, 2, 3])
    out = nd.array([9, 9, 9])
    with pytest.raises(ValueError, match=r"exp: out has shape \(3,\), the result has \(2,\)"):
        nd.exp(nd.zeros(2), out=out)
    with pytest.raises(TypeError, match="exp: out has dtype float64"):
        nd.exp(x, out=nd.zeros(3, dtype="float64"))
    with pytest.raises(ValueError, match="add: shapes"):
        nd.add(x, nd.zeros(4), out=out)
    assert_same(out, np.array([9, 9, 9], np.float32))
    assert_same(x, np.array([1, 2, 3], np.float32))
    assert nd.exp(x, out=out) is out


def test_out_aliasing_an_input_the_op_cannot_update_in_place():
    x = nd.array([[1, 2], [3, 4]])
    y = nd.broadcast_to(nd.array([[5, 6]]), shape=(2, 2))
    nd.add(x, y, out=x)                               # allowed pair: updated in place
    assert_same(x, np.array([[6, 8], [8, 10]], np.float32))
    v = x.reshape(4)[1:3]                             # overlapping, shifted view
    w = x.reshape(4)[0:2]
    nd.add(v, v, out=w)                               # goes through a temporary
    assert_same(x, np.array([[16, 16], [8, 10]], np.float32))


def test_bad_request_name():
    with pytest.raises(ValueError, match="exp: req must be one of null, write, inplace, add"):
        nd.exp(nd.zeros(2), out=nd.zeros(2), req="overwrite")
    with pytest.raises(ValueError, match="needs an out= array"):
        nd.exp(nd.zeros(2), req="add")


def test_unknown_attribute_and_wrong_input_count():
    with pytest.raises(TypeError, match=r"exp: unknown attribute 'axis'"):
        nd.exp(nd.zeros(2), axis=1)
    with pytest.raises(TypeError, match=r"exp: takes 1 array input\(s\) \(data\) \(got 2\)"):
        nd.exp(nd.zeros(2), nd.zeros(2))


# -- property tests ------------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(st.data())
def test_broadcasting_matches_numpy(data):
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=4))
    a = data.draw(hnp.arrays(np.float32, shapes.input_shapes[0],
                             elements=st.floats(-5, 5, width=32)))
    b = data.draw(hnp.arrays(np.float32, shapes.input_shapes[1],
                             elements=st.floats(-5, 5, width=32)))
    for name in ("add", "multiply", "maximum", "subtract"):
        got = run(name, [a, b])[0]
        np.testing.assert_array_equal(got.asnumpy(), BINARY[name](a, b))
    g = nd.array(np.ones(shapes.result_shape, np.float32))
    grads = registry.get("add").gradient({}, [nd.array(a), nd.array(b)], [g], [g])
    for x, grad in zip((a, b), grads):
        assert grad.shape == x.shape
        lead = len(shapes.result_shape) - x.ndim
        axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(x.shape)
                                          if s == 1 and shapes.result_shape[lead + i] != 1)
        want = np.ones(shapes.result_shape, np.float32).sum(axis=axes, keepdims=True)
        np.testing.assert_array_equal(grad.asnumpy(), want.reshape(x.shape))


def test_kernel_errors_name_the_operator():
    a = nd.array([2], dtype="int32")
    with pytest.raises(ValueError, match="^power: Integers to negative integer powers"):
        nd.power(a, nd.array([-1], dtype="int32"))
    with pytest.raises(TypeError, match="^negative: bool input is not supported"):
        -nd.array([True], dtype="bool")


def test_rounding_is_the_identity_on_integers():
    x = np.array([-2, 0, 3], np.int32)
    for name in ("rint", "round", "floor", "ceil", "trunc", "fix"):
        assert_same(run(name, [x])[0], x)


def test_integer_scalars_wrap_like_mxnet():
    assert_same(nd.array([1, 2], dtype="uint8") * -2, np.array([254, 252], np.uint8))
    assert_same(nd.array([1], dtype="int8") + 300, np.array([45], np.int8))
    # through int64, whatever the CPU's float-to-int8 conversion gives (0 on x86-64)
    assert_same(nd.array([1], dtype="int8") + (3e9 + 1), np.array([2], np.int8))


@pytest.mark.parametrize("scalar, got", [(float("nan"), "nan"), (float("inf"), "inf"),
                                         (-1e19, r"-1e\+19"),
                                         (2**63 - 1, r"9.223372036854776e\+18")])
def test_integer_scalars_beyond_int64_are_refused(scalar, got):
    """No wrap is defined beyond int64 (NumPy's cast gives INT_MIN on x86-64): refused
    before out= is written, naming the op, the scalar and the dtype."""
    x = nd.array([1, 2], dtype="int32")
    out = nd.zeros(2, dtype="int32")
    version = out.version
    with pytest.raises(ValueError, match=r"^_plus_scalar: scalar must be finite and within "
                                         rf"int64 to wrap into int32 \(got {got}\)"):
        nd.add(x, scalar, out=out)
    with pytest.raises(ValueError, match=r"^_greater_scalar: scalar must be finite"):
        x > scalar
    assert_same(out, np.zeros(2, np.int32))
    assert out.version == version


def test_clip_bounds_must_fit_an_integer_dtype():
    x = nd.array([1, 5, 9], dtype="int32")
    assert_same(nd.clip(x, a_min=2.5, a_max=7.9), np.array([2, 5, 7], np.int32))
    with pytest.raises(ValueError, match=r"^clip: a_max must be finite and in "
                                         r"\[-2147483648, 2147483647\] for dtype int32 "
                                         r"\(got 1e\+30\)"):
        nd.clip(x, a_min=0, a_max=1e30)


def test_dtype_rules_told_in_the_op_docs():
    """The results the docs of the scalar and binary ops describe (they surprise NumPy
    users: the result keeps the dtype, the scalar is cast to it)."""
    i64 = nd.array([2**53], dtype="int64")
    assert_same(i64 + (2**53 + 1), np.array([2**54], np.int64))         # NumPy: 2**54 + 1
    assert_same(nd.array([2**53 + 1], dtype="int64") + 2,                 # the array stays exact
                np.array([2**53 + 3], np.int64))
    x = nd.array([2, 3], dtype="int32")
    assert_same(x * 0.5, np.array([0, 0], np.int32))
    assert_same(x ** 0.5, np.array([1, 1], np.int32))
    assert_same(x == 2.5, np.array([1, 0], np.int32))
    assert_same(nd.array([40, 50], dtype="int8") > 300, np.array([0, 1], np.int8))
    assert_same(nd.array([7, -7], dtype="int32") / 2, np.array([3, -3], np.int32))
    assert_same(nd.array([100], dtype="int8") + nd.array([100], dtype="int8"),
                np.array([-56], np.int8))
    with np.errstate(divide="ignore"):
        assert_same(nd.array([5, -5], dtype="int32") % 0, np.array([0, 0], np.int32))


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"),
                    reason="the float-to-integer conversion of inf and NaN is the CPU's")
@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning",
                            "ignore:invalid value:RuntimeWarning")
def test_integer_division_by_zero_on_x86_64():
    int_min = np.iinfo(np.int32).min
    assert_same(nd.array([5, -5, 0], dtype="int32") / 0, np.full(3, int_min, np.int32))
    assert_same(nd.array([5, 0], dtype="int32") / nd.zeros(2, dtype="int32"),
                np.full(2, int_min, np.int32))
    assert_same(nd.array([5], dtype="int64") / 0, np.array([np.iinfo(np.int64).min]))
    assert_same(nd.array([5, -5], dtype="int8") / 0, np.zeros(2, np.int8))


def test_where_gradient_with_an_integer_condition():
    c = nd.array([1, 0], dtype="int64")
    x, y = nd.array([1.0, 2.0], dtype="float64"), nd.array([3.0, 4.0], dtype="float64")
    g = nd.array([5.0, 7.0], dtype="float64")
    gx, gy = registry.get("where").gradient({}, [c, x, y], [None], [g])[1:]
    assert_same(gx, np.array([5.0, 0.0]))
    assert_same(gy, np.array([0.0, 7.0]))
