"""Samples, failures and zero-size cases of the operators in runtime/ops/sort.py and
runtime/ops/index.py (see op_samples.py for the tables' meaning)."""

import numpy as np

from runtime.nd import sparse
from tests.runtime.op_samples import (FAILURES, I64, SAMPLES, ZERO_SIZE, Failure, Sample,
                                      ZeroSize, _add, _csr, _rsp, _sparse_input, ints,
                                      positive, uniform, zeros)

_X = uniform((3, 4), seed=21)            # distinct values: no ties in sorts
_X3 = uniform((2, 3, 4), seed=22)


def _np_topk(x, axis=-1, k=1, ret="indices", ascend=False):
    src = x.reshape(-1) if axis is None else x
    ax = 0 if axis is None else axis
    order = np.argsort(src if ascend else -src, axis=ax, kind="stable")
    idx = np.take(order, np.arange(k), axis=ax)
    return np.take_along_axis(src, idx, axis=ax) if ret == "value" else idx


# -- sort.py ---------------------------------------------------------------------------------

_add(SAMPLES, "topk",
     Sample([_X], {"ret_typ": "value", "k": 2}),
     Sample([_X3], {"axis": 1, "k": 2, "ret_typ": "value", "is_ascend": True}),
     Sample([_X3], {"axis": None, "k": 5, "ret_typ": "value"}),
     Sample([_X], {"axis": 0, "k": 2, "ret_typ": "both", "dtype": "int64"}),
     Sample([_X], {"k": 3}),
     Sample([_X], {"k": 2, "ret_typ": "mask"}),
     Sample([_X], {"k": 0, "ret_typ": "value"}),                       # k < 1: all
     Sample([ints(3, 1, 3, 2)], {"k": 3, "ret_typ": "both", "dtype": "int32"}, grad=False))
_add(FAILURES, "topk",
     Failure([_X], {"k": 5}, ValueError,
             r"^topk: k must be <= 4, the size of the axis searched in shape \(3, 4\) "
             r"\(got k=5\)"),
     Failure([_X], {"axis": 2}, ValueError, r"^topk: axis 2 is out of range"),
     Failure([_X], {"dtype": "int8"}, TypeError, r"^topk: dtype must be one of"),
     Failure([uniform((3000,))], {"dtype": "float16"}, ValueError,
             r"^topk: dtype float16 cannot hold the indices up to 2999 exactly"),
     Failure([_X], {"ret_typ": "values"}, ValueError, r"^topk: ret_typ must be one of"),
     Failure([np.array([True, False])], {}, TypeError, r"^topk: bool input"))
_add(ZERO_SIZE, "topk",
     ZeroSize([zeros(0, 4)], {"k": 2, "ret_typ": "value"},
              lambda x: _np_topk(x, k=2, ret="value")),
     ZeroSize([zeros(3, 0)], {"axis": 0, "k": 2}, lambda x: np.zeros((2, 0), np.float32)),
     ZeroSize([zeros(0, 4)], {"k": 2, "ret_typ": "mask"}, lambda x: x))

_add(SAMPLES, "sort",
     Sample([_X]),
     Sample([_X3], {"axis": 0, "is_ascend": False}),
     Sample([_X3], {"axis": None}),
     Sample([ints(3, -1, 2, -1)], {"is_ascend": False}, grad=False))
_add(FAILURES, "sort",
     Failure([_X], {"axis": -3}, ValueError, r"^sort: axis -3 is out of range"),
     Failure([np.array([True])], {}, TypeError, r"^sort: bool input"))
_add(ZERO_SIZE, "sort", ZeroSize([zeros(2, 0)], {}, lambda x: np.sort(x)),
     ZeroSize([zeros(0, 3)], {"axis": None}, lambda x: np.sort(x, axis=None)))

_add(SAMPLES, "argsort",
     Sample([_X], grad=False),
     Sample([_X3], {"axis": 1, "is_ascend": False, "dtype": "int64"}, grad=False),
     Sample([np.array([2, 2, 1, 2], np.uint8)], {"axis": None, "is_ascend": False},
            grad=False))
_add(FAILURES, "argsort",
     Failure([uniform((3000,))], {"dtype": "uint8"}, ValueError,
             r"^argsort: dtype uint8 cannot hold the indices up to 2999 exactly"),
     Failure([_X], {"dtype": "bool"}, TypeError, r"^argsort: dtype must be one of"))
