"""nd.contrib (MXNet 1.x's mx.nd.contrib): control flow against plain Python loops over
NumPy, gradients through it against float64 central differences, the contrib operators
against NumPy and MXNet's documented examples, and the errors of bad input."""

import numpy as np
import pytest

import runtime as rt
from runtime import autograd, nd
from tests.runtime.conftest import free_failing_tests
from runtime.gluon import loss as gloss

F64 = "float64"


def _central(f, x, eps=1e-6):
    """d f / d x of the scalar function ``f`` (of a float64 NumPy array) by central
    differences."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (f(xp) - f(xm)) / (2 * eps)
    return g


def _grads(f, *xs):
    """The gradients autograd gives for the NumPy inputs ``xs`` of ``f`` (NDArrays -> a
    scalar NDArray), and the central differences of the same function."""
    arrs = [nd.array(x, dtype=F64) for x in xs]
    for a in arrs:
        a.attach_grad()
    with autograd.record():
        y = f(*arrs)
    y.backward()
    got = [a.grad.asnumpy() for a in arrs]
    want = []
    for k, x in enumerate(xs):
        def scalar(v, k=k):
            args = [nd.array(v if j == k else xs[j], dtype=F64) for j in range(len(xs))]
            return float(f(*args).asnumpy().sum())
        want.append(_central(scalar, np.asarray(x, np.float64)))
    return got, want


def _rng(seed=0):
    return np.random.default_rng(seed)


# -- foreach -----------------------------------------------------------------------------------

def test_foreach_matches_a_python_loop():
    rng = _rng(1)
    x, h0, w = rng.normal(size=(5, 2, 3)), rng.normal(size=(2, 4)), rng.normal(size=(3, 4))
    W = nd.array(w, dtype=F64)

    def body(xt, states):
        h = nd.tanh(nd.dot(xt, W) + states[0])
        return h * 2, [h]

    outs, states = nd.contrib.foreach(body, nd.array(x, dtype=F64), [nd.array(h0, dtype=F64)])
    h, want = h0, []
    for t in range(5):
        h = np.tanh(x[t] @ w + h)
        want.append(h * 2)
    assert isinstance(outs, nd.NDArray) and isinstance(states, list) and len(states) == 1
    np.testing.assert_allclose(outs.asnumpy(), np.stack(want), rtol=1e-12)
    np.testing.assert_allclose(states[0].asnumpy(), h, rtol=1e-12)


def test_foreach_packing_follows_mxnet():
    """A list of data arrays gives a list of slices; nested outputs keep their nesting; a
    lone NDArray state stays one."""
    a, b = nd.array([[1, 2], [3, 4], [5, 6]]), nd.array([10, 20, 30])
    seen = []

    def body(data, state):
        seen.append([d.shape for d in data])
        return [data[0] + state, [data[1] * 2, data[0]]], state + 1

    outs, state = nd.contrib.foreach(body, [a, b], nd.zeros((2,)))
    assert seen == [[(2,), b[0].shape]] * 3          # each array sliced as data[i] is
    assert isinstance(outs, list) and isinstance(outs[1], list)
    np.testing.assert_array_equal(outs[0].asnumpy(), [[1, 2], [4, 5], [7, 8]])
    np.testing.assert_array_equal(outs[1][0].asnumpy().ravel(), [20, 40, 60])
    np.testing.assert_array_equal(outs[1][1].asnumpy(), a.asnumpy())
    assert isinstance(state, nd.NDArray)
    np.testing.assert_array_equal(state.asnumpy(), [3, 3])


def test_foreach_gradient_matches_central_differences():
    rng = _rng(2)
    x, h0 = rng.normal(size=(4, 3)), rng.normal(size=(3,))

    def f(data, init):
        def body(xt, h):
            h = nd.sin(xt * h[0]) + h[0] * 0.5
            return h * h, [h]
        outs, states = nd.contrib.foreach(body, data, [init])
        return nd.sum(outs) + nd.sum(states[0] * 3)

    got, want = _grads(f, x, h0)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-8)


_BODY = lambda d, s: (d, s)                                         # noqa: E731


# the arguments are built in the test (arrays made at collection would hold pool memory)
@pytest.mark.parametrize("args, exc, match", [
    (lambda: (None, nd.ones((2,)), nd.ones((1,))), TypeError,
     r"^foreach: body must be callable"),
    (lambda: (_BODY, [1, 2], nd.ones((1,))), TypeError,
     r"^foreach: data must be an NDArray or a \(nested\) list of NDArrays"),
    (lambda: (_BODY, nd.ones((2,)), 3.0), TypeError,
     r"^foreach: init_states must be an NDArray"),
    (lambda: (_BODY, nd.ones((0, 2)), nd.ones((1,))), ValueError,
     r"^foreach: data must have at least one slice along axis 0"),
    (lambda: (_BODY, [nd.ones((2,)), nd.ones((3,))], nd.ones((1,))), ValueError,
     r"^foreach: data must be arrays of one length along axis 0"),
    (lambda: (lambda d, s: d, nd.ones((2,)), nd.ones((1,))), TypeError,
     r"^foreach: body must return a pair"),
    (lambda: (lambda d, s: (nd.ones((int(s.asscalar()) + 1,)), s + 1), nd.ones((2,)),
              nd.zeros((1,))),
     ValueError, r"^foreach: output of body 0 changes shape between steps"),
])
def test_foreach_refuses_bad_input(args, exc, match):
    with pytest.raises(exc, match=match):
        nd.contrib.foreach(*args())


# -- while_loop --------------------------------------------------------------------------------

def test_while_loop_documented_example():
    cond = lambda i, s: i <= 5                                      # noqa: E731
    func = lambda i, s: ([i + s], [i + 1, s + i])                   # noqa: E731
    loop_vars = (nd.array([0], dtype="int64"), nd.array([1], dtype="int64"))
    outputs, states = nd.contrib.while_loop(cond, func, loop_vars, max_iterations=10)
    assert isinstance(outputs, list) and len(outputs) == 1
    assert outputs[0].shape == (10, 1) and outputs[0].dtype == np.int64
    np.testing.assert_array_equal(outputs[0].asnumpy()[:6].ravel(), [1, 2, 4, 7, 11, 16])
    np.testing.assert_array_equal(outputs[0].asnumpy()[6:], 0)     # padding: zeros here
    assert [s.asnumpy().tolist() for s in states] == [[6], [16]]


def test_while_loop_packing_and_limits():
    x = nd.array([1.0, 2.0])
    # a lone NDArray loop variable comes back as one; a lone step output is not listed
    out, v = nd.contrib.while_loop(lambda v: v.sum() < 20, lambda v: (v * 10, v * 2), x,
                                   max_iterations=nd.array([5]))
    assert isinstance(v, nd.NDArray) and isinstance(out, nd.NDArray)
    np.testing.assert_array_equal(v.asnumpy(), [8, 16])
    np.testing.assert_array_equal(out.asnumpy(), [[10, 20], [20, 40], [40, 80], [0, 0], [0, 0]])
    # max_iterations stops the loop before cond does
    out, v = nd.contrib.while_loop(lambda v: True, lambda v: (None, v + 1), [x],
                                   max_iterations=3)
    assert out == [] and isinstance(v, list)
    np.testing.assert_array_equal(v[0].asnumpy(), [4, 5])
    # no step: no outputs, the loop variables as given
    out, v = nd.contrib.while_loop(lambda v: v.sum() < 0, lambda v: (v, v), [x],
                                   max_iterations=4)
    assert out == [] and v[0] is x
    out, v = nd.contrib.while_loop(lambda v: True, lambda v: (v, v), [x], max_iterations=0)
    assert out == [] and v[0] is x


def test_while_loop_gradient_matches_central_differences():
    rng = _rng(3)
    a, b = rng.uniform(0.5, 1.0, size=(3,)), rng.normal(size=(3,))

    def f(a, b):
        def func(i, x):
            x = nd.tanh(x * a + b)
            return [x * i], [i + 1, x]
        outs, (i, x) = nd.contrib.while_loop(lambda i, x: i < 4, func,
                                             [nd.array([1.0], dtype=F64), b],
                                             max_iterations=6)
        return nd.sum(outs[0] * outs[0]) + nd.sum(x)

    got, want = _grads(f, a, b)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"max_iterations": None}, ValueError, r"^while_loop: max_iterations must be specified"),
    ({"max_iterations": -1}, ValueError, r"^while_loop: max_iterations must be >= 0 \(got -1\)"),
    ({"max_iterations": 2.5}, ValueError, r"^while_loop: max_iterations must be an integer"),
    ({"max_iterations": 3, "cond": 1}, TypeError, r"^while_loop: cond must be callable"),
    ({"max_iterations": 3, "func": "f"}, TypeError, r"^while_loop: func must be callable"),
    ({"max_iterations": 3, "loop_vars": []}, ValueError,
     r"^while_loop: loop_vars must contain at least one element"),
    ({"max_iterations": 3, "loop_vars": [1.0]}, TypeError,
     r"^while_loop: loop_vars must be an NDArray or a list of NDArrays"),
    ({"max_iterations": 3, "func": lambda v: (v, [v, v])}, ValueError,
     r"^while_loop: func returned 2 loop variables at step 0, 1 were given"),
    ({"max_iterations": 3, "func": lambda v: (nd.ones((int(v.asscalar()),)), v + 1)},
     ValueError, r"^while_loop: step output of func 0 changes shape between steps"),
    ({"max_iterations": 3, "cond": lambda v: v * nd.ones((2,))}, ValueError,
     r"^while_loop: the value of cond must hold exactly one element"),
])
def test_while_loop_refuses_bad_input(kwargs, exc, match):
    args = {"cond": lambda v: True, "func": lambda v: (v, v + 1), "loop_vars": nd.ones((1,))}
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        nd.contrib.while_loop(**args)


# -- cond --------------------------------------------------------------------------------------

def test_cond_documented_example_and_gradient():
    a, b = nd.array([1]), nd.array([2])
    pred = a * b < 5
    then_func = lambda: (a + 5) * (b + 5)                           # noqa: E731
    else_func = lambda: (a - 5) * (b - 5)                           # noqa: E731
    assert nd.contrib.cond(pred, then_func, else_func).asnumpy().tolist() == [42.0]
    assert nd.contrib.cond(a * b > 5, then_func, else_func).asnumpy().tolist() == [12.0]

    def f(x):
        return nd.contrib.cond(nd.sum(x) > 0, lambda: nd.sum(nd.exp(x)),
                               lambda: nd.sum(x * x * x))
    for x in (np.array([0.3, 0.9]), np.array([-0.7, 0.2])):
        (got,), (want,) = _grads(f, x)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def test_cond_refuses_bad_input():
    with pytest.raises(TypeError, match=r"^cond: then_func must be callable"):
        nd.contrib.cond(True, 1, lambda: 0)
    with pytest.raises(TypeError, match=r"^cond: else_func must be callable"):
        nd.contrib.cond(True, lambda: 0, None)
    with pytest.raises(ValueError, match=r"^cond: pred must hold exactly one element"):
        nd.contrib.cond(nd.ones((2,)), lambda: 0, lambda: 1)


# -- isinf, isfinite, isnan ----------------------------------------------------------------------

@pytest.mark.parametrize("name", ["isinf", "isfinite", "isnan"])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_nan_tests_match_numpy(name, dtype):
    x = np.array([[np.inf, -np.inf, np.nan], [-1.0, 0.0, 3.5]], dtype)
    got = getattr(nd.contrib, name)(nd.array(x, dtype=dtype))
    assert got.dtype == np.dtype(dtype) and got.shape == x.shape
    np.testing.assert_array_equal(got.asnumpy(), getattr(np, name)(x).astype(dtype))
    with pytest.raises(TypeError, match=rf"^{name}: data must be an NDArray"):
        getattr(nd.contrib, name)(x)


# -- boolean_mask --------------------------------------------------------------------------------

def test_boolean_mask_documented_example_and_gradient():
    data = nd.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    out = nd.contrib.boolean_mask(data, nd.array([0, 1, 0]))
    assert out.asnumpy().tolist() == [[4, 5, 6]]
    rng = _rng(4)
    x, index = rng.normal(size=(2, 5, 3)), np.array([1, 0, 1, 1, 0])
    got = nd.contrib.boolean_mask(nd.array(x, dtype=F64), nd.array(index), axis=1)
    np.testing.assert_array_equal(got.asnumpy(), x[:, index != 0])
    head = rng.normal(size=got.shape)
    (g,), (w,) = _grads(lambda a: nd.sum(nd.contrib.boolean_mask(
        a, nd.array(index), axis=1) * nd.array(head, dtype=F64)), x)
    np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-8)


def test_boolean_mask_out_and_errors():
    x = nd.array([[1, 2], [3, 4], [5, 6]])
    out = nd.zeros((2, 2))
    nd.contrib.boolean_mask(x, nd.array([1, 0, 1]), out=out)
    assert out.asnumpy().tolist() == [[1, 2], [5, 6]]
    assert nd.contrib.boolean_mask(x, nd.array([0, 0, 0])).shape == (0, 2)
    with pytest.raises(ValueError, match=r"^_contrib_boolean_mask: index must be 1-D"):
        nd.contrib.boolean_mask(x, nd.array([1, 0]))
    with pytest.raises(ValueError, match=r"^_contrib_boolean_mask: index must be 1-D"):
        nd.contrib.boolean_mask(x, nd.array([[1, 0, 1]]))
    with pytest.raises(TypeError, match=r"^boolean_mask: index must be an NDArray"):
        nd.contrib.boolean_mask(x, [1, 0, 1])


# -- index_copy, index_array, arange_like --------------------------------------------------------

def test_index_copy_documented_example_and_gradients():
    x = nd.zeros((5, 3))
    t = nd.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    got = nd.contrib.index_copy(x, nd.array([0, 4, 2]), t)
    assert got.asnumpy().tolist() == [[1, 2, 3], [0, 0, 0], [7, 8, 9], [0, 0, 0], [4, 5, 6]]
    rng = _rng(5)
    old, new, head = rng.normal(size=(5, 2)), rng.normal(size=(2, 2)), rng.normal(size=(5, 2))
    index = nd.array([3, 1], dtype="int64")
    got, want = _grads(lambda o, n: nd.sum(nd.contrib.index_copy(o, index, n)
                                           * nd.array(head, dtype=F64)), old, new)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-8)


def test_index_array_documented_examples():
    got = nd.contrib.index_array(nd.ones((3, 2)))
    assert got.dtype == np.int64
    assert got.asnumpy().tolist() == [[[0, 0], [0, 1]], [[1, 0], [1, 1]], [[2, 0], [2, 1]]]
    got = nd.contrib.index_array(nd.ones((3, 2, 2)), axes=(1, 0))
    assert got.asnumpy().tolist() == [[[[0, 0], [0, 0]], [[1, 0], [1, 0]]],
                                      [[[0, 1], [0, 1]], [[1, 1], [1, 1]]],
                                      [[[0, 2], [0, 2]], [[1, 2], [1, 2]]]]


def test_arange_like_documented_examples():
    x = nd.array([[0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8]])
    assert nd.contrib.arange_like(x).asnumpy().tolist() == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert nd.contrib.arange_like(x, axis=-1).asnumpy().tolist() == [0, 1, 2, 3]
    got = nd.contrib.arange_like(x, start=0.1, step=0.1, repeat=2)
    want = (0.1 + 0.1 * (np.arange(8) // 2)).reshape(2, 4).astype(np.float32)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)
    assert got.dtype == np.float32
    # positional attributes in MXNet's order: start, step, repeat, ctx, axis
    assert nd.contrib.arange_like(x, 1.0, 2.0, 1, None, 0).asnumpy().tolist() == [1, 3]
    ints = nd.contrib.arange_like(nd.zeros((5,), dtype="int32"), start=2.9, step=-1.5)
    assert ints.dtype == np.int32 and ints.asnumpy().tolist() == [2, 1, 0, -1, -2]


# -- div_sqrt_dim, quadratic, gradientmultiplier, allclose ---------------------------------------

def test_div_sqrt_dim_quadratic_match_numpy():
    x = _rng(6).normal(size=(2, 3, 7))
    got = nd.contrib.div_sqrt_dim(nd.array(x, dtype=F64))
    np.testing.assert_allclose(got.asnumpy(), x / np.sqrt(7), rtol=1e-14)
    q = nd.contrib.quadratic(nd.array([[1, 2], [3, 4]]), a=1, b=1, c=1)
    assert q.asnumpy().tolist() == [[3, 7], [13, 21]]                # MXNet's example
    np.testing.assert_allclose(nd.contrib.quadratic(nd.array(x, dtype=F64), 0.5, -2.0,
                                                    3.0).asnumpy(),
                               0.5 * x * x - 2 * x + 3, rtol=1e-14)


def test_gradientmultiplier_scales_only_the_gradient():
    x = nd.array([1.0, -2.0, 3.0])
    x.attach_grad()
    with autograd.record():
        y = nd.contrib.gradientmultiplier(x * x, scalar=-0.5)
    assert y.asnumpy().tolist() == [1, 4, 9]
    y.backward()
    assert x.grad.asnumpy().tolist() == [-1.0, 2.0, -3.0]


def _mx_allclose(a, b, rtol=1e-5, atol=1e-8, equal_nan=True):
    """MXNet's allclose kernel, element by element in Python floats."""
    rtol, atol = float(np.float32(rtol)), float(np.float32(atol))
    for x, y in zip(np.ravel(a).tolist(), np.ravel(b).tolist()):
        if np.isnan(x) or np.isnan(y):
            ok = equal_nan and np.isnan(x) and np.isnan(y)
        else:
            ok = x == y or abs(x - y) <= atol + rtol * abs(y)
        if not ok:
            return 0
    return 1


