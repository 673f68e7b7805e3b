"""The operator set.  Importing this package registers every operator (one module per
area) and connects the NDArray Python operators to them."""

from runtime import _imperative
from runtime.ops import elemwise, reduce, shape, linalg, nn, sparse  # noqa: F401  (registration)
from runtime.ops.registry import OPS, Attr, Op, get, register

# Python operator codes -> registry ops (codes are fixed in runtime._ndarray).
_BINARY = {0: "add", 1: "subtract", 2: "multiply", 3: "divide", 4: "mod", 5: "power",
           6: "equal", 7: "not_equal", 8: "lesser", 9: "lesser_equal", 10: "greater",
           11: "greater_equal", 12: "dot"}
_SCALAR = {0: "_plus_scalar", 1: "_minus_scalar", 2: "_mul_scalar", 3: "_div_scalar",
           4: "_mod_scalar", 5: "_power_scalar", 6: "_equal_scalar", 7: "_not_equal_scalar",
           8: "_lesser_scalar", 9: "_lesser_equal_scalar", 10: "_greater_scalar",
           11: "_greater_equal_scalar"}
# scalar <op> array: the reversed forms (comparisons flip their direction).
_RSCALAR = {0: "_plus_scalar", 1: "_rminus_scalar", 2: "_mul_scalar", 3: "_rdiv_scalar",
            4: "_rmod_scalar", 5: "_rpower_scalar", 6: "_equal_scalar",
            7: "_not_equal_scalar", 8: "_greater_scalar", 9: "_greater_equal_scalar",
            10: "_lesser_scalar", 11: "_lesser_equal_scalar"}
_UNARY = {0: "negative", 1: "abs", 2: "exp", 3: "log", 4: "sqrt", 5: "tanh", 6: "square",
          7: "sin", 8: "cos"}


def _connect():
    pick = lambda table: {c: OPS[n] for c, n in table.items() if n in OPS}
    _imperative._register_codes(pick(_BINARY), pick(_SCALAR), pick(_RSCALAR), pick(_UNARY))


_connect()

__all__ = ["OPS", "Op", "Attr", "get", "register"]
