"""Sparse arrays (MXNet's ``mx.nd.sparse``): CSR and row-sparse storage with int64 indices.

The constructors, layouts and format checks live in the storage layer
(``runtime._storage``, which documents the layouts); this module is their public face,
with the operators that act on sparse arrays: ``cast_storage``, ``retain``, ``dot``, and
MXNet's sparse optimizer update ``adagrad_update``.
"""

from runtime._imperative import invoke
from runtime._ndarray import CSRNDArray, NDArray, RowSparseNDArray, from_numpy
from runtime._storage import (array, check_format, csr_matrix, index_array, row_sparse_array,
                              zeros)
from runtime.nd._ops import make_function
from runtime.ops import registry

__all__ = ["CSRNDArray", "RowSparseNDArray", "csr_matrix", "row_sparse_array", "zeros",
           "empty", "array", "cast_storage", "check_format", "retain", "dot", "adagrad_update"]

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
