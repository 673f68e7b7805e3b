"""Samples, failures and zero-size cases of the operators added for MXNet conformance
(see op_samples.py for the tables' meaning)."""

import numpy as np

from tests.runtime.op_samples import (FAILURES, SAMPLES, ZERO_SIZE, Failure, Sample, ZeroSize,
                                      _add, _csr, _rsp, _sparse_input, ints, uniform, zeros)

# name: input domain (lo, hi), as op_samples.UNARY
_UNARY = {"arccosh": (1.2, 4), "degrees": (-3, 3), "radians": (-3, 3),
          "erfinv": (-0.9, 0.9), "rcbrt": (0.2, 4), "softsign": (-3, 3),
          "log_sigmoid": (-4, 4), "mish": (-3, 3)}
_SPARSE = {"degrees", "radians"}

for _i, (_name, (_lo, _hi)) in enumerate(_UNARY.items()):
    _add(SAMPLES, _name,
         Sample([uniform((2, 3), _lo, _hi, seed=_i + 700)]),
         Sample([uniform((4,), _lo, _hi, seed=_i + 800, dtype=np.float32)], grad=False))
    if _name in _SPARSE:
        _x = _sparse_input((3, 4), _i + 700)
        _add(SAMPLES, _name, Sample([_csr(_x)], grad=False), Sample([_rsp(_x)], grad=False))
    _add(FAILURES, _name, Failure(
        [ints(1, 2, 3)], {}, TypeError,
        rf"^{_name}: needs a floating-point input \(got int64\)", out=((3,), np.float32)))
    _add(ZERO_SIZE, _name, ZeroSize([zeros(0, 3)], {}, lambda x: x))

# softmin (softmax of -x), as op_samples' softmax entries
_add(SAMPLES, "softmin",
     Sample([uniform((2, 5), seed=710)]),
     Sample([uniform((3, 2, 4), seed=711)], {"axis": 0, "temperature": 2.0}),
     Sample([uniform((4,), seed=712, dtype=np.float32)], {"axis": 0}, grad=False),
     Sample([uniform((2, 3), seed=713, dtype=np.float32)], {"dtype": "float64"}, grad=False))
_add(FAILURES, "softmin",
     Failure([uniform((2, 5))], {"axis": 2}, ValueError, r"^softmin: axis 2 is out of range"),
     Failure([uniform((2, 5))], {"temperature": 0.0}, ValueError,
             r"^softmin: temperature must be a finite non-zero number"),
     Failure([ints(1, 2)], {}, TypeError,
             r"^softmin: needs a floating-point input \(got int64\)"),
     Failure([uniform((3, 5))], {"use_length": True}, ValueError,
             r"^softmin: use_length=True needs a length input"))
_add(ZERO_SIZE, "softmin", ZeroSize([zeros(0, 5)], {}, lambda x: x),
     ZeroSize([zeros(3, 0)], {}, lambda x: x))

# -- runtime/ops/conform.py ------------------------------------------------------------------

_add(SAMPLES, "hard_sigmoid",
     Sample([uniform((2, 3), -4, 4, seed=720)]),
     Sample([uniform((2, 3), -4, 4, seed=721)], {"alpha": 0.5, "beta": 0.25}),
     Sample([uniform((4,), -4, 4, seed=722, dtype=np.float32)], grad=False))
_add(FAILURES, "hard_sigmoid", Failure(
    [ints(1, 2, 3)], {}, TypeError, r"^hard_sigmoid: needs a floating-point input"))
_add(ZERO_SIZE, "hard_sigmoid", ZeroSize([zeros(0, 3)], {}, lambda x: x))

_SEQ = uniform((4, 3, 2), seed=730)
_SEQ_LEN = ints(2, 4, 1)
_add(SAMPLES, "SequenceMask",
     Sample([_SEQ, _SEQ_LEN], {"use_sequence_length": True}, wrt=[0]),
     Sample([_SEQ, np.array([0.0, 3.0, 1.5])], {"use_sequence_length": True, "value": -1.0},
            wrt=[0]),
     Sample([uniform((3, 4, 2), seed=731), ints(2, 4, 0)],
            {"use_sequence_length": True, "axis": 1}, wrt=[0]),
     Sample([_SEQ]))
_add(SAMPLES, "SequenceLast",
     Sample([_SEQ, _SEQ_LEN], {"use_sequence_length": True}, wrt=[0]),
     Sample([uniform((3, 4, 2), seed=732), ints(1, 4, 2)],
            {"use_sequence_length": True, "axis": 1}, wrt=[0]),
     Sample([_SEQ]),
     Sample([uniform((3, 4), seed=733)], {"axis": 1}))