def test_allclose_matches_mxnet():
    # MXNet's documented examples, in float64 (float32 rounds 1.00001e10 to 10000100352,
    # beyond the tolerance, in MXNet's kernel as here)
    for a, b, want in (([1e10, 1e-7], [1.00001e10, 1e-8], 0),
                       ([1e10, 1e-8], [1.00001e10, 1e-9], 1)):
        got = nd.contrib.allclose(nd.array(a, dtype=F64), nd.array(b, dtype=F64))
        assert got.shape == () and got.dtype == np.uint8        # MXNet 1.9.1's result
        assert got.asscalar() == want
    rng = _rng(7)
    a = rng.normal(size=(3, 4))
    inf, nan = np.inf, np.nan
    cases = [(a, a + 1e-9, {}), (a, a * (1 + 2e-5), {}), (a, a + 1e-3, {"atol": 1e-2}),
             (a, a * 1.01, {"rtol": 0.02, "atol": 0.0}),
             (np.array([nan, inf]), np.array([nan, inf]), {}),
             (np.array([nan, 1.0]), np.array([nan, 1.0]), {"equal_nan": False}),
             (np.array([nan, 1.0]), np.array([2.0, 1.0]), {}),
             (np.array([inf]), np.array([-inf]), {}),           # close by MXNet's rule
             (np.array([inf]), np.array([-inf]), {"rtol": 0.0}),
             (np.array([inf]), np.array([1.0]), {}), (np.array([1.0]), np.array([inf]), {})]
    results = set()
    for x, y, kw in cases:
        got = nd.contrib.allclose(nd.array(x, dtype=F64), nd.array(y, dtype=F64), **kw)
        want = _mx_allclose(x, y, **kw)
        results.add(want)
        assert got.asscalar() == want, (kw, x, y)
        if np.isfinite(x).all() and np.isfinite(y).all():
            assert want == np.allclose(x, y, **{"equal_nan": True, **kw})
    assert results == {0, 1}
    assert nd.contrib.allclose(nd.array([1, 5], dtype="int32"),
                               nd.array([1, 7], dtype="int32"), atol=2).asscalar() == 1


