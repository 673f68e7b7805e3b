"""``gluon.contrib.nn``: containers that run every child on the same input and join
their outputs (:class:`Concurrent`, :class:`HybridConcurrent`), :class:`Identity` (the
class of ``gluon.nn``), :class:`SparseEmbedding` (an embedding whose weight and gradient
are row_sparse), :class:`PixelShuffle1D`/``2D``/``3D`` (channels moved into space,
for sub-pixel upsampling) and :class:`SyncBatchNorm` (the class of ``gluon.nn``, at its
Gluon 1.x path)."""

import numpy as np

from runtime import nd
from runtime.gluon.block import Block, HybridBlock
from runtime.gluon.nn import Concatenate, HybridConcatenate, Identity, SyncBatchNorm
from runtime.gluon.nn.basic_layers import _positive_int

# SyncBatchNorm's home in Gluon 1.x is contrib.nn (Gluon 2 moved it to nn): the same class
__all__ = ["Concurrent", "HybridConcurrent", "Identity", "SparseEmbedding", "PixelShuffle1D",
           "PixelShuffle2D", "PixelShuffle3D", "SyncBatchNorm"]


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


class _PixelShuffle(HybridBlock):
    """Moves channels into the ``ndim`` spatial axes: an input of shape
    (N, C * f1 * ... * fd, S1, ..., Sd) becomes (N, C, S1 * f1, ..., Sd * fd), with
    ``out[n, c, s1 * f1 + i1, ...] = in[n, c * f1 * ... * fd + (i1 * f2 + i2) * ..., s1,
    ...]`` (Gluon's ``contrib.nn.PixelShuffle*D``, sub-pixel convolution's upsampling).
    Made of reshape and transpose only, so it hybridizes and differentiates."""

    _ndim = 0

    def __init__(self, factor, **kwargs):
        super().__init__(**kwargs)
        name = type(self).__name__
        if self._ndim == 1 and not isinstance(factor, (tuple, list)):
            factor = (factor,)
        elif isinstance(factor, (int, np.integer)) and not isinstance(factor, bool):
            factor = (factor,) * self._ndim
        if not isinstance(factor, (tuple, list)) or len(factor) != self._ndim:
            raise ValueError(f"{name}: factor must be an integer or {self._ndim} integers "
                             f"(got {factor!r})")
        self._factors = tuple(_positive_int(name, "factor", f) for f in factor)

    def hybrid_forward(self, F, x):
        d = self._ndim
        # (N, C*f1*..*fd, S..) -> (N, C, f1, .., fd, S1, .., Sd): split the channel axis
        # one factor at a time, 0 keeping the other axes
        rest = int(np.prod(self._factors))
        x = F.reshape(x, (0, -4, -1, rest) + (0,) * d)
        for k, f in enumerate(self._factors[:-1]):
            rest //= f
            x = F.reshape(x, (0,) * (2 + k) + (-4, f, rest) + (0,) * d)
        # -> (N, C, S1, f1, .., Sd, fd), then join each (Sk, fk) pair
        axes = [0, 1]
        for k in range(d):
            axes += [2 + d + k, 2 + k]
        x = F.transpose(x, axes=tuple(axes))
        return F.reshape(x, (0, 0) + (-3,) * d)

    def __repr__(self):
        return f"{type(self).__name__}({self._factors if self._ndim > 1 else self._factors[0]})"


class PixelShuffle1D(_PixelShuffle):
    """(N, C * f, W) to (N, C, W * f): ``factor`` is an int."""

    _ndim = 1


class PixelShuffle2D(_PixelShuffle):
    """(N, C * f1 * f2, H, W) to (N, C, H * f1, W * f2): ``factor`` is an int (both
    axes) or a pair."""

    _ndim = 2


class PixelShuffle3D(_PixelShuffle):
    """(N, C * f1 * f2 * f3, D, H, W) to (N, C, D * f1, H * f2, W * f3): ``factor`` is an
    int (every axis) or three."""

    _ndim = 3