_add(SAMPLES, "SequenceReverse",
     Sample([_SEQ, _SEQ_LEN], {"use_sequence_length": True}, wrt=[0]),
     Sample([_SEQ]),
     Sample([uniform((3, 2), seed=734, dtype=np.float32), ints(3, 2)],
            {"use_sequence_length": True}, grad=False))
for _name in ("SequenceMask", "SequenceLast", "SequenceReverse"):
    _low = 0 if _name == "SequenceMask" else 1
    _add(FAILURES, _name,
         Failure([_SEQ, ints(2, 4)], {"use_sequence_length": True}, ValueError,
                 rf"^{_name}: sequence_length must have shape \(3,\)"),
         Failure([_SEQ], {"use_sequence_length": True}, ValueError,
                 rf"^{_name}: use_sequence_length=True needs a sequence_length input"),
         Failure([uniform((4,))], {}, ValueError,
                 rf"^{_name}: data must have at least 2 dimensions"),
         Failure([_SEQ], {"axis": 2}, ValueError, rf"^{_name}: axis must be 0 or 1"),
         # raised by the kernel, after out= is chosen
         Failure([_SEQ, ints(2, 5, 1)], {"use_sequence_length": True}, ValueError,
                 rf"^{_name}: sequence_length must hold integers in \[{_low}, 4\] \(got 5 at "
                 r"position 1\)", out=False if _name == "SequenceLast" else None))
    _add(ZERO_SIZE, _name, ZeroSize([zeros(3, 0, 2)], {}, (lambda x: x[-1]) if
                                    _name == "SequenceLast" else (lambda x: x)))
_add(FAILURES, "SequenceReverse",
     Failure([_SEQ], {"axis": 1}, ValueError, r"^SequenceReverse: only axis 0 is supported"))

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

# clip's sparse kernel (a_min <= 0 <= a_max keeps csr / row_sparse)
_CLIP_X = _sparse_input((3, 4), 750)
_add(SAMPLES, "clip",
     Sample([_csr(_CLIP_X)], {"a_min": -0.4, "a_max": 0.3}, grad=False),
     Sample([_rsp(_CLIP_X)], {"a_min": 0.0, "a_max": 0.5}, grad=False),
     Sample([_csr(_CLIP_X)], {"a_min": 0.2, "a_max": 0.5}, grad=False))

_add(SAMPLES, "moments",
     Sample([uniform((2, 3, 4), seed=760)], {"axes": (1, 2)}),
     Sample([uniform((2, 3, 4), seed=761)], {"axes": (0,), "keepdims": True}),
     Sample([uniform((3, 4), seed=762)]),
     Sample([uniform((5,), seed=763, dtype=np.float32)], {"axes": (0,)}, grad=False))
_add(FAILURES, "moments",
     Failure([uniform((2, 3))], {"axes": (2,)}, ValueError, r"^moments: axis 2 is out of "
             r"range"),
     Failure([ints(1, 2)], {}, TypeError, r"^moments: needs a floating-point input"))
_add(ZERO_SIZE, "moments",
     ZeroSize([zeros(0, 3)], {"axes": (1,)},
              lambda x: [np.zeros(0), np.zeros(0)]))

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

_LRN_X = uniform((2, 5, 3, 2), seed=780)
_add(SAMPLES, "LRN",
     Sample([_LRN_X], {"nsize": 3, "alpha": 0.5}),
     Sample([uniform((2, 4, 3), seed=781)], {"nsize": 5, "alpha": 0.3, "beta": 0.5,
                                             "knorm": 1.0}),
     Sample([uniform((1, 3, 2, 2), seed=782, dtype=np.float32)], {"nsize": 1}, grad=False))
_add(SAMPLES, "_lrn_window_sum",
     Sample([_LRN_X], {"nsize": 3}),
     Sample([uniform((2, 4), seed=783, dtype=np.float32)], {"nsize": 5}, grad=False))
for _name in ("LRN", "_lrn_window_sum"):
    _add(FAILURES, _name,
         Failure([_LRN_X], {"nsize": 4}, ValueError,
                 rf"^{_name}: nsize must be a positive odd number \(got nsize=4\)"),
         Failure([uniform((5,))], {"nsize": 3}, ValueError,
                 rf"^{_name}: data must have a channel axis 1"),
         Failure([ints(1, 2, 3, 4).reshape(1, 4)], {"nsize": 3}, TypeError,
                 rf"^{_name}: needs a floating-point input"))
    _add(ZERO_SIZE, _name, ZeroSize([zeros(0, 3, 2)], {"nsize": 3}, lambda x: x))

# slice of csr over rows and columns keeps csr (MXNet's SliceDimTwoCsrImpl)
_add(SAMPLES, "slice",
     Sample([_csr(_sparse_input((5, 6), 790))], {"begin": (1, 2), "end": (4, 5)}, grad=False),
     Sample([_csr(_sparse_input((4, 3), 791))], {"begin": (None, -2), "end": (None, None)},
            grad=False))