def test_fft_ifft_against_the_dft_sum():
    x = _rng(8).normal(size=(2, 1, 3, 6))
    d = 6
    k = np.arange(d)
    w = np.exp(-2j * np.pi * np.outer(k, k) / d)               # X_k = sum_j x_j w[j, k]
    got = nd.contrib.fft(nd.array(x, dtype=F64)).asnumpy()
    assert got.shape == (2, 1, 3, 12)
    c = x @ w
    np.testing.assert_allclose(got[..., 0::2], c.real, atol=1e-12)
    np.testing.assert_allclose(got[..., 1::2], c.imag, atol=1e-12)
    back = nd.contrib.ifft(nd.array(got, dtype=F64)).asnumpy()
    np.testing.assert_allclose(back, d * x, atol=1e-11)          # unnormalised, as MXNet
    f32 = nd.contrib.fft(nd.array(x[0, 0], dtype="float32"))
    assert f32.dtype == np.float32 and f32.shape == (3, 12)


def test_count_sketch_documented_example():
    x = nd.array([[1.2, 2.5, 3.4], [3.2, 5.7, 6.6]])
    got = nd.contrib.count_sketch(data=x, h=nd.array([[0, 3, 4]]), s=nd.array([[1, -1, 1]]),
                                  out_dim=5)
    np.testing.assert_allclose(got.asnumpy(), [[1.2, 0, 0, -2.5, 3.4],
                                               [3.2, 0, 0, -5.7, 6.6]], rtol=1e-6)
    # shared buckets add up; the gradient reads the bucket of each input
    x = _rng(9).normal(size=(3, 4))
    h, sgn = nd.array([[1, 1, 0, 2]], dtype=F64), nd.array([[1, -1, -1, 1]], dtype=F64)
    head = _rng(10).normal(size=(3, 3))
    (g,), (w,) = _grads(lambda a: nd.sum(nd.contrib.count_sketch(a, h, sgn, out_dim=3)
                                         * nd.array(head, dtype=F64)), x)
    np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-8)


