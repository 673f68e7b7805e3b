"""Dense NDArray: creation, views, copies, conversion, interop, memory — against NumPy."""

import gc
import pickle
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import allocator
import runtime as rt
from runtime import nd
from tests.runtime.conftest import DTYPES, assert_same, run_isolated
from runtime import autograd, nd


# -- creation --------------------------------------------------------------------------

def test_array_defaults_to_float32_like_mxnet():
    assert nd.array([1, 2]).dtype == np.float32
    assert nd.array(np.arange(3)).dtype == np.float32        # int64 source -> float32
    x = nd.array([1, 2], dtype="int32")
    assert_same(x, np.array([1, 2], np.int32))
    assert nd.array(x).dtype == np.int32                      # NDArray source keeps dtype


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (5,), (2, 3), (2, 0, 4), (3, 1, 2, 2)])
def test_array_round_trip(dtype, shape):
    rng = np.random.default_rng(0)
    ref = (rng.standard_normal(shape) * 10).astype(dtype)
    assert_same(nd.array(ref, dtype=dtype), ref)


@pytest.mark.parametrize("dtype", DTYPES)
def test_zeros_ones_full_empty(dtype):
    assert_same(nd.zeros((2, 3), dtype=dtype), np.zeros((2, 3), dtype))
    assert_same(nd.ones((4,), dtype=dtype), np.ones(4, dtype))
    assert_same(nd.full((2, 2), 1, dtype=dtype), np.full((2, 2), 1, dtype))
    e = nd.empty((3, 2), dtype=dtype)
    assert e.shape == (3, 2) and np.dtype(e.dtype) == np.dtype(dtype)
    assert e.chunk.delay_alloc                       # memory taken on first use
    e[:] = 0
    assert not e.chunk.delay_alloc
    assert_same(e, np.zeros((3, 2), dtype))


def test_creation_defaults_and_int_shapes():
    assert_same(nd.zeros(3), np.zeros(3, np.float32))
    assert_same(nd.ones((2, 1)), np.ones((2, 1), np.float32))
    assert_same(nd.full(2, 7.5), np.full(2, 7.5, np.float32))
    assert_same(nd.zeros(np.int64(2)), np.zeros(2, np.float32))
    assert_same(nd.zeros((np.int32(2), 1)), np.zeros((2, 1), np.float32))
    assert_same(nd.zeros(()), np.zeros((), np.float32))


def test_full_with_out_writes_in_place():
    out = nd.zeros(3)
    assert nd.full((3,), 2.0, out=out) is out
    assert_same(out, np.full(3, 2.0, np.float32))


def test_arange_matches_mxnet():
    assert_same(nd.arange(5), np.arange(5, dtype=np.float32))
    assert_same(nd.arange(1, 4, 0.5), np.arange(1, 4, 0.5, dtype=np.float32))
    assert_same(nd.arange(3, repeat=2), np.repeat(np.arange(3, dtype=np.float32), 2))
    assert_same(nd.arange(0, 6, 2, dtype="int64"), np.arange(0, 6, 2))
    with pytest.raises(ValueError, match="arange: step must not be 0"):
        nd.arange(0, 3, 0)
    with pytest.raises(ValueError, match="repeat must be an integer >= 1"):
        nd.arange(3, repeat=0)


def test_array_converts_python_numbers_as_numpy():
    """Python numbers go through NumPy's own conversion (MXNet's nd.array calls
    np.array(source, dtype)): refused when the dtype cannot hold them, accepted beyond
    int64 for a float dtype; NumPy arrays are cast as astype casts."""
    with pytest.raises(OverflowError, match=r"^array: source_array does not fit dtype "
                                            r"int8: Python integer 300 out of bounds for int8"):
        nd.array([300, -300], dtype="int8")
    with pytest.raises(OverflowError, match="Python integer -1 out of bounds for uint8"):
        nd.array([[1], [-1]], dtype="uint8")
    with pytest.raises(ValueError, match="^array: .*cannot convert float NaN to integer"):
        nd.array([1.5, float("nan")], dtype="int32")
    with pytest.raises(OverflowError, match="^array: source_array does not fit dtype int64"):
        nd.array([2**70], dtype="int64")
    assert_same(nd.array([2**70]), np.array([2.0**70], np.float32))     # float32 default
    assert_same(nd.array([[2**70, 1.5]], dtype="float64"), np.array([[2.0**70, 1.5]]))
    assert_same(nd.array([127, -128], dtype="int8"), np.array([127, -128], np.int8))
    assert_same(nd.array(np.array([300]), dtype="int8"), np.array([300]).astype(np.int8))


def test_zeros_like_ones_like():
    x = nd.array([[1, 2]], dtype="int8")
    assert_same(nd.zeros_like(x), np.zeros((1, 2), np.int8))
    assert_same(nd.ones_like(x), np.ones((1, 2), np.int8))


@pytest.mark.parametrize("bad, exc, match", [
    ([[1, 2], [3]], ValueError, "array: source_array must be a rectangular"),
    ([["a", "b"]], ValueError, r"array: source_array must hold numbers or numeric strings"),
    ([1 + 2j], TypeError, "must hold numbers"),
    ([None], TypeError, "must hold numbers"),
    ([2**70, "a"], TypeError, "must hold numbers"),
])
def test_array_bad_input(bad, exc, match):
    with pytest.raises(exc, match=match):
        nd.array(bad)


def test_array_of_numeric_strings_parsed_as_numpy():
    # MXNet 1.x's nd.array hands its input to np.array(..., dtype): numeric strings parse
    for src, dtype in ((["1", "2.5", "-3e2"], None), ([["7", "8"]], "int32"),
                       (np.array([b"0.5", b"1"]), "float64")):
        ref = np.array(src, dtype=dtype or np.float32)
        assert_same(nd.array(src, dtype=dtype), ref)


@pytest.mark.parametrize("call, exc, match", [
    (lambda: nd.zeros((2, -1)), ValueError,
     r"shape must contain non-negative integers \(got \(2, -1\)\)"),
    (lambda: nd.zeros((2.5,)), TypeError, "shape must be an int or a tuple of ints"),
    (lambda: nd.zeros("3"), TypeError, "shape must be an int or a tuple of ints"),
    (lambda: nd.zeros((True,)), TypeError, "shape must be an int or a tuple of ints"),
    (lambda: nd.zeros(3, dtype="complex64"), TypeError, "dtype must be one of float16"),
    (lambda: nd.zeros(3, dtype="float128"), TypeError, "dtype must be one of"),
    (lambda: nd.array([1], dtype="object"), TypeError, "dtype must be one of"),
    (lambda: nd.zeros(3, ctx="tpu"), ValueError, "device"),
    (lambda: nd.zeros(3, ctx=5), TypeError, "ctx must be a Context"),
    (lambda: nd.zeros((1 << 40, 1 << 40)), ValueError, "too large"),
    (lambda: nd.full((2,), 300, dtype="uint8"), OverflowError, "fill value 300"),
])
def test_creation_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def numpy_accepts(shape, dtype):
    """Whether NumPy accepts ``shape`` of ``dtype`` (asked without allocating)."""
    try:
        np.lib.stride_tricks.as_strided(np.empty((), dtype), shape=shape,
                                        strides=(0,) * len(shape))
    except (ValueError, OverflowError):
        return False
    return True


@pytest.mark.parametrize("shape, dtype, ok", [
    ((2 ** 62, 0), "uint8", True),              # NumPy: the nonzero dimensions must fit
    ((0, 2 ** 63 - 1), "uint8", True),
    ((2 ** 62, 0), "float32", False),           # ... in bytes
    ((0, 2 ** 62, 2 ** 62), "uint8", False),
    ((2 ** 62, 2 ** 62, 0), "uint8", False),
    ((2 ** 63,), "uint8", False),
    ((0, 2 ** 64), "uint8", False),
])
def test_zero_size_shapes_follow_numpy(shape, dtype, ok):
    assert numpy_accepts(shape, dtype) == ok
    for make in (nd.zeros, nd.empty, nd.ones, lambda s, dtype: nd.full(s, 3, dtype=dtype)):
        if ok:
            x = make(shape, dtype=dtype)
            assert x.shape == shape and x.size == 0 and x.nbytes == 0
            assert np.asarray(x).shape == shape
        else:
            with pytest.raises(ValueError, match=r"^shape \(.*\) (of \w+ )?is too large: its "
                                                 r"size (in bytes )?overflows int64$"):
                make(shape, dtype=dtype)


