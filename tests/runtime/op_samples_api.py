"""op_samples entries for the MXNet calling-convention attributes: softmax's
``length``/``use_length``/``dtype``, log_softmax's ``dtype``, dot's and batch_dot's
``forward_stype``, norm's ``out_dtype``."""

import numpy as np

from tests.runtime.op_samples import (FAILURES, SAMPLES, ZERO_SIZE, Failure, Sample, ZeroSize,
                                      _add, ints, uniform, zeros)


def _np_masked_softmax(x, length):
    out = np.zeros_like(x)
    for i, n in enumerate(length):
        e = np.exp(x[i, :n] - x[i, :n].max()) if n else x[i, :0]
        out[i, :n] = e / e.sum() if n else e
    return out


_add(SAMPLES, "softmax",
     Sample([uniform((3, 5)), ints(2, 5, 0)], {"use_length": True}, wrt=[0]),
     Sample([uniform((4, 3), seed=1), np.array([1, 4, 2], np.int32)],
            {"axis": 0, "use_length": True, "temperature": 2.0}, wrt=[0]),
     Sample([uniform((2, 3), dtype=np.float32)], {"dtype": "float64"}, grad=False),
     Sample([uniform((2, 3))], {"dtype": "float16"}, grad=False))
_add(SAMPLES, "log_softmax",
     Sample([uniform((2, 3), dtype=np.float16)], {"dtype": "float32"}, grad=False))
_add(FAILURES, "softmax",
     Failure([uniform((3, 5)), ints(2, 5)], {"use_length": True}, ValueError,
             r"^softmax: length must have the shape of data without axis -1, \(3,\) "
             r"\(got \(2,\)\)"),
     Failure([uniform((3, 5)), ints(2, 5, 1)], {}, ValueError,
             r"^softmax: a length input goes with use_length=True \(got use_length=False "
             r"and a length\)"),
     Failure([uniform((3, 5))], {"use_length": True}, ValueError,
             r"^softmax: a length input goes with use_length=True \(got use_length=True "
             r"and no length\)"),
     Failure([uniform((3, 5)), uniform((3,))], {"use_length": True}, TypeError,
             r"^softmax: length must hold integers \(got float64\)"),
     Failure([uniform((3, 5))], {"dtype": "int32"}, ValueError,
             r"^softmax: dtype must be None or one of 'float16', 'float32', 'float64' "
             r"\(got 'int32'\)"))
_add(FAILURES, "log_softmax",
     Failure([uniform((3, 5))], {"use_length": True}, ValueError,
             r"^log_softmax: use_length=True needs a length input"))
_add(ZERO_SIZE, "softmax",
     ZeroSize([zeros(0, 5), np.zeros(0, np.int64)], {"use_length": True},
              lambda x, n: x))

_add(SAMPLES, "dot",
     Sample([uniform((2, 3)), uniform((3, 4), seed=1)], {"forward_stype": "csr"}, grad=False),
     Sample([uniform((2, 3)), uniform((3, 4), seed=1)], {"forward_stype": "row_sparse"},
            grad=False),
     Sample([uniform((2, 3)), uniform((3, 4), seed=1)], {"forward_stype": "default"}))
_add(SAMPLES, "batch_dot",
     Sample([uniform((2, 2, 3)), uniform((2, 3, 4), seed=1)], {"forward_stype": "default"}))
_add(FAILURES, "dot",
     Failure([uniform((2, 3)), uniform((3, 4))], {"forward_stype": "dense"}, ValueError,
             r"^dot: forward_stype must be one of None, 'default', 'csr', 'row_sparse' "
             r"\(got 'dense'\)"))

_add(SAMPLES, "norm",
     Sample([uniform((3, 4))], {"out_dtype": "float32"}, grad=False),
     Sample([ints(3, -4)], {"out_dtype": "float64"}, grad=False))
_add(FAILURES, "norm",
     Failure([uniform((3, 4))], {"out_dtype": "bool"}, ValueError,
             r"^norm: out_dtype must be None or one of"))

# where with a 1-D condition selecting rows, pick with keepdims and an index without the
# axis (MXNet's forms)
_add(SAMPLES, "where",
     Sample([np.array([1.0, 0.0, 2.0]), uniform((3, 2)), uniform((3, 2), seed=1)], wrt=[1, 2]))
_add(SAMPLES, "pick",
     Sample([uniform((3, 4)), ints(0, 3, 1)], {"axis": 1, "keepdims": True}, wrt=[0]))
_add(SAMPLES, "mod",
     Sample([uniform((2, 3)), np.array([[0.0, 1.5, -2.0], [0.0, 0.0, 3.0]])], grad=False))
_add(SAMPLES, "sum", Sample([uniform((2, 3))], {"axis": ()}))

# integer inputs to MXNet's float math: computed in float32, truncated into the dtype
for _name in ("exp", "log", "sqrt", "sigmoid"):
    _add(SAMPLES, _name, Sample([ints(1, 2, 3)], grad=False),
         Sample([np.array([4, 9, 200], np.uint8)], grad=False))
    _add(FAILURES, _name, Failure([np.array([True, False])], {}, TypeError,
                                  rf"^{_name}: bool input is not supported",
                                  out=((2,), np.bool_)))

# MXNet's elemwise_* (the broadcast_* ops' kernels on inputs of one shape)
_NP_ELEMWISE = {"elemwise_add": np.add, "elemwise_sub": np.subtract,
                "elemwise_mul": np.multiply, "elemwise_div": np.divide}
for _i, (_name, _f) in enumerate(_NP_ELEMWISE.items()):
    _add(SAMPLES, _name,
         Sample([uniform((2, 3), 0.5, 2.0, seed=_i), uniform((2, 3), 0.5, 2.0, seed=_i + 9)]),
         Sample([ints(1, 4, -2), ints(3, 2, 5)], grad=False))
    _add(FAILURES, _name,
         Failure([uniform((2, 3)), uniform((3,))], {}, ValueError,
                 rf"^{_name}: inputs must have one shape \(got \(2, 3\) and \(3,\)\); "
                 rf"broadcast_{_name[9:]} broadcasts"),
         Failure([uniform((2, 3)), uniform((2, 3)).astype(np.float32)], {}, TypeError,
                 rf"^{_name}: inputs must have one dtype"))
    _add(ZERO_SIZE, _name, ZeroSize([zeros(0, 3), zeros(0, 3)], {},
                                    lambda a, b, f=_f: f(a, b)))
