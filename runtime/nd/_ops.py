"""Functions of ``runtime.nd`` generated from the operator registry (MXNet's ``mx.nd.<op>``).

``nd.<op>(*arrays, out=None, **attrs)``; array inputs may also be passed by their names
(``nd.FullyConnected(data=x, weight=w, num_hidden=4)``).  Binary arithmetic accepts a
Python scalar on either side (``nd.add(x, 2)``), as MXNet's ``nd.add`` does.
"""

import numpy as np

from runtime._imperative import FastFunction, invoke_parsed, reduce_all
from runtime._ndarray import NDArray
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


def _is_scalar(v):
    return isinstance(v, (int, float, np.integer, np.floating, np.bool_)) and \
        not isinstance(v, NDArray)


def make_function(op):
    """The ``nd`` function of ``op``."""
    names = op.inputs
    scalar = _SCALAR_FORMS.get(op.name)

    def fn(*args, out=None, req=None, **kwargs):
        arrays = list(args)
        # arrays may come by name too (nd.FullyConnected(data=x, weight=w, ...)), in
        # order, up to the first one missing
        for name in names[len(arrays):]:
            if name not in kwargs:
                break
            arrays.append(kwargs.pop(name))
        if scalar is not None and len(arrays) == 2:
            if _is_scalar(arrays[1]) and isinstance(arrays[0], NDArray):
                return invoke_parsed(registry.get(scalar[0]), [arrays[0]],
                                     {"scalar": float(arrays[1])}, out, req)
            if _is_scalar(arrays[0]) and isinstance(arrays[1], NDArray):
                return invoke_parsed(registry.get(scalar[1]), [arrays[1]],
                                     {"scalar": float(arrays[0])}, out, req)
        return invoke_parsed(op, arrays, op.parse_attrs(kwargs), out, req)

    fn.__name__ = op.name
    attrs = ", ".join(f"{k}={a.default!r}" for k, a in op.attrs.items())
    fn.__doc__ = (f"{op.name}({', '.join(names)}{', ' + attrs if attrs else ''}, out=None)"
                  f"\n\n{op.doc or 'Registry operator ' + repr(op.name) + '.'}")
    if op.name in _FAST_UNARY:
        return FastFunction(_FAST_UNARY[op.name], 1, fn)
    if op.name in _FAST_BINARY:
        return FastFunction(_FAST_BINARY[op.name], 2, fn)
    if op.name in ("sum", "mean", "prod", "max", "min"):
        return _full_reduction(op.name, fn)
    return fn


def _full_reduction(name, general):
    def reduction(*args, **kwargs):
        if len(args) == 1 and not kwargs and type(args[0]) is NDArray:
            res = reduce_all(name, args[0])
            if res is not None:
                return res
        return general(*args, **kwargs)
    reduction.__name__ = name
    reduction.__doc__ = general.__doc__
    return reduction


# Codes of the direct ufunc loops in runtime._imperative.
_FAST_UNARY = {"negative": 0, "abs": 1, "exp": 2, "log": 3, "sqrt": 4, "tanh": 5,
               "square": 6, "sin": 7, "cos": 8}
_FAST_BINARY = {"add": 0, "subtract": 1, "multiply": 2, "divide": 3, "mod": 4, "power": 5,
                "maximum": 13, "minimum": 14}


def install(namespace):
    """Add a function for every registered name (and alias) not already in ``namespace``."""
    for name, op in registry.OPS.items():
        if name not in namespace:
            namespace[name] = make_function(op)


_METHODS = {}


def method(name):
    """The nd function behind ``NDArray.<name>`` (None when there is no such operator)."""
    fn = _METHODS.get(name)
    if fn is None and name in registry.OPS and not name.startswith("_"):
        fn = _METHODS[name] = make_function(registry.OPS[name])
    return fn
