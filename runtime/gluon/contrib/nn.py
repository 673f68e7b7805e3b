"""``gluon.contrib.nn``: containers that run every child on the same input and join
their outputs (:class:`Concurrent`, :class:`HybridConcurrent`), :class:`Identity` (the
class of ``gluon.nn``), and
:class:`SparseEmbedding` (an embedding whose weight and gradient are row_sparse)."""

import numpy as np

from runtime import nd
from runtime.gluon.block import Block
from runtime.gluon.nn import Concatenate, HybridConcatenate, Identity
from runtime.gluon.nn.basic_layers import _positive_int

__all__ = ["Concurrent", "HybridConcurrent", "Identity", "SparseEmbedding"]


class Concurrent(Concatenate):
    """Runs each child on the input and concatenates their outputs along ``axis``
    (Inception's branches, DenseNet's ``[x, f(x)]``): Gluon 1.x's name of
    :class:`~runtime.gluon.nn.Concatenate`."""


class HybridConcurrent(HybridConcatenate):
    """The hybrid :class:`Concurrent` (children must be HybridBlocks): Gluon 1.x's name
    of :class:`~runtime.gluon.nn.HybridConcatenate`."""


class SparseEmbedding(Block):
    """Maps indices to rows of an (input_dim, output_dim) weight that is row_sparse, as
    is its gradient (Gluon's ``contrib.nn.SparseEmbedding``): a forward reads only the
    rows looked up (``Parameter.row_sparse_data``), backward writes only those rows of
    the gradient, and an optimizer with ``lazy_update`` changes only them (for vocabularies
    too large for a dense update per step).  Not hybridizable, as in Gluon."""

    def __init__(self, input_dim, output_dim, dtype="float32", weight_initializer=None,
                 **kwargs):
        super().__init__(**kwargs)
        self._input_dim = _positive_int("SparseEmbedding", "input_dim", input_dim)
        self._output_dim = _positive_int("SparseEmbedding", "output_dim", output_dim)
        self._dtype = nd.as_dtype(dtype)
        self.weight = self.params.get(
            "weight", shape=(self._input_dim, self._output_dim), dtype=dtype,
            init=weight_initializer, grad_stype="row_sparse", stype="row_sparse")

    def forward(self, x):
        weight = self.weight.row_sparse_data(x)
        return nd.Embedding(x, weight, input_dim=self._input_dim,
                            output_dim=self._output_dim, dtype=self._dtype,
                            sparse_grad=True)

    def __repr__(self):
        return (f"SparseEmbedding({self._input_dim} -> {self._output_dim}, "
                f"{np.dtype(self._dtype)})")
