"""Samples, failures and zero-size cases of the operators of runtime/ops/index.py (see
op_samples.py for the tables' meaning)."""

import numpy as np

from tests.runtime.op_samples import (FAILURES, I64, SAMPLES, ZERO_SIZE, Failure, Sample,
                                      ZeroSize, _add, ints, uniform, zeros)

_X = uniform((3, 4), seed=21)
_X3 = uniform((2, 3, 4), seed=22)


# -- index.py: gather_nd, scatter_nd -----------------------------------------------------------

_GI = np.array([[1, 1, 0], [0, -1, 0]], I64)
_add(SAMPLES, "gather_nd",
     Sample([uniform((2, 2)), _GI]),
     Sample([uniform((2, 2, 3)), np.array([[0, 1], [1, 0]], I64)]),
     Sample([uniform((3, 2)), np.array([[[2.9, 0.0]]])], wrt=[0]),          # float, truncated
     Sample([uniform((3, 2)), np.array([[0, 2, 0]], I64)]))                 # repeats add
_add(FAILURES, "gather_nd",
     Failure([uniform((2, 2)), np.array([[0], [0], [0]], I64)], {}, ValueError,
             r"^gather_nd: indices.shape\[0\] must be in \[1, 2\]"),
     Failure([uniform((2, 2)), np.array([True])], {}, TypeError,
             r"^gather_nd: indices must be integers or floats"),
     # raised by the kernel, after out= is chosen
     Failure([uniform((2, 2)), np.array([[0, 2]], I64)], {}, IndexError,
             r"^gather_nd: index 2 at position 1 is out of range for axis 0 of size 2",
             out=((2, 2), np.float64)))
_add(ZERO_SIZE, "gather_nd",
     ZeroSize([uniform((2, 2)), np.zeros((2, 0), I64)], {}, lambda d, i: np.zeros(0)),
     ZeroSize([zeros(0, 3), np.zeros((1, 0), I64)], {}, lambda d, i: np.zeros((0, 3))))

_add(SAMPLES, "scatter_nd",
     Sample([uniform((3,)), _GI], {"shape": (2, 2)}),
     Sample([uniform((2, 3)), np.array([[0, 1], [1, 1]], I64)], {"shape": (2, 2, 3)}),
     Sample([ints(4, 5), np.array([[1, 0]], I64)], {"shape": (3,)}, grad=False))
_add(FAILURES, "scatter_nd",
     Failure([uniform((2,)), _GI], {"shape": (2, 2)}, ValueError,
             r"^scatter_nd: data has shape \(2,\), indices \(2, 3\) into shape \(2, 2\) need "
             r"\(3,\)"),
     Failure([uniform((2,)), np.array([[0, 5]], I64)], {"shape": (3,)}, IndexError,
             r"^scatter_nd: index 5 at position 1 is out of range", out=((3,), np.float64)))
_add(ZERO_SIZE, "scatter_nd",
     ZeroSize([zeros(0), np.zeros((2, 0), I64)], {"shape": (2, 2)},
              lambda d, i: np.zeros((2, 2))))

_add(SAMPLES, "_backward_gather_nd",
     Sample([uniform((3,)), np.array([[0, 1, 0], [1, 1, 1]], I64)], {"shape": (2, 2)}),
     Sample([uniform((1, 3)), np.array([[2]], I64)], {"shape": (4, 3)}))
_add(FAILURES, "_backward_gather_nd",
     Failure([uniform((3,)), _GI], {"shape": (2, 2, 2)}, ValueError,
             r"^_backward_gather_nd: data has shape \(3,\)"))
_add(ZERO_SIZE, "_backward_gather_nd",
     ZeroSize([zeros(0), np.zeros((2, 0), I64)], {"shape": (2, 2)},
              lambda d, i: np.zeros((2, 2))))


# -- batch_take, slice_like, broadcast_axis, swapaxes, moveaxis -------------------------------

_add(SAMPLES, "batch_take",
     Sample([uniform((3, 2)), ints(0, 1, 0)]),
     Sample([uniform((4, 3)), np.array([[5, -1], [1, 2]], I64)]),        # clipped
     Sample([uniform((2, 3)), np.array([2.7, 0.0])], wrt=[0]),
     Sample([uniform((2, 2, 3)), ints(5, 1)]))                           # rows of 6
