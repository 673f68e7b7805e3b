"""Functions of ``runtime.nd`` generated from the operator registry (MXNet's ``mx.nd.<op>``).

``nd.<op>(*arrays, *attrs, out=None, name=None, **attrs)``, as MXNet's generated functions:
positional arguments fill the array inputs, then the attributes in declaration order
(``nd.sum(x, 1)``, ``nd.clip(x, 0, 1)``, ``nd.FullyConnected(x, w, b, 4)``); array inputs
may also be passed by their names (``nd.FullyConnected(data=x, weight=w, num_hidden=4)``).  Binary arithmetic accepts a
Python scalar on either side (``nd.add(x, 2)``), as MXNet's ``nd.add`` does.
"""

from runtime._imperative import OpFunction
from runtime.ops import registry


def signature(op):
    """The positional signature of ``op``'s nd function, as MXNet's generated functions
    have it: the array inputs, then the attributes in declaration order (required ones
    without a default), then ``out`` and ``name``.  Ops taking any number of arrays show
    ``*data``; the optional last input of the others (FullyConnected's ``bias``) defaults
    to None."""
    if op.variadic and len(op.inputs) <= 1:
        params = [f"*{op.inputs[0] if op.inputs else 'args'}"]
    elif op.variadic:
        params = list(op.inputs[:-1]) + [f"{op.inputs[-1]}=None"]
    else:
        params = list(op.inputs)
    for k, a in op.attrs.items():
        params.append(f"{k}=<required>" if a.required else f"{k}={_show(a.default)}")
    return f"{op.name}({', '.join(params + ['out=None', 'name=None'])})"


def _show(value):
    return f"'{value}'" if hasattr(value, "itemsize") else repr(value)


def make_function(op):
    """The ``nd`` function of ``op`` (see runtime._imperative.OpFunction)."""
    doc = (f"{signature(op)}\n\n"
           f"{op.doc or 'Registry operator ' + repr(op.name) + '.'}\n\n"
           "Positional arguments after the array inputs fill the attributes in the order "
           "shown (MXNet's signature); ``name`` is accepted and ignored.")
    return OpFunction(op, doc)


def prefixed(prefix):
    """``f(name)`` -> the nd function of the registry operator ``prefix + name`` (the
    short names of ``nd.linalg`` and ``nd.contrib``)."""
    return lambda name: make_function(registry.get(prefix + name))


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
