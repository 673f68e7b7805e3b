"""Functions of ``runtime.nd`` generated from the operator registry (MXNet's ``mx.nd.<op>``).

``nd.<op>(*arrays, out=None, **attrs)``; array inputs may also be passed by their names
(``nd.FullyConnected(data=x, weight=w, num_hidden=4)``).  Binary arithmetic accepts a
Python scalar on either side (``nd.add(x, 2)``), as MXNet's ``nd.add`` does.
"""

from runtime._imperative import OpFunction
from runtime.ops import registry

_SCALAR_FORMS = {"add": ("_plus_scalar", "_plus_scalar"),
                 "subtract": ("_minus_scalar", "_rminus_scalar"),
                 "multiply": ("_mul_scalar", "_mul_scalar"),
                 "divide": ("_div_scalar", "_rdiv_scalar"),
                 "mod": ("_mod_scalar", "_rmod_scalar"),
                 "power": ("_power_scalar", "_rpower_scalar"),
                 "maximum": ("_maximum_scalar", "_maximum_scalar"),
                 "minimum": ("_minimum_scalar", "_minimum_scalar"),
                 "hypot": ("_hypot_scalar", "_hypot_scalar"),
                 "equal": ("_equal_scalar", "_equal_scalar"),
                 "not_equal": ("_not_equal_scalar", "_not_equal_scalar"),
                 "greater": ("_greater_scalar", "_lesser_scalar"),
                 "greater_equal": ("_greater_equal_scalar", "_lesser_equal_scalar"),
                 "lesser": ("_lesser_scalar", "_greater_scalar"),
                 "lesser_equal": ("_lesser_equal_scalar", "_greater_equal_scalar")}


def make_function(op):
    """The ``nd`` function of ``op`` (see runtime._imperative.OpFunction)."""
    attrs = ", ".join(f"{k}={a.default!r}" for k, a in op.attrs.items())
    doc = (f"{op.name}({', '.join(op.inputs)}{', ' + attrs if attrs else ''}, out=None)"
           f"\n\n{op.doc or 'Registry operator ' + repr(op.name) + '.'}")
    scalar = _SCALAR_FORMS.get(op.name)
    scalar_ops = (registry.get(scalar[0]), registry.get(scalar[1])) if scalar else None
    reduce_code = _FAST_REDUCE.get(op.name, -1)
    return OpFunction(op, scalar_ops, unary_code=_FAST_UNARY.get(op.name, -1),
                      binary_code=_FAST_BINARY.get(op.name, -1), reduce_code=reduce_code,
                      reduce_mean=op.name == "mean", doc=doc)


# Codes of the direct ufunc loops in runtime._imperative.
_FAST_UNARY = {"negative": 0, "abs": 1, "exp": 2, "log": 3, "sqrt": 4, "tanh": 5,
               "square": 6, "sin": 7, "cos": 8}
_FAST_BINARY = {"add": 0, "subtract": 1, "multiply": 2, "divide": 3, "mod": 4, "power": 5,
                "maximum": 13, "minimum": 14}
_FAST_REDUCE = {"sum": 0, "mean": 0, "prod": 2, "max": 13, "min": 14}


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
