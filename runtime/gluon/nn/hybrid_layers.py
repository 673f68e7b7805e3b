"""Gluon's hybrid containers: ``HybridSequential`` (blocks one after the other, one cached
graph when hybridized) and ``HybridLambda`` (a function of ``F`` as a block)."""

from runtime import nd
from runtime.gluon.block import HybridBlock
from runtime.gluon.nn.basic_layers import Sequential


class HybridSequential(HybridBlock):
    """HybridBlocks applied one after the other (Gluon's ``nn.HybridSequential``);
    hybridized, the whole chain is one cached graph."""

    add = Sequential.add
    __getitem__ = Sequential.__getitem__
    __len__ = Sequential.__len__
    __iter__ = Sequential.__iter__

    def hybrid_forward(self, F, x, *args):
        return Sequential.forward(self, x, *args)


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


__all__ = ["HybridSequential", "HybridLambda"]
