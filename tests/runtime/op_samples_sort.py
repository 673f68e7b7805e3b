"""Samples, failures and zero-size cases of the operators of runtime/ops/sort.py (see
op_samples.py for the tables' meaning)."""

import numpy as np

from tests.runtime.op_samples import (FAILURES, SAMPLES, ZERO_SIZE, Failure, Sample, ZeroSize,
                                      _add, ints, positive, uniform, zeros)

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
