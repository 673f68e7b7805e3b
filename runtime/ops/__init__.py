"""The operator set.  Importing this package registers every operator (one module per
area) and hands the registry to the invoker, which connects NDArray's Python operators
(``x + y`` names the op "add") and the nd functions to the ops, their ufuncs and scalar
forms."""

from runtime import _executor, _imperative
from runtime.ops import (  # noqa: F401  (registration)
    elemwise, reduce, shape, linalg, linalg_la, nn, sparse, sparse_extra, index, sort,
    optim, loss, conv, norm, activation, output, backward, conform, contrib, vision, ctc)
from runtime.ops.registry import OPS, Attr, Op, get, register

_imperative.connect(OPS)
# the backward executor accumulates sparse gradients with "add" and reads a reduction's
# axes as the reductions do
_executor.set_ops(OPS["add"], reduce.reduced_axes)

__all__ = ["OPS", "Op", "Attr", "get", "register"]