def test_contrib_namespace():
    for name in ("foreach", "while_loop", "cond", "isinf", "isfinite", "isnan",
                 "boolean_mask", "index_copy", "index_array", "arange_like", "div_sqrt_dim",
                 "quadratic", "gradientmultiplier", "allclose", "fft", "ifft", "count_sketch"):
        assert callable(getattr(nd.contrib, name)), name
        assert name in nd.contrib.__all__
    assert nd.contrib.foreach.__doc__ and nd.contrib.index_copy.__doc__
    from runtime.ops.registry import OPS
    for name in OPS:                     # every contrib operator under its short name
        if name.startswith("_contrib_"):
            assert name[len("_contrib_"):] in nd.contrib.__all__, name
    x = nd.array([[1.0, 2.0]])
    assert nd._contrib_quadratic(x, a=1.0).asnumpy().tolist() == [[1, 4]]
    assert nd.op._contrib_div_sqrt_dim(x).shape == (1, 2)


free_failing_tests(globals())


# -- MXNet 1.x's contrib (test_operator.py / test_contrib_operator.py) cases, ported -------

def test_index_copy_mxnet():
    x = nd.zeros((5, 3))
    t = nd.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    index = nd.array([0, 4, 2], dtype="int64")
    tensor = np.array([[1, 2, 3], [0, 0, 0], [7, 8, 9], [0, 0, 0], [4, 5, 6]])
    x.attach_grad()
    t.attach_grad()
    with autograd.record():
        out = nd.contrib.index_copy(x, index, t)
    out.backward()
    np.testing.assert_array_equal(out.asnumpy(), tensor)
    np.testing.assert_array_equal(x.grad.asnumpy(), [[0] * 3, [1] * 3, [0] * 3, [1] * 3, [0] * 3])
    np.testing.assert_array_equal(t.grad.asnumpy(), np.ones((3, 3)))


