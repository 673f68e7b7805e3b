"""The operator set.  Importing this package registers every operator (one module per
domain); ``runtime._wiring`` then hands the registry (``OPS``) to the invoker, which
connects NDArray's Python operators (``x + y`` names the op "add") and the nd functions
to the ops, their ufuncs and scalar forms."""

from runtime.ops import (  # noqa: F401  (registration)
    elemwise, reduce, shape, dot, linalg, nn, sparse, index, sort, optimizer_op, loss, conv,
    norm, activation, sequence, output, contrib, vision, ctc, bounding_box, correlation, rnn,
    amp, image)
from runtime.ops.registry import OPS, Attr, Op, get, register

__all__ = ["OPS", "Op", "Attr", "get", "register"]
