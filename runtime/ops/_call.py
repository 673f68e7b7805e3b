"""``F.<op>(*arrays, out=None, **attrs)``: call registry operators by name.

Gradient rules use it, so that what they compute is itself made of registry ops (and
recorded when higher-order gradients are asked for).  Beside it, the helpers that take
a shape or an ``ArrayDesc`` where the ``*_like`` operators would need an array, so that a
rule needing only an input's shape does not declare (and the tape does not keep) it:
``zeros(desc)``, ``broadcast(g, shape)`` and ``unbroadcast(g, shape)``.
"""

from runtime._imperative import invoke_parsed
from runtime._ndarray import zeros as _zeros
from runtime.ops import registry

_PLAIN = (bool, int, str, type(None))


def _attrs_key(attrs):
    """Keyword attributes as a key that tells their types apart (True from 1), or None
    when a value is not a plain one (a bool, an int, a string, None, a tuple of ints;
    floats are left out: 0.0 and -0.0 are one key)."""
    key = []
    for k, v in attrs.items():
        t = type(v)
        if t is tuple:
            if not all(type(a) is int for a in v):
                return None
        elif t not in _PLAIN:
            return None
        key.append((k, t, v))
    return tuple(key)


class _Functions:
    def __getattr__(self, name):
        op = registry.get(name)
        parsed = {}     # _attrs_key of the attributes given -> op.parse_attrs's result

        def call(*arrays, out=None, req=None, **attrs):
            # gradient rules call the same ops with the same few attributes again and
            # again: parse each form once (the invoker's nd functions do the same)
            key = _attrs_key(attrs) if attrs else ()
            p = None if key is None else parsed.get(key)
            if p is None:
                p = op.parse_attrs(attrs)
                if key is not None and len(parsed) < 64:
                    parsed[key] = p
            return invoke_parsed(op, list(arrays), p, out, req)

        call.__name__ = name
        setattr(self, name, call)
        return call


F = _Functions()


def unbroadcast(g, shape):
    """Sum ``g`` over the axes that broadcasting added or stretched, back to ``shape``."""
    shape = tuple(shape)
    if g.shape == shape:
        return g
    if 0 in shape:   # nothing to sum into; (reshape would read 0 as "keep", as MXNet)
        return _zeros(shape, ctx=g.ctx, dtype=g.dtype)
    lead = len(g.shape) - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(shape) if s == 1 and g.shape[lead + i] != 1)
    if axes:
        g = F.sum(g, axis=axes, keepdims=True)
    return g.reshape(shape) if g.shape != shape else g


def zeros(like, shape=None):
    """Zeros with the dtype, storage type and context of ``like`` (an ``ArrayDesc`` or an
    NDArray) and its shape, or ``shape``: ``F.zeros_like`` without an array to read.  A
    constant: no gradient flows through it."""
    return _zeros(like.shape if shape is None else shape, ctx=like.ctx, dtype=like.dtype,
                  stype=like.stype)


def broadcast(g, shape):
    """``g``, whose axes are those of ``shape`` or 1, broadcast to ``shape``: the gradient
    of a reduction (the converse of :func:`unbroadcast`)."""
    shape = tuple(shape)
    if g.shape == shape:
        return g
    if 0 in shape:   # nothing to broadcast into; (broadcast_to would read 0 as "keep")
        return zeros(g, shape)
    return F.broadcast_to(g, shape=shape)
