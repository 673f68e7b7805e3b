"""One table of valid inputs for every registered operator, read by test_all_ops.py.

``SAMPLES[name]`` lists :class:`Sample` objects for the canonical operator ``name``
(``op.name``, never an alias): NumPy arrays well inside the op's domain (positive for
log, in (-0.9, 0.9) for arcsin, away from kinks and discontinuities so that central
differences hold), integer index arrays where the op takes indices, broadcasting for
binary ops.  An ``arrays`` entry may be a callable returning an NDArray (sparse inputs
built with ``runtime.nd.sparse``).  ``grad=True`` samples are checked with
``opcheck.check_grad`` (in float64) on the inputs ``wrt`` (default: every floating
input).  ``grad_ref`` serves operators whose gradient is not the derivative of their
forward (MXNet's output layers, SoftmaxOutput and the regression outputs, whose backward
ignores the head gradient and uses the label): ``grad_ref(inputs, heads)`` takes the
inputs and the head gradients as float64 NumPy arrays and returns the gradient the op
documents for each input (None where it gives none), which the generic suites compare
with the rule's and the tape's instead of central differences.

``FAILURES[name]`` lists :class:`Failure` cases: inputs or attributes that make the op
raise once invocation has started (the test checks that out= and the inputs are left
unchanged).  Ops that cannot fail with valid types are not listed.  A failure found only
by the kernel, after out= is chosen, is the case that catches a kernel writing before it
checks: list one wherever the op has it.  Float attributes that integer data cannot
hold need no entry: test_all_ops.py makes them from every sample with an integer result
(an op with a float attribute that takes integer data must have one).

``ZERO_SIZE[name]`` lists :class:`ZeroSize` cases: 0-size inputs and the NumPy result
(``expect``) the op must reproduce (shape, and values where the result is not empty).

An operator added to the registry without an entry here fails
``test_every_op_has_a_sample``.  Areas added later keep their entries in a module of
their own beside this one, ``op_samples_<area>.py``, which imports ``_add``, the tables
and the data helpers from here; every such module is loaded at the end of this one.
"""

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from runtime import nd
from runtime.nd import sparse

I64 = np.int64


@dataclass
class Sample:
    arrays: list
    attrs: dict = field(default_factory=dict)
    grad: bool = True
    wrt: list | None = None
    grad_ref: Callable[..., Any] | None = None

    @property
    def dense(self):
        """True when every input is a NumPy array (no sparse/NDArray builders)."""
        return not any(callable(a) for a in self.arrays)

    def build(self):
        """The inputs as fresh NDArrays."""
        return [a() if callable(a) else nd.array(a, dtype=a.dtype) for a in self.arrays]


@dataclass
class Failure:
    arrays: list
    attrs: dict
    exc: type
    match: str                      # regex searched in the message (start with '^op: ')
    out: tuple | bool | None = None  # (shape, dtype[, stype]) of out=; None: the first
                                     # input's shape and dtype, dense; False: no out=

    build = Sample.build


@dataclass
class ZeroSize:
    arrays: list
    attrs: dict
    expect: Callable[..., Any]      # NumPy arrays -> the NumPy result

    build = Sample.build


# -- data ----------------------------------------------------------------------------------

def uniform(shape, lo=-2.0, hi=2.0, seed=0, dtype=np.float64):
    """Floats in [lo, hi), kept 0.05 away from integers (and from 0) when the range
    holds 0, so that kinks (abs, relu, floor ...) stay out of central differences."""
    x = np.random.default_rng(seed).uniform(lo, hi, shape)
    if lo < 0 < hi:
        x = np.where(np.abs(x - np.round(x)) < 0.05, x + 0.1, x)
        x = np.where(np.abs(x) < 0.05, 0.3, x)
    return x.astype(dtype)


def positive(shape, seed=0, lo=0.5, hi=2.0):
    return np.random.default_rng(seed).uniform(lo, hi, shape)


def ints(*values):
    return np.array(values, dtype=I64)


def zeros(*shape, dtype=np.float64):
    return np.zeros(shape, dtype)


def _csr(x):
    return lambda: sparse.csr_matrix(x)


def _rsp(x):
    return lambda: sparse.row_sparse_array(x)


def _sparse_input(shape, seed=0, lo=-0.9, hi=0.9):
    """A 2-D float64 array with a few stored values in [lo, hi) (zero elsewhere)."""
    x = uniform(shape, lo, hi, seed)
    x[np.random.default_rng(seed + 1).random(shape) < 0.5] = 0.0
    x[0, :] = 0.0                                   # at least one empty row
    return x


SAMPLES = {}
FAILURES = {}
ZERO_SIZE = {}


def _add(table, name, *items):
    table.setdefault(name, []).extend(items)


# -- elementwise unary -----------------------------------------------------------------------

# name: input domain (lo, hi); float_only ops refuse integer inputs.
UNARY = {
    "negative": (-3, 3), "abs": (-3, 3), "sign": (-3, 3), "square": (-3, 3),
    "relu": (-3, 3), "floor": (-3, 3), "ceil": (-3, 3), "round": (-3, 3), "rint": (-3, 3),
    "trunc": (-3, 3), "fix": (-3, 3),
    "exp": (-3, 3), "expm1": (-3, 3), "log": (0.2, 4), "log1p": (-0.5, 3), "log2": (0.2, 4),
    "log10": (0.2, 4), "sqrt": (0.2, 4), "rsqrt": (0.2, 4), "cbrt": (0.2, 4),
    "reciprocal": (0.5, 3), "sin": (-3, 3), "cos": (-3, 3), "tan": (-1.2, 1.2),
    "arcsin": (-0.9, 0.9), "arccos": (-0.9, 0.9), "arctan": (-3, 3), "sinh": (-3, 3),
    "cosh": (-3, 3), "tanh": (-3, 3), "arcsinh": (-3, 3), "arctanh": (-0.9, 0.9),
    "sigmoid": (-4, 4), "softrelu": (-3, 3), "erf": (-2, 2), "gamma": (0.5, 4),
    "gammaln": (0.5, 4), "digamma": (0.5, 4),
}
ANY_DTYPE_UNARY = {"negative", "abs", "sign", "square", "relu", "floor", "ceil", "round",
                   "rint", "trunc", "fix"}
# Unary ops with a sparse kernel (MXNet's zero-preserving ones): csr and row_sparse samples.
SPARSE_UNARY = {"abs", "sign", "square", "sqrt", "relu", "sin", "tan", "arcsin", "arctan",
                "sinh", "tanh", "arcsinh", "arctanh", "expm1", "log1p", "negative", "floor",
                "ceil", "round", "rint", "trunc", "fix", "cbrt"}

for _i, (_name, (_lo, _hi)) in enumerate(UNARY.items()):
    _add(SAMPLES, _name,
         Sample([uniform((2, 3), _lo, _hi, seed=_i)], grad=_name != "digamma"),
         Sample([uniform((4,), _lo, _hi, seed=_i + 100, dtype=np.float32)], grad=False))
    if _name in SPARSE_UNARY:
        _lo2, _hi2 = (max(_lo, -0.9), min(_hi, 0.9)) if _lo < 0 else (0.2, 0.9)
        _x = _sparse_input((3, 4), _i, _lo2, _hi2)
        _add(SAMPLES, _name, Sample([_csr(_x)], grad=False),
             Sample([_rsp(_x)], grad=False))
    if _name not in ANY_DTYPE_UNARY | {"exp", "log", "sqrt", "sigmoid"}:   # MXNet: ints too
        _add(FAILURES, _name, Failure(
            [ints(1, 2, 3)], {}, TypeError,
            rf"^{_name}: needs a floating-point input \(got int64\)", out=((3,), np.float32)))
    _add(ZERO_SIZE, _name, ZeroSize([zeros(0, 3)], {}, lambda x: x))


# -- elementwise binary (broadcasting) -------------------------------------------------------

BINARY = ["add", "subtract", "multiply", "divide", "mod", "power", "maximum", "minimum",
          "hypot"]
COMPARE = ["equal", "not_equal", "greater", "greater_equal", "lesser", "lesser_equal"]
_NP_BINARY = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
              "divide": np.divide, "mod": np.mod, "power": np.power, "maximum": np.maximum,
              "minimum": np.minimum, "hypot": np.hypot, "equal": np.equal,
              "not_equal": np.not_equal, "greater": np.greater,
              "greater_equal": np.greater_equal, "lesser": np.less,
              "lesser_equal": np.less_equal}