_add(ZERO_SIZE, "argsort", ZeroSize([zeros(0, 3)], {},
                                    lambda x: np.argsort(x).astype(np.float32)))

_add(SAMPLES, "argmax_channel",
     Sample([_X], grad=False), Sample([ints(1, 5, 5, 2)], grad=False),
     Sample([_X3], grad=False))
_add(FAILURES, "argmax_channel",
     Failure([zeros(2, 0)], {}, ValueError,
             r"^argmax_channel: the last axis must be non-empty \(got shape \(2, 0\)\)"))
_add(ZERO_SIZE, "argmax_channel", ZeroSize([zeros(0, 3)], {}, lambda x: np.zeros(0)))

_XN = uniform((3, 4), seed=23)
_XN[0, 1] = _XN[2, 3] = np.nan
_add(SAMPLES, "nansum",
     Sample([_XN]),
     Sample([_X3], {"axis": (0, 2), "keepdims": True}),
     Sample([_XN], {"axis": 1, "exclude": True}),
     Sample([ints(1, 2, 3)], grad=False))
_add(FAILURES, "nansum",
     Failure([_X], {"axis": 2}, ValueError, r"^nansum: axis 2 is out of range"))
_add(ZERO_SIZE, "nansum", ZeroSize([zeros(0, 3)], {"axis": 0}, lambda x: np.nansum(x, 0)))

_XP = positive((3, 4), seed=24)
_XP[1, 2] = np.nan
_XP[2, 0] = 0.0                                         # exact with a zero too
_add(SAMPLES, "nanprod",
     Sample([_XP], {"axis": 1}),
     Sample([np.where(_XP == 0, 0.7, _XP)], {"axis": 0, "keepdims": True}),
     Sample([_XP]),
     Sample([ints(1, 2, 3)], grad=False))
_add(FAILURES, "nanprod",
     Failure([_X], {"axis": (0, 0)}, ValueError, r"^nanprod: axis \(0, 0\) repeats"))
_add(ZERO_SIZE, "nanprod", ZeroSize([zeros(0, 3)], {"axis": 0}, lambda x: np.nanprod(x, 0)))


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
             r"^moveaxis: source 3 is out of range"))
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


# -- the sparse kernels of norm and where (runtime/ops/sparse_extra.py) --------------------------

_SN = _sparse_input((4, 3), 27)
_add(SAMPLES, "norm",
     Sample([_csr(_SN)]),
     Sample([_rsp(_SN)], {"ord": 1, "keepdims": True}),
     Sample([_csr(_SN)], {"axis": 1}))                      # fallback: an axis
_add(ZERO_SIZE, "norm", ZeroSize([_csr(zeros(0, 3))], {}, lambda x: np.zeros(1)))


# -- linalg_la.py ------------------------------------------------------------------------------

def _spd(n, seed, batch=()):
    m = np.random.default_rng(seed).normal(size=batch + (n, n))
    return m @ np.swapaxes(m, -1, -2) + n * np.eye(n)


def _lower(n, seed, batch=()):
    """Lower triangular, a well-conditioned diagonal, random values above it (ignored)."""
    m = np.random.default_rng(seed).uniform(-1, 1, batch + (n, n))
    return m + 3 * np.eye(n)


_add(SAMPLES, "_linalg_gemm2",
     Sample([uniform((2, 3), seed=31), uniform((3, 4), seed=32)]),
     Sample([uniform((2, 3, 2), seed=31), uniform((2, 4, 3), seed=32)],
            {"transpose_a": True, "transpose_b": True, "alpha": -0.5}),
     Sample([uniform((4, 2, 3), seed=31), uniform((4, 2, 5), seed=32)],
            {"axis": 0, "transpose_a": True}))
_add(FAILURES, "_linalg_gemm2",
     Failure([uniform((2, 3)), uniform((2, 4))], {}, ValueError,
             r"^_linalg_gemm2: op\(A\) of shape \(2, 3\) and op\(B\) of shape \(2, 4\)"),
     Failure([uniform((2, 2, 3)), uniform((3, 3, 4))], {}, ValueError,
             r"^_linalg_gemm2: A \(2, 2, 3\) and B \(3, 3, 4\) must have one batch shape"),
     Failure([uniform((2, 3)), uniform((3, 4))], {"axis": -1}, ValueError,
             r"^_linalg_gemm2: axis must not be the last axis"),
     Failure([ints(1, 2).reshape(1, 2), ints(1, 2).reshape(2, 1)], {}, TypeError,
             r"^_linalg_gemm2: inputs must be float32 or float64"))
