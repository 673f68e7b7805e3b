"""Shape and indexing operators against NumPy: values over dtypes and shapes (0-size and
0-d where meaningful), MXNet's special values and defaults, requests, gradients (float64
central differences), bad input, and failed ops leaving out= unchanged."""

import numpy as np
import pytest

import runtime as mx
from runtime import autograd, nd
from runtime.ops import registry
from tests.runtime.conftest import assert_same
from tests.runtime.opcheck import check_grad, check_requests, run

DTYPES = ["float32", "float64", "int32", "uint8"]


def data(shape, dtype="float64", seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iub":
        return rng.integers(0, 5, shape).astype(dtype)
    return rng.uniform(-2, 2, shape).astype(dtype)


def _np_split(x, n, axis, squeeze=False):
    parts = np.split(x, n, axis=axis)
    return [np.squeeze(p, axis=axis) if squeeze else p for p in parts]


def _np_slice(x, begin, end, step=None):
    step = step or (None,) * len(begin)
    return x[tuple(slice(b, e, s) for b, e, s in zip(begin, end, step))]


def _np_pick(x, idx, axis, keepdims=False, mode="clip"):
    n = x.shape[axis]
    i = np.trunc(idx).astype(np.int64)
    i = np.clip(i, 0, n - 1) if mode == "clip" else np.mod(i, n)
    shape = list(x.shape)
    shape[axis] = 1
    r = np.take_along_axis(x, i.reshape(shape), axis=axis)
    return r if keepdims else (np.squeeze(r, axis=axis) if x.ndim > 1 else r.reshape(1))


# One table for the single-input ops: (op, attrs, NumPy reference, input shape).
CASES = [
    ("reshape", {"shape": (4, -1)}, lambda x: x.reshape(4, -1), (2, 3, 4)),
    ("reshape", {"shape": (0, -1)}, lambda x: x.reshape(2, 12), (2, 3, 4)),
    ("reshape", {"shape": (-2,)}, lambda x: x, (2, 3, 4)),
    ("reshape", {"shape": (-3, 4)}, lambda x: x.reshape(6, 4), (2, 3, 4)),
    ("reshape", {"shape": (-4, 1, 2, -2)}, lambda x: x.reshape(1, 2, 3, 4), (2, 3, 4)),
    ("reshape", {"shape": (0, -4, -1, 1, 0)}, lambda x: x.reshape(2, 3, 1, 4), (2, 3, 4)),
    ("reshape", {"shape": (-1, 0), "reverse": True}, lambda x: x.reshape(6, 4), (2, 3, 4)),
    ("reshape", {"shape": ()}, lambda x: x.reshape(()), (1, 1)),
    ("reshape", {"shape": (-1, 0)}, lambda x: x.reshape(0, 3), (0, 3)),
    ("Reshape", {"shape": (-1,)}, lambda x: x.reshape(-1), ()),
    ("transpose", {}, lambda x: x.T, (2, 3, 4)),
    ("transpose", {"axes": (1, 0, 2)}, lambda x: x.transpose(1, 0, 2), (2, 3, 4)),
    ("transpose", {"axes": (-1, 0, 1)}, lambda x: x.transpose(2, 0, 1), (2, 0, 4)),
    ("transpose", {}, lambda x: x, ()),
    ("expand_dims", {"axis": 0}, lambda x: x[None], (2, 3)),
    ("expand_dims", {"axis": -1}, lambda x: x[..., None], (2, 3)),
    ("expand_dims", {"axis": 1}, lambda x: x[:, None], (0, 3)),
    ("expand_dims", {"axis": 0}, lambda x: x[None], ()),
    ("squeeze", {}, lambda x: np.squeeze(x), (1, 3, 1, 2)),
    ("squeeze", {"axis": (0, -2)}, lambda x: np.squeeze(x, (0, 2)), (1, 3, 1, 2)),
    ("squeeze", {}, lambda x: x.reshape(1), (1, 1)),
    ("squeeze", {"axis": 1}, lambda x: x.reshape(0, 2), (0, 1, 2)),
    ("squeeze", {}, lambda x: x, ()),
    ("flatten", {}, lambda x: x.reshape(2, 12), (2, 3, 4)),
    ("Flatten", {}, lambda x: x.reshape(3, 1), (3,)),
    ("flatten", {}, lambda x: x.reshape(1, 1), ()),
    ("flatten", {}, lambda x: x.reshape(0, 12), (0, 3, 4)),
    ("broadcast_to", {"shape": (2, 3, 4)}, lambda x: np.broadcast_to(x, (2, 3, 4)), (3, 1)),
    ("broadcast_to", {"shape": (0, 4)}, lambda x: np.broadcast_to(x, (2, 4)), (2, 1)),
    ("split", {"num_outputs": 2}, lambda x: _np_split(x, 2, 1), (3, 4)),
    ("SliceChannel", {"num_outputs": 3, "axis": 0, "squeeze_axis": True},
     lambda x: _np_split(x, 3, 0, True), (3, 2)),
    ("split", {"num_outputs": 2, "axis": -1}, lambda x: _np_split(x, 2, -1), (2, 3, 4)),
    ("split", {"num_outputs": 1, "axis": 0}, lambda x: _np_split(x, 1, 0)[0], (0, 2)),
    ("slice", {"begin": (0, 1), "end": (2, None)}, lambda x: x[0:2, 1:], (3, 4)),
    ("slice", {"begin": (None, -1), "end": (None, 0), "step": (2, -1)},
     lambda x: x[::2, -1:0:-1], (5, 4, 2)),
    ("slice", {"begin": (1,), "end": (1,)}, lambda x: x[1:1], (3, 4)),
    ("slice", {"begin": (-10, None), "end": (10, None), "step": (None, -2)},
     lambda x: x[-10:10, ::-2], (3, 5)),
    ("crop", {"begin": (1,), "end": (3,)}, lambda x: x[1:3], (4,)),
    ("slice_axis", {"axis": 1, "begin": 1, "end": 3}, lambda x: x[:, 1:3], (2, 4)),
    ("slice_axis", {"axis": -1, "begin": -2, "end": None}, lambda x: x[..., -2:], (2, 3, 4)),
    ("slice_axis", {"axis": 0, "begin": 2, "end": 2}, lambda x: x[2:2], (3, 4)),
    ("tile", {"reps": (2, 3)}, lambda x: np.tile(x, (2, 3)), (2, 3)),
    ("tile", {"reps": (2,)}, lambda x: np.tile(x, 2), (2, 3)),
    ("tile", {"reps": (2, 1, 3)}, lambda x: np.tile(x, (2, 1, 3)), (2,)),
    ("tile", {"reps": (0, 2)}, lambda x: np.tile(x, (0, 2)), (2, 3)),
    ("tile", {"reps": (2,)}, lambda x: np.tile(x, 2), ()),
    ("repeat", {"repeats": 2}, lambda x: np.repeat(x, 2), (2, 3)),
    ("repeat", {"repeats": 3, "axis": -1}, lambda x: np.repeat(x, 3, axis=-1), (2, 3)),
    ("repeat", {"repeats": 2, "axis": 0}, lambda x: np.repeat(x, 2, axis=0), (0, 3)),
    ("repeat", {"repeats": 0, "axis": 1}, lambda x: np.repeat(x, 0, axis=1), (2, 3)),
    ("repeat", {"repeats": 3}, lambda x: np.repeat(x, 3), ()),
    ("flip", {"axis": 0}, lambda x: x[::-1], (3, 4)),
    ("reverse", {"axis": (0, -1)}, lambda x: x[::-1, :, ::-1], (2, 3, 4)),
    ("flip", {"axis": 1}, lambda x: x[:, ::-1], (0, 3)),
]
IDS = [f"{c[0]}-{i}" for i, c in enumerate(CASES)]


@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.parametrize("dtype", DTYPES + ["bool"])
def test_values_match_numpy(case, dtype):
    name, attrs, ref, shape = case
    x = data(shape, dtype)
    got = run(name, [x], attrs)
    want = ref(x)
    want = want if isinstance(want, list) else [want]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_same(g, np.array(w))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_requests(case):
    name, attrs, _, shape = case
    check_requests(name, [data(shape, "float32", seed=1)], attrs)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_gradients(case):
    name, attrs, _, shape = case
    check_grad(name, [data(shape, seed=2)], attrs)


# -- MXNet's reshape values and errors ---------------------------------------------------------

def test_reshape_special_values_like_mxnet_docs():
    x = nd.zeros((2, 3, 4))
    for target, want in [((4, 0, 2), (4, 3, 2)), ((2, 0, 0), (2, 3, 4)), ((6, 1, -1), (6, 1, 4)),
                         ((3, -1, 8), (3, 1, 8)), ((-1,), (24,)), ((-2,), (2, 3, 4)),
                         ((2, -2), (2, 3, 4)), ((-2, 1, 1), (2, 3, 4, 1, 1)),
                         ((-3, 4), (6, 4)), ((0, -3), (2, 12)),
                         ((-3, -2), (6, 4)), ((-4, 1, 2, -2), (1, 2, 3, 4)),
                         ((2, -4, -1, 3, -2), (2, 1, 3, 4))]:
        assert nd.reshape(x, shape=target).shape == want, target
    y = nd.zeros((10, 5, 4))
    assert nd.reshape(y, shape=(-1, 0)).shape == (40, 5)
    assert nd.reshape(y, shape=(-1, 0), reverse=True).shape == (50, 4)


def test_reshape_errors():
    x = nd.zeros((2, 3, 4))
    with pytest.raises(ValueError, match=r"^reshape: cannot reshape an array of shape \(2, 3, 4\)"):
        nd.reshape(x, shape=(5, 5))
    with pytest.raises(ValueError, match=r"^reshape: shape \(-1, -1\) has more than one -1"):
        nd.reshape(x, shape=(-1, -1))
    with pytest.raises(ValueError, match=r"^reshape: shape \(-5,\) holds -5"):
        nd.reshape(x, shape=(-5,))
    with pytest.raises(ValueError, match=r"^reshape: shape \(0, 0, 0, 0\) refers to input "
                                         "dimension 3"):
        nd.reshape(x, shape=(0, 0, 0, 0))
    with pytest.raises(ValueError, match="^reshape: -4 in shape .* cannot split dimension 2"):
        nd.reshape(x, shape=(-4, 3, -1, -2))
    with pytest.raises(ValueError, match="^reshape: -4 in shape .* must be followed"):
        nd.reshape(x, shape=(-4, 2))
    with pytest.raises(ValueError, match=r"^reshape: cannot infer -1"):
        nd.reshape(x, shape=(5, -1))
    with pytest.raises(TypeError, match="^reshape: shape must be an int or a tuple of ints"):
        nd.reshape(x, shape=(2.0, 12))
    with pytest.raises(TypeError, match="^reshape: attribute 'shape' is required"):
        nd.reshape(x)


def test_reshape_size_overflow_names_the_op():
    x = nd.zeros((4,), dtype="uint8")
    with pytest.raises(ValueError, match=r"^reshape: shape \(4, 4611686018427387905\) is too "
                                         r"large: its size overflows int64$"):
        nd.reshape(x, shape=(4, 2 ** 62 + 1))
    with pytest.raises(ValueError, match=r"^reshape: shape \(4294967296, 4294967296, -1\) is "
                                         "too large"):
        nd.reshape(nd.ones((2,)), shape=(2 ** 32, 2 ** 32, -1))
    with pytest.raises(ValueError, match=r"^reshape: shape \(-1, 9223372036854775807, 2\)"):
        nd.reshape(x, shape=(-1, 2 ** 63 - 1, 2))
    with pytest.raises(ValueError, match=r"^reshape: shape must have at most 32 dimensions"):
        nd.reshape(nd.zeros(1), shape=(1,) * 33)
    with pytest.raises(ValueError, match=r"^reshape_like: shape .* too large"):
        nd.reshape_like(nd.zeros((0, 2 ** 40)), nd.zeros((2 ** 40, 0)), lhs_begin=0, lhs_end=1,
                        rhs_begin=0, rhs_end=1)


def test_reshape_like():
    x, y = data((2, 3, 4)), np.zeros((6, 4), np.int32)
    assert_same(run("reshape_like", [x, y])[0], x.reshape(6, 4))
    got = run("reshape_like", [x, np.zeros((3, 2))], {"lhs_begin": 0, "lhs_end": 2,
                                                     "rhs_begin": 0, "rhs_end": 2})[0]
    assert_same(got, x.reshape(3, 2, 4))
    got = run("reshape_like", [x, np.zeros((1, 12))], {"lhs_begin": -2, "rhs_begin": 1})[0]
    assert_same(got, x.reshape(2, 12))
    check_grad("reshape_like", [x, y])
    check_requests("reshape_like", [x.astype(np.float32), y])
    assert_same(run("reshape_like", [np.zeros((2, 0)), np.zeros((0, 5))])[0], np.zeros((0, 5)))
    with pytest.raises(ValueError, match=r"^reshape_like: cannot reshape an array of shape "
                                         r"\(2, 3, 4\) into \(5,\)"):
        run("reshape_like", [x, np.zeros(5)])
    with pytest.raises(ValueError, match="^reshape_like: lhs_end 4 is out of range"):
        run("reshape_like", [x, y], {"lhs_end": 4})


# -- transpose, expand_dims, squeeze -------------------------------------------------------------

def test_transpose_expand_squeeze_errors():
    x = nd.zeros((2, 3))
    with pytest.raises(ValueError, match=r"^transpose: axes \(0, 0\) must be a permutation"):
        nd.transpose(x, axes=(0, 0))
    with pytest.raises(ValueError, match=r"^transpose: axes \(0, 1, 2\) must be a permutation"):
        nd.transpose(x, axes=(0, 1, 2))
    with pytest.raises(ValueError, match=r"^transpose: axes \(0, 2\) must be a permutation"):
        nd.transpose(x, axes=(0, 2))
    with pytest.raises(ValueError, match="^expand_dims: axis 3 is out of range"):
        nd.expand_dims(x, axis=3)
    with pytest.raises(ValueError, match="^expand_dims: axis -4 is out of range"):
        nd.expand_dims(x, axis=-4)
    with pytest.raises(TypeError, match="^expand_dims: axis must be an integer"):
        nd.expand_dims(x, axis=(0,))
    with pytest.raises(ValueError, match=r"^squeeze: axis 1 of shape \(2, 3\) has size 3, not 1"):
        nd.squeeze(x, axis=1)
    with pytest.raises(ValueError, match="^squeeze: axis 0 is out of range for an array of 0"):
        nd.squeeze(nd.array(np.float32(1)), axis=0)
    with pytest.raises(ValueError, match=r"^squeeze: axis \(0, -2\) repeats an axis"):
        nd.squeeze(nd.zeros((1, 1)), axis=(0, -2))


def test_transpose_is_a_method_and_T_agrees():
    x = data((2, 3, 4), "float32")
    a = nd.array(x)
    assert_same(a.transpose(), x.T)
    assert_same(a.transpose(axes=(0, 2, 1)), x.transpose(0, 2, 1))
    assert_same(a.flatten(), x.reshape(2, 12))


# -- broadcast_to / broadcast_like ---------------------------------------------------------------

def test_broadcast_like():
    x, y = data((3, 1), "float32"), np.zeros((3, 4), np.int32)
    assert_same(run("broadcast_like", [x, y])[0], np.broadcast_to(x, (3, 4)))
    z = data((1, 2, 1))
    got = run("broadcast_like", [z, np.zeros((5, 7))], {"lhs_axes": (0, 2), "rhs_axes": (1, 0)})
    assert_same(got[0], np.broadcast_to(z, (7, 2, 5)))
    assert_same(run("broadcast_like", [x, np.zeros((3, 0))])[0], np.zeros((3, 0), np.float32))
    check_grad("broadcast_like", [data((3, 1)), data((3, 4))], wrt=[0])
    check_grad("broadcast_like", [z, np.zeros((5, 7))], {"lhs_axes": (0, 2), "rhs_axes": (1, 0)},
               wrt=[0])
    check_requests("broadcast_like", [x, y])
    g = registry.get("broadcast_like").gradient({}, [nd.array(x), nd.array(y)], [],
                                                [nd.ones((3, 4))])
    assert g[1] is None
    with pytest.raises(ValueError, match=r"^broadcast_like: shape \(3, 1\) cannot be broadcast "
                                         r"to \(4,\)"):
        run("broadcast_like", [x, np.zeros(4)])
    with pytest.raises(ValueError, match=r"^broadcast_like: shape \(3, 1\) cannot be broadcast "
                                         r"to \(2, 3, 4\)"):
        run("broadcast_like", [x, np.zeros((2, 3, 4))])
    with pytest.raises(ValueError, match="^broadcast_like: dimension 0 of"):
        run("broadcast_like", [x, y], {"lhs_axes": 0, "rhs_axes": 1})
    with pytest.raises(ValueError, match="^broadcast_like: lhs_axes and rhs_axes must be given"):
        run("broadcast_like", [x, y], {"lhs_axes": 0})
    # MXNet 1.x refuses empty axes rather than reading them as "every axis"
    with pytest.raises(ValueError, match=r"^broadcast_like: lhs_axes and rhs_axes must not be "
                                         r"empty \(got \(\)\)"):
        run("broadcast_like", [x, y], {"lhs_axes": (), "rhs_axes": ()})


def test_broadcast_to_gradient_with_zero_size_dims():
    # 0 in a gradient's target shape: NDArray.reshape would read it as "keep".
    check_grad("broadcast_to", [data((3,))], {"shape": (2, 3)})
    op = registry.get("broadcast_to")
    x = nd.zeros((0,), dtype="float64")
    g = op.gradient(op.parse_attrs({"shape": (2, 0)}), [x], [], [nd.zeros((2, 0),
                                                                         dtype="float64")])
    assert g[0].shape == (0,)
    with pytest.raises(ValueError, match=r"^broadcast_to: shape \(3,\) cannot be broadcast to"):
        nd.broadcast_to(nd.zeros(3), shape=(2, 4))


# -- concat, stack, split ----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_concat_and_stack(dtype):
    a, b, c = data((2, 3), dtype, 1), data((2, 1), dtype, 2), data((2, 0), dtype, 3)
    arrs = [nd.array(v, dtype=dtype) for v in (a, b, c)]
    assert_same(nd.concat(*arrs), np.concatenate([a, b, c], axis=1))       # MXNet: dim=1
    assert_same(nd.Concat(*arrs, dim=-1, num_args=3), np.concatenate([a, b, c], axis=1))
    assert_same(nd.concat(arrs[0], arrs[0], dim=0), np.concatenate([a, a], axis=0))
    assert_same(nd.concat(arrs[0]), a)
    assert_same(nd.stack(arrs[0], arrs[0]), np.stack([a, a]))
    assert_same(nd.stack(arrs[1], arrs[1], arrs[1], axis=-1), np.stack([b, b, b], axis=-1))
    assert_same(nd.stack(arrs[2], arrs[2], axis=1), np.stack([c, c], axis=1))
    s = nd.array(np.float32(2), dtype=dtype)
    assert_same(nd.stack(s, s), np.array([2, 2], dtype))


def test_concat_stack_gradients_and_requests():
    xs = [data((2, 3), seed=1), data((2, 1), seed=2), data((2, 0), seed=3)]
    check_grad("concat", xs)
    check_grad("concat", xs[:1] * 2, {"dim": 0})
    check_grad("stack", [data((2, 3), seed=s) for s in range(3)], {"axis": 1})
    check_grad("stack", [data((2,), seed=4)], {"axis": -1})
    check_requests("concat", [x.astype(np.float32) for x in xs])
    check_requests("stack", [data((2, 3), "float32", s) for s in range(2)], {"axis": 2})


def test_concat_stack_errors():
    a, b = nd.zeros((2, 3)), nd.zeros((3, 3))
    with pytest.raises(ValueError, match=r"^concat: shapes \(2, 3\), \(3, 3\) must agree except "
                                         "on dimension 1"):
        nd.concat(a, b)
    with pytest.raises(ValueError, match="^concat: dim 2 is out of range"):
        nd.concat(a, a, dim=2)
    with pytest.raises(ValueError, match="^concat: dim 0 is out of range for an array of 0"):
        nd.concat(nd.array(np.float32(1)), nd.array(np.float32(1)), dim=0)
    with pytest.raises(ValueError, match="^concat: num_args is 3 but 2 arrays were given"):
        nd.concat(a, a, num_args=3)
    with pytest.raises(TypeError, match="^concat: inputs must have one dtype"):
        nd.concat(a, nd.zeros((2, 3), dtype="int32"))
    with pytest.raises(TypeError, match="^concat: needs at least one array input"):
        nd.concat()
    with pytest.raises(ValueError, match=r"^stack: all inputs must have one shape"):
        nd.stack(a, b)
    with pytest.raises(ValueError, match="^stack: axis 3 is out of range"):
        nd.stack(a, a, axis=3)
    with pytest.raises(TypeError, match="^stack: axis must be an integer"):
        nd.stack(a, a, axis=None)


def test_split():
    x = data((4, 6), "float32")
    parts = nd.split(nd.array(x), num_outputs=3)
    for p, w in zip(parts, np.split(x, 3, axis=1)):
        assert_same(p, w)
    single = nd.split(nd.array(x), num_outputs=1, axis=0)
    assert isinstance(single, nd.NDArray)
    check_grad("split", [data((4, 6))], {"num_outputs": 2, "axis": 0})
    check_grad("split", [data((2, 3))], {"num_outputs": 3, "squeeze_axis": True})
    with pytest.raises(ValueError, match=r"^split: dimension 1 of shape \(4, 6\) \(6\) cannot be "
                                         "split evenly into 4 outputs"):
        nd.split(nd.array(x), num_outputs=4)
    with pytest.raises(ValueError, match="^split: squeeze_axis needs sections of size 1"):
        nd.split(nd.array(x), num_outputs=3, squeeze_axis=True)
    with pytest.raises(ValueError, match=r"^split: num_outputs must be >= 1 \(got 0\)"):
        nd.split(nd.array(x), num_outputs=0)
    with pytest.raises(TypeError, match="^split: attribute 'num_outputs' is required"):
        nd.split(nd.array(x))
    with pytest.raises(ValueError, match="^split: axis 2 is out of range"):
        nd.split(nd.array(x), num_outputs=2, axis=2)
    outs = [nd.full((4, 3), 5.0), nd.full((4, 3), 5.0)]
    with pytest.raises(ValueError, match=r"^split: out has shape \(4, 3\), the result has "
                                         r"\(4, 2\)"):
        nd.split(nd.array(x), num_outputs=3, out=outs[:1] * 3)
    for o in outs:
        assert_same(o, np.full((4, 3), 5, np.float32))


# -- slice family ----------------------------------------------------------------------------

def test_slice_errors():
    x = nd.zeros((3, 4))
    with pytest.raises(ValueError, match=r"^slice: step must not be 0"):
        nd.slice(x, begin=(0,), end=(2,), step=(0,))
    with pytest.raises(ValueError, match=r"^slice: begin \(0, 0, 0\) has more entries"):
        nd.slice(x, begin=(0, 0, 0), end=(1, 1, 1))
    with pytest.raises(ValueError, match=r"^slice: begin \(0,\), end \(1, 2\) and step"):
        nd.slice(x, begin=(0,), end=(1, 2))
    with pytest.raises(TypeError, match=r"^slice: begin must be a tuple of ints or None "
                                        r"\(got \('a',\)\)"):
        nd.slice(x, begin=("a",), end=(1,))
    with pytest.raises(TypeError, match="^slice: attribute 'end' is required"):
        nd.slice(x, begin=(0,))
    with pytest.raises(ValueError, match="^slice_axis: begin 3 and end 2 are out of range for "
                                         "axis 1 of size 4"):
        nd.slice_axis(x, axis=1, begin=3, end=2)
    with pytest.raises(ValueError, match="^slice_axis: begin 0 and end 5 are out of range"):
        nd.slice_axis(x, axis=1, begin=0, end=5)
    with pytest.raises(ValueError, match="^slice_axis: axis 2 is out of range"):
        nd.slice_axis(x, axis=2, begin=0, end=1)
    with pytest.raises(TypeError, match="^slice_axis: attribute 'end' is required"):
        nd.slice_axis(x, axis=0, begin=0)


def test_slice_assign_ops():
    lhs, rhs = data((4, 5), seed=1), data((2, 2), seed=2)
    attrs = {"begin": (1, None), "end": (3, None), "step": (None, 3)}
    want = lhs.copy()
    want[1:3, ::3] = rhs
    assert_same(run("_slice_assign", [lhs, rhs], attrs)[0], want)
    want = lhs.copy()
    want[1:3, ::3] = 7
    assert_same(run("_slice_assign_scalar", [lhs], {"scalar": 7, **attrs})[0], want)
    check_grad("_slice_assign", [lhs, rhs], attrs)
    check_grad("_slice_assign_scalar", [lhs], {"scalar": 2.0, **attrs})
    check_requests("_slice_assign", [lhs.astype(np.float32), rhs.astype(np.float32)], attrs)
    check_requests("_slice_assign_scalar", [lhs.astype(np.float32)], {"scalar": 1.0, **attrs})
    with pytest.raises(ValueError, match=r"^_slice_assign: rhs has shape \(3, 2\), the slice"):
        run("_slice_assign", [lhs, data((3, 2))], attrs)
    # in place through out= on lhs
    a = nd.array(lhs, dtype="float64")
    run("_slice_assign", [a, rhs], attrs, out=a)
    want = lhs.copy()
    want[1:3, ::3] = rhs
    assert_same(a, want)


def test_slice_assign_scalar_refuses_a_scalar_the_dtype_cannot_hold_before_writing():
    x = nd.array([1, 2, 3], dtype="int32")
    y = nd.array([7, 7, 7], dtype="int32")
    version = y.version
    for f in (nd._slice_assign_scalar, nd._crop_assign_scalar):
        for scalar, got in ((float("nan"), "nan"), (1e30, r"1e\+30"), (2**31, "2147483648.0")):
            with pytest.raises(ValueError, match=r"^_slice_assign_scalar: scalar must be "
                               r"finite and in \[-2147483648, 2147483647\] for dtype int32 "
                               rf"\(got {got}\)"):
                f(x, scalar=scalar, begin=(0,), end=(2,), out=y)
    assert_same(y, np.array([7, 7, 7], np.int32))
    assert y.version == version
    # truncated toward zero, as MXNet casts
    assert_same(nd._slice_assign_scalar(x, scalar=-2.9, begin=(0,), end=(2,)),
                np.array([-2, -2, 3], np.int32))


# -- take ------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("idx_dtype", ["int32", "int64", "float32", "float64", "uint8"])
def test_take_matches_numpy(dtype, idx_dtype):
    a = data((4, 3, 2), dtype)
    ind = np.array([[0, 3], [1, 1]], idx_dtype)
    for axis in (0, 1, -1):
        for mode in ("clip", "wrap", "raise"):
            n = a.shape[axis]
            if mode == "raise" and ind.max() >= n:
                continue
            want = np.take(a, ind.astype(np.int64), axis=axis,
                           mode="clip" if mode == "clip" else "wrap")
            assert_same(run("take", [a, ind], {"axis": axis, "mode": mode})[0], want)


def test_take_modes_like_mxnet():
    a = np.arange(5.0).astype(np.float32)
    ind = np.array([-7, -1, 0, 4, 6], np.int64)
    assert_same(nd.take(nd.array(a), nd.array(ind, dtype="int64")),
                np.array([0, 0, 0, 4, 4], np.float32))               # clip: negatives -> 0
    assert_same(nd.take(nd.array(a), nd.array(ind, dtype="int64"), mode="wrap"),
                a[np.mod(ind, 5)])
    fl = np.array([1.9, -0.9, 3.5], np.float32)                       # truncated toward 0
    assert_same(nd.take(nd.array(a), nd.array(fl)), np.array([1, 0, 3], np.float32))
    assert_same(nd.take(nd.array(a), nd.array([-1.5, 2.0]), mode="raise"),
                np.array([4, 2], np.float32))
    assert_same(run("take", [a, np.zeros((0, 2), np.int32)])[0], np.zeros((0, 2), np.float32))
    assert_same(run("take", [np.zeros((0, 3)), np.zeros(0, np.int32)])[0], np.zeros((0, 3)))
    assert_same(run("take", [np.zeros((2, 0)), np.array([1, 0])])[0], np.zeros((2, 0)))


def test_take_errors_leave_out_unchanged():
    a = nd.array(np.arange(6.0).reshape(3, 2))
    out = nd.full((4, 2), 9.0)
    with pytest.raises(IndexError, match=r"^take: index 3 at position 2 is out of range for "
                                         r"axis 0 of size 3 \(mode='raise'\)"):
        nd.take(a, nd.array([0, 2, 3, 5], dtype="int32"), mode="raise", out=out)
    with pytest.raises(IndexError, match="^take: index -4 at position 0 is out of range"):
        nd.take(a, nd.array([-4, 0, 0, 0], dtype="int32"), mode="raise", out=out)
    with pytest.raises(IndexError, match=r"^take: index 3.5 at position 1 is out of range"):
        nd.take(a, nd.array([0, 3.5, 0, 0]), mode="raise", out=out)
    with pytest.raises(IndexError, match="^take: index nan at position 3 is not a finite number"):
        nd.take(a, nd.array([0, 1, 0, np.nan]), out=out)
    assert_same(out, np.full((4, 2), 9, np.float32))
    assert_same(a, np.arange(6.0, dtype=np.float32).reshape(3, 2))
    with pytest.raises(TypeError, match=r"^take: indices must be integers or floats \(got bool\)"):
        nd.take(a, nd.array([1], dtype="bool"))
    with pytest.raises(TypeError, match="^take: input indices must be an NDArray"):
        nd.take(a, [1, 2])
    with pytest.raises(ValueError, match="^take: mode must be one of 'clip', 'wrap', 'raise'"):
        nd.take(a, nd.array([0]), mode="fill")
    with pytest.raises(ValueError, match="^take: axis 2 is out of range"):
        nd.take(a, nd.array([0]), axis=2)
    with pytest.raises(ValueError, match="^take: axis 0 is out of range for an array of 0"):
        nd.take(nd.array(np.float32(1)), nd.array([0]))
    with pytest.raises(IndexError, match="^take: cannot index axis 1 of size 0"):
        nd.take(nd.zeros((2, 0)), nd.array([0]), axis=1)


@pytest.mark.parametrize("mode", ["clip", "wrap", "raise"])
def test_take_gradient_scatter_adds(mode):
    a = data((4, 3))
    ind = np.array([[0, 3, 3], [1, 0, 3]], np.int64)
    if mode != "raise":
        ind = ind * 2 - 1                         # out of range and negative positions
    for axis in (0, 1):
        check_grad("take", [a, ind % 3 if axis == 1 and mode == "raise" else ind],
                   {"axis": axis, "mode": mode})
    op = registry.get("take")
    g = op.gradient(op.parse_attrs({}), [nd.array(a, dtype="float64"),
                                         nd.array([0, 0, 2], dtype="int32")], [],
                    [nd.ones((3, 3), dtype="float64")])
    assert g[1] is None
    assert_same(g[0], np.array([[2, 2, 2], [0, 0, 0], [1, 1, 1], [0, 0, 0]], np.float64))


def test_take_grad_op():
    ind = np.array([2, 0, 2], np.int64)
    g = data((2, 3))
    attrs = {"axis": 1, "shape": (2, 4)}
    want = np.zeros((2, 4))
    np.add.at(want, (slice(None), ind), g)
    assert_same(run("_take_grad", [ind, g], attrs)[0], want)
    check_grad("_take_grad", [ind, g], attrs)
    check_requests("_take_grad", [ind, g.astype(np.float32)], attrs)
    check_requests("take", [data((4, 3), "float32"), np.array([3, 0], np.int32)], {"axis": 0})
    with pytest.raises(ValueError, match=r"^_take_grad: ograd has shape \(2, 2\), expected"):
        run("_take_grad", [ind, data((2, 2))], attrs)


# -- pick ------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_pick_matches_reference(dtype):
    x = data((3, 4, 2), dtype)
    rng = np.random.default_rng(4)
    for axis in (0, 1, -1):
        for keepdims in (False, True):
            for mode in ("clip", "wrap"):
                shape = list(x.shape)
                if keepdims:
                    shape[axis] = 1
                else:
                    del shape[axis]
                idx = rng.integers(-3, 7, shape).astype(np.float32)
                got = run("pick", [x, idx], {"axis": axis, "keepdims": keepdims, "mode": mode})
                assert_same(got[0], _np_pick(x, idx, axis, keepdims, mode))
    v = data((5,), dtype)
    assert_same(run("pick", [v, np.array([3.0])], {"axis": 0})[0], v[3:4])
    assert_same(nd.pick(nd.array(data((2, 3), dtype), dtype=dtype),
                        nd.array([0, 2])), data((2, 3), dtype)[[0, 1], [0, 2]])  # axis=-1
    assert_same(run("pick", [np.zeros((0, 3)), np.zeros(0)])[0], np.zeros(0))


def test_pick_gradients_requests_errors():
    x = data((3, 4))
    idx = np.array([0, 3, 1], np.int64)
    check_grad("pick", [x, idx])
    check_grad("pick", [x, np.array([[2, 0, -1, 9]])], {"axis": 0, "keepdims": True})
    check_grad("pick", [x, np.array([[2, 0, -1, 9]])], {"axis": 0, "keepdims": True,
                                                        "mode": "wrap"})
    check_requests("pick", [x.astype(np.float32), idx], {"axis": 1})
    check_grad("_pick_grad", [idx, data((3,))], {"axis": 1, "shape": (3, 4)})
    check_requests("_pick_grad", [idx, data((3,), "float32")], {"axis": 1, "shape": (3, 4)})
    assert_same(run("_pick_grad", [idx, np.array([1.0, 2.0, 3.0])],
                    {"axis": 1, "shape": (3, 4)})[0],
                np.array([[1, 0, 0, 0], [0, 0, 0, 2], [0, 3, 0, 0]], np.float64))
    a = nd.array(x, dtype="float64")
    with pytest.raises(ValueError, match=r"^pick: index has shape \(4,\), expected \(3,\)"):
        nd.pick(a, nd.array(np.zeros(4)))
    with pytest.raises(ValueError, match="^pick: axis=None is not supported"):
        nd.pick(a, nd.array(np.zeros(3)), axis=None)
    with pytest.raises(ValueError, match="^pick: mode must be one of 'clip', 'wrap'"):
        nd.pick(a, nd.array(np.zeros(3)), mode="raise")
    with pytest.raises(TypeError, match="^pick: index must be integers or floats"):
        nd.pick(a, nd.array(np.zeros(3), dtype="bool"))
    with pytest.raises(IndexError, match="^pick: cannot index axis 1 of size 0"):
        nd.pick(nd.zeros((2, 0)), nd.zeros(2))


# -- one_hot ---------------------------------------------------------------------------------

@pytest.mark.parametrize("idx_dtype", ["int32", "int64", "float32", "float64", "uint8"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8"])
def test_one_hot(idx_dtype, dtype):
    ind = np.array([[0, 2], [1, 4]], idx_dtype)
    got = nd.one_hot(nd.array(ind, dtype=idx_dtype), depth=3, on_value=5, off_value=1,
                     dtype=dtype)
    want = np.where(ind[..., None] == np.arange(3), 5, 1).astype(dtype)
    assert_same(got, want)


def test_one_hot_defaults_edges_errors():
    assert_same(nd.one_hot(nd.array([1, -1, 3, 1.7]), depth=3),
                np.array([[0, 1, 0], [0, 0, 0], [0, 0, 0], [0, 1, 0]], np.float32))
    assert_same(nd.one_hot(nd.array([np.nan, np.inf, 0]), depth=2),
                np.array([[0, 0], [0, 0], [1, 0]], np.float32))
    assert_same(nd.one_hot(nd.array(np.float32(1)), depth=2), np.array([0, 1], np.float32))
    assert_same(nd.one_hot(nd.zeros((0, 2)), depth=3), np.zeros((0, 2, 3), np.float32))
    assert_same(nd.one_hot(nd.zeros(2), depth=0), np.zeros((2, 0), np.float32))
    assert not registry.get("one_hot").differentiable
    check_requests("one_hot", [np.array([0, 2, 1], np.int32)], {"depth": 4})
    with pytest.raises(ValueError, match=r"^one_hot: depth must be >= 0 \(got -1\)"):
        nd.one_hot(nd.zeros(2), depth=-1)
    with pytest.raises(TypeError, match="^one_hot: attribute 'depth' is required"):
        nd.one_hot(nd.zeros(2))
    with pytest.raises(TypeError, match="^one_hot: dtype must be one of"):
        nd.one_hot(nd.zeros(2), depth=2, dtype="complex64")
    with pytest.raises(TypeError, match="^one_hot: indices must be integers or floats"):
        nd.one_hot(nd.zeros(2, dtype="bool"), depth=2)


# -- tile, repeat, flip errors ---------------------------------------------------------------

def test_tile_repeat_flip_errors():
    x = nd.zeros((2, 3))
    with pytest.raises(ValueError, match=r"^tile: reps must be >= 0 \(got \(2, -1\)\)"):
        nd.tile(x, reps=(2, -1))
    with pytest.raises(TypeError, match="^tile: reps must be an int or a tuple of ints"):
        nd.tile(x, reps="2")
    with pytest.raises(ValueError, match=r"^repeat: repeats must be >= 0 \(got -1\)"):
        nd.repeat(x, repeats=-1)
    with pytest.raises(ValueError, match="^repeat: axis 2 is out of range"):
        nd.repeat(x, repeats=2, axis=2)
    with pytest.raises(TypeError, match="^repeat: repeats must be an integer"):
        nd.repeat(x, repeats=2.5)
    with pytest.raises(ValueError, match="^flip: axis 2 is out of range"):
        nd.flip(x, axis=2)
    with pytest.raises(ValueError, match=r"^flip: axis \(0, -2\) repeats an axis"):
        nd.reverse(x, axis=(0, -2))
    with pytest.raises(TypeError, match="^flip: attribute 'axis' is required"):
        nd.flip(x)


# -- registry wiring, failures ---------------------------------------------------------------

def test_aliases_and_hidden_ops():
    for alias, name in [("Flatten", "flatten"), ("Concat", "concat"), ("SliceChannel", "split"),
                        ("reverse", "flip"), ("Reshape", "reshape"), ("crop", "slice")]:
        assert registry.get(alias) is registry.get(name)
    for name in ("one_hot", "argmax"):
        assert not registry.get(name).differentiable
    for name in ("reshape", "transpose", "expand_dims", "squeeze", "flatten", "broadcast_like",
                 "concat", "stack", "split", "slice", "slice_axis", "take", "pick", "tile",
                 "repeat", "flip", "_slice_assign", "_take_grad", "_pick_grad"):
        assert registry.get(name).differentiable, name


@pytest.mark.parametrize("name, attrs, shape", [
    ("reshape", {"shape": (7,)}, (2, 3)), ("transpose", {"axes": (1,)}, (2, 3)),
    ("squeeze", {"axis": 0}, (2, 3)), ("slice_axis", {"axis": 0, "begin": 5, "end": 6}, (2, 3)),
    ("tile", {"reps": (-1,)}, (2, 3)), ("flip", {"axis": 4}, (2, 3)),
])
def test_failed_op_leaves_out_and_input_unchanged(name, attrs, shape):
    x = nd.array(data(shape, "float32"))
    before = x.asnumpy()
    out = nd.full(shape, 9.0)
    with pytest.raises(ValueError, match=f"^{name}: "):
        run(name, [x], attrs, out=out)
    assert_same(out, np.full(shape, 9, np.float32))
    assert_same(x, before)


def test_out_and_requests_for_variadic_ops():
    a, b = nd.ones((2, 2)), nd.zeros((2, 1))
    out = nd.full((2, 3), 2.0)
    assert nd.concat(a, b, out=out, req="add") is out
    assert_same(out, np.array([[3, 3, 2], [3, 3, 2]], np.float32))
    with pytest.raises(ValueError, match=r"^concat: out has shape \(2, 3\), the result has "
                                         r"\(2, 4\)"):
        nd.concat(a, a, out=out)
    assert_same(out, np.array([[3, 3, 2], [3, 3, 2]], np.float32))


# -- pick along the rows of a matrix (the compiled kernel) ------------------------------

def _pick_reference(data, index, mode):
    """NumPy: the index truncated toward zero, then clipped or wrapped into the axis."""
    k = data.shape[1]
    c = np.trunc(index.astype(np.float64)).astype(np.int64)
    c = np.clip(c, 0, k - 1) if mode == "clip" else np.mod(c, k)
    return data[np.arange(data.shape[0]), c]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("itype", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("mode", ["clip", "wrap"])
@pytest.mark.parametrize("keepdims", [False, True])
def test_pick_rows_matches_numpy(dtype, itype, mode, keepdims):
    rng = np.random.default_rng(5)
    data = rng.standard_normal((9, 4)).astype(dtype)
    index = np.array([0, 3, 1, -1, 4, 7, -6, 2, 2], np.int64)
    if itype.startswith("float"):
        index = index + np.array([0, 0.5, 0.9, -0.5, 0.25, 0, -0.7, 0.99, -0.99])
    index = index.astype(itype)
    got = nd.pick(nd.array(data, dtype=dtype), nd.array(index, dtype=itype), axis=-1,
                  mode=mode, keepdims=keepdims)
    want = _pick_reference(data, index, mode)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got.asnumpy(), want[:, None] if keepdims else want)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_pick_rows_refuses_a_non_finite_index_and_writes_nothing(bad):
    data = nd.array(np.arange(12.0).reshape(4, 3))
    out = nd.full((4,), 7.0)
    with pytest.raises(IndexError, match=r"^pick: index .* at position 2 is not a finite "
                                         "number"):
        nd.pick(data, nd.array([0.0, 1.0, bad, 2.0]), axis=1, out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.full(4, 7.0, np.float32))


def test_pick_rows_takes_huge_float_indices_as_the_numpy_path_does():
    data = np.arange(12.0, dtype=np.float32).reshape(4, 3)
    index = np.array([1e30, -1e30, 2.0 ** 63, -(2.0 ** 70)], np.float32)
    for mode in ("clip", "wrap"):
        got = nd.pick(nd.array(data), nd.array(index), axis=1, mode=mode).asnumpy()
        c = np.clip(np.trunc(index), -2.0 ** 62, 2.0 ** 62).astype(np.int64)
        c = np.clip(c, 0, 2) if mode == "clip" else np.mod(c, 3)
        np.testing.assert_array_equal(got, data[np.arange(4), c])


def test_crop_takes_mxnets_window():
    # the windows MXNet 1.9.1's Crop takes: offset (y, x), h_w or a crop_like's size,
    # center_crop rounding the offset down; the symbol lists both inputs
    x = np.arange(2 * 2 * 5 * 6, dtype=np.float32).reshape(2, 2, 5, 6)
    got = nd.Crop(nd.array(x), offset=(1, 2), h_w=(2, 3)).asnumpy()
    np.testing.assert_array_equal(got, x[:, :, 1:3, 2:5])
    got = nd.Crop(nd.array(x), h_w=(2, 3), center_crop=True).asnumpy()
    np.testing.assert_array_equal(got, x[:, :, 1:3, 1:4])
    got = nd.Crop(nd.array(x), nd.zeros((1, 1, 3, 2)), offset=(1, 1)).asnumpy()
    np.testing.assert_array_equal(got, x[:, :, 1:4, 1:3])
    a, b = mx.sym.var("a"), mx.sym.var("b")
    s = mx.sym.Crop(a, b, num_args=2, center_crop=True)
    assert s.list_arguments() == ["a", "b"]
    assert s.infer_shape(a=(2, 2, 5, 6), b=(1, 1, 3, 3))[1] == [(2, 2, 3, 3)]
    v = nd.array(x[:1, :1])
    v.attach_grad()
    with autograd.record():
        y = nd.Crop(v, offset=(1, 2), h_w=(2, 3))
    y.backward(nd.ones((1, 1, 2, 3)))
    want = np.zeros((1, 1, 5, 6), np.float32)
    want[:, :, 1:3, 2:5] = 1
    np.testing.assert_array_equal(v.grad.asnumpy(), want)


def test_reshape_takes_mxnets_deprecated_target_shape():
    # MXNet 1.9.1's shapes for these calls (its text_cnn example reshapes this way)
    x = nd.array(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    assert nd.Reshape(x, target_shape=(4, 0)).shape == (4, 6)
    assert nd.Reshape(x, target_shape=(0, 4, 3), keep_highest=True).shape == (2, 4, 3)
    got = nd.Reshape(x, target_shape=(5, 2, 0), keep_highest=True)
    np.testing.assert_array_equal(got.asnumpy(), np.arange(24).reshape(2, 2, 6))
    assert nd.Reshape(x, shape=(-1,), target_shape=(4, 0)).shape == (24,)   # shape wins
    s = mx.sym.Reshape(mx.sym.var("d"), target_shape=(6, 0))
    assert s.infer_shape(d=(2, 3, 4))[1] == [(6, 4)]
    loaded = mx.sym.load_json(s.tojson())
    assert loaded.infer_shape(d=(2, 3, 4))[1] == [(6, 4)]