def test_at_most_32_dimensions_at_creation():
    x = nd.zeros((1,) * 32)
    assert x[0].shape == (1,) * 31 and x.reshape(-1).shape == (1,)
    assert nd.zeros(1).reshape((1,) * 32).shape == (1,) * 32
    for make in (nd.zeros, nd.empty, nd.ones, lambda s: nd.full(s, 2),
                 lambda s: nd.array(np.zeros(s)), lambda s: nd.zeros(s, stype="row_sparse")):
        with pytest.raises(ValueError, match=r"shape must have at most 32 dimensions "
                                             r"\(got 33\)"):
            make((1,) * 33)
    with pytest.raises(ValueError, match=r"^reshape: shape must have at most 32 dimensions"):
        nd.zeros(1).reshape((1,) * 33)
    with pytest.raises(ValueError, match="at most 32 dimensions"):
        nd.from_dlpack(np.zeros((1,) * 33))


@pytest.mark.parametrize("shape, exc, match", [
    ((2 ** 60,), MemoryError, "cannot allocate 1152921504606846976 bytes for shape"),
    ((2 ** 20, 2 ** 31), MemoryError, "more than a pool block can hold"),
    ((2 ** 63 - 1,), MemoryError, "more than a pool block can hold"),
    ((2 ** 63,), ValueError, r"^shape \(9223372036854775808,\) is too large"),
    ((2 ** 62, 3), ValueError, "its size overflows int64"),
    ((-1,), ValueError, r"^shape must contain non-negative integers \(got \(-1,\)\)"),
    ((3, -2 ** 70), ValueError, "must contain non-negative integers"),
])
def test_huge_shapes_raise_before_allocating(shape, exc, match):
    # Huge but valid shapes are out of memory (NumPy raises MemoryError there too), even
    # for empty(), whose memory would only be taken on first use.
    for make in (nd.zeros, nd.empty, nd.ones):
        with pytest.raises(exc, match=match):
            make(shape, dtype="uint8")


# -- properties, repr, scalars -----------------------------------------------------------

def test_properties():
    x = nd.zeros((2, 3, 4), dtype="float64")
    assert (x.shape, x.size, x.ndim, x.stype, len(x)) == ((2, 3, 4), 24, 3, "default", 2)
    assert x.dtype is np.float64                       # a NumPy scalar type, as MXNet
    assert x.ctx == rt.cpu() == x.context
    assert x.nbytes == 24 * 8


def test_repr_is_mxnet_form():
    x = nd.array([[1, 2, 3], [4, 5, 6]])
    r = repr(x)
    assert r.endswith("<NDArray 2x3 @cpu(0)>")
    assert "[[1. 2. 3.]\n [4. 5. 6.]]" in r
    assert repr(nd.zeros(())).endswith("<NDArray 0-d @cpu(0)>")


def test_asscalar_and_python_scalars():
    assert nd.array([3.5]).asscalar() == np.float32(3.5)
    assert float(nd.array([[2]])) == 2.0 and int(nd.array([7])) == 7
    assert bool(nd.array([1])) and not bool(nd.array([0]))
    with pytest.raises(ValueError, match=r"asscalar: the array must have exactly one "
                                         r"element \(got shape \(2,\)\)"):
        nd.array([1, 2]).asscalar()
    with pytest.raises(ValueError, match="ambiguous"):
        bool(nd.array([1, 2]))


def test_wait_and_waitall_are_noops():
    x = nd.ones(2)
    x.wait_to_read()
    nd.waitall()
    assert_same(x, np.ones(2, np.float32))


# -- views -------------------------------------------------------------------------------

def test_views_share_memory_and_versions():
    x = nd.array(np.arange(12).reshape(4, 3))
    row, rows, flat, det = x[1], x[1:3], x.reshape(-1), x.detach()
    for v in (row, rows, flat, det):
        assert v.chunk is x.chunk
    v0 = x.version
    rows[:] = -1
    assert x.version == v0 + 1 == row.version
    ref = np.arange(12, dtype=np.float32).reshape(4, 3)
    ref[1:3] = -1
    assert_same(x, ref)
    assert_same(flat, ref.reshape(-1))
    assert_same(row, ref[1])


@pytest.mark.parametrize("key", [0, 2, -1, -4, np.int64(1), slice(1, 3), slice(None),
                                 slice(-2, None), slice(3, 1), slice(10, 20),
                                 slice(None, None, 1)])
def test_axis0_int_and_slice_are_views(key):
    ref = np.arange(24, dtype=np.float32).reshape(4, 3, 2)
    x = nd.array(ref)
    v = x[key]
    assert v.chunk is x.chunk
    assert_same(v, ref[key])


@pytest.mark.parametrize("key", [
    (1, 2), (slice(None), 1), slice(None, None, 2), slice(None, None, -1),
    np.array([0, 2]), np.array([True, False, True, False]), (Ellipsis, 0),
    (slice(1, 3), slice(0, 2)), [3, 0]])
def test_other_indexing_returns_copies(key):
    ref = np.arange(24, dtype=np.float32).reshape(4, 3, 2)
    x = nd.array(ref)
    v = x[key]
    assert v.chunk is not x.chunk
    assert_same(v, ref[key])


def test_index_with_ndarray():
    ref = np.arange(10, dtype=np.float32)
    x = nd.array(ref)
    assert_same(x[nd.array([1, 3], dtype="int64")], ref[[1, 3]])


_MASK = np.arange(24).reshape(4, 3, 2) % 3 == 0
KEYS = [
    (1, 2), (slice(None), 1), slice(None, None, 2), slice(None, None, -1), (-1, -1, -1),
    (None, 1), (Ellipsis, None, 0), (1, Ellipsis, slice(0, 1)), (slice(3, 0, -2), None),
    (slice(5, 9),), (), Ellipsis, (0, slice(2, 2)),
    np.array([0, 2]), [3, 0], np.array([[0, 1], [3, 3]]), (np.array([1, 2]), 0),
    (slice(None), [2, 0], 1), ([0, 1], slice(None), [1, 0]), (Ellipsis, [1]),
    np.array([True, False, True, False]), _MASK, (1, _MASK[0]), np.array(2)]


def _basic_key(key):
    parts = key if type(key) is tuple else (key,)
    return all(k is None or k is Ellipsis or type(k) in (int, slice) for k in parts)


def mxnet_getitem(ref, key):
    """NumPy's ``ref[key]`` with MXNet 1.x's one departure: a basic key that leaves no axis
    of a non-0-d array gives shape (1,) (MXNet 1.x's NDArray has no 0-d arrays)."""
    got = ref[key]
    if np.ndim(got) == 0 and ref.ndim and _basic_key(key):
        return np.reshape(got, (1,))
    return got


def test_an_element_is_a_one_element_array_as_in_mxnet():
    ref = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = nd.array(ref)
    for got, want in [(x[1, 2], 5), (x[-1, 0], 3), (x[1][2], 5), (x.reshape(-1)[4], 4),
                      (x[..., 1, 1], 4)]:
        assert got.shape == (1,) and got.asscalar() == want
    z = nd.array(5.0)                      # a 0-d array indexed by () stays 0-d
    assert z[()].shape == ()
    assert x[1, None, 2].shape == (1,)     # NumPy's shape: an axis is left