def test_boolean_mask_mxnet():
    data = nd.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    for index, want, wgrad in (([0, 1, 0], [[4, 5, 6]], [[0] * 3, [1] * 3, [0] * 3]),
                               ([0, 0, 0], np.zeros((0, 3)), np.zeros((3, 3)))):
        data.attach_grad()
        with autograd.record():
            out = nd.contrib.boolean_mask(data, nd.array(index))
        out.backward()
        np.testing.assert_array_equal(out.asnumpy(), np.asarray(want).reshape(-1, 3))
        np.testing.assert_array_equal(data.grad.asnumpy(), wgrad)
    # accumulated gradient of two masks, three times
    rng = np.random.default_rng(0)
    a = nd.array(rng.integers(0, 100, (100, 30)).astype(np.float32))
    a.attach_grad(grad_req="add")
    bi = nd.array(rng.integers(0, 100, 100) > 50)
    ci = nd.array(rng.integers(0, 100, 100) < 50)
    for _ in range(3):
        with autograd.record():
            b = nd.contrib.boolean_mask(a, bi)
            c = nd.contrib.boolean_mask(a, ci)
            su = b.sum() + c.sum()
        su.backward()
    grad = np.tile((bi.asnumpy() + ci.asnumpy()).reshape(-1, 1), (1, 30)) * 3
    np.testing.assert_allclose(a.grad.asnumpy(), grad)
    np.testing.assert_array_equal(b.asnumpy(), a.asnumpy()[bi.asnumpy().astype(bool)])