_add(FAILURES, "batch_take",
     Failure([uniform((3, 2)), ints(0, 1)], {}, ValueError,
             r"^batch_take: a must have at least 2 dimensions and one row per index \(got "
             r"a \(3, 2\), indices \(2,\)\)"),
     Failure([uniform((3,)), ints(0, 1, 2)], {}, ValueError,
             r"^batch_take: a must have at least 2 dimensions"),
     Failure([uniform((3, 2)), np.array([True, False, True])], {}, TypeError,
             r"^batch_take: indices must be integers or floats"))
_add(ZERO_SIZE, "batch_take", ZeroSize([zeros(0, 3), np.zeros(0, I64)], {},
                                       lambda a, i: np.zeros(0)))

_add(SAMPLES, "slice_like",
     Sample([uniform((3, 4)), zeros(2, 3)], wrt=[0]),
     Sample([uniform((3, 4)), zeros(2, 3)], {"axes": (0,)}, wrt=[0]),
     Sample([uniform((3, 4, 2)), zeros(2)], {"axes": -3}, wrt=[0]))
_add(FAILURES, "slice_like",
     Failure([uniform((3, 4)), zeros(2)], {}, ValueError,
             r"^slice_like: without axes, data \(3, 4\) and shape_like \(2,\) must have one"),
     Failure([uniform((3, 4)), zeros(2, 5)], {}, ValueError,
             r"^slice_like: shape_like \(2, 5\) is larger than data \(3, 4\) on axis 1"),
     Failure([uniform((3, 4)), zeros(2)], {"axes": (1,)}, ValueError,
             r"^slice_like: axis 1 is out of range for shape_like \(2,\)"))
_add(ZERO_SIZE, "slice_like", ZeroSize([uniform((3, 4)), zeros(0, 2)], {},
                                       lambda d, s: d[:0, :2]))

_add(SAMPLES, "broadcast_axis",
     Sample([uniform((1, 2, 1))], {"axis": 2, "size": 3}),
     Sample([uniform((1, 2, 1))], {"axis": (0, -1), "size": (2, 3)}),
     Sample([uniform((2, 3))]))
_add(FAILURES, "broadcast_axis",
     Failure([uniform((1, 2))], {"axis": 1, "size": 3}, ValueError,
             r"^broadcast_axis: axis 1 of shape \(1, 2\) must have size 1 \(got 2\)"),
     Failure([uniform((1, 2))], {"axis": (0,), "size": (2, 3)}, ValueError,
             r"^broadcast_axis: axis \(0,\) and size \(2, 3\) must have one length"),
     Failure([uniform((1, 2))], {"axis": 0, "size": 0}, ValueError,
             r"^broadcast_axis: size must be positive"))
_add(ZERO_SIZE, "broadcast_axis", ZeroSize([zeros(1, 0)], {"axis": 0, "size": 3},
                                           lambda x: np.zeros((3, 0))))

_add(SAMPLES, "swapaxes",
     Sample([_X3], {"dim1": 0, "dim2": 2}),
     Sample([_X], {"dim1": -1}),
     Sample([_X]))
_add(FAILURES, "swapaxes",
     Failure([_X], {"dim1": 2}, ValueError, r"^swapaxes: dim1 2 is out of range"))
_add(ZERO_SIZE, "swapaxes", ZeroSize([zeros(0, 3)], {"dim1": 0, "dim2": 1},
                                     lambda x: x.T))

_add(SAMPLES, "moveaxis",
     Sample([_X3], {"source": 0, "destination": -1}),
     Sample([_X3], {"source": (0, 1), "destination": (2, 0)}))
_add(FAILURES, "moveaxis",
     Failure([_X3], {"source": (0, 1), "destination": 2}, ValueError,
             r"^moveaxis: source \(0, 1\) and destination \(2,\) must have one length"),
     Failure([_X3], {"source": (0, 0), "destination": (1, 2)}, ValueError,
             r"^moveaxis: source \(0, 0\) repeats an axis"),
     Failure([_X3], {"source": 3, "destination": 0}, ValueError,
             r"^moveaxis: source 3 is out of range"),
     # MXNet's documented range; its list.insert code would put the axis last
     Failure([_X3], {"source": 0, "destination": 3}, ValueError,
             r"^moveaxis: destination 3 is out of range"))
_add(ZERO_SIZE, "moveaxis", ZeroSize([zeros(0, 2, 3)], {"source": 0, "destination": 2},
                                     lambda x: np.moveaxis(x, 0, 2)))


# -- pad, _pad_grad --------------------------------------------------------------------------

