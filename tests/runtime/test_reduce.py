"""Reductions against NumPy/SciPy: values over dtypes, axes, keepdims and exclude (MXNet
shapes), zero-size axes, requests, gradients (float64 central differences), bad input."""

import itertools
import warnings

import numpy as np
import pytest
import scipy.special as sps
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from runtime import nd
from runtime.ops import registry
from tests.runtime.conftest import assert_same
from tests.runtime.opcheck import check_grad, check_requests, run

REDUCERS = ["sum", "mean", "prod", "max", "min", "logsumexp", "norm"]
SHAPES = [(), (5,), (3, 4), (2, 3, 4), (0, 3), (2, 0, 3)]


def mx_axes(ndim, axis, exclude):
    """The axes MXNet reduces, for the NumPy reference (axis=() is every axis, as None)."""
    if ndim == 0:
        return ()
    if axis is None or axis == ():
        return () if exclude else tuple(range(ndim))
    axes = {a % ndim for a in ((axis,) if isinstance(axis, int) else axis)}
    if exclude:
        axes = set(range(ndim)) - axes
    return tuple(sorted(axes))


def mx_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if i in axes else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in axes) or (1,)


def _np_norm(x, axis, keepdims, ord=2):
    a = np.abs(x.astype(np.float64))
    r = np.sum(a, axis=axis, keepdims=keepdims) if ord == 1 else \
        np.sqrt(np.sum(a * a, axis=axis, keepdims=keepdims))
    return r


def _np_logsumexp(x, axis, keepdims):
    if axis == ():
        return x.copy()
    if x.size == 0:                    # (scipy 1.17 fails on empty arrays with tuple axes)
        with np.errstate(divide="ignore"):
            return np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims))
    return sps.logsumexp(x, axis=axis, keepdims=keepdims)


REF = {
    "sum": lambda x, axis: np.sum(x, axis=axis, keepdims=True, dtype=x.dtype),
    "mean": lambda x, axis: np.mean(x, axis=axis, keepdims=True, dtype=x.dtype),
    "prod": lambda x, axis: np.prod(x, axis=axis, keepdims=True, dtype=x.dtype),
    "max": lambda x, axis: np.max(x, axis=axis, keepdims=True),
    "min": lambda x, axis: np.min(x, axis=axis, keepdims=True),
    "logsumexp": lambda x, axis: _np_logsumexp(x.astype(np.float64), axis, True),
    "norm": lambda x, axis: _np_norm(x, axis, True),
}


def reference(name, x, axis=None, keepdims=False, exclude=False):
    axes = mx_axes(x.ndim, axis, exclude)
    r = np.asarray(REF[name](x, axes))
    return r.astype(x.dtype).reshape(mx_shape(x.shape, axes, keepdims))


def values(name, shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        lo = 0 if np.dtype(dtype).kind == "u" else -3
        return rng.integers(lo, 4, shape).astype(dtype)
    if name == "prod":
        return rng.uniform(0.6, 1.4, shape).astype(dtype)
    return rng.uniform(-2, 2, shape).astype(dtype)


def axis_choices(ndim):
    out = [None]
    if ndim:
        out += [0, -1, tuple(range(ndim))]
    if ndim >= 2:
        out += [(0, -1), 1]
    if ndim >= 3:
        out += [(1,), (-3, 2)]
    return out


TOL = {"float16": 5e-3, "float32": 2e-5, "float64": 1e-12}


def assert_close(got, want):
    assert got.shape == want.shape, (got.shape, want.shape)
    assert np.dtype(got.dtype) == want.dtype, (got.dtype, want.dtype)
    g = got.asnumpy()
    if want.dtype.kind == "f":
        t = TOL[want.dtype.name]
        np.testing.assert_allclose(g.astype(np.float64), want.astype(np.float64),
                                   rtol=t, atol=t)
    else:
        np.testing.assert_array_equal(g, want)


def dtypes_for(name):
    if name == "logsumexp":
        return ["float32", "float64"]
    return ["float32", "float64", "int32", "uint8"] if name != "prod" else \
        ["float32", "float64", "int32"]


@pytest.mark.parametrize("name", REDUCERS)
def test_values_over_axes_keepdims_exclude(name):
    for dtype, shape in itertools.product(dtypes_for(name), SHAPES):
        x = values(name, shape, dtype)
        for axis, keepdims, exclude in itertools.product(axis_choices(len(shape)),
                                                         (False, True), (False, True)):
            attrs = {"axis": axis, "keepdims": keepdims}
            if name != "norm":
                attrs["exclude"] = exclude
            elif exclude:
                continue
            if name == "norm" and axis is not None and not isinstance(axis, int) \
                    and len(axis) > 2:
                continue
            axes = mx_axes(x.ndim, axis, exclude if name != "norm" else False)
            if name in ("max", "min") and any(shape[a] == 0 for a in axes):
                with pytest.raises(ValueError, match=f"{name}: cannot reduce over a zero-size"):
                    run(name, [x], attrs)
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)      # mean of empty
                want = reference(name, x, axis, keepdims, exclude if name != "norm" else False)
                got = run(name, [x], attrs)[0]
            assert_close(got, want)


