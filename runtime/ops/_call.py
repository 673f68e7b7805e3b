"""``F.<op>(*arrays, out=None, **attrs)``: call registry operators by name.

Gradient rules use it, so that what they compute is itself made of registry ops (and
recorded when higher-order gradients are asked for).
"""

from runtime._imperative import invoke
from runtime._ndarray import zeros
from runtime.ops import registry


class _Functions:
    def __getattr__(self, name):
        op = registry.get(name)

        def call(*arrays, out=None, req=None, **attrs):
            return invoke(op, list(arrays), attrs, out, req)

        call.__name__ = name
        setattr(self, name, call)
        return call


F = _Functions()


def unbroadcast(g, shape):
    """Undo broadcasting: sum ``g`` over the axes that broadcasting ``shape`` to
    ``g.shape`` added or stretched, back to ``shape`` (the one helper of every gradient
    rule of a broadcasting op)."""
    shape = tuple(shape)
    if g.shape == shape:
        return g
    if 0 in shape:   # nothing to sum into; (reshape would read 0 as "keep", as MXNet)
        return zeros(shape, ctx=g.ctx, dtype=g.dtype)
    lead = len(g.shape) - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(shape) if s == 1 and g.shape[lead + i] != 1)
    if axes:
        g = F.sum(g, axis=axes, keepdims=True)
    return g.reshape(shape) if g.shape != shape else g