@pytest.mark.parametrize("key", KEYS)
def test_indexing_matches_numpy(key):
    ref = np.arange(24, dtype=np.float32).reshape(4, 3, 2)
    x = nd.array(ref)
    assert_same(x[key], mxnet_getitem(ref, key))
    for value in (7, np.arange(ref[key].size, dtype=np.float32).reshape(ref[key].shape) + 50):
        v0 = x.version
        x[key] = value
        ref[key] = value
        assert_same(x, ref)
        assert x.version == v0 + 1


@st.composite
def _shape_and_key(draw):
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4))
    keys = [hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True)]
    if shape and all(shape):
        keys.append(hnp.integer_array_indices(shape, result_shape=hnp.array_shapes(
            min_dims=0, max_dims=2, max_side=3)))
        keys.append(hnp.arrays(bool, shape[:draw(st.integers(1, len(shape)))]))
    return shape, draw(st.one_of(keys))


@settings(max_examples=150, deadline=None)
@given(_shape_and_key())
def test_indexing_matches_numpy_fuzzed(shape_key):
    shape, key = shape_key
    ref = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    x = nd.array(ref, dtype="float64")
    assert_same(x[key], mxnet_getitem(ref, key))
    x[key] = -1
    ref[key] = -1
    assert_same(x, ref)


def test_indexing_keys_may_hold_ndarrays():
    ref = np.arange(12, dtype=np.float32).reshape(4, 3)
    x = nd.array(ref)
    i, mask = nd.array([2, 0], dtype="int64"), nd.array([True, False, True], dtype="bool")
    assert_same(x[i, 1:], ref[[2, 0], 1:])
    assert_same(x[:, mask], ref[:, [True, False, True]])
    x[i] = 0
    ref[[2, 0]] = 0
    assert_same(x, ref)


def test_indexing_of_0d_and_empty_arrays():
    z = nd.array(5.0)
    for key in [(), Ellipsis, None, np.array(True)]:
        assert_same(z[key], np.array(5.0, np.float32)[key])
    e = nd.zeros((0, 3))
    assert_same(e[:, 1], np.zeros((0,), np.float32))
    assert_same(e[np.zeros(0, np.int64)], np.zeros((0, 3), np.float32))
    e[:, 1] = nd.ones(1)                                   # nothing to write
    assert e.shape == (0, 3)


def test_non_view_indexing_runs_registry_operators():
    """T, astype, tostype and every non-view key reach the operators through the hook
    that runtime.nd registers (so that the tape can record them), never NumPy directly."""
    from runtime import _ndarray
    asked = []
    hook = nd._method
    _ndarray.set_method_hook(lambda name: asked.append(name) or hook(name))
    try:
        x = nd.array(np.arange(6, dtype=np.float32).reshape(2, 3))
        x.T, x.astype("int32"), x.tostype("csr"), x[:, 1], x[[1, 0]]
        x[0, 1] = 5
        x[:, 0] = nd.array([1, 2], dtype="int32")
        x[np.array([[True, False, True], [False] * 3])] = 0
        x[[1]] = [[7, 8, 9]]
        x[1], x[0:1], x.reshape(3, 2), x.detach()                 # views: no operator
        x.tostype("csr")[0:1]
    finally:
        _ndarray.set_method_hook(hook)
    assert asked == ["transpose", "cast", "cast_storage", "slice", "take",
                     "_slice_assign_scalar", "cast", "_slice_assign", "_take_assign_scalar",
                     "_take_assign", "cast_storage", "slice"]
    assert_same(x, np.array([[0, 5, 0], [7, 8, 9]], np.float32))


@pytest.mark.parametrize("dtype, value", [("int64", 2 ** 62 + 1), ("int64", -2 ** 63),
                                          ("int32", 2.9), ("int8", -2.9), ("uint8", True),
                                          ("bool", 2), ("float16", 1e-8), ("float32", np.nan)])
def test_setitem_converts_scalars_as_numpy(dtype, value):
    ref = np.zeros(3, dtype)
    x = nd.array(ref, dtype=dtype)
    x[1:] = value
    ref[1:] = value
    x[[0]] = value
    ref[[0]] = value
    assert_same(x, ref)


def test_setitem_broadcasts_ndarray_values_as_numpy():
    ref = np.zeros((2, 3), np.float32)
    x = nd.array(ref)
    x[0] = nd.array([[1, 2, 3]], dtype="int8")            # a leading 1 is dropped, cast
    ref[0] = np.array([[1, 2, 3]])
    x[:, 1:] = nd.array([4, 5], dtype="float64")           # broadcast over rows
    ref[:, 1:] = np.array([4, 5])
    x[[1]] = nd.sparse.csr_matrix(np.array([[0, 6, 0]], np.float32))
    ref[[1]] = [[0, 6, 0]]
    assert_same(x, ref)
    v0 = x.version
    with pytest.raises(ValueError, match=r"^__setitem__: could not broadcast input array "
                                         r"from shape \(2,\) into shape \(3,\)"):
        x[0] = nd.array([1, 2])
    assert x.version == v0


@pytest.mark.parametrize("key, match", [(4, "index 4 is out of bounds for axis 0 with size 4"),
                                        (-5, "index -5 is out of bounds"),
                                        ((0, 9), "out of bounds")])
def test_out_of_range_index(key, match):
    x = nd.zeros((4, 3))
    with pytest.raises(IndexError, match=match):
        x[key]
    with pytest.raises(IndexError):
        nd.zeros(())[0]


@pytest.mark.parametrize("new, ref", [((3, 4), (3, 4)), ((-1,), (12,)), ((2, -1), (2, 6)),
                                      ((0, -1), (2, 6)), ((1, 12, 1), (1, 12, 1))])
def test_reshape_is_a_view_with_mxnet_special_values(new, ref):
    a = np.arange(12, dtype=np.float32).reshape(2, 6)
    x = nd.array(a)
    for y in (x.reshape(new), x.reshape(*new), x.reshape(shape=new)):
        assert y.chunk is x.chunk
        assert_same(y, a.reshape(ref))


@pytest.mark.parametrize("new, match", [((5,), "cannot reshape an array of shape"),
                                        ((-1, -1), "more than one -1"),
                                        ((-5, 3), "holds -5; values must be > 0 or one of "
                                                  "MXNet's 0, -1, -2, -3, -4"),
                                        ((-2, 3), "cannot reshape an array of shape"),
                                        ((5, -1), "cannot infer -1"),
                                        ((1.5,), "shape must be an int")])
def test_reshape_bad_input(new, match):
    x = nd.zeros((2, 6))
    with pytest.raises((ValueError, TypeError), match=match):
        x.reshape(new)


def test_reshape_size_overflow_is_refused():
    # Bug report 8, item 1: the positional path multiplied as C integers, so that
    # (4, 2**62 + 1) "had" 4 elements and the view read and wrote far out of bounds.
    out = run_isolated("""
from runtime import nd
x = nd.zeros((4,), dtype="uint8")
six = nd.zeros((6,), dtype="int8")
for call in (lambda: x.reshape(4, 2**62 + 1), lambda: x.reshape((4, 2**62 + 1)),
             lambda: x.reshape(shape=(4, 2**62 + 1)), lambda: x.reshape([4, 2**62 + 1]),
             lambda: six.reshape(2, 2**63 - 1, -1), lambda: six.reshape(-1, 2**63 - 1, 2)):
    try:
        y = call()
    except ValueError as e:
        print(e)
    else:
        y[0][1 << 24] = 7
        print("accepted", y.shape)
""")
    assert out.splitlines() == (
        ["reshape: shape (4, 4611686018427387905) is too large: its size overflows int64"] * 4
        + ["reshape: shape (2, 9223372036854775807, -1) is too large: its size overflows "
           "int64",
           "reshape: shape (-1, 9223372036854775807, 2) is too large: its size overflows "
           "int64"])