@pytest.mark.parametrize("name", ["sum", "max", "min", "norm", "logsumexp", "mean"])
def test_float16_accumulates_reasonably(name):
    x = values(name, (7, 9), "float16")
    want = reference(name, x.astype(np.float64), 1).astype(np.float16)
    assert_close(run(name, [x], {"axis": 1})[0], want)


def test_aliases_and_methods():
    x = values("sum", (3, 4), "float32")
    assert_same(nd.sum_axis(nd.array(x), axis=1), reference("sum", x, 1))
    assert_same(nd.max_axis(nd.array(x), axis=0), reference("max", x, 0))
    assert_same(nd.min_axis(nd.array(x), axis=0), reference("min", x, 0))
    assert registry.get("max_axis") is registry.get("max")
    assert_same(nd.array(x).max(axis=1), reference("max", x, 1))


def test_full_reduction_gives_shape_1_like_mxnet():
    x = nd.array(values("sum", (2, 3), "float32"))
    for name in REDUCERS:
        assert getattr(nd, name)(x).shape == (1,)
        assert getattr(nd, name)(x, keepdims=True).shape == (1, 1)
    for name in ("argmax", "argmin"):
        assert getattr(nd, name)(x).shape == (1,)
        assert getattr(nd, name)(x, keepdims=True).shape == (1, 1)


def test_zero_d_input_reduces_its_value():
    x = np.array(1.5, np.float32)
    for name in ("sum", "prod", "max", "min", "mean"):
        assert_same(run(name, [x], {"axis": 0})[0], np.array([1.5], np.float32))
        assert_same(run(name, [x], {"keepdims": True})[0], np.array(1.5, np.float32))
    assert_same(run("argmax", [x])[0], np.array([0], np.float32))
    assert_same(run("norm", [np.array(-2.0)])[0], np.array([2.0]))


def test_one_axis_rule_a_zero_d_array_has_no_axis():
    """registry.normalize_axis refuses every axis of a 0-d array (NumPy's
    normalize_axis_index); reductions take 0 or -1 of it, as NumPy's and MXNet's do."""
    with pytest.raises(ValueError, match=r"^op: axis 0 is out of range for an array of 0 "
                                         r"dimension\(s\)$"):
        registry.normalize_axis("op", 0, 0)
    assert registry.normalize_axis("op", -1, 3) == 2
    x = nd.array(np.float32(1.5))
    for name in ("sum", "argmax", "norm"):
        assert getattr(nd, name)(x, axis=-1).shape == (1,)
        with pytest.raises(ValueError, match=f"^{name}: axis 1 is out of range for an array "
                                             "of 0 dimension"):
            getattr(nd, name)(x, axis=1)
    for call in (lambda: nd.flip(x, axis=0), lambda: nd.take(x, nd.array([0]), axis=0),
                 lambda: nd.Dropout(x, p=0.5, axes=(0,), mode="always")):
        with pytest.raises(ValueError, match="is out of range for an array of 0 dimension"):
            call()


def test_zero_size_reductions_follow_numpy():
    e = np.zeros((0, 3), np.float32)
    assert_same(run("sum", [e], {"axis": 0})[0], np.zeros(3, np.float32))
    assert_same(run("prod", [e], {"axis": 0})[0], np.ones(3, np.float32))
    assert_same(run("prod", [np.zeros(0, np.int32)])[0], np.ones(1, np.int32))
    assert_same(run("norm", [e], {"axis": 0})[0], np.zeros(3, np.float32))
    assert_same(run("logsumexp", [e], {"axis": 0})[0], np.full(3, -np.inf, np.float32))
    assert_same(run("max", [e], {"axis": 1})[0], np.zeros(0, np.float32))
    for name in ("max", "min", "max_axis"):
        with pytest.raises(ValueError, match=f"^{name[:3]}: cannot reduce over a zero-size axis"):
            run(name, [e])
    for name in ("argmax", "argmin"):
        with pytest.raises(ValueError, match=f"^{name}: cannot search a zero-size axis"):
            run(name, [e], {"axis": 0})
    assert run("argmax", [e], {"axis": 1})[0].shape == (0,)