for _i, _name in enumerate(BINARY + COMPARE):
    _grad = _name in BINARY
    _a, _b = positive((2, 3), _i), positive((2, 3), _i + 50) + 0.1
    if not _grad:                   # some equal pairs for the comparisons
        _b[0, :2] = _a[0, :2]
    _add(SAMPLES, _name,
         Sample([_a, _b], grad=_grad),
         # broadcasting both ways: (2, 1, 3) with (4, 1) -> (2, 4, 3)
         Sample([positive((2, 1, 3), _i + 1), positive((4, 1), _i + 2) + 0.1], grad=_grad),
         # (1, 3) with (2, 3): the lhs broadcasts, the rhs may take the output in place
         Sample([positive((1, 3), _i + 3).astype(np.float32),
                 positive((2, 3), _i + 4).astype(np.float32)], grad=False))
    _add(FAILURES, _name,
         Failure([positive((2, 3)), positive((4,))], {}, ValueError,
                 rf"^{_name}: shapes \(2, 3\), \(4,\) are not broadcastable"),
         Failure([positive((2, 3)), positive((2, 3)).astype(np.float32)], {}, TypeError,
                 rf"^{_name}: inputs must have one dtype \(got float64, float32\)"))
    _f = _NP_BINARY[_name]
    _add(ZERO_SIZE, _name,
         ZeroSize([zeros(0, 3), positive((1, 3))], {}, lambda a, b, f=_f: f(a, b)),
         ZeroSize([positive((2, 1)), zeros(0)], {}, lambda a, b, f=_f: f(a, b)))


# -- scalar forms ------------------------------------------------------------------------------

# name: (input, scalar, NumPy reference)
_X = positive((2, 3), 7, 0.6, 1.9)
SCALAR = {
    "_plus_scalar": (uniform((2, 3)), 1.5, lambda x, s: x + s),
    "_minus_scalar": (uniform((2, 3)), 1.5, lambda x, s: x - s),
    "_rminus_scalar": (uniform((2, 3)), 1.5, lambda x, s: s - x),
    "_mul_scalar": (uniform((2, 3)), -2.5, lambda x, s: x * s),
    "_div_scalar": (uniform((2, 3)), -2.5, lambda x, s: x / s),
    "_rdiv_scalar": (_X, 2.5, lambda x, s: s / x),
    # x / s and s / x kept away from integers (mod is discontinuous there)
    "_mod_scalar": (np.array([[0.2, 0.3, 0.9], [1.0, 1.6, 1.75]]), 0.7, np.mod),
    "_rmod_scalar": (positive((2, 3), 8, 1.3, 1.6), 5.0, lambda x, s: np.mod(s, x)),
    "_power_scalar": (_X, 2.5, np.power),
    "_rpower_scalar": (uniform((2, 3)), 2.0, lambda x, s: np.power(s, x)),
    "_maximum_scalar": (uniform((2, 3)), 0.0, np.maximum),
    "_minimum_scalar": (uniform((2, 3)), 0.0, np.minimum),
    "_hypot_scalar": (uniform((2, 3)), 1.5, np.hypot),
}
_CMP_X = np.array([[-1.0, 0.0, 1.5], [0.0, 2.0, -3.0]])
SCALAR_COMPARE = {"_equal_scalar": np.equal, "_not_equal_scalar": np.not_equal,
                  "_greater_scalar": np.greater, "_greater_equal_scalar": np.greater_equal,
                  "_lesser_scalar": np.less, "_lesser_equal_scalar": np.less_equal}

# integer data: the scalar is cast to the array's dtype (truncated: 2.7 -> 2); the data
# stay positive (and nonzero) where they are divisors or exponents
_INT_X = ints(3, 1, 7, 2)
for _name, (_x, _s, _f) in SCALAR.items():
    _add(SAMPLES, _name, Sample([_x], {"scalar": _s}),
         Sample([_x.astype(np.float32)], {"scalar": _s}, grad=False),
         Sample([_INT_X], {"scalar": 2.7}, grad=False))
for _name, _f in SCALAR_COMPARE.items():
    _add(SAMPLES, _name, Sample([_CMP_X], {"scalar": 0.0}, grad=False),
         Sample([ints(-1, 0, 2)], {"scalar": 0}, grad=False))
for _name in ("_mul_scalar", "_div_scalar"):
    _x = _sparse_input((3, 4), 3)
    _add(SAMPLES, _name, Sample([_csr(_x)], {"scalar": 2.0}, grad=False),
         Sample([_rsp(_x)], {"scalar": 2.0}, grad=False))
for _name, _f in [(n, v[2]) for n, v in SCALAR.items()] + list(SCALAR_COMPARE.items()):
    _add(FAILURES, _name, Failure([uniform((2, 3))], {"scalar": "two"}, TypeError,
                                  rf"^{_name}: scalar must be a number \(got 'two'\)"))
    _add(ZERO_SIZE, _name, ZeroSize([zeros(0, 3)], {"scalar": 2.0},
                                    lambda x, f=_f: f(x, 2.0)))


# -- where, clip, cast, copies, add_n -----------------------------------------------------------

_add(SAMPLES, "where",
     Sample([np.array([[1, 0, 1], [0, 0, 1]], I64), uniform((2, 3)), uniform((1, 3), seed=1)]),
     # a (1, 3) condition broadcasts over the rows (a 1-D one of length 2 would pick rows)
     Sample([np.array([[1.0, 0.0, 2.0]]), uniform((2, 3), seed=2), uniform((2, 3), seed=3)],
            wrt=[1, 2]))
_add(FAILURES, "where",
     Failure([ints(1, 0), positive((2,)), positive((2,)).astype(np.float32)], {}, TypeError,
             r"^where: inputs must have one dtype \(got float64, float32\)"),
     Failure([ints(1, 0, 1), positive((2,)), positive((2,))], {}, ValueError,
             r"^where: shapes \(3,\), \(2,\), \(2,\) are not broadcastable"))
_add(ZERO_SIZE, "where",
     ZeroSize([zeros(0, 3), zeros(0, 3), positive((3,))], {},
              lambda c, x, y: np.where(c != 0, x, y)))

_add(SAMPLES, "clip",
     Sample([uniform((3, 4), -1, 1)], {"a_min": -0.55, "a_max": 0.45}),
     Sample([ints(-3, 0, 2, 9)], {"a_min": -1, "a_max": 4}, grad=False))
_add(FAILURES, "clip",
     Failure([uniform((2, 3))], {"a_min": 1.0, "a_max": 0.0}, ValueError,
             r"^clip: a_min must be <= a_max \(got a_min=1.0, a_max=0.0\)"),
     Failure([np.array([1, 2], np.int8)], {"a_min": 0, "a_max": 300}, ValueError,
             r"^clip: a_max must be finite and in \[-128, 127\] for dtype int8 \(got 300.0\)"))
_add(ZERO_SIZE, "clip", ZeroSize([zeros(0, 3)], {"a_min": 0, "a_max": 1},
                                 lambda x: np.clip(x, 0, 1)))

_add(SAMPLES, "cast",
     Sample([uniform((2, 3))], {"dtype": "float64"}),
     Sample([uniform((2, 3), dtype=np.float32)], {"dtype": "int32"}, grad=False),
     Sample([ints(0, 1, 7)], {"dtype": "float16"}, grad=False))
_add(FAILURES, "cast",
     Failure([uniform((2, 3))], {"dtype": "complex64"}, TypeError,
             r"^cast: dtype must be one of"))
_add(ZERO_SIZE, "cast", ZeroSize([zeros(0, 3)], {"dtype": "int8"},
                                 lambda x: x.astype(np.int8)))

for _name, _grad in (("copy", True), ("stop_gradient", False), ("zeros_like", False),
                     ("ones_like", False)):
    _add(SAMPLES, _name, Sample([uniform((2, 3))], grad=_grad),
         Sample([ints(1, 2, 3)], grad=False))
    _ref = {"copy": np.copy, "stop_gradient": np.copy, "zeros_like": np.zeros_like,
            "ones_like": np.ones_like}[_name]
    _add(ZERO_SIZE, _name, ZeroSize([zeros(0, 3)], {}, _ref))
_add(SAMPLES, "zeros_like", Sample([_csr(_sparse_input((3, 4)))], grad=False),
     Sample([_rsp(_sparse_input((3, 4)))], grad=False))

_add(SAMPLES, "add_n",
     Sample([uniform((2, 3), seed=k) for k in range(3)]),
     Sample([uniform((4,), seed=5)]),
     Sample([ints(1, 2), ints(3, 4)], grad=False))
_add(FAILURES, "add_n",
     Failure([uniform((2, 3)), uniform((3, 2))], {}, ValueError,
             r"^add_n: all inputs must have one shape \(got \(2, 3\), \(3, 2\)\)"),
     Failure([uniform((2, 3)), np.ones((2, 3), I64)], {}, TypeError,
             r"^add_n: inputs must have one dtype"))
_add(ZERO_SIZE, "add_n", ZeroSize([zeros(0, 3), zeros(0, 3)], {}, np.add))


# -- reductions ------------------------------------------------------------------------------

_NP_REDUCE = {"sum": np.sum, "mean": np.mean, "prod": np.prod, "max": np.max, "min": np.min,
              "logsumexp": lambda x, axis, keepdims: np.log(np.sum(np.exp(x), axis=axis,
                                                                   keepdims=keepdims))}
