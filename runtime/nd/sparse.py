"""Sparse arrays (MXNet's ``mx.nd.sparse``): CSR and row-sparse storage with int64 indices.

The constructors, layouts and format checks live in the storage layer
(``runtime._storage``, which documents the layouts); this module is their public face,
with the operators that act on sparse arrays: ``cast_storage``, ``retain``, ``dot``, and
as in MXNet's ``mx.nd.sparse`` the registry operators that have sparse kernels:
``add``/``subtract``/``multiply``/``divide`` (a number on either side; broadcasting),
``elemwise_add``/``_sub``/``_mul``/``_div`` (equal shapes only, as MXNet), ``add_n``
(``ElementWiseSum``), the zero-preserving unary operators (``abs``, ``sign``, ``sqrt``,
``square``, ``relu``, ``sin``, ``tanh`` ...: csr and row_sparse in, the same storage
type out), ``sum``, ``mean``, ``norm``, ``where``, ``zeros_like`` and ``Embedding``.
The storage type of each result is the operator's (runtime.ops.sparse lists them); a
combination without a sparse kernel computes densely and says so with a
``StorageFallbackWarning``.  MXNet's optimizer updates with row_sparse kernels are here too
(``sgd_update``, ``sgd_mom_update``, ``adam_update``, ``adagrad_update``, ``ftrl_update``:
row_sparse weights, gradients and states, runtime.ops.optimizer_op says how).
"""

from runtime._imperative import invoke
from runtime._ndarray import CSRNDArray, NDArray, RowSparseNDArray, from_numpy
from runtime._storage import (array, check_format, csr_matrix, index_array, row_sparse_array,
                              zeros)
from runtime.nd._ops import make_function
from runtime.ops import registry
from runtime.ops.elemwise import ZERO_PRESERVING

# registry operators offered here under their MXNet names (aliases included)
_OPERATORS = ("add", "subtract", "multiply", "divide", "add_n", "ElementWiseSum", "sum",
              "mean", "norm", "where", "zeros_like", "Embedding",
              # the rest of MXNet 1.x's mx.nd.sparse (its _sparse_* aliases)
              "slice", "clip", "concat", "broadcast_add", "broadcast_sub", "broadcast_plus",
              "broadcast_minus", "broadcast_mul", "broadcast_div", "square_sum", "sigmoid",
              "stop_gradient", "make_loss", "cos", "cosh", "arccos", "arccosh", "exp",
              "log", "log2", "log10", "rsqrt", "gamma", "gammaln", "FullyConnected",
              "LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput",
              "sgd_update", "sgd_mom_update", "adam_update", "ftrl_update",
              *sorted(ZERO_PRESERVING))

__all__ = ["CSRNDArray", "RowSparseNDArray", "csr_matrix", "row_sparse_array", "zeros",
           "empty", "array", "cast_storage", "check_format", "retain", "dot",
           "elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div", "adagrad_update",
           *_OPERATORS]

for _name in _OPERATORS:
    globals()[_name] = make_function(registry.get(_name))

# MXNet's nd.sparse.adagrad_update(weight, grad, history, lr, epsilon=1e-07, wd=0,
# rescale_grad=1, clip_gradient=-1, out=None): the adagrad_update operator
adagrad_update = make_function(registry.get("adagrad_update"))


def empty(stype, shape, ctx=None, dtype=None):
    """An empty sparse array (as MXNet: the same as :func:`zeros`)."""
    return zeros(stype, shape, ctx=ctx, dtype=dtype)


def cast_storage(x, stype):
    """``x`` in storage type ``stype`` (a new array): the ``cast_storage`` operator.
    csr <-> row_sparse is refused, as in MXNet: go through 'default'."""
    return invoke(registry.get("cast_storage"), [x], {"stype": stype})


def retain(data, indices):
    """The rows of row_sparse ``data`` listed in ``indices`` (MXNet's ``sparse.retain``):
    the ``_sparse_retain`` operator, so it records and has a gradient."""
    if not isinstance(data, RowSparseNDArray):
        raise TypeError(f"retain: data must be a row_sparse NDArray (got "
                        f"{getattr(data, 'stype', type(data).__name__)})")
    if not isinstance(indices, NDArray):
        indices = from_numpy(index_array(indices, "indices", "retain"), data.ctx)
    return invoke(registry.get("_sparse_retain"), [data, indices])


def dot(lhs, rhs, transpose_a=False, transpose_b=False, out=None):
    """``nd.dot`` with MXNet's storage rules: dot(csr, dense) -> dense,
    dot(csr.T, dense) -> row_sparse, dot(csr, row_sparse) -> dense,
    dot(dense, csr.T) -> dense."""
    return invoke(registry.get("dot"), [lhs, rhs],
                  {"transpose_a": transpose_a, "transpose_b": transpose_b}, out)


def _elemwise(name, op):
    fn = make_function(registry.get(op))

    def call(lhs, rhs, out=None):
        for arg, v in (("lhs", lhs), ("rhs", rhs)):
            if not isinstance(v, NDArray):
                raise TypeError(f"{name}: {arg} must be an NDArray (got {type(v).__name__})")
        if lhs.shape != rhs.shape:
            raise ValueError(f"{name}: lhs and rhs must have one shape (got {lhs.shape!r} "
                             f"and {rhs.shape!r}); use {op} to broadcast")
        return fn(lhs, rhs, out=out)
    call.__name__ = name
    call.__doc__ = (f"``{op}`` of two arrays of one shape (MXNet's {name}: no "
                    f"broadcasting), keeping the storage type where ``{op}`` has a sparse "
                    "kernel.")
    return call


elemwise_add = _elemwise("elemwise_add", "add")
elemwise_sub = _elemwise("elemwise_sub", "subtract")
elemwise_mul = _elemwise("elemwise_mul", "multiply")
elemwise_div = _elemwise("elemwise_div", "divide")