def test_reshape_infer_next_to_a_zero_product_is_refused():
    # Item 2: the known dimensions wrapped around to 0 and the release build (cdivision)
    # divided by it: SIGFPE.
    out = run_isolated("""
from runtime import nd
x = nd.ones((2,))
for shape in [(2**32, 2**32, -1), (-1, 2**32, 2**32)]:
    for call in (lambda: x.reshape(*shape), lambda: x.reshape(shape=shape),
                 lambda: nd.reshape(x, shape=shape)):
        try:
            call()
        except ValueError as e:
            print(e)
""")
    assert out.splitlines() == (
        ["reshape: shape (4294967296, 4294967296, -1) is too large: its size overflows "
         "int64"] * 3
        + ["reshape: shape (-1, 4294967296, 4294967296) is too large: its size overflows "
           "int64"] * 3)
    # a -1 next to known dimensions multiplying to 0 cannot be inferred (NumPy: "cannot
    # reshape array of size 0 into shape (0,newaxis)")
    for x, new in [(nd.zeros((0, 3)), (0, -1)), (nd.zeros((2, 0)), (-1, 0))]:
        with pytest.raises(ValueError):      # 0 copies the dimension (MXNet)
            np.zeros(x.shape).reshape(tuple(d if d else x.shape[i] for i, d in enumerate(new)))
        with pytest.raises(ValueError, match=r"^reshape: cannot infer -1"):
            x.reshape(new)
    with pytest.raises(ValueError, match=r"^reshape: cannot infer -1 in \(0, -1\)"):
        nd.reshape(nd.zeros((0, 3)), shape=(0, -1))


@pytest.mark.parametrize("new, match", [
    ((-5, 2), r"holds -5; values must be > 0 or one of MXNet's 0, -1, -2, -3, -4"),
    ((2, -2 ** 63), r"holds -9223372036854775808"), ((2, -2 ** 70), r"holds -"),
    ((3, -3), r"refers to input dimension 1, which \(6,\) lacks"),
    ((-4, 4, 2), r"-4 in shape \(-4, 4, 2\) cannot split dimension 6 into 4 x 2")])
def test_reshape_negative_dimensions_are_value_errors(new, match):
    # Negative values other than MXNet's codes, or codes that do not fit the shape.
    x = nd.zeros((6,))
    for call in (lambda: x.reshape(*new), lambda: x.reshape(new), lambda: x.reshape(shape=new)):
        with pytest.raises(ValueError, match=r"^reshape: .*" + match):
            call()


def test_reshape_checks_bytes_like_numpy():
    x = nd.zeros((2, 0), dtype="uint8")
    assert x.reshape(2 ** 62, 0).shape == (2 ** 62, 0)         # NumPy accepts it too
    with pytest.raises(ValueError, match=r"of float32 is too large: its size in bytes"):
        nd.zeros((2, 0)).reshape(2 ** 62, 0)
    with pytest.raises(ValueError):
        np.zeros((2, 0), np.float32).reshape(2 ** 62, 0)


@pytest.mark.parametrize("key", [2 ** 63, -2 ** 63 - 1, 2 ** 100, np.uint64(2 ** 63)])
def test_index_beyond_int64_is_an_index_error(key):
    with pytest.raises(IndexError, match="is out of bounds for axis 0 with size 4"):
        nd.zeros((4, 3))[key]
    assert nd.zeros((4, 3))[key:].shape == np.zeros((4, 3))[int(key):].shape


def test_transpose_property():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert_same(nd.array(a).T, a.T)
    v = nd.array([1, 2])
    assert v.T is v


# -- setitem -----------------------------------------------------------------------------

@pytest.mark.parametrize("key, value", [
    (Ellipsis, 5), (slice(None), np.array([1, 2, 3], np.float32)), (0, 9),
    ((1, 2), -3), (slice(0, 1), [[7, 8, 9]]), (np.array([True, False]), 4),
    ((slice(None), 1), np.array([10, 20]))])
def test_setitem_broadcasts_like_numpy(key, value):
    ref = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = nd.array(ref)
    v0 = x.version
    x[key] = value
    ref[key] = value
    assert_same(x, ref)
    assert x.version == v0 + 1


def test_setitem_from_ndarray_and_overlap():
    ref = np.arange(6, dtype=np.float32)
    x = nd.array(ref)
    x[1:] = x[:5]                            # overlapping views of one chunk
    ref[1:] = ref[:5].copy()
    assert_same(x, ref)
    x[:] = nd.ones(6, dtype="int32")
    assert_same(x, np.ones(6, np.float32))


@pytest.mark.parametrize("key, value, exc", [
    (slice(None), np.ones(4), ValueError), (7, 1, IndexError),
    (slice(None), "abc", ValueError), (slice(None), [[1, 2], [3]], ValueError)])
def test_failed_setitem_writes_nothing(key, value, exc):
    x = nd.array([1, 2, 3])
    v0 = x.version
    with pytest.raises(exc, match="__setitem__"):
        x[key] = value
    assert_same(x, np.array([1, 2, 3], np.float32))
    assert x.version == v0


# -- copies and casts ----------------------------------------------------------------------

def test_copy_copyto_as_in_context_astype():
    x = nd.array([[1.5, -2.5]])
    y = x.copy()
    assert y.chunk is not x.chunk
    y[:] = 0
    assert_same(x, np.array([[1.5, -2.5]], np.float32))
    dst = nd.zeros((1, 2), dtype="float64")
    v0 = dst.version
    assert x.copyto(dst) is dst and dst.version == v0 + 1
    assert_same(dst, np.array([[1.5, -2.5]]))
    assert_same(x.copyto(rt.cpu()), x.asnumpy())
    assert x.as_in_context(rt.cpu()) is x
    assert_same(x.astype("int32"), np.array([[1, -2]], np.int32))
    assert x.astype("float32", copy=False) is x
    assert x.astype("float32") is not x
    with pytest.raises(ValueError, match=r"copyto: shape \(1, 2\) does not match"):
        x.copyto(nd.zeros(3))
    with pytest.raises(TypeError, match="copyto: other must be an NDArray or a Context"):
        x.copyto(3)


def test_copy_of_a_view_copies_only_the_view():
    x = nd.array(np.arange(6).reshape(3, 2))
    assert_same(x[1:].copy(), np.arange(2, 6, dtype=np.float32).reshape(2, 2))
    assert_same(x[2].copy(), np.array([4, 5], np.float32))


def test_asnumpy_is_a_copy():
    x = nd.array([1, 2])
    a = x.asnumpy()
    a[0] = 100
    assert_same(x, np.array([1, 2], np.float32))


# -- interop -------------------------------------------------------------------------------

def test_np_asarray_is_zero_copy_and_keeps_memory_alive():
    x = nd.array([1, 2, 3])
    a = np.asarray(x)
    assert a.ctypes.data == x.chunk.data_pointer
    a[0] = 42                                  # writes through
    assert x.asnumpy()[0] == 42
    used = allocator.memory_allocated()
    del x
    gc.collect()
    assert allocator.memory_allocated() == used   # the view holds the chunk
    assert a[0] == 42
    del a
    assert allocator.memory_allocated() < used


def test_array_protocol_copy_and_dtype():
    x = nd.array([1, 2])
    assert np.array(x).ctypes.data != x.chunk.data_pointer    # np.array copies
    assert np.asarray(x, dtype=np.float64).dtype == np.float64
    m = memoryview(x)
    assert m.format == "f" and m.shape == (2,) and m.strides == (4,)


def test_views_export_their_offset():
    x = nd.array(np.arange(6).reshape(3, 2))
    np.testing.assert_array_equal(np.asarray(x[1:]), [[2, 3], [4, 5]])
    np.testing.assert_array_equal(np.asarray(x[2]), [4, 5])