for _i, _name in enumerate(_NP_REDUCE):
    _x = uniform((3, 4), 0.5, 1.5, seed=_i) if _name == "prod" else uniform((3, 4), seed=_i)
    _add(SAMPLES, _name,
         Sample([_x], {"axis": 1}),
         Sample([_x]),
         Sample([uniform((2, 3, 4), 0.5, 1.5, seed=_i + 9)],
                {"axis": (0, 2), "keepdims": True}),
         Sample([uniform((2, 3, 4), 0.5, 1.5, seed=_i + 19)], {"axis": -1, "exclude": True}))
    if _name != "logsumexp":
        _add(SAMPLES, _name, Sample([np.array([[1, 5, 2], [4, 3, 6]], I64)], {"axis": 0},
                                    grad=False))
    _add(FAILURES, _name,
         Failure([uniform((2, 3))], {"axis": 2}, ValueError,
                 rf"^{_name}: axis 2 is out of range for an array of 2 dimension\(s\)"),
         Failure([uniform((2, 3))], {"axis": (1, -1)}, ValueError,
                 rf"^{_name}: axis \(1, -1\) repeats an axis"))
    _f = _NP_REDUCE[_name]
    _add(ZERO_SIZE, _name,
         ZeroSize([zeros(0, 3)], {"axis": 1}, lambda x, f=_f: f(x, axis=1, keepdims=False)))
    if _name in ("max", "min"):
        _add(FAILURES, _name, Failure([zeros(0, 3)], {"axis": 0}, ValueError,
                                      rf"^{_name}: cannot reduce over a zero-size axis"))
    else:   # NumPy's identities: sum 0, prod 1, mean NaN, logsumexp -inf
        _add(ZERO_SIZE, _name,
             ZeroSize([zeros(0, 3)], {"axis": 0}, lambda x, f=_f: f(x, axis=0, keepdims=False)))
# zeros: one per slice, none, and two (the gradient is exact there too)
_add(SAMPLES, "prod", Sample([np.array([[0.5, 0.0, 1.5], [2.0, -1.5, 0.7], [0.0, 0.0, 2.0]])],
                             {"axis": 1}))
_add(FAILURES, "logsumexp", Failure([ints(1, 2)], {}, TypeError,
                                    r"^logsumexp: needs a floating-point input \(got int64\)",
                                    out=((1,), np.float64)))

_add(SAMPLES, "norm",
     Sample([uniform((3, 4))]),
     Sample([uniform((3, 4), seed=1)], {"ord": 1, "axis": 1}),
     Sample([uniform((2, 3, 4), seed=2)], {"axis": (0, 2), "keepdims": True}),
     Sample([ints(3, -4)], grad=False))
_add(FAILURES, "norm",
     Failure([uniform((2, 3))], {"ord": 3}, ValueError, r"^norm: ord must be 1 or 2 \(got 3\)"),
     Failure([uniform((2, 3))], {"axis": 2}, ValueError, r"^norm: axis 2 is out of range"),
     Failure([np.array([True, False])], {}, TypeError, r"^norm: bool input is not supported",
             out=((1,), np.bool_)))
_add(ZERO_SIZE, "norm",
     ZeroSize([zeros(0, 3)], {"axis": 1}, lambda x: np.linalg.norm(x, axis=1)),
     ZeroSize([zeros(0, 3)], {"axis": 0}, lambda x: np.linalg.norm(x, axis=0)))

for _name, _f in (("argmax", np.argmax), ("argmin", np.argmin)):
    _add(SAMPLES, _name,
         Sample([uniform((3, 4))], {"axis": 1}, grad=False),
         Sample([uniform((3, 4), seed=1)], grad=False),
         Sample([np.array([[1, 5, 2], [4, 3, 6]], I64)], {"axis": 0, "keepdims": True},
                grad=False))
    _add(FAILURES, _name,
         Failure([uniform((2, 3))], {"axis": 2}, ValueError,
                 rf"^{_name}: axis 2 is out of range"),
         Failure([zeros(2, 0)], {"axis": 1}, ValueError,
                 rf"^{_name}: cannot search a zero-size axis"),
         # raised by the kernel, after out= is chosen: indices do not fit the input dtype
         Failure([np.arange(200).astype(np.int8)], {"axis": 0}, ValueError,
                 rf"^{_name}: indices up to 199 do not fit in the output dtype int8",
                 out=((1,), np.int8)))
    _add(ZERO_SIZE, _name,
         ZeroSize([zeros(0, 3)], {"axis": 1}, lambda x, f=_f: f(x, axis=1).astype(x.dtype)))


# -- shape and indexing ---------------------------------------------------------------------------

_add(SAMPLES, "broadcast_to",
     Sample([uniform((1, 3))], {"shape": (2, 3)}),
     Sample([uniform((1, 3))], {"shape": (2, 0)}),           # MXNet: 0 keeps the dimension
     Sample([ints(4)], {"shape": (2, 3)}, grad=False))
_add(FAILURES, "broadcast_to",
     Failure([uniform((2, 3))], {"shape": (2, 4)}, ValueError,
             r"^broadcast_to: shape \(2, 3\) cannot be broadcast to \(2, 4\)"))
_add(ZERO_SIZE, "broadcast_to",
     ZeroSize([zeros(1, 3)], {"shape": (2, 1, 3)}, lambda x: np.broadcast_to(x, (2, 1, 3))),
     ZeroSize([zeros(0, 1)], {"shape": (0, 4)}, lambda x: np.broadcast_to(x, (0, 4))))

_add(SAMPLES, "broadcast_like",
     Sample([uniform((1, 3)), uniform((2, 3), seed=1)], wrt=[0]),
     Sample([uniform((2, 1)), uniform((4, 5), seed=1)], {"lhs_axes": 1, "rhs_axes": 0},
            wrt=[0]))
_add(FAILURES, "broadcast_like",
     Failure([uniform((2, 3)), uniform((4, 3))], {}, ValueError,
             r"^broadcast_like: shape \(2, 3\) cannot be broadcast to \(4, 3\)"),
     Failure([uniform((2, 1)), uniform((4, 5))], {"lhs_axes": 1}, ValueError,
             r"^broadcast_like: lhs_axes and rhs_axes must be given together"))
_add(ZERO_SIZE, "broadcast_like",
     ZeroSize([zeros(1, 3), zeros(0, 3)], {}, lambda a, b: np.broadcast_to(a, b.shape)))

_add(SAMPLES, "reshape",
     Sample([uniform((2, 3))], {"shape": (3, 2)}),
     Sample([uniform((2, 3, 4))], {"shape": (-1, 0)}),
     Sample([uniform((2, 3, 4))], {"shape": (-3, -2)}),
     Sample([uniform((2, 6))], {"shape": (0, -4, 2, -1)}),
     Sample([uniform((2, 3, 4))], {"shape": (-1, 12), "reverse": True}, grad=False),
     Sample([uniform((2, 3, 4))], {"target_shape": (4, 0)}),
     Sample([uniform((2, 3, 4))], {"target_shape": (5, 2, 0), "keep_highest": True}))
_add(FAILURES, "reshape",
     Failure([uniform((2, 3))], {"shape": (4, 2)}, ValueError,
             r"^reshape: cannot reshape an array of shape \(2, 3\) \(6 elements\)"),
     Failure([uniform((2, 3))], {"shape": (-1, -1)}, ValueError,
             r"^reshape: shape \(-1, -1\) has more than one -1"),
     Failure([uniform((2, 3))], {}, TypeError,
             r"^reshape: attribute 'shape' is required \(or MXNet's deprecated "
             r"target_shape\)"),
     Failure([uniform((2, 3))], {"target_shape": (0, 0)}, ValueError,
             r"^reshape: target_shape \(0, 0\) may leave one dimension 0 to infer \(got 2\)"),
     Failure([uniform((2, 3))], {"target_shape": (0, 4)}, ValueError,
             r"^reshape: target_shape \(0, 4\) does not hold the 6 values of shape "
             r"\(2, 3\)"))
_add(ZERO_SIZE, "reshape", ZeroSize([zeros(0, 3)], {"shape": (3, -1)},
                                    lambda x: x.reshape(3, -1)))

_add(SAMPLES, "reshape_like",
     Sample([uniform((2, 3)), uniform((3, 2), seed=1)], wrt=[0]),
     Sample([uniform((2, 12)), uniform((3, 3, 4), seed=1)],
            {"lhs_begin": 1, "rhs_begin": 1, "rhs_end": None}, grad=False),
     Sample([uniform((2, 6)), uniform((2, 3), seed=1)],
            {"lhs_begin": 1, "lhs_end": 2, "rhs_begin": 0, "rhs_end": 2}, wrt=[0]))
