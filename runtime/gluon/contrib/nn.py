"""``gluon.contrib.nn``: containers that run every child on the same input and join
their outputs (:class:`Concurrent`, :class:`HybridConcurrent`), and :class:`Identity`."""

from runtime import nd
from runtime.gluon.block import Block
from runtime.gluon.nn import Sequential

__all__ = ["Concurrent", "HybridConcurrent", "Identity"]


class Concurrent(Sequential):
    """Runs each child on the input and concatenates their outputs along ``axis``
    (Inception's branches, DenseNet's ``[x, f(x)]``)."""

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def forward(self, x):
        return nd.concat(*[block(x) for block in self._children.values()], dim=self.axis)


class HybridConcurrent(Concurrent):
    """:class:`Concurrent` under Gluon's hybrid name (ndrt runs it imperatively)."""


class Identity(Block):
    """Returns its input."""

    def forward(self, x):
        return x