# -- argmax / argmin ---------------------------------------------------------------------

@pytest.mark.parametrize("name, ref", [("argmax", np.argmax), ("argmin", np.argmin)])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "uint8"])
def test_arg_reductions_match_numpy_with_the_input_dtype(name, ref, dtype):
    x = values("sum", (3, 4, 5), dtype, seed=3)
    for axis in (0, 1, 2, -1, -3):
        for keepdims in (False, True):
            got = run(name, [x], {"axis": axis, "keepdims": keepdims})[0]
            want = ref(x, axis=axis, keepdims=keepdims).astype(dtype)
            assert_same(got, want)
    assert_same(run(name, [x])[0], np.array([ref(x)], dtype))
    assert_same(run(name, [x], {"keepdims": True})[0], np.full((1, 1, 1), ref(x), dtype))
    assert_same(run(name, [x[0, 0]], {"axis": 0})[0], np.array([ref(x[0, 0])], dtype))


def test_arg_reductions_ties_first_and_no_gradient():
    x = np.array([[1, 3, 3], [2, 2, 0]], np.float32)
    assert_same(nd.argmax(nd.array(x), axis=1), np.array([1, 0], np.float32))
    assert_same(nd.argmin(nd.array(x), axis=0), np.array([0, 1, 1], np.float32))
    assert not registry.get("argmax").differentiable
    assert not registry.get("argmin").differentiable


def test_arg_reduction_errors_leave_out_unchanged():
    out = nd.array([7, 7, 7], dtype="int8")
    x = nd.zeros((3, 200), dtype="int8")
    with pytest.raises(ValueError, match="argmax: indices up to 199 do not fit"):
        nd.argmax(x, axis=1, out=out)
    assert_same(out, np.full(3, 7, np.int8))
    with pytest.raises(TypeError, match="argmin: bool input is not supported"):
        nd.argmin(nd.zeros(3, dtype="bool"))
    with pytest.raises(TypeError,
                       match=r"argmax: axis must be an integer or None \(got \(0, 1\)\)"):
        nd.argmax(nd.zeros((2, 2)), axis=(0, 1))
    with pytest.raises(ValueError, match="argmax: axis 2 is out of range"):
        nd.argmax(nd.zeros((2, 2)), axis=2)


# -- logsumexp, norm specifics -----------------------------------------------------------

def test_logsumexp_is_stable_and_matches_scipy_specials():
    x = np.array([[1000.0, 1000.0], [-1000.0, -1001.0], [-np.inf, -np.inf],
                  [np.inf, 1.0], [np.nan, 0.0]])
    got = nd.logsumexp(nd.array(x, dtype="float64"), axis=1).asnumpy()
    np.testing.assert_allclose(got, sps.logsumexp(x, axis=1))
    with pytest.raises(TypeError, match=r"logsumexp: needs a floating-point input \(got int32\)"):
        nd.logsumexp(nd.zeros(3, dtype="int32"))


def test_norm_ord1_and_2_axes():
    x = values("norm", (2, 3, 4), "float64")
    for ord_ in (1, 2):
        for axis in (None, 1, -1, (0, 2), (2, 1)):
            np_axis = None if axis is None else axis
            want = _np_norm(x, np_axis, False, ord_)
            got = nd.norm(nd.array(x, dtype="float64"), ord=ord_, axis=axis).asnumpy()
            np.testing.assert_allclose(got, np.reshape(want, got.shape), rtol=1e-12)
    big = np.array([1e30, 1e30], np.float32)                    # squares overflow float32
    np.testing.assert_allclose(nd.norm(nd.array(big)).asnumpy(), [np.sqrt(2) * 1e30],
                               rtol=1e-6)
    tiny = np.array([3e-30, 4e-30], np.float32)                  # squares underflow
    np.testing.assert_allclose(nd.norm(nd.array(tiny)).asnumpy(), [5e-30], rtol=1e-6)
    assert_same(nd.norm(nd.array([3, -4], dtype="int8")), np.array([5], np.int8))
    assert_same(nd.norm(nd.array([-128, 0], dtype="int8"), ord=1), np.array([-128], np.int8))
    inf = nd.norm(nd.array([np.inf, 1.0])).asnumpy()
    assert inf[0] == np.inf


# -- requests ------------------------------------------------------------------------------