_add(ZERO_SIZE, "_linalg_gemm2",
     ZeroSize([zeros(2, 0), zeros(0, 3)], {}, np.matmul),
     ZeroSize([zeros(0, 2, 3), zeros(0, 3, 1)], {}, np.matmul))

_add(SAMPLES, "_linalg_gemm",
     Sample([uniform((2, 3), seed=33), uniform((3, 4), seed=34), uniform((2, 4), seed=35)],
            {"alpha": 2.0, "beta": -1.5}),
     Sample([uniform((2, 3, 2), seed=33), uniform((2, 3, 4), seed=34),
             uniform((2, 2, 4), seed=35)], {"transpose_a": True}))
_add(FAILURES, "_linalg_gemm",
     Failure([uniform((2, 3)), uniform((3, 4)), uniform((2, 3))], {}, ValueError,
             r"^_linalg_gemm: C has shape \(2, 3\), op\(A\) @ op\(B\) has \(2, 4\)"))
_add(ZERO_SIZE, "_linalg_gemm", ZeroSize([zeros(2, 0), zeros(0, 3), uniform((2, 3))],
                                         {}, lambda a, b, c: c))

_add(SAMPLES, "_linalg_potrf",
     Sample([_spd(3, 36)]), Sample([_spd(2, 37, (2,))]),
     Sample([_spd(3, 40)], {"lower": False}))
_add(FAILURES, "_linalg_potrf",
     Failure([-np.eye(3)], {}, ValueError, r"^_linalg_potrf: A must be symmetric positive "
                                           r"definite"),
     Failure([uniform((2, 3))], {}, ValueError,
             r"^_linalg_potrf: A must hold square matrices \(got shape \(2, 3\)\)"),
     Failure([uniform((3,))], {}, ValueError,
             r"^_linalg_potrf: A must have at least 2 dimensions"))
_add(ZERO_SIZE, "_linalg_potrf", ZeroSize([zeros(0, 3, 3)], {}, lambda a: a.copy()),
     ZeroSize([zeros(0, 0)], {}, lambda a: a.copy()))

_add(SAMPLES, "_linalg_potri",
     Sample([_lower(3, 38)]), Sample([_lower(2, 39, (2,))]),
     Sample([np.swapaxes(_lower(3, 41), -1, -2)], {"lower": False}))
_add(FAILURES, "_linalg_potri",
     Failure([np.zeros((2, 2))], {}, ValueError, r"^_linalg_potri: A must be non-singular"))
_add(ZERO_SIZE, "_linalg_potri", ZeroSize([zeros(0, 2, 2)], {}, lambda a: a.copy()))

_add(SAMPLES, "_linalg_trsm",
     Sample([_lower(3, 40), uniform((3, 2), seed=41)]),
     Sample([_lower(3, 40), uniform((2, 3), seed=41)],
            {"rightside": True, "transpose": True, "alpha": 0.5}),
     Sample([_lower(3, 40, (2,)), uniform((2, 3, 2), seed=41)],
            {"lower": False, "transpose": True}),
     Sample([_lower(2, 42), uniform((4, 2), seed=41)], {"rightside": True, "lower": False}))
_add(FAILURES, "_linalg_trsm",
     Failure([_lower(3, 40), uniform((2, 2))], {}, ValueError,
             r"^_linalg_trsm: B \(2, 2\) must have as many rows as A \(3, 3\) has"),
     # found by the kernel, after out= is chosen
     Failure([np.tril(np.ones((2, 2))) - np.eye(2), uniform((2, 2))], {}, ValueError,
             r"^_linalg_trsm: A must be non-singular", out=((2, 2), np.float64)))
_add(ZERO_SIZE, "_linalg_trsm", ZeroSize([_lower(2, 40), zeros(2, 0)], {},
                                         lambda a, b: b.copy()))

