"""Functions of ``runtime.nd`` generated from the operator registry (MXNet's ``mx.nd.<op>``).

``nd.<op>(*arrays, out=None, **attrs)``; array inputs may also be passed by their names
(``nd.FullyConnected(data=x, weight=w, num_hidden=4)``).  Binary arithmetic accepts a
Python scalar on either side (``nd.add(x, 2)``), as MXNet's ``nd.add`` does.
"""

from runtime._imperative import OpFunction
from runtime.ops import registry


def make_function(op):
    """The ``nd`` function of ``op`` (see runtime._imperative.OpFunction)."""
    attrs = ", ".join(f"{k}={a.default!r}" for k, a in op.attrs.items())
    doc = (f"{op.name}({', '.join(op.inputs)}{', ' + attrs if attrs else ''}, out=None)"
           f"\n\n{op.doc or 'Registry operator ' + repr(op.name) + '.'}")
    return OpFunction(op, doc)


def install(namespace):
    """Add a function for every registered name (and alias) not already in ``namespace``."""
    for name, op in registry.OPS.items():
        if name not in namespace:
            namespace[name] = make_function(op)


_METHODS = {}


def method(name):
    """The nd function of operator ``name`` behind ``NDArray`` methods (None when there is
    no such operator; hidden ones are for NDArray's own use, never attributes)."""
    fn = _METHODS.get(name)
    if fn is None and name in registry.OPS:
        fn = _METHODS[name] = make_function(registry.OPS[name])
    return fn