REQUEST_CASES = [
    ("sum", {"axis": 1}), ("mean", {"axis": (0, 1), "keepdims": True}),
    ("prod", {"axis": 0, "exclude": True}), ("max", {}), ("min", {"axis": -1}),
    ("norm", {"ord": 1, "axis": 1}), ("norm", {}), ("argmax", {"axis": 0}),
    ("argmin", {"axis": 1, "keepdims": True}), ("logsumexp", {"axis": 1}),
]


@pytest.mark.parametrize("name, attrs", REQUEST_CASES)
def test_requests(name, attrs):
    check_requests(name, [values(name, (3, 4), "float32", seed=5)], attrs)


# -- gradients -----------------------------------------------------------------------------

GRAD_CASES = [
    ({}, (3, 4)), ({"axis": 1}, (3, 4)), ({"axis": (0, 2), "keepdims": True}, (2, 3, 4)),
    ({"axis": -1, "exclude": True}, (2, 3, 4)), ({"axis": 0}, (5,)), ({"axis": 0}, ()),
]


@pytest.mark.parametrize("name", ["sum", "mean", "prod", "max", "min", "logsumexp"])
@pytest.mark.parametrize("attrs, shape", GRAD_CASES)
def test_gradients(name, attrs, shape):
    check_grad(name, [values(name, shape, "float64", seed=7)], attrs)


@pytest.mark.parametrize("attrs", [{}, {"ord": 1}, {"axis": 1}, {"ord": 1, "axis": (0, 1)},
                                   {"axis": -1, "keepdims": True}])
def test_norm_gradients(attrs):
    x = values("norm", (3, 4), "float64", seed=8)
    x = np.where(np.abs(x) < 0.1, 0.5, x)                         # away from the |x| kink
    check_grad("norm", [x], attrs)


def test_gradients_of_zero_size_reductions_have_the_input_shape():
    for name, shape, attrs in (("sum", (2, 0), {"axis": 1}), ("sum", (2, 0), {"axis": 0}),
                               ("mean", (0, 3), {"axis": 1}), ("prod", (2, 0), {"axis": 0}),
                               ("logsumexp", (0, 2), {"axis": 1}),
                               ("norm", (2, 0), {"axis": 1})):
        x = nd.zeros(shape, dtype="float64")
        op = registry.get(name)
        out = op.parse_attrs(attrs)
        y = run(name, [x], attrs)
        g = op.gradient(out, [x], y, [nd.ones(y[0].shape, dtype="float64")])
        assert g[0].shape == shape


def grad_of(name, x, attrs=None, head=None):
    op = registry.get(name)
    xs = [nd.array(x, dtype="float64")]
    y = run(name, xs, attrs)
    h = np.ones(y[0].shape) if head is None else head
    return op.gradient(op.parse_attrs(attrs or {}), xs, y,
                       [nd.array(h, dtype="float64")])[0].asnumpy()


def test_prod_gradient_is_exact_with_zeros():
    x = np.array([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0], [1.0, 2.0, 4.0]])
    np.testing.assert_array_equal(grad_of("prod", x, {"axis": 1}),
                                  [[0, 6, 0], [0, 0, 0], [8, 4, 2]])
    np.testing.assert_array_equal(grad_of("prod", np.array([0.0])), [1.0])


def test_max_min_gradient_goes_to_all_ties_like_mxnet():
    x = np.array([[1.0, 3.0, 3.0], [2.0, 0.0, 0.0]])
    np.testing.assert_array_equal(grad_of("max", x, {"axis": 1}, np.array([2.0, 5.0])),
                                  [[0, 2, 2], [5, 0, 0]])
    np.testing.assert_array_equal(grad_of("min", x, {"axis": 1}, np.array([2.0, 5.0])),
                                  [[2, 0, 0], [0, 5, 5]])


def test_norm_gradient_is_zero_at_zero():
    np.testing.assert_array_equal(grad_of("norm", np.zeros((2, 3)), {"axis": 1}),
                                  np.zeros((2, 3)))
    np.testing.assert_array_equal(grad_of("norm", np.array([0.0, -2.0]), {"ord": 1}),
                                  [0.0, -1.0])


def test_logsumexp_gradient_is_the_softmax():
    x = values("logsumexp", (3, 4), "float64")
    want = np.exp(x - sps.logsumexp(x, axis=1, keepdims=True))
    np.testing.assert_allclose(grad_of("logsumexp", x, {"axis": 1}), want, rtol=1e-12)