_P4 = uniform((1, 2, 3, 4), seed=25)
_PW = (0, 0, 0, 0, 1, 2, 2, 1)
_add(SAMPLES, "pad",
     Sample([_P4], {"mode": "constant", "pad_width": _PW, "constant_value": 1.5}),
     Sample([_P4], {"mode": "edge", "pad_width": _PW}),
     Sample([_P4], {"mode": "reflect", "pad_width": _PW}),
     Sample([uniform((1, 1, 2, 3, 3), seed=26)],
            {"mode": "reflect", "pad_width": (0, 0, 0, 0, 1, 1, 0, 2, 2, 0)}),
     Sample([np.arange(24, dtype=np.int32).reshape(1, 2, 3, 4)],
            {"pad_width": _PW, "constant_value": -3}, grad=False))
_add(FAILURES, "pad",
     Failure([uniform((3, 4))], {"pad_width": (1, 1, 1, 1)}, ValueError,
             r"^pad: data must be 4-D or 5-D, as MXNet requires \(got shape \(3, 4\)\)"),
     Failure([_P4], {"pad_width": (0, 0, 1, 0, 1, 1, 1, 1)}, ValueError,
             r"^pad: pad_width must not pad the first two axes"),
     Failure([_P4], {"pad_width": (0, 0, 0, 0, 1, 1)}, ValueError,
             r"^pad: pad_width must hold 2 values per dimension, 8 for shape"),
     Failure([_P4], {"pad_width": (0, 0, 0, 0, 1, -1, 0, 0)}, ValueError,
             r"^pad: pad_width must be >= 0"),
     Failure([_P4], {"mode": "reflect", "pad_width": (0, 0, 0, 0, 3, 0, 0, 0)}, ValueError,
             r"^pad: reflect padding needs pad widths below the size of the axis \(axis 2 "
             r"of size 3"),
     Failure([np.zeros((1, 1, 2, 2), np.uint8)],
             {"pad_width": (0, 0, 0, 0, 1, 1, 1, 1), "constant_value": -1}, ValueError,
             r"^pad: constant_value must be finite and in \[0, 255\] for dtype uint8",
             out=((1, 1, 4, 4), np.uint8)))
_add(ZERO_SIZE, "pad",
     ZeroSize([zeros(0, 2, 3, 4)], {"pad_width": _PW},
              lambda x: np.pad(x, [(0, 0), (0, 0), (1, 2), (2, 1)])),
     ZeroSize([zeros(1, 2, 0, 4)], {"pad_width": _PW},
              lambda x: np.pad(x, [(0, 0), (0, 0), (1, 2), (2, 1)])))

_add(SAMPLES, "_pad_grad",
     Sample([uniform((1, 2, 6, 7))], {"mode": "constant", "pad_width": _PW}),
     Sample([uniform((1, 2, 6, 7))], {"mode": "edge", "pad_width": _PW}),
     Sample([uniform((1, 2, 6, 7))], {"mode": "reflect", "pad_width": _PW}))
_add(FAILURES, "_pad_grad",
     Failure([uniform((1, 2, 2, 7))], {"pad_width": _PW}, ValueError,
             r"^_pad_grad: ograd of shape \(1, 2, 2, 7\) is smaller than pad_width"))
_add(ZERO_SIZE, "_pad_grad", ZeroSize([zeros(0, 2, 6, 7)], {"pad_width": _PW},
                                      lambda g: np.zeros((0, 2, 3, 4))))


# -- split_v2, diag, _diag_grad, shape_array, size_array ----------------------------------------

_add(SAMPLES, "split_v2",
     Sample([uniform((6, 2))], {"indices_or_sections": 3}),
     Sample([uniform((2, 7))], {"indices_or_sections": (2, 2, 5), "axis": 1}),
     Sample([uniform((3, 2))], {"indices_or_sections": 3, "squeeze_axis": True}),
     Sample([uniform((4,))], {"indices_or_sections": (1,)}))
_add(FAILURES, "split_v2",
     Failure([uniform((6, 2))], {"indices_or_sections": 4}, ValueError,
             r"^split_v2: an axis of size 6 cannot be split into 4 equal sections"),
     Failure([uniform((6, 2))], {"indices_or_sections": (3, 1)}, ValueError,
             r"^split_v2: indices must be >= 0 and non-decreasing \(got \(3, 1\)\)"),
     Failure([uniform((6, 2))], {"indices_or_sections": (2, 8)}, ValueError,
             r"^split_v2: indices \(2, 8\) go beyond the axis of size 6"),
     Failure([uniform((6, 2))], {"indices_or_sections": 2, "squeeze_axis": True}, ValueError,
             r"^split_v2: squeeze_axis needs sections of size 1"),
     Failure([uniform((6, 2))], {"indices_or_sections": 2.0}, TypeError,
             r"^split_v2: indices_or_sections must be an int or a tuple of ints"))