_add(SAMPLES, "_linalg_trmm",
     Sample([_lower(3, 43), uniform((3, 2), seed=44)], {"alpha": 1.5}),
     Sample([_lower(3, 43), uniform((2, 3), seed=44)], {"rightside": True, "transpose": True}),
     Sample([_lower(3, 43, (2,)), uniform((2, 3, 2), seed=44)], {"lower": False}),
     Sample([_lower(2, 45), uniform((4, 2), seed=44)], {"rightside": True, "lower": False,
                                                        "transpose": True}))
_add(FAILURES, "_linalg_trmm",
     Failure([_lower(3, 43), uniform((3, 2))], {"rightside": True}, ValueError,
             r"^_linalg_trmm: B \(3, 2\) must have as many columns as A \(3, 3\) has"))
_add(ZERO_SIZE, "_linalg_trmm", ZeroSize([_lower(2, 43), zeros(2, 0)], {},
                                         lambda a, b: b.copy()))

_add(SAMPLES, "_linalg_syrk",
     Sample([uniform((2, 3), seed=46)]),
     Sample([uniform((2, 3, 2), seed=46)], {"transpose": True, "alpha": -2.0}))
_add(FAILURES, "_linalg_syrk",
     Failure([uniform((3,))], {}, ValueError, r"^_linalg_syrk: A must have at least 2"))
_add(ZERO_SIZE, "_linalg_syrk", ZeroSize([zeros(2, 0)], {}, lambda a: np.zeros((2, 2))))

_add(SAMPLES, "_linalg_inverse",
     Sample([_lower(3, 47) + _lower(3, 48).T]), Sample([_spd(2, 49, (3,))]))
_add(FAILURES, "_linalg_inverse",
     Failure([np.ones((2, 2))], {}, ValueError, r"^_linalg_inverse: A must be non-singular"))
_add(ZERO_SIZE, "_linalg_inverse", ZeroSize([zeros(0, 2, 2)], {}, lambda a: a.copy()))

_add(SAMPLES, "_linalg_det",
     Sample([_lower(3, 50) + _lower(3, 51).T]), Sample([uniform((2, 2, 2), seed=52)]))
_add(FAILURES, "_linalg_det",
     Failure([uniform((2, 3))], {}, ValueError, r"^_linalg_det: A must hold square"))
_add(ZERO_SIZE, "_linalg_det", ZeroSize([zeros(0, 2, 2)], {}, lambda a: np.zeros(0)))

_add(SAMPLES, "_linalg_slogdet",
     Sample([_lower(3, 53) + _lower(3, 54).T]),
     Sample([uniform((2, 2, 2), seed=55)], wrt=[0]))
_add(FAILURES, "_linalg_slogdet",
     Failure([uniform((2, 3))], {}, ValueError, r"^_linalg_slogdet: A must hold square"))
_add(ZERO_SIZE, "_linalg_slogdet", ZeroSize([zeros(0, 2, 2)], {},
                                            lambda a: [np.zeros(0), np.zeros(0)]))

_add(SAMPLES, "_linalg_sumlogdiag",
     Sample([_spd(3, 56)]), Sample([_spd(2, 57, (2,))]))
_add(FAILURES, "_linalg_sumlogdiag",
     Failure([uniform((2, 3))], {}, ValueError, r"^_linalg_sumlogdiag: A must hold square"))
_add(ZERO_SIZE, "_linalg_sumlogdiag", ZeroSize([zeros(0, 2, 2)], {}, lambda a: np.zeros(0)))

_SW = _SN.copy()
_SW[2, 1] = 0.0
_add(SAMPLES, "where",
     # a stored zero in the condition selects y
     Sample([lambda: sparse.csr_matrix(
         (np.array([0.0, 1.0, -2.0]), np.array([0, 1, 2]), np.array([0, 0, 2, 3, 3])),
         shape=(4, 3)), uniform((4, 3), seed=28), uniform((4, 3), seed=29)], wrt=[1, 2]),
     Sample([_csr(_SW), uniform((4, 3), seed=28), uniform((1, 3), seed=29)], wrt=[1, 2]))
_add(ZERO_SIZE, "where", ZeroSize([_csr(zeros(0, 3)), zeros(0, 3), zeros(0, 3)], {},
                                  lambda c, x, y: np.where(c != 0, x, y)))

# multiply of csr and dense keeps csr (runtime/ops/sparse.py)
_add(SAMPLES, "multiply",
     Sample([_csr(_SN), uniform((4, 3), seed=30)]),
     Sample([uniform((4, 3), seed=30), _csr(_SN)]))
