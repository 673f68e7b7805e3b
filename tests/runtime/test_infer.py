"""runtime._infer: attribute parsing, NumPy broadcasting and axis normalisation, against
NumPy and the rules the registry documents."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runtime._infer import Attr, broadcast_shapes, normalize_axis, parse_attrs, reduced_axes

shapes = st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple)


@settings(max_examples=300, deadline=None)
@given(st.lists(shapes, min_size=1, max_size=4))
def test_broadcast_shapes_is_numpy_s(shape_list):
    try:
        want = np.broadcast_shapes(*shape_list)
    except ValueError:
        with pytest.raises(ValueError, match=r"^op: shapes .* are not broadcastable$"):
            broadcast_shapes("op", *shape_list)
        return
    got = broadcast_shapes("op", *shape_list)
    assert got == want and type(got) is tuple
    assert all(type(d) is int for d in got)


def test_broadcast_shapes_of_equal_shapes_returns_early():
    s = (2, 3)
    assert broadcast_shapes("add", s, (2, 3)) == s
    with pytest.raises(ValueError, match=r"^add: shapes \(2, 3\), \(4,\) are not "
                                         r"broadcastable"):
        broadcast_shapes("add", (2, 3), (4,))


def _reference_axes(axis, exclude, ndim):
    """reduce.py's former Python rule, with MXNet's () = every axis, as None."""
    if axis is None or axis == ():
        return () if exclude else tuple(range(ndim))
    axes = tuple(a % ndim if ndim else 0 for a in axis)
    if ndim == 0:
        return ()
    if exclude:
        axes = tuple(a for a in range(ndim) if a not in axes)
    return tuple(sorted(axes))


@pytest.mark.parametrize("ndim", [0, 1, 2, 4])
@pytest.mark.parametrize("exclude", [False, True])
def test_reduced_axes(ndim, exclude):
    cases = [None, ()] + [(a,) for a in range(-ndim, ndim)] + \
        [(a, b) for a in range(-ndim, ndim) for b in range(-ndim, ndim)
         if a % ndim != b % ndim]
    if ndim == 0:
        cases += [(0,), (-1,)]
    for axis in cases:
        assert reduced_axes("sum", axis, exclude, ndim) == _reference_axes(axis, exclude, ndim)
    assert reduced_axes("sum", 1 if ndim > 1 else 0, False, ndim) == \
        _reference_axes((1 if ndim > 1 else 0,), False, ndim)
    sorted_axes = tuple(range(ndim))
    assert reduced_axes("sum", sorted_axes, False, ndim) is sorted_axes or ndim == 0


def test_reduced_axes_errors():
    with pytest.raises(ValueError, match=r"^sum: axis 2 is out of range for an array of 2 "):
        reduced_axes("sum", (2,), False, 2)
    with pytest.raises(ValueError, match=r"^sum: axis \(0, -2\) repeats an axis"):
        reduced_axes("sum", (0, -2), False, 2)
    with pytest.raises(ValueError, match=r"^sum: axis \(0, -1\) repeats an axis"):
        reduced_axes("sum", (0, -1), False, 0)
    with pytest.raises(ValueError, match=r"^sum: axis 1 is out of range for an array of 0 "):
        reduced_axes("sum", (1,), False, 0)
    assert reduced_axes("sum", (-1,), False, 0) == ()    # the reductions' 0-d exception


def test_normalize_axis():
    assert normalize_axis("op", -1, 3) == 2 and normalize_axis("op", 2, 3) == 2
    with pytest.raises(ValueError, match="out of range for an array of 0 dimension"):
        normalize_axis("op", -1, 0)           # a 0-d array has no axis
    assert normalize_axis("op", np.int64(-2), 2) == 0
    with pytest.raises(ValueError, match=r"^op: dim 3 is out of range for an array of 3 "):
        normalize_axis("op", 3, 3, "dim")


def test_attributes_parse_to_canonical_types():
    spec = {"n": Attr("int", 1), "x": Attr("float", 0.0), "b": Attr("bool", False),
            "axis": Attr("axis"), "axes": Attr("axes"), "shape": Attr("shape", ()),
            "mode": Attr("str", "a", choices=("a", "b")), "dtype": Attr("dtype"),
            "any": Attr("any", [1])}
    got = parse_attrs("op", spec, {"shape": [2, np.int64(3)], "x": np.float32(0.5),
                                   "n": np.int8(4), "b": 1, "axes": -1, "axis": np.int64(1),
                                   "mode": "b", "dtype": "float64"})
    assert list(got) == list(spec)                  # declaration order, whatever was given
    assert got == {"n": 4, "x": 0.5, "b": True, "axis": 1, "axes": (-1,), "shape": (2, 3),
                   "mode": "b", "dtype": np.dtype("float64"), "any": [1]}
    assert [type(got[k]) for k in ("n", "x", "b", "axis")] == [int, float, bool, int]
    assert not spec["any"].typed and spec["n"].typed


@pytest.mark.parametrize("kind, value, exc, msg", [
    ("int", True, TypeError, r"^op: v must be an integer \(got True\)"),
    ("int", 1.0, TypeError, r"^op: v must be an integer"),
    ("float", "1", TypeError, r"^op: v must be a number \(got '1'\)"),
    ("float", False, TypeError, r"^op: v must be a number"),
    ("bool", 2, TypeError, r"^op: v must be a bool \(got 2\)"),
    ("axis", False, TypeError, r"^op: v must be an integer or None"),
    ("axes", (0, True), TypeError, r"^op: v must be an int or a tuple of ints"),
    ("shape", "2x3", TypeError, r"^op: v must be an int or a tuple of ints"),
    ("dtype", "complex64", TypeError, r"^op: v must be one of"),
])
def test_bad_attribute_values(kind, value, exc, msg):
    with pytest.raises(exc, match=msg):
        Attr(kind).parse("op", "v", value)


def test_an_optional_shape_takes_none_as_its_default():
    # reshape(x, None, False, (4, 0)): shape left at its default, target_shape given
    assert Attr("shape").parse("op", "v", None) is None
    with pytest.raises(TypeError, match=r"^op: v must be an int or a tuple of ints"):
        Attr("shape", (0, 0)).parse("op", "v", None)
    with pytest.raises(TypeError, match=r"^op: v must be an int or a tuple of ints"):
        Attr("shape", required=True).parse("op", "v", None)


def test_unknown_and_required_attributes():
    spec = {"a": Attr("int", required=True), "b": Attr("str", "x", choices=("x", "y"))}
    with pytest.raises(TypeError, match=r"^op: unknown attribute 'c' \(attributes: a, b\)"):
        parse_attrs("op", spec, {"a": 1, "c": 2})
    with pytest.raises(TypeError, match=r"^op: attribute 'a' is required"):
        parse_attrs("op", spec, {})
    with pytest.raises(ValueError, match=r"^op: b must be one of 'x', 'y' \(got 'z'\)"):
        parse_attrs("op", spec, {"a": 1, "b": "z"})
    with pytest.raises(TypeError, match=r"^op: unknown attribute 'q' \(attributes: none\)"):
        parse_attrs("op", {}, {"q": 1})
    with pytest.raises(ValueError, match=r"^attribute kind must be one of"):
        Attr("integer")