# -- bad input -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", REDUCERS)
def test_bad_axes_and_attribute_types(name):
    x = nd.zeros((2, 3))
    with pytest.raises(ValueError, match=f"^{name}: axis 2 is out of range for an array of 2"):
        getattr(nd, name)(x, axis=2)
    with pytest.raises(ValueError, match=f"^{name}: axis -3 is out of range"):
        getattr(nd, name)(x, axis=(0, -3))
    with pytest.raises(ValueError, match=f"^{name}: axis \\(1, -1\\) repeats an axis"):
        getattr(nd, name)(x, axis=(1, -1))
    with pytest.raises(TypeError, match=f"^{name}: axis must be an int or a tuple of ints"):
        getattr(nd, name)(x, axis="0")
    with pytest.raises(TypeError, match=f"^{name}: keepdims must be a bool"):
        getattr(nd, name)(x, keepdims="yes")


def test_norm_bad_attributes():
    x = nd.zeros((2, 3, 4))
    with pytest.raises(ValueError, match=r"^norm: ord must be 1 or 2 \(got 3\)"):
        nd.norm(x, ord=3)
    with pytest.raises(TypeError, match="^norm: ord must be an integer"):
        nd.norm(x, ord="fro")
    with pytest.raises(ValueError, match=r"^norm: axis must be an int or a 2-tuple"):
        nd.norm(x, axis=(0, 1, 2))
    with pytest.raises(TypeError, match="^norm: unknown attribute 'exclude'"):
        nd.norm(x, exclude=True)
    with pytest.raises(TypeError, match="^norm: bool input is not supported"):
        nd.norm(nd.zeros(2, dtype="bool"))


def test_failed_reduction_leaves_out_and_input_unchanged():
    x = nd.array([[1, 2], [3, 4]])
    out = nd.array([9, 9])
    with pytest.raises(ValueError, match="sum: axis 5 is out of range"):
        nd.sum(x, axis=5, out=out)
    with pytest.raises(ValueError, match="max: cannot reduce over a zero-size axis"):
        nd.max(nd.zeros((0, 2)), axis=0, out=out)
    with pytest.raises(ValueError, match=r"prod: out has shape \(2,\), the result has \(1,\)"):
        nd.prod(x, out=out)
    assert_same(out, np.array([9, 9], np.float32))
    assert_same(x, np.array([[1, 2], [3, 4]], np.float32))
    assert nd.sum(x, axis=0, out=out) is out
    assert_same(out, np.array([4, 6], np.float32))


# -- property test ----------------------------------------------------------------------------

@settings(max_examples=80, deadline=None)
@given(st.data())
def test_reductions_match_numpy_over_random_axes(data):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4))
    ndim = len(shape)
    x = data.draw(hnp.arrays(np.float64, shape, elements=st.floats(-3, 3)))
    if ndim:
        axes = data.draw(st.lists(st.integers(-ndim, ndim - 1), unique_by=lambda a: a % ndim,
                                  max_size=ndim))
        axis = data.draw(st.sampled_from([None, tuple(axes)] + ([axes[0]] if axes else [])))
    else:
        axis = None
    keepdims = data.draw(st.booleans())
    exclude = data.draw(st.booleans())
    name = data.draw(st.sampled_from(["sum", "mean", "prod", "max", "min", "logsumexp"]))
    attrs = {"axis": axis, "keepdims": keepdims, "exclude": exclude}
    red = mx_axes(ndim, axis, exclude)
    if name in ("max", "min") and any(shape[a] == 0 for a in red):
        with pytest.raises(ValueError, match=f"^{name}: cannot reduce over a zero-size axis"):
            run(name, [x], attrs)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = reference(name, x, axis, keepdims, exclude)
        got = run(name, [x], attrs)[0]
    assert got.shape == want.shape
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-10, atol=1e-12)


def test_integer_and_bool_reductions_keep_the_dtype():
    """MXNet's rule, told in the docs of sum, mean and prod (NumPy would give 2, 100.0 ...)."""
    b = nd.array([True, True, False], dtype="bool")
    assert_same(nd.sum(b), np.array([True]))                 # a logical or, not a count
    assert_same(b.sum(), np.array([True]))                   # the direct ufunc-loop road
    assert_same(nd.mean(b), np.array([True]))
    assert_same(nd.prod(b), np.array([False]))
    i8 = nd.array([100, 100, 100], dtype="int8")
    assert_same(nd.sum(i8), np.array([44], np.int8))           # 300 wraps around
    assert_same(nd.mean(i8), np.array([14], np.int8))          # 44 / 3, truncated
    assert_same(nd.mean(i8, axis=0, keepdims=True), np.array([14], np.int8))
    assert_same(nd.mean(nd.array([-1, -2], dtype="int32")), np.array([-1], np.int32))
    assert_same(nd.sum(i8.astype("int64")), np.array([300]))