_add(ZERO_SIZE, "split_v2",
     ZeroSize([zeros(0, 2)], {"indices_or_sections": 2}, lambda x: np.split(x, 2)),
     ZeroSize([uniform((3, 2))], {"indices_or_sections": (0, 3)},
              lambda x: np.split(x, [0, 3])))

_add(SAMPLES, "diag",
     Sample([uniform((3,))]),
     Sample([uniform((3,))], {"k": -2}),
     Sample([uniform((3, 4))], {"k": 1}),
     Sample([_X3], {"k": -1, "axis1": 2, "axis2": 0}))
_add(FAILURES, "diag",
     Failure([_X3], {"axis1": 1, "axis2": -2}, ValueError,
             r"^diag: axis1 and axis2 must differ"),
     Failure([_X], {"axis2": 2}, ValueError, r"^diag: axis2 2 is out of range"))
_add(ZERO_SIZE, "diag", ZeroSize([zeros(0)], {}, np.diag),
     ZeroSize([zeros(0, 3)], {}, np.diagonal),
     ZeroSize([uniform((2, 3))], {"k": 5}, lambda x: np.diagonal(x, 5)))

_add(SAMPLES, "_diag_grad",
     Sample([uniform((3,))], {"k": 1, "shape": (3, 4)}),
     Sample([uniform((4, 2))], {"k": -1, "axis1": 2, "axis2": 0, "shape": (2, 4, 3)}))
_add(FAILURES, "_diag_grad",
     Failure([uniform((2,))], {"shape": (3, 4)}, ValueError,
             r"^_diag_grad: ograd has shape \(2,\), expected \(3,\)"))
_add(ZERO_SIZE, "_diag_grad", ZeroSize([zeros(0)], {"shape": (0, 3)},
                                       lambda g: np.zeros((0, 3))))

_add(SAMPLES, "shape_array", Sample([_X3], grad=False), Sample([ints(1)], grad=False))
_add(ZERO_SIZE, "shape_array", ZeroSize([zeros(0, 3)], {}, lambda x: np.array([0, 3])))
_add(SAMPLES, "size_array", Sample([_X3], grad=False))
_add(ZERO_SIZE, "size_array", ZeroSize([zeros(0, 3)], {}, lambda x: np.array([0])))


# -- logical operators ----------------------------------------------------------------------------

_LA = np.array([[0.0, 1.5, -2.0], [0.0, 0.0, 3.0]])
_LB = np.array([[1.0, 0.0, 2.0]])
for _name in ("and", "or", "xor"):
    _op = f"broadcast_logical_{_name}"
    _add(SAMPLES, _op, Sample([_LA, _LB], grad=False),
         Sample([ints(0, 1, 2, 0), ints(0, 0, 5, 7)], grad=False))
    _add(FAILURES, _op,
         Failure([_LA, _LB.astype(np.float32)], {}, TypeError,
                 rf"^{_op}: inputs must have one dtype"),
         Failure([_LA, np.ones((2, 2))], {}, ValueError, rf"^{_op}: "))
    _add(ZERO_SIZE, _op, ZeroSize([zeros(0, 3), _LB], {},
                                  lambda a, b, f=getattr(np, f"logical_{_name}"): f(a, b)))
_add(SAMPLES, "logical_not", Sample([_LA], grad=False), Sample([ints(0, 3, -1)], grad=False))
_add(ZERO_SIZE, "logical_not", ZeroSize([zeros(0, 3)], {}, np.logical_not))


_add(SAMPLES, "fill_element_0index",
     Sample([uniform((3, 4), seed=740), uniform((3,), seed=741), ints(0, 3, 1)], wrt=[0, 1]),
     Sample([uniform((2, 3), seed=742, dtype=np.float32),
             uniform((2,), seed=743, dtype=np.float32), np.array([2.0, 0.0])], grad=False))