@pytest.mark.parametrize("dtype", DTYPES)
def test_dlpack_both_ways_with_numpy(dtype):
    ref = (np.arange(6) % 3).astype(dtype).reshape(2, 3)
    x = nd.array(ref, dtype=dtype)
    a = np.from_dlpack(x)
    assert a.ctypes.data == x.chunk.data_pointer
    np.testing.assert_array_equal(a, ref)
    assert x.__dlpack_device__() == (1, 0)
    src = ref.copy()
    y = nd.from_dlpack(src)
    assert y.chunk.borrowed and y.chunk.data_pointer == src.ctypes.data
    assert_same(y, src)
    y[0] = 1                                   # writes reach the producer's memory
    assert np.all(src[0] == np.ones(3, dtype))


def test_dlpack_capsules_round_trip_sharing_memory():
    x = nd.array(np.arange(12, dtype=np.int32).reshape(3, 4), dtype=np.int32)
    for capsule in (x.to_dlpack_for_read(), nd.to_dlpack_for_read(x),
                    x.to_dlpack_for_write(), nd.to_dlpack_for_write(x)):
        assert type(capsule).__name__ == "PyCapsule"
        y = nd.from_dlpack(capsule)
        assert y.dtype == np.int32 and y.chunk.data_pointer == x.chunk.data_pointer
        np.testing.assert_array_equal(y.asnumpy(), np.arange(12).reshape(3, 4))
    y[1, 2] = -5                               # a write through the import shows in x
    assert x.asnumpy()[1, 2] == -5
    used = x.to_dlpack_for_read()
    nd.from_dlpack(used)
    with pytest.raises(ValueError, match="unused 'dltensor' capsule"):
        nd.from_dlpack(used)
    before = x.asnumpy().copy()
    del x                                      # the import keeps the memory alive
    np.testing.assert_array_equal(y.asnumpy(), before)


def test_from_dlpack_copies_non_contiguous_memory():
    src = np.arange(6, dtype=np.float32).reshape(2, 3).T
    y = nd.from_dlpack(src)
    assert not y.chunk.borrowed
    assert_same(y, src)


def test_from_dlpack_refuses_unsupported_dtypes():
    with pytest.raises(TypeError, match="the DLPack dtype must be one of"):
        nd.from_dlpack(np.zeros(2, np.complex64))


def test_dlpack_with_torch():
    torch = pytest.importorskip("torch")
    x = nd.array([[1, 2], [3, 4]])
    t = torch.from_dlpack(x)
    assert t.data_ptr() == x.chunk.data_pointer
    t[0, 0] = 9
    assert x.asnumpy()[0, 0] == 9
    y = nd.from_dlpack(torch.arange(4, dtype=torch.int64))
    assert_same(y, np.arange(4))


def test_pickle_round_trip():
    x = nd.array([[1, 2], [3, 4]], dtype="int8")
    y = pickle.loads(pickle.dumps(x))
    assert_same(y, x.asnumpy())
    assert y.ctx == x.ctx and y.chunk is not x.chunk


# -- contexts ------------------------------------------------------------------------------

def test_context_manager_and_current_context():
    assert rt.current_context() == rt.cpu(0)
    with rt.Context("cpu", 0) as c:
        assert rt.current_context() is c
        assert nd.zeros(2).ctx == c
    assert rt.current_context() == rt.cpu(0)
    assert repr(rt.gpu(1)) == "gpu(1)" and rt.gpu(1) == rt.Context("gpu", 1)
    assert hash(rt.cpu()) == hash(rt.Context("cpu", 0))
    with pytest.raises(ValueError, match="device_type must be one of"):
        rt.Context("tpu")
    with pytest.raises(ValueError, match="device_id must be an integer >= 0"):
        rt.gpu(-1)


def test_context_is_an_immutable_value():
    x = nd.ones(3)
    with pytest.raises(AttributeError, match="Context is immutable: 'device_id' cannot be set"):
        x.ctx.device_id = 7                    # x.ctx is the default every array shares
    with pytest.raises(AttributeError, match="Context is immutable"):
        rt.cpu().device_type = "gpu"
    with pytest.raises(AttributeError, match="Context is immutable"):
        del rt.cpu().device_id
    assert nd.ones(2).ctx == rt.cpu(0) and repr(nd.ones(2).ctx) == "cpu(0)"
    assert {rt.gpu(1): "a"}[rt.Context("gpu", 1)] == "a"
    assert rt.gpu(1) != rt.gpu(2) and rt.gpu(0) != rt.cpu(0) and rt.cpu() != "cpu(0)"
    assert rt.Context(rt.gpu(3)) == rt.gpu(3)                  # a Context is copied
    assert rt.gpu(np.int64(2)).device_id == 2 and type(rt.gpu(np.int64(2)).device_id) is int
    assert pickle.loads(pickle.dumps(rt.gpu(1))) == rt.gpu(1)
    # equal contexts are one object, however they are made
    assert rt.Context("gpu", np.int64(1)) is rt.gpu(1) is pickle.loads(pickle.dumps(rt.gpu(1)))
    assert rt.Context(rt.cpu(2)) is rt.cpu(2) and nd.ones(2).ctx is rt.cpu(0)
    assert rt.gpu(1) is not rt.gpu(2) and rt.cpu(0) is not rt.Context("cpu_pinned", 0)


@pytest.mark.parametrize("args, exc, match", [
    (("bogus",), ValueError, r"device_type must be one of \('cpu', 'gpu', 'cpu_pinned'\) "
                             r"\(got 'bogus'\)"),
    ((1,), TypeError, r"device_type must be one of .* or a Context \(got 1\)"),
    (("gpu", -1), ValueError, r"device_id must be an integer >= 0 \(got -1\)"),
    (("gpu", 1.0), TypeError, r"device_id must be an integer >= 0 \(got 1.0\)"),
    (("gpu", True), TypeError, r"device_id must be an integer >= 0 \(got True\)"),
    (("gpu", "1"), TypeError, r"device_id must be an integer >= 0 \(got '1'\)"),
])
def test_context_is_validated(args, exc, match):
    with pytest.raises(exc, match=match):
        rt.Context(*args)


def test_cpu_shared_names_the_cpu():
    # MXNet's shared-memory context (gluon batchify functions make their batches there);
    # its arrays mix with CPU arrays in operators, as MXNet's do
    ctx = rt.Context("cpu_shared", 2)
    assert ctx is rt.cpu(2) and ctx.device_type == "cpu"
    x = nd.zeros((1, 2, 3), ctx=rt.Context("cpu_shared", 0))
    assert x.context == rt.Context("cpu_shared", 0) == rt.cpu(0)
    np.testing.assert_array_equal((x + nd.ones((1, 2, 3))).asnumpy(), np.ones((1, 2, 3)))


def test_context_is_thread_local():
    seen = []
    with rt.Context("cpu_pinned", 0):
        t = threading.Thread(target=lambda: seen.append(rt.current_context()))
        t.start()
        t.join()
    assert seen == [rt.cpu(0)]


# -- memory ---------------------------------------------------------------------------------

def test_memory_returns_to_the_pool_when_the_last_view_dies():
    start = allocator.memory_allocated()
    x = nd.zeros((1024, 256))
    v = x[3:5]
    assert allocator.memory_allocated() >= start + 1024 * 256 * 4
    del x
    assert allocator.memory_allocated() >= start + 1024 * 256 * 4   # v keeps it
    del v
    assert allocator.memory_allocated() == start


def _buffers_of(x):
    return [r for r in gc.get_referents(x.chunk) if isinstance(r, allocator.Buffer)] + [
        b for r in gc.get_referents(x.chunk) if isinstance(r, list)
        for b in r if isinstance(b, allocator.Buffer)]


@pytest.mark.parametrize("make", [
    lambda: nd.ones(4),
    lambda: nd.sparse.csr_matrix(([1.0, 2.0], [0, 3], [0, 1, 2]), shape=(2, 4)),
], ids=["dense", "csr"])
def test_an_array_buffer_refuses_an_explicit_free(make):
    x = make()
    before = x.asnumpy()
    bufs = _buffers_of(x)
    assert len(bufs) == (1 if x.stype == "default" else 3)
    for buf in bufs:
        with pytest.raises(ValueError, match="Buffer.free: this buffer belongs to an array "
                                             "and is freed when the array dies"):
            buf.free()
        with pytest.raises(ValueError, match="belongs to an array"):
            allocator.get_pool().free(buf)
        assert not buf.freed
    y = nd.ones(4) * 7                      # would reuse a wrongly freed block
    np.testing.assert_array_equal(x.asnumpy(), before)
    del y