@pytest.mark.parametrize("shape", [(10,), (7, 5, 29), (5, 7, 11, 3, 2, 4), (2, 0, 3)])
def test_index_array_mxnet(shape):
    want = np.stack(np.mgrid[tuple(slice(0, x) for x in shape)], axis=-1)
    out = nd.contrib.index_array(nd.ones(shape))
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out.asnumpy(), want.reshape(shape + (len(shape),)))
    if len(shape) == 6:
        for axes in [(3,), (4, 1), (5, 1, 3), (-1,), (-5, -1, -3)]:
            np.testing.assert_array_equal(
                nd.contrib.index_array(nd.ones(shape), axes=axes).asnumpy(),
                want[..., list(axes)])
    assert nd.contrib.index_array(nd.ones(())).shape == (0,)


def test_arange_like_mxnet():
    for sh in [(10,), (10, 20), (10, 20, 30)]:
        data = nd.array(np.random.rand(*sh))
        for axis in (0, -1):
            np.testing.assert_array_equal(
                nd.contrib.arange_like(data, start=0, axis=axis).asnumpy(),
                np.arange(sh[axis]))
        np.testing.assert_array_equal(nd.contrib.arange_like(data, start=0).asnumpy(),
                                      np.arange(np.prod(sh)).reshape(sh))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_quadratic_and_gradientmultiplier_mxnet(dtype):
    rng = np.random.default_rng(1)
    a, b, c = rng.random(3)
    m = rng.random() - 0.5
    tol = 1e-2 if dtype is np.float16 else 1e-5
    for ndim in range(1, 6):
        shape = tuple(rng.integers(1, 6, ndim))
        x_np = rng.standard_normal(shape).astype(dtype)
        x = nd.array(x_np, dtype=dtype)
        x.attach_grad()
        with autograd.record():
            y = nd.contrib.quadratic(x, a=a, b=b, c=c)
        y.backward()
        np.testing.assert_allclose(y.asnumpy(), a * x_np ** 2 + b * x_np + c, rtol=tol, atol=tol)
        np.testing.assert_allclose(x.grad.asnumpy(), 2 * a * x_np + b, rtol=tol, atol=tol)
        with autograd.record():
            y = nd.contrib.gradientmultiplier(nd.contrib.quadratic(x, a=a, b=b, c=c), scalar=m)
        y.backward()
        np.testing.assert_allclose(x.grad.asnumpy(), (2 * a * x_np + b) * m, rtol=tol,
                                   atol=tol)