_add(FAILURES, "reshape_like",
     Failure([uniform((2, 3)), uniform((4, 2))], {}, ValueError,
             r"^reshape_like: cannot reshape an array of shape \(2, 3\) into \(4, 2\)"),
     Failure([uniform((2, 3)), uniform((3, 2))], {"lhs_begin": 3}, ValueError,
             r"^reshape_like: lhs_begin 3 is out of range for 2 dimension\(s\)"))
_add(ZERO_SIZE, "reshape_like", ZeroSize([zeros(0, 3), zeros(3, 0)], {},
                                         lambda a, b: a.reshape(b.shape)))

_add(SAMPLES, "_identity_with_attr_like_rhs",
     Sample([uniform((2, 3)), uniform((2, 3), seed=1)], wrt=[0]))
_add(FAILURES, "_identity_with_attr_like_rhs",
     Failure([uniform((2, 3)), uniform((3, 2))], {}, ValueError,
             r"^_identity_with_attr_like_rhs: inputs must have one shape"))
_add(ZERO_SIZE, "_identity_with_attr_like_rhs", ZeroSize([zeros(0, 3), zeros(0, 3)], {},
                                                         lambda a, b: a.copy()))

_add(SAMPLES, "transpose",
     Sample([uniform((2, 3, 4))]),
     Sample([uniform((2, 3, 4))], {"axes": (1, -1, 0)}))
_add(FAILURES, "transpose",
     Failure([uniform((2, 3, 4))], {"axes": (0, 0, 1)}, ValueError,
             r"^transpose: axes \(0, 0, 1\) must be a permutation of the 3 axes"))
_add(ZERO_SIZE, "transpose", ZeroSize([zeros(0, 3)], {}, np.transpose))

_add(SAMPLES, "expand_dims",
     Sample([uniform((2, 3))], {"axis": 1}),
     Sample([uniform((2, 3))], {"axis": -1}))
_add(FAILURES, "expand_dims",
     Failure([uniform((2, 3))], {"axis": 4}, ValueError,
             r"^expand_dims: axis 4 is out of range"))
_add(ZERO_SIZE, "expand_dims", ZeroSize([zeros(0, 3)], {"axis": 0},
                                        lambda x: np.expand_dims(x, 0)))

_add(SAMPLES, "squeeze",
     Sample([uniform((2, 1, 3, 1))]),
     Sample([uniform((2, 1, 3, 1))], {"axis": 1}),
     Sample([uniform((1, 1))], grad=False))
_add(FAILURES, "squeeze",
     Failure([uniform((2, 1, 3))], {"axis": 0}, ValueError,
             r"^squeeze: axis 0 of shape \(2, 1, 3\) has size 2, not 1"))
_add(ZERO_SIZE, "squeeze", ZeroSize([zeros(0, 1, 3)], {"axis": 1},
                                    lambda x: np.squeeze(x, 1)))

_add(SAMPLES, "flatten", Sample([uniform((2, 3, 4))]), Sample([uniform((3,))]))
_add(ZERO_SIZE, "flatten", ZeroSize([zeros(0, 3, 4)], {}, lambda x: np.zeros((0, 12))),
     ZeroSize([zeros(2, 0, 4)], {}, lambda x: np.zeros((2, 0))))

_add(SAMPLES, "concat",
     Sample([uniform((2, 3)), uniform((2, 2), seed=1)]),
     Sample([uniform((2, 3)), uniform((1, 3), seed=1), uniform((3, 3), seed=2)],
            {"dim": 0, "num_args": 3}))
_add(FAILURES, "concat",
     Failure([uniform((2, 3)), uniform((3, 2))], {}, ValueError,
             r"^concat: shapes \(2, 3\), \(3, 2\) must agree except on dimension 1"),
     Failure([uniform((2, 3)), uniform((2, 3))], {"num_args": 3}, ValueError,
             r"^concat: num_args is 3 but 2 arrays were given"),
     Failure([uniform((2, 3)), uniform((2, 3))], {"dim": 2}, ValueError,
             r"^concat: dim 2 is out of range"))
_add(ZERO_SIZE, "concat", ZeroSize([zeros(2, 0), uniform((2, 3))], {},
                                   lambda a, b: np.concatenate([a, b], axis=1)))

_add(SAMPLES, "Crop",
     Sample([uniform((2, 2, 5, 6))], {"offset": (1, 2), "h_w": (2, 3)}),
     Sample([uniform((1, 2, 5, 6)), zeros(1, 1, 3, 2)], {"offset": (1, 1), "num_args": 2},
            wrt=[0]),
     Sample([uniform((1, 1, 5, 6))], {"h_w": (2, 3), "center_crop": True}))
_add(FAILURES, "Crop",
     Failure([uniform((1, 1, 5, 6))], {"offset": (4, 2), "h_w": (2, 3)}, ValueError,
             r"^Crop: offset \(4, 2\) must keep the crop \(2, 3\) inside data's height "
             r"and width \(5, 6\)"),
     Failure([uniform((1, 1, 5, 6))], {}, ValueError,
             r"^Crop: h_w must be positive, or a crop_like array given \(got \(0, 0\)\)"),
     Failure([uniform((5, 6))], {"h_w": (2, 2)}, ValueError,
             r"^Crop: data must be 4-D NCHW \(got shape \(5, 6\)\)"),
     Failure([uniform((1, 1, 5, 6)), zeros(1, 1, 6, 6)], {}, ValueError,
             r"^Crop: the crop \(6, 6\) must fit in data's height and width \(5, 6\)"),
     Failure([uniform((1, 1, 5, 6))], {"h_w": (2, 2), "num_args": 2}, ValueError,
             r"^Crop: num_args is 2 but 1 arrays were given"))
_add(ZERO_SIZE, "Crop", ZeroSize([zeros(0, 2, 5, 6)], {"h_w": (2, 3), "offset": (1, 1)},
                                 lambda a: a[:, :, 1:3, 1:4]))

_add(SAMPLES, "stack",
     Sample([uniform((2, 3)), uniform((2, 3), seed=1)]),
     Sample([uniform((2, 3)), uniform((2, 3), seed=1), uniform((2, 3), seed=2)],
            {"axis": -1}))
_add(FAILURES, "stack",
     Failure([uniform((2, 3)), uniform((3, 2))], {}, ValueError,
             r"^stack: all inputs must have one shape"),
     Failure([uniform((2, 3)), uniform((2, 3))], {"axis": 3}, ValueError,
             r"^stack: axis 3 is out of range"))
_add(ZERO_SIZE, "stack", ZeroSize([zeros(0, 3), zeros(0, 3)], {},
                                  lambda a, b: np.stack([a, b])))

_add(SAMPLES, "split",
     Sample([uniform((2, 6))], {"num_outputs": 3}),
     Sample([uniform((3, 2))], {"num_outputs": 3, "axis": 0, "squeeze_axis": True}),
     Sample([uniform((4,))], {"num_outputs": 1, "axis": 0}))
_add(FAILURES, "split",
     Failure([uniform((2, 6))], {"num_outputs": 4}, ValueError,
             r"^split: dimension 1 of shape \(2, 6\) \(6\) cannot be split evenly"),
     Failure([uniform((2, 6))], {"num_outputs": 2, "squeeze_axis": True}, ValueError,
             r"^split: squeeze_axis needs sections of size 1"))
_add(ZERO_SIZE, "split", ZeroSize([zeros(0, 6)], {"num_outputs": 2},
                                  lambda x: np.split(x, 2, axis=1)))

_SL = {"begin": (0, 1), "end": (2, 3)}
_add(SAMPLES, "slice",
     Sample([uniform((3, 4))], _SL),
     Sample([uniform((3, 4, 2))], {"begin": (None, -1), "end": (None, 0), "step": (1, -2)}))
_add(FAILURES, "slice",
     Failure([uniform((3, 4))], {**_SL, "step": (1, 0)}, ValueError,
             r"^slice: step must not be 0"),
     Failure([uniform((3,))], _SL, ValueError,
             r"^slice: begin \(0, 1\) has more entries than the array of shape \(3,\)"),
     Failure([uniform((3, 4))], {"begin": (0, "a"), "end": (1, 2)}, TypeError,
             r"^slice: begin must be a tuple of ints or None"))
_add(ZERO_SIZE, "slice", ZeroSize([zeros(0, 4)], _SL, lambda x: x[0:2, 1:3]))

_add(SAMPLES, "_slice_assign",
     Sample([uniform((3, 4)), uniform((2, 2), seed=1)], _SL),
     Sample([uniform((3, 4)), uniform((3, 2), seed=1)],
            {"begin": (None, 3), "end": (None, 0), "step": (None, -2)}))
_add(FAILURES, "_slice_assign",
     Failure([uniform((3, 4)), uniform((2, 3))], _SL, ValueError,
             r"^_slice_assign: rhs has shape \(2, 3\), the slice of \(3, 4\) has \(2, 2\)"),
     Failure([uniform((3, 4)), uniform((2, 2)).astype(np.float32)], _SL, TypeError,
             r"^_slice_assign: inputs must have one dtype"))