def test_zero_size_arrays_take_no_pool_memory():
    start = allocator.memory_stats()["allocation.all.current"]
    x = nd.zeros((0, 5))
    assert allocator.memory_stats()["allocation.all.current"] == start
    assert np.asarray(x).shape == (0, 5)


def test_failed_allocation_leaves_nothing_behind():
    pool = allocator.get_pool()
    pool.empty_cache()      # a cached block of earlier tests would serve the request
    start = pool.memory_stats()["allocated_bytes.all.current"]
    pool.set_limit(pool.memory_stats()["reserved_bytes.all.current"] + (1 << 20))
    try:
        with pytest.raises(allocator.OutOfMemoryError):
            nd.zeros((64 << 20,))
    finally:
        pool.set_limit(0)
    assert pool.memory_stats()["allocated_bytes.all.current"] == start


# -- MXNet 1.x names and signatures: creation out=, un-prefixed samplers, moveaxis of
#    sequences, from_numpy(zero_copy), DLPack exports, reset_arrays --------------------

def test_creation_functions_write_into_out():
    x = nd.full((2, 3), 5.0)
    assert nd.zeros((2, 3), out=x) is x and not x.asnumpy().any()
    assert nd.ones(3, out=nd.zeros(3, dtype="int32")).asnumpy().tolist() == [1, 1, 1]
    np.testing.assert_array_equal(nd.eye(3, k=1, out=nd.zeros((3, 3))).asnumpy(),
                                  np.eye(3, k=1))
    np.testing.assert_allclose(nd.linspace(0, 1, 5, out=nd.zeros(5)).asnumpy(),
                               np.linspace(0, 1, 5), rtol=1e-7)
    y = nd.ones((2, 2))
    with pytest.raises(ValueError, match=r"zeros: out must have shape \(2, 3\) \(got "
                                         r"\(2, 2\)\)"):
        nd.zeros((2, 3), out=y)
    assert y.asnumpy().tolist() == [[1, 1], [1, 1]]          # a failed call writes nothing
    with pytest.raises(TypeError, match="ones: out must be an NDArray"):
        nd.ones(2, out=np.zeros(2))


def test_unprefixed_samplers_are_the_legacy_operators():
    rt.random.seed(11)
    a = nd.uniform(-1, 1, shape=(1000,)).asnumpy()
    rt.random.seed(11)
    b = nd.random_uniform(-1, 1, shape=(1000,)).asnumpy()
    np.testing.assert_array_equal(a, b)
    assert a.min() >= -1 and a.max() < 1 and abs(a.mean()) < 0.1
    n = nd.normal(2.0, 0.5, shape=(4000,)).asnumpy()
    assert abs(n.mean() - 2.0) < 0.05 and abs(n.std() - 0.5) < 0.05
    rows = nd.shuffle(nd.array(np.arange(10.0))).asnumpy()
    assert sorted(rows.tolist()) == list(range(10))


def test_shape_and_axes_attributes_take_numpy_arrays_and_ranges():
    # MXNet's attributes are strings of any int sequence: test_sparse_ndarray calls
    # broadcast_to(shape=<a NumPy array>)
    x = np.random.default_rng(0).random((1, 3)).astype(np.float32)
    for stype in ("default", "csr", "row_sparse"):
        sparse = nd.array(x).tostype(stype)
        if stype == "default":
            got = sparse.broadcast_to(shape=np.array([4, 3]))
        else:                          # no sparse kernel, as in MXNet: a dense fallback
            with pytest.warns(rt.StorageFallbackWarning, match="broadcast_to"):
                got = sparse.broadcast_to(shape=np.array([4, 3]))
        np.testing.assert_array_equal(got.asnumpy(), np.broadcast_to(x, (4, 3)))
    np.testing.assert_allclose(nd.sum(nd.array(x), axis=np.array([0, 1])).asnumpy(),
                               [x.sum()], rtol=1e-6)
    with pytest.raises(TypeError, match="shape must be an int or a tuple of ints"):
        nd.broadcast_to(nd.array(x), shape=np.array([4.0, 3.0]))


def test_moveaxis_takes_lists_and_ranges():
    x = np.arange(120.0).reshape(2, 3, 4, 5)
    for src, dst in ((range(2), range(2, 4)), ([0, 3], [3, 0]), (1, -1)):
        got = nd.moveaxis(nd.array(x), src, dst).asnumpy()
        np.testing.assert_array_equal(got, np.moveaxis(x, list(src) if not isinstance(
            src, int) else src, list(dst) if not isinstance(dst, int) else dst))


def test_from_numpy_zero_copy_shares_and_copy_does_not():
    a = np.arange(6.0).reshape(2, 3)
    copied = nd.from_numpy(a, zero_copy=False)
    assert a.flags.writeable                                 # a copy leaves it alone
    shared = nd.from_numpy(a)
    # MXNet's from_numpy makes the shared array read-only: writes go through the NDArray
    assert not a.flags.writeable
    with pytest.raises(ValueError):
        a[0, 0] = 42.0
    shared[0, 0] = 42.0
    assert a[0, 0] == 42.0 and copied.asnumpy()[0, 0] == 0.0
    assert shared.dtype == np.float64
    again = nd.from_numpy(a)                                 # shared again, read-only
    again[1, 2] = -1.0
    assert a[1, 2] == -1.0 and shared.asnumpy()[1, 2] == -1.0
    r = np.frombuffer(bytes(24), dtype=np.float64)           # memory nobody may write
    kept = nd.from_numpy(r)                                  # copied
    kept[0] = 7.0
    assert r[0] == 0.0 and kept.asnumpy()[0] == 7.0 and not r.flags.writeable
    ft = np.arange(6.0).reshape(2, 3).T
    with pytest.raises(ValueError, match=r"from_numpy: ndarray must be C-contiguous for "
                                         r"zero_copy=True \(got strides"):
        nd.from_numpy(ft)
    assert ft.flags.writeable                                # a refused call changes nothing
    t = nd.from_numpy(ft, zero_copy=False)
    np.testing.assert_array_equal(t.asnumpy(), np.arange(6.0).reshape(2, 3).T)
    with pytest.raises(TypeError, match="from_numpy: ndarray must be a numpy.ndarray"):
        nd.from_numpy([1, 2])


def test_to_dlpack_for_read_and_write():
    import ctypes
    name = ctypes.pythonapi.PyCapsule_GetName
    name.restype, name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    x = nd.array([[1.0, 2.0], [3.0, 4.0]])
    for export in (nd.to_dlpack_for_read, nd.to_dlpack_for_write):
        cap = export(x)
        assert name(cap) == b"dltensor"              # MXNet's (unversioned) capsule
        view = np.from_dlpack(type("Producer", (), {
            "__dlpack__": lambda self, **kw: cap,
            "__dlpack_device__": lambda self: (1, 0)})())
        x[0, 0] = float(export is nd.to_dlpack_for_read) + 7.0
        assert view[0, 0] == x.asnumpy()[0, 0]           # the same memory, no copy
    with pytest.raises(TypeError, match="to_dlpack_for_read: data must be an NDArray"):
        nd.to_dlpack_for_read(np.zeros(2))


def test_reset_arrays():
    a, b = nd.ones(3), nd.ones((2, 2)).tostype("row_sparse")
    nd.reset_arrays(a, b, num_arrays=2)
    assert not a.asnumpy().any() and not b.asnumpy().any() and b.stype == "row_sparse"
    c = nd.ones(2)
    with pytest.raises(ValueError, match="num_arrays must equal the number of arrays 1"):
        nd.reset_arrays(c, num_arrays=2)
    with pytest.raises(TypeError, match=r"data\[1\] must be an NDArray"):
        nd.reset_arrays(c, [1.0])
    assert c.asnumpy().tolist() == [1, 1]