def test_div_sqrt_dim_mxnet():
    x_np = np.random.rand(3, 4, 9).astype(np.float32)
    x = nd.array(x_np)
    x.attach_grad()
    with autograd.record():
        y = nd.contrib.div_sqrt_dim(x)
    y.backward()
    np.testing.assert_allclose(y.asnumpy(), x_np / 3, rtol=1e-6)
    np.testing.assert_allclose(x.grad.asnumpy(), np.full(x_np.shape, 1 / 3), rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_allclose_mxnet(dtype):
    rng = np.random.default_rng(2)
    rtol = (1e-2 if dtype is np.float16 else 1e-5) * (1 + (2 * rng.random() - 1) / 100)
    atol = (1e-4 if dtype is np.float16 else 1e-7) * (1 + (2 * rng.random() - 1) / 100)
    for ndim in range(1, 10):
        shape = tuple(rng.integers(1, 9, ndim))
        a_np = rng.standard_normal(shape).astype(dtype)
        # the perturbation in float64 (1e7 overflows float16; MXNet's test divides there,
        # giving b == a, which the float64 form also gives once cast)
        b_np = (a_np + rng.standard_normal(shape) / 10000000).astype(dtype)
        want = np.allclose(a_np, b_np, rtol, atol)
        got = nd.contrib.allclose(nd.array(a_np, dtype=dtype), nd.array(b_np, dtype=dtype),
                                  rtol=rtol, atol=atol)
        assert (got.asnumpy() == 1) == want


@pytest.mark.parametrize("shape", [(3, 4), (3, 5), (2, 3, 2, 6)])
def test_fft_ifft_mxnet(shape):
    rng = np.random.default_rng(3)
    x_np = rng.normal(size=shape).astype(np.float32)
    x = nd.array(x_np)
    x.attach_grad()
    with autograd.record():
        y = nd.contrib.fft(x, compute_size=128)
    c = np.fft.fft(x_np.astype(np.float64), axis=-1)
    want = np.empty(shape[:-1] + (2 * shape[-1],))
    want[..., 0::2], want[..., 1::2] = c.real, c.imag
    np.testing.assert_allclose(y.asnumpy(), want, rtol=1e-3, atol=1e-5)
    g = rng.normal(-3, 3, want.shape).astype(np.float32)
    y.backward(nd.array(g))
    gc = g[..., 0::2] + 1j * g[..., 1::2]
    np.testing.assert_allclose(x.grad.asnumpy() / shape[-1], np.fft.ifft(gc, axis=-1).real,
                               rtol=1e-3, atol=1e-5)
    # ifft of interleaved data: the unnormalised inverse, real part
    z = nd.array(want.astype(np.float32))
    z.attach_grad()
    with autograd.record():
        w = nd.contrib.ifft(z)
    np.testing.assert_allclose(w.asnumpy() / shape[-1], x_np, rtol=1e-3, atol=1e-4)
    g2 = rng.normal(-3, 3, shape).astype(np.float32)
    w.backward(nd.array(g2))
    np.testing.assert_allclose(z.grad.asnumpy()[..., 0::2], np.fft.fft(g2, axis=-1).real,
                               rtol=1e-3, atol=1e-3)


def test_count_sketch_mxnet():
    rng = np.random.default_rng(4)
    n, in_dim, out_dim = 4, 7, 5
    data = rng.uniform(-10, 10, (n, in_dim)).astype(np.float32)
    h = rng.integers(0, out_dim, (1, in_dim)).astype(np.float32)
    s = rng.choice([-1, 1], (1, in_dim)).astype(np.float32)
    want = np.zeros((n, out_dim))
    for i in range(in_dim):
        want[:, int(h[0, i])] += data[:, i] * s[0, i]
    x = nd.array(data)
    x.attach_grad()
    with autograd.record():
        y = nd.contrib.count_sketch(x, nd.array(h), nd.array(s), out_dim=out_dim)
    np.testing.assert_allclose(y.asnumpy(), want, rtol=1e-5, atol=1e-5)
    g = rng.uniform(-1, 1, (n, out_dim)).astype(np.float32)
    y.backward(nd.array(g))
    np.testing.assert_allclose(x.grad.asnumpy(), g[:, h[0].astype(int)] * s, rtol=1e-6)


# -- MXNet 1.x's control flow (test_contrib_control_flow.py, imperative) cases, ported -----

def test_while_loop_mxnet_shapes():
    def cond(i, s):
        return i <= 5

    def func(i, s):
        return [i + s], [i + 1, s + i]
    outs, (i, s) = nd.contrib.while_loop(
        cond, func, (nd.array([0], dtype="int64"), nd.array([1], dtype="int64")),
        max_iterations=10)
    assert isinstance(outs, list) and len(outs) == 1 and outs[0].shape == (10, 1)
    np.testing.assert_array_equal(outs[0].asnumpy()[:6, 0], [1, 2, 4, 7, 11, 16])
    assert i.asnumpy()[0] == 6 and s.asnumpy()[0] == 16
    # no step output: [] and the final loop vars
    outs, v = nd.contrib.while_loop(lambda v: v < 3, lambda v: (None, v + 1), nd.array([0]),
                                    max_iterations=5)
    assert outs == [] and v.asnumpy()[0] == 3


def test_while_loop_simple_forward_mxnet():
    # test_contrib_control_flow.py's test_while_loop_simple_forward, imperative
    def run(cond, func, *loop_vars):
        return nd.contrib.while_loop(cond=cond, func=func, loop_vars=loop_vars,
                                     max_iterations=1000)

    def i64(v):
        return nd.array([v], dtype="int64")
    _, r = run(lambda i, s: i <= 5, lambda i, s: (None, (i + 1, s + i)), i64(1), i64(0))
    assert (r[0].asscalar(), r[1].asscalar()) == (6, 15)
    _, r = run(lambda i, s, t: t, lambda i, s, t: (None, (i + 1, s + i, t)), i64(1), i64(0),
               i64(1))
    assert (r[0].asscalar(), r[1].asscalar(), r[2].asscalar()) == (1001, 500500, 1)
    _, r = run(lambda i, s, f: f, lambda i, s, f: (None, (i + 1, s + i, f)), i64(1), i64(0),
               i64(0))
    assert (r[0].asscalar(), r[1].asscalar(), r[2].asscalar()) == (1, 0, 0)
    outs, (ri, rs) = run(lambda i, s: i <= 100, lambda i, s: (i, (i + 1, s + i)), i64(1),
                         i64(0))
    assert outs.shape == (1000, 1)
    assert (outs.asnumpy()[:100] == np.arange(1, 101).reshape(100, 1)).all()
    assert (ri.asscalar(), rs.asscalar()) == (101, 5050)
    outs, (ri, rs, _) = run(lambda i, s, t: t, lambda i, s, t: (i, (i + 1, s + i, t)),
                            i64(1), i64(0), i64(1))
    assert (outs.asnumpy() == np.arange(1, 1001).reshape(1000, 1)).all()
    assert (ri.asscalar(), rs.asscalar()) == (1001, 500500)
    outs, (ri, rs, _) = run(lambda i, s, f: f, lambda i, s, f: (i, (i + 1, s + i, f)),
                            i64(1), i64(0), i64(0))
    assert outs == [] and (ri.asscalar(), rs.asscalar()) == (1, 0)


def test_foreach_mxnet_nested():
    data = nd.array(np.arange(12).reshape(3, 4))
    x = data.copy()
    x.attach_grad()
    with autograd.record():
        outs, states = nd.contrib.foreach(
            lambda d, s: ([d * 2, [d + s[0]]], [s[0] + d]), x, [nd.zeros((4,))])
        total = outs[0].sum() + outs[1][0].sum() + states[0].sum()
    total.backward()
    assert outs[0].shape == (3, 4) and outs[1][0].shape == (3, 4)
    np.testing.assert_array_equal(states[0].asnumpy(), data.asnumpy().sum(0))
    # d/dx_t: 2 (outs0) + 1 + (later steps' use of s) + 1 (states)
    np.testing.assert_array_equal(x.grad.asnumpy()[:, 0], [2 + 1 + 2 + 1, 2 + 1 + 1 + 1,
                                                           2 + 1 + 0 + 1])


# -- rand_zipfian ----------------------------------------------------------------------------

def _zipf_p(c, range_max):
    return np.log((c + 2.0) / (c + 1.0)) / np.log(range_max + 1.0)


def test_rand_zipfian_counts_and_distribution():
    rt.random.seed(17)
    true = nd.array([0, 3, 19], dtype="int32")
    s, e_true, e_s = nd.contrib.rand_zipfian(true, 20000, 20)
    assert (s.dtype, e_true.dtype, e_s.dtype) == (np.int64, np.float64, np.float64)
    assert s.shape == (20000,) and e_true.shape == (3,) and e_s.shape == (20000,)
    sv = s.asnumpy()
    assert sv.min() >= 0 and sv.max() < 20
    np.testing.assert_allclose(e_true.asnumpy(), _zipf_p(np.array([0, 3, 19]), 20) * 20000,
                               rtol=1e-12)
    np.testing.assert_allclose(e_s.asnumpy(), _zipf_p(sv, 20) * 20000, rtol=1e-12)
    # the draws follow P(c): each class's frequency within 5 standard errors
    p = _zipf_p(np.arange(20), 20)
    assert abs(p.sum() - 1.0) < 1e-12
    freq = np.bincount(sv, minlength=20) / 20000.0
    assert np.all(np.abs(freq - p) < 5 * np.sqrt(p * (1 - p) / 20000))


def test_rand_zipfian_symbol_draws_what_nd_draws():
    true = nd.array([1, 4])
    rt.random.seed(3)
    want = [a.asnumpy() for a in nd.contrib.rand_zipfian(true, 50, 9)]
    outs = rt.sym.contrib.rand_zipfian(rt.sym.var("t"), 50, 9)
    ex = rt.sym.Group(list(outs)).bind(rt.cpu(), {"t": true})
    rt.random.seed(3)
    got = [a.asnumpy() for a in ex.forward()]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("call,exc,match", [
    (lambda: nd.contrib.rand_zipfian(nd.array([1]), 0, 5), ValueError,
     r"^rand_zipfian: num_sampled must be an integer >= 1 \(got 0\)"),
    (lambda: nd.contrib.rand_zipfian(nd.array([1]), 3, 2.5), ValueError,
     r"^rand_zipfian: range_max must be an integer >= 1 \(got 2.5\)"),
    (lambda: nd.contrib.rand_zipfian([1], 3, 5), TypeError,
     r"^rand_zipfian: true_classes must be an NDArray \(got list\)"),
])
def test_rand_zipfian_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