_add(FAILURES, "fill_element_0index",
     Failure([uniform((3, 4)), uniform((2,)), ints(0, 1, 2)], {}, ValueError,
             r"^fill_element_0index: lhs must be 2-D"),
     Failure([uniform((3, 4)), uniform((3,), dtype=np.float32), ints(0, 1, 2)], {},
             TypeError, r"^fill_element_0index: mhs must have lhs's dtype"),
     # raised by the kernel, after out= is chosen
     Failure([uniform((3, 4)), uniform((3,)), ints(0, 4, 2)], {}, ValueError,
             r"^fill_element_0index: rhs must hold column indices in \[0, 4\) \(got 4 at "
             r"position 1\)"))
_add(ZERO_SIZE, "fill_element_0index",
     ZeroSize([zeros(0, 3), zeros(0), np.zeros(0, np.int64)], {}, lambda a, b, c: a))


_D2S = uniform((2, 8, 2, 3), seed=770)
_add(SAMPLES, "depth_to_space",
     Sample([_D2S], {"block_size": 2}),
     Sample([uniform((1, 9, 1, 2), seed=771, dtype=np.float32)], {"block_size": 3},
            grad=False))
_add(SAMPLES, "space_to_depth",
     Sample([uniform((2, 2, 4, 6), seed=772)], {"block_size": 2}),
     Sample([ints(*range(16)).reshape(1, 1, 4, 4)], {"block_size": 2}, grad=False))
for _name in ("depth_to_space", "space_to_depth"):
    _add(FAILURES, _name,
         Failure([uniform((2, 8, 2))], {"block_size": 2}, ValueError,
                 rf"^{_name}: data must be 4-D"),
         Failure([_D2S], {"block_size": 0}, ValueError,
                 rf"^{_name}: block_size must be >= 1"))
_add(FAILURES, "depth_to_space", Failure(
    [uniform((2, 6, 2, 2))], {"block_size": 2}, ValueError,
    r"^depth_to_space: the channels 6 must be a multiple of block_size\*\*2 = 4"))
_add(FAILURES, "space_to_depth", Failure(
    [uniform((2, 6, 3, 2))], {"block_size": 2}, ValueError,
    r"^space_to_depth: height 3 and width 2 must be multiples of block_size 2"))
_add(ZERO_SIZE, "depth_to_space", ZeroSize([zeros(0, 4, 2, 2)], {"block_size": 2},
                                           lambda x: np.zeros((0, 1, 4, 4))))
_add(ZERO_SIZE, "space_to_depth", ZeroSize([zeros(0, 1, 4, 4)], {"block_size": 2},
                                           lambda x: np.zeros((0, 4, 2, 2))))


_add(SAMPLES, "ravel_multi_index",
     Sample([np.array([[3.0, 6, 6], [4, 5, 1]])], {"shape": (7, 6)}, grad=False),
     Sample([ints(0, 1, 2, 1, 0, 3).reshape(2, 3)], {"shape": (3, 4)}, grad=False))
_add(SAMPLES, "unravel_index",
     Sample([np.array([22.0, 41, 37])], {"shape": (7, 6)}, grad=False),
     Sample([ints(0, 5, 11).reshape(3, 1)], {"shape": (3, 4)}, grad=False))
_add(FAILURES, "ravel_multi_index",
     Failure([ints(1, 2, 3)], {"shape": (7, 6)}, ValueError,
             r"^ravel_multi_index: data must have 2 rows"),
     Failure([ints(1, 2, 1, 2).reshape(2, 2)], {"shape": (0, 6)}, ValueError,
             r"^ravel_multi_index: shape must be a tuple of sizes >= 1"),
     # raised by the kernel, after out= is chosen
     Failure([ints(1, 7, 1, 2).reshape(2, 2)], {"shape": (7, 6)}, ValueError,
             r"^ravel_multi_index: the indices of axis 0 must lie in \[0, 7\) \(got 7 at "
             r"position 1\)", out=((2,), np.int64)))
_add(FAILURES, "unravel_index",
     Failure([ints(1, 42)], {"shape": (7, 6)}, ValueError,
             r"^unravel_index: the flat indices must lie in \[0, 42\) \(got 42 at "
             r"position 1\)", out=((2, 2), np.int64)))
_add(ZERO_SIZE, "ravel_multi_index",
     ZeroSize([np.zeros((2, 0), np.int64)], {"shape": (3, 4)}, lambda a: np.zeros(0)))
_add(ZERO_SIZE, "unravel_index",
     ZeroSize([np.zeros(0, np.int64)], {"shape": (3, 4)}, lambda a: np.zeros((2, 0))))