def test_flatten_expand_dims_squeeze_inplace_views():
    x = nd.array(np.arange(6.0).reshape(2, 3, 1))
    for call, shape in ((lambda a: a.flatten(inplace=True), (2, 3)),
                        (lambda a: a.expand_dims(1, inplace=True), (2, 1, 3, 1)),
                        (lambda a: a.squeeze(inplace=True), (2, 3)),
                        (lambda a: a.squeeze(axis=-1, inplace=True), (2, 3))):
        view = call(x)
        assert view.shape == shape
        view[:] = view + 1                                   # writes through to x
    np.testing.assert_array_equal(x.asnumpy().ravel(), np.arange(6.0) + 4)
    copy = x.flatten()
    copy[:] = 0
    assert x.asnumpy().sum() > 0                            # the default is a copy
    with pytest.raises(ValueError, match="squeeze: the axes squeezed must have size 1"):
        x.squeeze(axis=0, inplace=True)
    with pytest.raises(ValueError, match=r"expand_dims: axis must be in \[-4, 3\]"):
        x.expand_dims(5, inplace=True)


# -- MXNet 1.x's test_ndarray_indexing / test_ndarray_slice, ported ------------------------
#
# ndrt follows MXNet 1.x: a basic key that leaves no axis gives shape (1,) (``is_scalar``
# cases compare through ``asscalar``).  MXNet refuses ``x[key] = v`` while recording; ndrt
# records it (DESIGN.md: the tape records __setitem__ through operators), so the setitem
# autograd case checks the gradient instead of an error.

def _np_int(index, t=np.int32):
    conv = lambda v: None if v is None else t(v)
    if isinstance(index, slice):
        return slice(conv(index.start), conv(index.stop), conv(index.step))
    return tuple(slice(conv(e.start), conv(e.stop), conv(e.step)) if isinstance(e, slice)
                 else conv(e) for e in index)


def _cases():
    s = slice
    out = [(0, False), (np.int32(0), False), (np.int64(0), False),
           (5, False), (np.int32(5), False), (np.int64(5), False),
           (-1, False), (np.int32(-1), False), (np.int64(-1), False)]
    for sl in [s(5), s(1, 5), s(1, 5, 2), s(7, 0, -1), s(None, 6), s(None, 6, 3), s(1, None),
               s(1, None, 3), s(None, None, 2), s(None, None, -1), s(None, None, -2)]:
        out += [(sl, False), (_np_int(sl), False), (_np_int(sl, np.int64), False)]
    for t in [(s(None), s(None), 1, 8), (s(None), s(None), -1, 8), (s(None), s(None), 1, -8),
              (s(None), s(None), -1, -8), (s(None), 2, s(1, 5), 1), (1, 2, 3), (-1, -2, -3),
              (s(None, None, -1), 2, s(1, 5), 1), (s(None, None, -1), 2, s(1, 7, 2), 1),
              (s(1, 8, 2), s(14, 2, -2), s(3, 8), s(0, 7, 3)), (s(1, 8, 2), 1, s(3, 8), 2)]:
        out += [(t, False), (_np_int(t), False), (_np_int(t, np.int64), False)]
    for t in [(1, 2, 3, 4), (-4, -3, -2, -1)]:
        out += [(t, True), (_np_int(t), True), (_np_int(t, np.int64), True)]
    out += [((1, Ellipsis, -1), False), ((s(2), Ellipsis, None, 0), False), (None, False),
            ((1, None, -2, 3, -4), False), ((1, s(2, 5), None), False),
            ((s(None), s(1, 4), None, s(2, 3)), False),
            ((s(1, 3), s(1, 3), s(1, 3), s(1, 3), None), False),
            ((s(1, 3), s(1, 3), None, s(1, 3), s(1, 3)), False),
            ((None, s(1, 2), 3, None), False), ((1, None, 2, 3, None, None, 4), False)]
    i32, i64 = np.int32, np.int64
    out += [([1], False), ([1, 2], False), ([2, 1, 3], False), ([7, 5, 0, 3, 6, 2, 1], False),
            (np.array([6, 3], i32), False), (np.array([[3, 4], [0, 6]], i32), False),
            (np.array([[7, 3], [2, 6], [0, 5], [4, 1]], i32), False),
            (np.array([[7, 3], [2, 6], [0, 5], [4, 1]], i64), False),
            (np.array([[2], [0], [1]], i32), False), (np.array([[2], [0], [1]], i64), False),
            ("nd", [4, 7], i32), ("nd", [4, 7], i64), ("nd", [[3, 6], [2, 1]], i32),
            ("nd", [[3, 6], [2, 1]], i64), ("nd", [[7, 3], [2, 6], [0, 5], [4, 1]], i32),
            ("nd", [[7, 3], [2, 6], [0, 5], [4, 1]], i64),
            ((1, [2, 3]), False), ((1, [2, 3], np.array([[3], [0]], i32)), False),
            ((1, [2, 3], np.array([[3], [0]], i64)), False),
            ((1, [2], np.array([[5], [3]], i32), s(None)), False),
            ((1, [2], np.array([[5], [3]], i64), s(None)), False),
            ((1, [2, 3], np.array([[6], [0]], i32), s(2, 5)), False),
            ((1, [2, 3], np.array([[4], [7]], i64), s(2, 5, 2)), False),
            ((1, [2], np.array([[3]], i32), s(None, None, -1)), False),
            ((1, [2], np.array([[3]], i32), np.array([[5, 7], [2, 4]], i64)), False),
            ([0], False), ([0, 1], False), ([1, 2, 3], False), ([2, 0, 5, 6], False),
            (([1, 1], [2, 3]), False), (([1], [4], [5]), False), (([1], [4], [5], [6]), False),
            (([[1]], [[2]]), False), (([[1]], [[2]], [[3]], [[4]]), False),
            ((s(0, 2), [[1], [6]], s(0, 2), s(0, 5, 2)), False),
            (([[[[1]]]], [[1]], s(0, 3), [1, 5]), False),
            (([[[[1]]]], 3, s(0, 3), [1, 3]), False), (([[[[1]]]], 3, s(0, 3), 0), False),
            (([[[[1]]]], [[2], [12]], s(0, 3), s(None)), False),
            (([1, 2], s(3, 5), [2, 3], [3, 4]), False), (([1, 2], s(3, 5), (2, 3), [3, 4]), False),
            (([1, 2], s(3, 5), None, None, [3, 4]), False),
            ((s(None), s(3, 5), None, None, [2, 3], [3, 4]), False),
            ((s(None), s(3, 5), None, [2, 3], None, [3, 4]), False),
            ((None, s(None), s(3, 5), [2, 3], None, [3, 4]), False),
            ((None, s(None), None, s(3, 5), [2, 3], None, [3, 4]), False),
            (([2, 3, 4], None, [3, 4, 6], None, s(1, 2), None, [1, 2, 3]), False)]
    return out


CASES = _cases()
SHAPE = (8, 16, 9, 9)


def _key(case):
    """(mx key, numpy key, is_scalar)."""
    if isinstance(case[0], str):
        k = nd.array(case[1], dtype=case[2])
        return k, k.asnumpy(), False
    index, scalar = case
    if isinstance(index, tuple):
        return index, tuple(i.asnumpy() if isinstance(i, nd.NDArray) else i
                            for i in index), scalar
    return index, index, scalar


@pytest.mark.parametrize("case", CASES, ids=[str(i) for i in range(len(CASES))])
def test_ndarray_indexing_getitem(case):
    a = np.arange(np.prod(SHAPE), dtype="int32").reshape(SHAPE)
    key, npkey, scalar = _key(case)
    want = a[npkey]
    got = nd.array(a, dtype=a.dtype)[key]
    if scalar:
        assert got.shape == (1,)             # MXNet 1.x
        assert got.asscalar() == want
    else:
        assert got.shape == want.shape
        np.testing.assert_array_equal(got.asnumpy(), want)