_add(ZERO_SIZE, "_slice_assign", ZeroSize([zeros(0, 4), zeros(0, 2)], _SL,
                                          lambda a, b: a.copy()))

_add(SAMPLES, "_slice_assign_scalar",
     Sample([uniform((3, 4))], {"scalar": 2.0, **_SL}),
     Sample([ints(1, 2, 3, 4)], {"scalar": 9, "begin": (1,), "end": (None,), "step": (2,)},
            grad=False))
_add(FAILURES, "_slice_assign_scalar",
     Failure([uniform((3, 4))], {**_SL, "step": (0, 1)}, ValueError,
             r"^_slice_assign_scalar: step must not be 0"),
     # the kernel copies data to out= before it writes the scalar: refused before
     Failure([np.array([1, 2, 3], np.int32)], {"scalar": np.nan, "begin": (0,), "end": (2,)},
             ValueError, r"^_slice_assign_scalar: scalar must be finite and in "
             r"\[-2147483648, 2147483647\] for dtype int32 \(got nan\)"),
     Failure([np.array([1, 2, 3], np.int8)], {"scalar": 300, "begin": (1,), "end": (None,)},
             ValueError, r"^_slice_assign_scalar: scalar must be finite and in \[-128, 127\] "
             r"for dtype int8 \(got 300.0\)"))
_add(ZERO_SIZE, "_slice_assign_scalar", ZeroSize([zeros(0, 4)], {"scalar": 1.0, **_SL},
                                                 lambda x: x.copy()))

_add(SAMPLES, "slice_axis",
     Sample([uniform((3, 4))], {"axis": 1, "begin": 1, "end": 3}),
     Sample([uniform((3, 4))], {"axis": -2, "begin": -2, "end": None}))
_add(FAILURES, "slice_axis",
     Failure([uniform((3, 4))], {"axis": 1, "begin": 5, "end": None}, ValueError,
             r"^slice_axis: begin 5 and end None are out of range for axis 1 of size 4"),
     Failure([uniform((3, 4))], {"axis": 2, "begin": 0, "end": 1}, ValueError,
             r"^slice_axis: axis 2 is out of range"))
_add(ZERO_SIZE, "slice_axis", ZeroSize([zeros(0, 4)], {"axis": 1, "begin": 1, "end": 3},
                                       lambda x: x[:, 1:3]))

_add(SAMPLES, "take",
     Sample([uniform((4, 3)), np.array([[0, 2], [3, 1]], I64)]),
     Sample([uniform((4, 3)), ints(-1, 5, 2)], {"axis": 1, "mode": "wrap"}),
     Sample([uniform((4, 3)), np.array([0.0, 2.7, 9.0])], wrt=[0]),        # float, clipped
     Sample([uniform((4, 3)), ints(-1, 3)], {"mode": "raise"}))
_add(FAILURES, "take",
     Failure([uniform((4, 3)), np.array([True, False])], {}, TypeError,
             r"^take: indices must be integers or floats \(got bool\)"),
     Failure([uniform((4, 3)), ints(0, 1)], {"axis": 2}, ValueError,
             r"^take: axis 2 is out of range"),
     # raised by the kernel, after out= is chosen
     Failure([uniform((4, 3)), ints(0, 7)], {"mode": "raise"}, IndexError,
             r"^take: index 7 at position 1 is out of range for axis 0 of size 4",
             out=((2, 3), np.float64)),
     Failure([uniform((4, 3)), np.array([0.0, np.nan])], {}, IndexError,
             r"^take: index nan at position 1 is not a finite number",
             out=((2, 3), np.float64)))
_add(ZERO_SIZE, "take",
     ZeroSize([uniform((4, 3)), np.zeros(0, I64)], {}, lambda a, i: np.take(a, i, axis=0)),
     ZeroSize([zeros(0, 3), np.zeros((2, 0), I64)], {}, lambda a, i: np.take(a, i, axis=0)))

_TG = {"shape": (4, 3)}
_add(SAMPLES, "_take_grad",
     Sample([ints(0, 2, 2), uniform((3, 3))], _TG),
     Sample([np.array([[1, -1]], I64), uniform((4, 1, 2))], {"shape": (4, 3), "axis": 1,
                                                             "mode": "wrap"}))
_add(FAILURES, "_take_grad",
     Failure([ints(0, 2, 2), uniform((2, 3))], _TG, ValueError,
             r"^_take_grad: ograd has shape \(2, 3\), expected \(3, 3\)"),
     Failure([ints(0, 9), uniform((2, 3))], {**_TG, "mode": "raise"}, IndexError,
             r"^_take_grad: index 9 at position 1 is out of range", out=((4, 3), np.float64)))
_add(ZERO_SIZE, "_take_grad", ZeroSize([np.zeros(0, I64), zeros(0, 3)], _TG,
                                       lambda i, g: np.zeros((4, 3))))

_add(SAMPLES, "_take_assign",
     Sample([uniform((4, 3)), uniform((2, 3), seed=1), ints(3, 1)]),
     Sample([uniform((4, 3)), uniform((4, 1, 3), seed=1), np.array([[2, 0, -2]], I64)],
            {"axis": 1, "mode": "wrap"}),
     Sample([uniform((4, 3)), uniform((2, 3), seed=1), np.array([0.0, 2.7])], wrt=[0, 1]),
     Sample([ints(1, 2, 3, 4), ints(7, 8), ints(-1, 0)], {"mode": "raise"}, grad=False))
_add(FAILURES, "_take_assign",
     Failure([uniform((4, 3)), uniform((2, 2)), ints(0, 1)], {}, ValueError,
             r"^_take_assign: rhs has shape \(2, 2\), the elements it replaces in \(4, 3\) "
             r"have \(2, 3\)"),
     Failure([uniform((4, 3)), uniform((2, 3)), np.array([True, False])], {}, TypeError,
             r"^_take_assign: indices must be integers or floats \(got bool\)"),
     Failure([uniform((4, 3)), uniform((2, 3)).astype(np.float32), ints(0, 1)], {}, TypeError,
             r"^_take_assign: inputs must have one dtype"),
     # raised by the kernel, after out= is chosen
     Failure([uniform((4, 3)), uniform((2, 3)), ints(0, 7)], {"mode": "raise"}, IndexError,
             r"^_take_assign: index 7 at position 1 is out of range for axis 0 of size 4"))
_add(ZERO_SIZE, "_take_assign",
     ZeroSize([zeros(0, 3), zeros(0, 3), np.zeros(0, I64)], {}, lambda a, b, i: a.copy()),
     ZeroSize([uniform((4, 3)), zeros(0, 3), np.zeros(0, I64)], {}, lambda a, b, i: a.copy()))

_add(SAMPLES, "_take_assign_scalar",
     Sample([uniform((4, 3)), ints(3, 1)], {"scalar": 2.0}),
     Sample([uniform((4, 3)), np.array([[2, 0]], I64)], {"scalar": -1.5, "axis": 1}),
     Sample([ints(1, 2, 3, 4), ints(0, -1)], {"scalar": 9, "mode": "raise"}, grad=False))
_add(FAILURES, "_take_assign_scalar",
     Failure([uniform((4, 3)), np.array([True])], {}, TypeError,
             r"^_take_assign_scalar: indices must be integers or floats \(got bool\)"),
     Failure([uniform((4, 3)), ints(0)], {"axis": 2}, ValueError,
             r"^_take_assign_scalar: axis 2 is out of range"),
     Failure([np.array([1, 2, 3], np.int8), ints(0)], {"scalar": 300}, ValueError,
             r"^_take_assign_scalar: scalar must be finite and in \[-128, 127\] for dtype "
             r"int8 \(got 300.0\)"),
     # raised by the kernel, after out= is chosen
     Failure([uniform((4, 3)), ints(0, 9)], {"mode": "raise"}, IndexError,
             r"^_take_assign_scalar: index 9 at position 1 is out of range"))
_add(ZERO_SIZE, "_take_assign_scalar",
     ZeroSize([zeros(0, 3), np.zeros(0, I64)], {"scalar": 1.0}, lambda x, i: x.copy()))

_add(SAMPLES, "pick",
     Sample([uniform((3, 4)), ints(0, 3, 1)]),
     Sample([uniform((3, 4)), np.array([[1, 0, 5, -1]], I64)],
            {"axis": 0, "keepdims": True, "mode": "wrap"}),
     Sample([uniform((3, 4)), np.array([0.0, 3.0, 1.9])], wrt=[0]))
_add(FAILURES, "pick",
     Failure([uniform((3, 4)), ints(0, 1)], {}, ValueError,
             r"^pick: index has shape \(2,\), expected \(3,\)"),
     Failure([uniform((3, 4)), ints(0, 1, 2)], {"axis": None}, ValueError,
             r"^pick: axis=None is not supported"),
     Failure([uniform((3, 4)), np.array([True, False, True])], {}, TypeError,
             r"^pick: index must be integers or floats"))
