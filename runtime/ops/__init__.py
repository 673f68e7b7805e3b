"""The operator set.  Importing this package registers every operator (one module per
area) and hands the registry to the invoker, which connects NDArray's Python operators
(``x + y`` names the op "add") and the nd functions to the ops, their ufuncs and scalar
forms."""

from runtime import _executor, _imperative
from runtime.ops import (elemwise, reduce, shape, linalg, nn, sparse,  # noqa: F401  (registration)
                         optim)
from runtime.ops import loss  # noqa: F401  (registration: nn.loss's fused losses)
from runtime.ops.registry import OPS, Attr, Op, get, register

_imperative.connect(OPS)
# the backward executor accumulates gradients with "add" through the invoker
_executor.set_ops(OPS["add"], _imperative.invoke_parsed)

__all__ = ["OPS", "Op", "Attr", "get", "register"]
