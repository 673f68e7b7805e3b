"""Gluon's hybrid containers: ``HybridSequential`` (blocks one after the other, one cached
graph when hybridized), ``HybridConcatenate`` (branches on one input, joined) and
``HybridLambda`` (a function of ``F`` as a block)."""

from runtime import nd
from runtime.gluon.block import HybridBlock
from runtime.gluon.nn.basic_layers import Sequential, _concat_children, _int_axis


class HybridSequential(HybridBlock):
    """HybridBlocks applied one after the other (Gluon's ``nn.HybridSequential``);
    hybridized, the whole chain is one cached graph."""

    add = Sequential.add
    __getitem__ = Sequential.__getitem__
    __len__ = Sequential.__len__
    __iter__ = Sequential.__iter__

    def hybrid_forward(self, F, x, *args):
        return Sequential.forward(self, x, *args)


class HybridConcatenate(HybridSequential):
    """Runs every child on the same input and joins their outputs along ``axis``
    (default -1; Gluon 2's ``nn.HybridConcatenate``, Gluon 1.x's
    ``contrib.nn.HybridConcurrent``): the hybrid :class:`~runtime.gluon.nn.Concatenate`,
    whose children must be HybridBlocks."""

    _is_container = False

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = _int_axis("HybridConcatenate", axis)

    def hybrid_forward(self, F, x):
        return _concat_children(F, self, x)


class HybridLambda(HybridBlock):
    """A hybrid block that calls ``function(F, x, *args)`` (Gluon's ``nn.HybridLambda``);
    a str names an operator, called as ``F.<name>(x, *args)``."""

    def __init__(self, function, prefix=None):
        super().__init__(prefix=prefix)
        if isinstance(function, str):
            name = function
            if not hasattr(nd, name):
                raise ValueError(f"HybridLambda: function {name!r} is not an operator")
            function = lambda F, x, *args: getattr(F, name)(x, *args)  # noqa: E731
        if not callable(function):
            raise TypeError(f"HybridLambda: function must be callable or an operator name "
                            f"(got {function!r})")
        self._func = function

    def hybrid_forward(self, F, x, *args):
        return self._func(F, x, *args)


__all__ = ["HybridSequential", "HybridConcatenate", "HybridLambda"]