_add(ZERO_SIZE, "pick", ZeroSize([zeros(0, 4), np.zeros(0, I64)], {},
                                 lambda d, i: np.zeros(0)))

_PG = {"shape": (3, 4)}
_add(SAMPLES, "_pick_grad",
     Sample([ints(0, 3, 1), uniform((3,))], _PG),
     Sample([np.array([[1, 0, 5, -1]], I64), uniform((1, 4))],
            {"shape": (3, 4), "axis": 0, "mode": "wrap"}))
_add(FAILURES, "_pick_grad",
     Failure([ints(0, 3, 1), uniform((4,))], _PG, ValueError,
             r"^_pick_grad: ograd has shape \(4,\), index \(3,\)"),
     Failure([ints(0, 3), uniform((2,))], _PG, ValueError,
             r"^_pick_grad: index has shape \(2,\), which does not match \(3, 4\)"))
_add(ZERO_SIZE, "_pick_grad", ZeroSize([np.zeros(0, I64), zeros(0)], {"shape": (0, 4)},
                                       lambda i, g: np.zeros((0, 4))))

_add(SAMPLES, "one_hot",
     Sample([np.array([[0, 2], [1, 3]], I64)], {"depth": 4}, grad=False),
     Sample([np.array([0.0, 5.0, 1.7, -1.0])],
            {"depth": 3, "on_value": 2.0, "off_value": -1.0, "dtype": "int32"}, grad=False))
_add(FAILURES, "one_hot",
     Failure([ints(0, 1)], {"depth": -1}, ValueError, r"^one_hot: depth must be >= 0"),
     Failure([ints(0, 1)], {"depth": 2, "off_value": -300, "dtype": "uint8"}, ValueError,
             r"^one_hot: off_value must be finite and in \[0, 255\] for dtype uint8 "
             r"\(got -300.0\)", out=((2, 2), np.uint8)),
     Failure([np.array([True])], {"depth": 2}, TypeError,
             r"^one_hot: indices must be integers or floats \(got bool\)"))
_add(ZERO_SIZE, "one_hot", ZeroSize([np.zeros(0, I64)], {"depth": 4},
                                    lambda i: np.zeros((0, 4), np.float32)))

_add(SAMPLES, "tile",
     Sample([uniform((2, 3))], {"reps": (2, 1)}),
     Sample([uniform((3,))], {"reps": (2, 2)}),
     Sample([uniform((2, 3))], {"reps": (3,)}))
_add(FAILURES, "tile", Failure([uniform((2, 3))], {"reps": (2, -1)}, ValueError,
                               r"^tile: reps must be >= 0 \(got \(2, -1\)\)"))
_add(ZERO_SIZE, "tile", ZeroSize([uniform((2, 3))], {"reps": (0, 1)},
                                 lambda x: np.tile(x, (0, 1))),
     ZeroSize([zeros(0, 3)], {"reps": (2, 2)}, lambda x: np.tile(x, (2, 2))))

_add(SAMPLES, "repeat",
     Sample([uniform((2, 3))], {"repeats": 2, "axis": 1}),
     Sample([uniform((2, 3))], {"repeats": 3}))
_add(FAILURES, "repeat",
     Failure([uniform((2, 3))], {"repeats": -1}, ValueError,
             r"^repeat: repeats must be >= 0 \(got -1\)"),
     Failure([uniform((2, 3))], {"repeats": 2, "axis": 2}, ValueError,
             r"^repeat: axis 2 is out of range"),
     Failure([uniform((2, 3))], {"repeats": 2**62}, ValueError,
             r"^repeat: repeats must keep the result's size within int64 for shape \(2, 3\) "
             r"\(got 4611686018427387904\)"),
     # an empty result whose repeated dimension alone overflows
     Failure([zeros(0, 3)], {"repeats": 2**62, "axis": 1}, ValueError,
             r"^repeat: repeats must keep the result's size within int64 for shape \(0, 3\)"))
_add(ZERO_SIZE, "repeat", ZeroSize([zeros(0, 3)], {"repeats": 2, "axis": 1},
                                   lambda x: np.repeat(x, 2, axis=1)),
     ZeroSize([uniform((2, 3))], {"repeats": 0}, lambda x: np.repeat(x, 0)))

_add(SAMPLES, "flip",
     Sample([uniform((2, 3))], {"axis": 1}),
     Sample([uniform((2, 3, 2))], {"axis": (0, -1)}))
_add(FAILURES, "flip",
     Failure([uniform((2, 3))], {"axis": 2}, ValueError, r"^flip: axis 2 is out of range"),
     Failure([uniform((2, 3))], {"axis": (1, -1)}, ValueError,
             r"^flip: axis \(1, -1\) repeats an axis"))
_add(ZERO_SIZE, "flip", ZeroSize([zeros(0, 3)], {"axis": 0}, lambda x: np.flip(x, 0)))


# -- linear algebra --------------------------------------------------------------------------------

_add(SAMPLES, "dot",
     Sample([uniform((2, 3)), uniform((3, 4), seed=1)]),
     Sample([uniform((3, 2)), uniform((4, 3), seed=1)],
            {"transpose_a": True, "transpose_b": True}),
     Sample([uniform((3,)), uniform((3,), seed=1)]),
     Sample([uniform((2, 3, 4)), uniform((4, 5), seed=1)]),
     Sample([uniform((3, 2, 2)), uniform((3, 4), seed=1)], {"transpose_a": True}),
     Sample([uniform((2, 3)), uniform((4, 2, 3), seed=1)], {"transpose_b": True}),
     Sample([np.array([[1, 2], [3, 4]], I64), ints(5, 6)], grad=False))
_add(FAILURES, "dot",
     Failure([uniform((2, 3)), uniform((4, 2))], {}, ValueError,
             r"^dot: shapes \(2, 3\) and \(4, 2\) are not aligned"),
     Failure([uniform((2, 3)), uniform((3, 2)).astype(np.float32)], {}, TypeError,
             r"^dot: inputs must have one dtype"),
     Failure([uniform((3,)), uniform((3,))], {"transpose_a": True}, ValueError,
             r"^dot: cannot transpose 1-D inputs"))
_add(ZERO_SIZE, "dot",
     ZeroSize([zeros(0, 3), uniform((3, 4))], {}, np.dot),
     ZeroSize([zeros(2, 0), zeros(0, 4)], {}, np.dot))

_add(SAMPLES, "batch_dot",
     Sample([uniform((2, 3, 4)), uniform((2, 4, 5), seed=1)]),
     Sample([uniform((2, 4, 3)), uniform((2, 5, 4), seed=1)],
            {"transpose_a": True, "transpose_b": True}),
     Sample([uniform((2, 3, 4)), uniform((2, 5, 4), seed=1)], {"transpose_b": True}),
     Sample([uniform((2, 2, 3, 4)), uniform((2, 2, 4, 5), seed=1)]))
_add(FAILURES, "batch_dot",
     Failure([uniform((2, 3, 4)), uniform((2, 3, 5))], {}, ValueError,
             r"^batch_dot: shapes \(2, 3, 4\) and \(2, 3, 5\) are not aligned"),
     Failure([uniform((2, 3, 4)), uniform((3, 4, 5))], {}, ValueError,
             r"^batch_dot: batch dimensions \(2,\) and \(3,\) differ"),
     Failure([uniform((3, 4)), uniform((4, 5))], {}, ValueError,
             r"^batch_dot: inputs must both be 3-D"))
_add(ZERO_SIZE, "batch_dot",
     ZeroSize([zeros(0, 3, 4), zeros(0, 4, 5)], {}, np.matmul),
     ZeroSize([zeros(2, 3, 0), zeros(2, 0, 5)], {}, np.matmul))

_add(SAMPLES, "matmul",
     Sample([uniform((2, 1, 3, 4)), uniform((3, 4, 2), seed=1)]),
     Sample([uniform((4,)), uniform((2, 4, 3), seed=1)]),
     Sample([uniform((2, 3, 4)), uniform((4,), seed=1)]),
     Sample([uniform((4,)), uniform((4,), seed=1)]))
_add(FAILURES, "matmul",
     Failure([uniform((2, 3)), uniform((4, 2))], {}, ValueError,
             r"^matmul: shapes \(2, 3\) and \(4, 2\) are not aligned"),
     Failure([uniform((2, 3, 4)), uniform((3, 4, 2))], {}, ValueError,
             r"^matmul: the batch dimensions of shapes"),
     Failure([uniform(()), uniform((2,))], {}, ValueError,
             r"^matmul: inputs must have at least 1 dimension"))
_add(ZERO_SIZE, "matmul",
     ZeroSize([zeros(0, 3, 4), uniform((4, 2))], {}, np.matmul),
     ZeroSize([zeros(2, 0), zeros(0, 3)], {}, np.matmul))