def _basic(index):
    ok = lambda i: isinstance(i, (int, np.integer, slice))
    return ok(index) or (isinstance(index, tuple) and all(ok(i) for i in index))


@pytest.mark.parametrize("case", CASES, ids=[str(i) for i in range(len(CASES))])
def test_ndarray_indexing_setitem(case):
    rng = np.random.default_rng(0)
    key, npkey, scalar = _key(case)
    x = nd.array(np.arange(np.prod(SHAPE), dtype="int32").reshape(SHAPE), dtype="int32")
    a = x.asnumpy()

    def check(value, npvalue=None):
        a[npkey] = value.asnumpy() if isinstance(value, nd.NDArray) else (
            value if npvalue is None else npvalue)
        x[key] = value
        np.testing.assert_array_equal(x.asnumpy(), a)

    if scalar:
        check(int(rng.integers(-10000, 0)))
        v = [int(rng.integers(-10000, 0))]
        check(v, v[0])
        return
    shp = a[npkey].shape
    check(rng.integers(-10000, 0, size=shp))
    check(int(rng.integers(-10000, 0)))
    if len(shp) > 1:
        v = rng.integers(-10000, 0, size=(shp[-1],))
        check(nd.array(v))
        check(v)
        if _basic(key):
            check(np.array(v.reshape((1, 1, 1) + v.shape)))
        check([int(rng.integers(-10000, 0))] * shp[-1])


@pytest.mark.parametrize("case", CASES, ids=[str(i) for i in range(len(CASES))])
def test_ndarray_indexing_getitem_autograd(case):
    key, _, _ = _key(case)
    x = nd.array(np.arange(np.prod(SHAPE), dtype="int32").reshape(SHAPE), dtype="int32")
    x.attach_grad()
    with autograd.record():
        y = x[key]
    y.backward()
    g = nd.zeros_like(x)
    g[key] = nd.ones_like(y)
    np.testing.assert_array_equal(x.grad.asnumpy(), g.asnumpy())


def test_ndarray_slice():
    a = nd.array(np.random.uniform(-10, 10, (10,)))
    a2 = a.asnumpy()
    np.testing.assert_array_equal(a[3:8].asnumpy(), a2[3:8])
    a2[3:8] *= 10
    a[3:8] = a2[3:8]
    np.testing.assert_array_equal(a[3:8].asnumpy(), a2[3:8])

    a = nd.random.uniform(shape=(3, 4, 5, 6, 7))
    a2 = a.asnumpy()
    np.testing.assert_array_equal(a[1, 3:4, :, 1:5].asnumpy(), a2[1, 3:4, :, 1:5])
    assert a[1, 2, 3, 4, 5].asscalar() == a2[1, 2, 3, 4, 5]
    assert a[-1, -2, -3, -4, -5].asscalar() == a2[-1, -2, -3, -4, -5]

    a = nd.array([[0, 1], [2, 3]])
    assert (a[[1, 1, 0], [0, 1, 0]].asnumpy() == [2, 3, 0]).all()
    assert (a[nd.array([1, 1, 0]), nd.array([0, 1, 0])].asnumpy() == [2, 3, 0]).all()

    a = nd.random.uniform(shape=(4, 4))
    a2 = a.asnumpy()
    for i in range(-4, 0):
        assert a[i, i].asscalar() == a2[i, i]
        np.testing.assert_array_equal(a[:, i].asnumpy(), a2[:, i])
        np.testing.assert_array_equal(a[i, :].asnumpy(), a2[i, :])


def test_assign_float_and_row_mxnet_issues():
    a = np.array([47.844944], dtype=np.float32)
    b = nd.zeros(1, dtype=np.float32)
    b[0] = a
    np.testing.assert_array_equal(b.asnumpy(), a)
    b[0] = a[0]
    np.testing.assert_array_equal(b.asnumpy(), a)
    c = nd.zeros((4, 1), dtype=np.int32)
    c[1, 0] = int(16800001)
    assert c.asnumpy()[1, 0] == 16800001
    assert (c - 1).asnumpy()[1, 0] == 16800000
    m = np.random.random((10, 10)).astype(np.float32)
    x = nd.array(m)
    m[0] = m[1]
    x[0] = x[1]
    m[1] = v = np.random.random(10).astype(np.float32).tolist()
    x[1] = v
    m[0, :] = m[1]
    x[0, :] = x[1]
    np.testing.assert_array_equal(x.asnumpy(), m)


def test_bool_mxnet():
    assert not bool(nd.array([]))
    assert not bool(nd.zeros((1,)))
    assert bool(nd.ones((1,)))
    with pytest.raises(ValueError):
        bool(nd.ones((2, 3, 4)))


# -- x[key] = value while recording -------------------------------------------------------
# MXNet 1.x refuses every in-place write while recording; ndrt refuses a write into an
# array on the tape (basic and advanced keys alike) and records a write of a recorded value
# into an array off the tape (_slice_assign / _take_assign), so that its gradient flows.

def _grad_through_setitem(key, shape, wshape, coef):
    w = nd.array(np.arange(1, 1 + int(np.prod(wshape)), dtype=np.float32).reshape(wshape))
    w.attach_grad()
    c = nd.array(coef)
    with autograd.record():
        buf = nd.zeros(shape)
        buf[key] = w * 2
        loss = (buf * c).sum() + w.sum()
    loss.backward()
    return w.grad.asnumpy()


@pytest.mark.parametrize("key,wshape", [
    (slice(0, 1), (1, 4)), ((slice(None), 1), (3,)), ((slice(None), 1), (1,)),
    ((1, 2), (1,)), ((slice(1, 3), slice(0, 4, 2)), (2, 2)), ((None, 1), (1, 1, 4)),
    (([0, 2], 1), (2,)), (([0, 2], slice(1, 3)), (2, 2)), ((np.array([2, 0]),), (2, 4))])
def test_setitem_of_a_recorded_value_records(key, wshape):
    coef = np.arange(12, dtype=np.float32).reshape(3, 4) + 1
    got = _grad_through_setitem(key, (3, 4), wshape, coef)
    # d/dw_i: 2 * sum(coef * (zeros with key set to the basis vector e_i)) + 1 (NumPy)
    want = np.empty(int(np.prod(wshape)))
    for i in range(want.size):
        e = np.zeros(want.size, np.float32)
        e[i] = 1
        b = np.zeros((3, 4), np.float32)
        b[key] = e.reshape(wshape) if np.ndim(b[key]) else e[0]    # NumPy: 0-d there
        want[i] = 2 * (coef * b).sum() + 1
    np.testing.assert_allclose(got, want.reshape(wshape), rtol=1e-6)


@pytest.mark.parametrize("key", [slice(0, 1), ([0, 2], 1), (np.array([True, False, True]),)])
def test_setitem_into_an_array_on_the_tape_is_refused(key):
    x = nd.ones((3, 4))
    x.attach_grad()
    before = x.asnumpy().copy()
    with autograd.record():
        with pytest.raises(RuntimeError, match="on the autograd tape while recording"):
            x[key] = 5
    np.testing.assert_array_equal(x.asnumpy(), before)


@pytest.mark.parametrize("key", [slice(None), (slice(None),)])
def test_setitem_colon_writes_all_of_a_0d_array(key):
    # x[:] = v names the whole array in MXNet 1.x, also when x is 0-d (NumPy refuses it)
    x = nd.zeros(())
    x[key] = np.ones(())
    assert x.shape == () and x.asnumpy() == 1
    x[key] = 5
    assert x.asnumpy() == 5
    x[key] = nd.array(7.0)
    assert x.asnumpy() == 7
    with pytest.raises(IndexError, match="too many indices"):
        x[0:1] = 1
    assert x.asnumpy() == 7
