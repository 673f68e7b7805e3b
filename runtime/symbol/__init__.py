"""``runtime.symbol`` (also ``runtime.sym``): MXNet 1.x's symbolic API.

:class:`Symbol`, :func:`Variable` (``var``), :func:`Group`, :func:`load`,
:func:`load_json`, :func:`zeros`, :func:`ones`, :func:`full`, :func:`arange`, and a
function for every registry operator, made from the operator's
one declaration with ``nd``'s names, positional attributes and optional inputs
(``sym.FullyConnected(data, num_hidden=4)``, ``sym.sum(x, 1)``); ``sym.contrib.<name>``
and ``sym.linalg.<name>`` are the operators ``_contrib_<name>``/``_linalg_<name>``.
Binding a symbol gives a :class:`runtime.executor.Executor`.
"""

import types

from runtime.symbol import symbol as _symbol
from runtime.symbol.symbol import (Custom, Group, Symbol, SymbolFunction, Variable, arange,
                                   fromjson, full, load, load_json, ones, var, zeros)
from runtime.ops import registry as _registry


def _namespace(name, prefix):
    module = types.ModuleType(f"{__name__}.{name}", f"Operators ``{prefix}<name>`` of the "
                              "registry as symbol functions.")
    for op_name in _registry.OPS:
        if op_name.startswith(prefix):
            setattr(module, op_name[len(prefix):], _symbol.SymbolFunction(op_name))
    return module


def _no_control_flow(name):
    def refuse(*args, **kwargs):
        raise NotImplementedError(
            f"sym.contrib.{name}: control flow is not available on symbols in ndrt; run "
            f"the block without hybridize() (nd.contrib.{name} calls the Python function "
            "and records what it runs)")
    refuse.__name__ = name
    return refuse


contrib = _namespace("contrib", "_contrib_")
for _flow in ("foreach", "while_loop", "cond"):
    setattr(contrib, _flow, _no_control_flow(_flow))
linalg = _namespace("linalg", "_linalg_")
_symbol.install(globals())

__all__ = ["Symbol", "Variable", "var", "Group", "load", "load_json", "fromjson", "Custom",
           "zeros", "ones", "full", "arange",
           "SymbolFunction", "contrib", "linalg"]