_add(SAMPLES, "FullyConnected",
     Sample([uniform((2, 3, 2)), uniform((4, 6), seed=1), uniform((4,), seed=2)],
            {"num_hidden": 4}),
     Sample([uniform((2, 3)), uniform((5, 3), seed=1)], {"num_hidden": 5, "no_bias": True}),
     Sample([uniform((2, 3, 2)), uniform((4, 2), seed=1), uniform((4,), seed=2)],
            {"num_hidden": 4, "flatten": False}))
_add(FAILURES, "FullyConnected",
     Failure([uniform((2, 6)), uniform((4, 5)), uniform((4,))], {"num_hidden": 4}, ValueError,
             r"^FullyConnected: weight must have shape \(4, 6\)"),
     Failure([uniform((2, 6)), uniform((4, 6)), uniform((3,))], {"num_hidden": 4}, ValueError,
             r"^FullyConnected: bias must have shape \(4,\) \(got \(3,\)\)"),
     Failure([uniform((2, 6)), uniform((4, 6)), uniform((4,))],
             {"num_hidden": 4, "no_bias": True}, TypeError,
             r"^FullyConnected: takes 2 array inputs \(data, weight\) with no_bias=True"),
     Failure([uniform((2, 6)), uniform((0, 6)), uniform((0,))], {"num_hidden": 0}, ValueError,
             r"^FullyConnected: num_hidden must be >= 1 \(got 0\)"))
_add(ZERO_SIZE, "FullyConnected",
     ZeroSize([zeros(0, 6), uniform((4, 6)), uniform((4,))], {"num_hidden": 4},
              lambda x, w, b: x @ w.T + b),
     ZeroSize([zeros(3, 0), zeros(4, 0), uniform((4,))], {"num_hidden": 4},
              lambda x, w, b: x @ w.T + b))


# -- neural network ------------------------------------------------------------------------------

def _np_softmax(x, axis=-1, t=1.0):
    e = np.exp((x - x.max(axis=axis, keepdims=True)) / t) if x.size else x
    return e / e.sum(axis=axis, keepdims=True) if x.size else x


for _name in ("softmax", "log_softmax"):
    _add(SAMPLES, _name,
         Sample([uniform((2, 5))]),
         Sample([uniform((3, 2, 4))], {"axis": 0, "temperature": 2.0}),
         Sample([uniform((4,), dtype=np.float32)], {"axis": 0}, grad=False))
    _add(FAILURES, _name,
         Failure([uniform((2, 5))], {"axis": 2}, ValueError,
                 rf"^{_name}: axis 2 is out of range"),
         Failure([uniform((2, 5))], {"temperature": 0.0}, ValueError,
                 rf"^{_name}: temperature must be a finite non-zero number"),
         Failure([uniform((2, 5))], {"temperature": "hot"}, TypeError,
                 rf"^{_name}: temperature must be a number or None"),
         Failure([ints(1, 2)], {}, TypeError,
                 rf"^{_name}: needs a floating-point input \(got int64\)"))
    _add(ZERO_SIZE, _name, ZeroSize([zeros(0, 5)], {}, _np_softmax),
         ZeroSize([zeros(3, 0)], {}, _np_softmax))

_add(SAMPLES, "softmax_cross_entropy",
     Sample([uniform((3, 4)), ints(0, 3, 1)]),
     Sample([uniform((2, 3), dtype=np.float32), np.array([2.0, 0.0], np.float32)], grad=False))
_add(FAILURES, "softmax_cross_entropy",
     Failure([uniform((3, 4)), ints(0, 1)], {}, ValueError,
             r"^softmax_cross_entropy: label must have shape \(3,\)"),
     Failure([uniform((3,)), ints(0, 1, 2)], {}, ValueError,
             r"^softmax_cross_entropy: data must be 2-D"),
     # raised by the kernel, after out= is chosen
     Failure([uniform((3, 4)), ints(0, 4, 1)], {}, ValueError,
             r"^softmax_cross_entropy: label must hold integers in \[0, 4\) \(got 4 at "
             r"position 1\)", out=((1,), np.float64)))
_add(ZERO_SIZE, "softmax_cross_entropy", ZeroSize([zeros(0, 4), np.zeros(0, I64)], {},
                                                  lambda d, l: np.zeros(1)))

_add(SAMPLES, "_label_one_hot",
     Sample([uniform((3, 4)), ints(0, 3, 1)], grad=False),
     Sample([uniform((2, 3), dtype=np.float32), np.array([2.0, 0.0])], grad=False))
_add(FAILURES, "_label_one_hot",
     Failure([uniform((3, 4)), ints(0, 1)], {}, ValueError,
             r"^_label_one_hot: label must have shape \(3,\)"),
     Failure([uniform((3, 4)), np.array([0.0, 0.5, 1.0])], {}, ValueError,
             r"^_label_one_hot: label must hold integers in \[0, 4\) \(got 0.5 at "
             r"position 1\)", out=((3, 4), np.float64)))
_add(ZERO_SIZE, "_label_one_hot", ZeroSize([zeros(0, 4), np.zeros(0, I64)], {},
                                           lambda d, l: np.zeros((0, 4))))

_add(SAMPLES, "Dropout",
     Sample([uniform((2, 3))]),                                 # not training: identity
     Sample([uniform((2, 3), dtype=np.float32)], {"p": 0.0, "mode": "always"}, grad=False),
     Sample([uniform((2, 3, 4))], {"p": 0.3, "axes": (1,)}),
     # active: random (test_requests replays the generator's state for each call)
     Sample([uniform((4, 5), dtype=np.float32)], {"p": 0.5, "mode": "always"}, grad=False),
     Sample([uniform((2, 3, 4))], {"p": 0.4, "mode": "always", "axes": (0, 2)}, grad=False))
_add(FAILURES, "Dropout",
     Failure([uniform((2, 3))], {"p": 1.0}, ValueError, r"^Dropout: p must be in \[0, 1\)"),
     Failure([uniform((2, 3))], {"axes": (2,)}, ValueError, r"^Dropout: axes 2 is out of range"),
     Failure([uniform((2, 3))], {"mode": "sometimes"}, ValueError,
             r"^Dropout: mode must be one of 'training', 'always'"))
_add(ZERO_SIZE, "Dropout", ZeroSize([zeros(0, 3)], {"mode": "always"}, lambda x: x))

_EMB = {"input_dim": 5, "output_dim": 3}
_add(SAMPLES, "Embedding",
     Sample([np.array([[0, 2], [1, 4]], I64), uniform((5, 3))], {**_EMB, "dtype": "float64"}),
     Sample([np.array([3.0, 3.0, 0.0], np.float32), uniform((5, 3), dtype=np.float32)], _EMB,
            grad=False))
_add(FAILURES, "Embedding",
     Failure([ints(0, 1), uniform((5, 2))], {**_EMB, "dtype": "float64"}, ValueError,
             r"^Embedding: weight must have shape \(5, 3\)"),
     Failure([ints(0, 1), uniform((5, 3))], {**_EMB, "dtype": "float32"}, TypeError,
             r"^Embedding: weight has dtype float64 but dtype is float32"))
_add(ZERO_SIZE, "Embedding", ZeroSize([np.zeros((0, 2), I64), uniform((5, 3))],
                                      {**_EMB, "dtype": "float64"},
                                      lambda d, w: np.zeros((0, 2, 3))))

for _name in ("_embedding_grad", "_embedding_grad_rsp"):
    _add(SAMPLES, _name,
         Sample([ints(0, 2, 2), uniform((3, 3))], _EMB, wrt=[1]),
         Sample([np.array([[4.0], [1.0]], np.float32), uniform((2, 1, 3), dtype=np.float32)],
                _EMB, grad=False))
    _add(FAILURES, _name,
         Failure([ints(0, 2), uniform((3, 3))], _EMB, ValueError,
                 rf"^{_name}: grad must have shape \(2, 3\) for data of shape \(2,\)"),
         Failure([ints(0, 2), uniform((2, 3))], {**_EMB, "input_dim": 0}, ValueError,
                 rf"^{_name}: input_dim must be >= 1 \(got 0\)"))
    _add(ZERO_SIZE, _name, ZeroSize([np.zeros(0, I64), zeros(0, 3)], _EMB,
                                    lambda d, g: np.zeros((5, 3))))


# -- sparse storage ------------------------------------------------------------------------------
# Sparse-only operators (runtime.ops.sparse), and sparse-storage samples of dense operators
# that have sparse kernels (or go through the invoker's storage fallback).

_S = _sparse_input((4, 3), 11)
_T = _sparse_input((4, 3), 12)
_R3 = _sparse_input((4, 3), 13)
_add(SAMPLES, "cast_storage",
     Sample([uniform((3, 4))], {"stype": "default"}),
     Sample([_S], {"stype": "csr"}),
     Sample([uniform((2, 3, 2))], {"stype": "row_sparse"}),
     Sample([_csr(_S)], {"stype": "default"}),
     Sample([_rsp(_S)], {"stype": "default"}),
     Sample([_rsp(_S)], {"stype": "row_sparse"}),
     Sample([_S.astype(np.float32)], {"stype": "row_sparse"}, grad=False))
