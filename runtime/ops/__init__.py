"""The operator set.  Importing this package registers every operator (one module per
area) and hands the registry to the invoker, which connects NDArray's Python operators
(``x + y`` names the op "add") and the nd functions to the ops, their ufuncs and scalar
forms."""

from runtime import _executor, _imperative
from runtime.ops import (  # noqa: F401  (registration)
    elemwise, reduce, shape, dot, linalg, nn, sparse, index, sort, optimizer_op, loss, conv,
    norm, activation, sequence, output, contrib, vision, ctc, bounding_box, correlation)
from runtime.ops.registry import OPS, Attr, Op, get, register

_imperative.connect(OPS)
# the backward executor accumulates gradients with "add" through the invoker, and hands
# the out-grad on itself for the ops whose rule does only that (where shapes agree)
_executor.set_ops(OPS["add"], _imperative.invoke_parsed,
                  passthrough=[OPS[n] for n in ("add", "_plus_scalar", "_minus_scalar",
                                                "copy", "add_n")])

__all__ = ["OPS", "Op", "Attr", "get", "register"]