_add(FAILURES, "cast_storage",
     Failure([uniform((2, 3, 2))], {"stype": "csr"}, ValueError,
             r"^cast_storage: csr needs a 2-D array \(got shape \(2, 3, 2\)\)"),
     Failure([uniform(())], {"stype": "row_sparse"}, ValueError,
             r"^cast_storage: row_sparse needs at least 1 dimension"),
     Failure([_csr(_S)], {"stype": "row_sparse"}, ValueError,
             r"^cast_storage: cannot convert csr to row_sparse directly",
             out=((4, 3), np.float64, "row_sparse")),
     Failure([uniform((2, 3))], {"stype": "coo"}, ValueError,
             r"^cast_storage: stype must be one of 'default', 'row_sparse', 'csr'"))
_add(ZERO_SIZE, "cast_storage",
     ZeroSize([zeros(0, 3)], {"stype": "csr"}, lambda x: x),
     ZeroSize([zeros(0, 3)], {"stype": "row_sparse"}, lambda x: x),
     ZeroSize([_csr(zeros(2, 0))], {"stype": "default"}, lambda x: np.zeros((2, 0))))

_add(SAMPLES, "_sparse_retain",
     Sample([_rsp(_S), ints(3, 1)]),
     Sample([_rsp(_S), ints(2, 0, 2, 9, -1)], wrt=[0]),       # unsorted, repeated, outside
     Sample([_rsp(_S.astype(np.float32)), np.array([1.9, 0.0])], grad=False),
     Sample([_rsp(np.arange(24.0).reshape(4, 3, 2)), ints(0, 3)]))
_add(FAILURES, "_sparse_retain",
     Failure([_S, ints(0)], {}, TypeError,
             r"^_sparse_retain: data must be a row_sparse NDArray \(got default\)"),
     Failure([_rsp(_S), np.array([True])], {}, TypeError,
             r"^_sparse_retain: indices must be integers or floats \(got bool\)",
             out=((4, 3), np.float64, "row_sparse")),
     Failure([_rsp(_S), _csr(np.eye(2))], {}, TypeError,
             r"^_sparse_retain: indices must be a dense NDArray \(got csr\)",
             out=((4, 3), np.float64, "row_sparse")))
_add(ZERO_SIZE, "_sparse_retain",
     ZeroSize([_rsp(zeros(0, 3)), np.zeros(0, I64)], {}, lambda x, i: np.zeros((0, 3))),
     ZeroSize([_rsp(_S), np.zeros(0, I64)], {}, lambda x, i: np.zeros((4, 3))))

_add(SAMPLES, "_square_sum",
     Sample([uniform((3, 4))], {"axis": 1}),
     Sample([_rsp(_S)], {"axis": 0}),
     Sample([_rsp(_S)], {"axis": 1}),
     Sample([_rsp(_S)], {"axis": 1, "keepdims": True}),
     Sample([_rsp(_S)]),                                          # all axes: dense fallback
     Sample([_rsp(np.arange(24.0).reshape(4, 3, 2) / 10)], {"axis": -1}))
_add(FAILURES, "_square_sum",
     Failure([_rsp(_S)], {"axis": 2}, ValueError,
             r"^_square_sum: axis 2 is out of range for an array of 2 dimension\(s\)"),
     Failure([uniform((2, 3))], {"axis": (0, 0)}, ValueError,
             r"^_square_sum: axis \(0, 0\) repeats an axis"))
_add(ZERO_SIZE, "_square_sum",
     ZeroSize([zeros(0, 3)], {"axis": 0}, lambda x: np.sum(x * x, axis=0)),
     ZeroSize([_rsp(zeros(0, 3))], {"axis": 1}, lambda x: np.sum(x * x, axis=1)),
     ZeroSize([_rsp(zeros(4, 3))], {"axis": 0}, lambda x: np.sum(x * x, axis=0)))

for _name in ("add", "subtract", "multiply"):
    _add(SAMPLES, _name,
         Sample([_csr(_S), _csr(_T)]),
         Sample([_rsp(_S), _rsp(_T)]),
         Sample([_rsp(_S.astype(np.float32)), _rsp(_T.astype(np.float32))], grad=False),
         Sample([_csr(_S), _rsp(_T)], grad=False),                # fallback: mixed stypes
         Sample([_csr(_S), uniform((1, 3))], grad=False))          # fallback: broadcasting
_add(SAMPLES, "multiply",
     Sample([_rsp(_S), uniform((4, 3))]),
     Sample([uniform((4, 3)), _rsp(_T)]))
_add(ZERO_SIZE, "add", ZeroSize([_rsp(zeros(0, 3)), _rsp(zeros(0, 3))], {}, np.add),
     ZeroSize([_csr(zeros(2, 0)), _csr(zeros(2, 0))], {}, np.add))
_add(FAILURES, "add",
     Failure([_csr(_S), _csr(np.eye(3))], {}, ValueError,
             r"^add: shapes \(4, 3\), \(3, 3\) are not broadcastable",
             out=((4, 3), np.float64, "csr")))

for _name in ("sum", "mean"):
    _add(SAMPLES, _name,
         Sample([_csr(_S)], {"axis": 0}),
         Sample([_csr(_S)], {"axis": 1, "keepdims": True}),
         Sample([_csr(_S.astype(np.float32))], {"axis": 0, "exclude": True}, grad=False),
         Sample([_rsp(_S)], {"axis": 1}))                             # fallback
    _add(ZERO_SIZE, _name, ZeroSize([_csr(zeros(0, 3))], {"axis": 0},
                                    lambda x, f=_NP_REDUCE[_name]: f(x, axis=0)))

_add(SAMPLES, "add_n",
     Sample([_rsp(_S), _rsp(_T), _rsp(_R3)]),
     Sample([_rsp(_S.astype(np.float32)), _rsp(_T.astype(np.float32))], grad=False),
     Sample([_rsp(_S), _T], grad=False))                              # fallback
_add(FAILURES, "add_n",
     Failure([_rsp(_S), _rsp(zeros(3, 3))], {}, ValueError,
             r"^add_n: all inputs must have one shape",
             out=((4, 3), np.float64, "row_sparse")))

_add(SAMPLES, "dot",
     Sample([_csr(_S), uniform((3, 2))]),                             # -> default
     Sample([_csr(_S), uniform((4, 2))], {"transpose_a": True}),      # -> row_sparse
     Sample([_csr(_S), _rsp(_sparse_input((3, 2), 14))]),             # -> default
     Sample([_csr(_S), _rsp(_R3)], {"transpose_a": True}),            # -> row_sparse
     Sample([uniform((2, 4)), _csr(_S)]),                             # -> csr
     Sample([uniform((2, 3)), _csr(_S)], {"transpose_b": True}),      # -> default
     Sample([_csr(_S.astype(np.float32)), uniform((3, 2), dtype=np.float32)], grad=False))
_add(FAILURES, "dot",
     Failure([_csr(_S), uniform((4, 2))], {}, ValueError,
             r"^dot: shapes \(4, 3\) and \(4, 2\) are not aligned"),
     Failure([uniform((2, 2, 4)), _csr(_S)], {}, ValueError,
             r"^dot: dot\(default, csr\) gives a csr array and needs a 2-D lhs",
             out=False))                    # no out= can exist: a 3-D csr array
_add(ZERO_SIZE, "dot",
     ZeroSize([_csr(zeros(0, 3)), uniform((3, 2))], {}, np.dot),
     ZeroSize([zeros(0, 4), _csr(_S)], {}, np.dot))

# the storage kernels of NDArray.astype and csr row slices
_add(SAMPLES, "cast",
     Sample([_csr(_S)], {"dtype": "float64"}),
     Sample([_rsp(_S)], {"dtype": "float32"}, grad=False))
_add(SAMPLES, "slice",
     Sample([_csr(_S)], {"begin": (1,), "end": (3,)}),
     Sample([_csr(_S)], {"begin": (-2,), "end": (None,), "step": (1,)}),
     Sample([_csr(_S)], {"begin": (0, 1), "end": (2, 3)}))            # fallback: columns
_add(ZERO_SIZE, "slice", ZeroSize([_csr(zeros(0, 3))], {"begin": (0,), "end": (2,)},
                                  lambda x: x[0:2]))

# the storage fallback of ops without a sparse kernel
_add(SAMPLES, "exp", Sample([_csr(_S)]))
_add(SAMPLES, "transpose", Sample([_rsp(_S)]))


# -- the areas kept in modules of their own ----------------------------------------------------
for _path in sorted(Path(__file__).parent.glob("op_samples_*.py")):
    importlib.import_module(f"{__package__}.{_path.stem}")
