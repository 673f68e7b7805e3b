"""``runtime.symbol`` (also ``runtime.sym``): MXNet 1.x's symbolic API.

:class:`Symbol`, :func:`Variable` (``var``), :func:`Group`, :func:`load`,
:func:`load_json`, :func:`zeros`, :func:`ones`, :func:`full`, :func:`arange`, and a
function for every registry operator, made from the operator's
one declaration with ``nd``'s names, positional attributes and optional inputs
(``sym.FullyConnected(data, num_hidden=4)``, ``sym.sum(x, 1)``); ``sym.contrib.<name>``,
``sym.linalg.<name>`` and ``sym.image.<name>`` are the operators ``_contrib_<name>``,
``_linalg_<name>`` and ``_image_<name>``;
``sym.sparse.<name>`` MXNet's list of operators with sparse kernels; ``sym.random`` the
random samplers.
Binding a symbol gives a :class:`runtime.executor.Executor`.
"""

import types

from runtime.symbol import symbol as _symbol
from runtime.symbol.symbol import (Custom, Group, Symbol, SymbolFunction, Variable, arange,
                                   fromjson, full, load, load_json, ones, var, zeros)
from runtime.symbol import random
from runtime.ops import registry as _registry
from runtime.nd.contrib import zipfian_draw as _zipfian_draw


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


# MXNet's mx.sym.sparse: the operators with sparse kernels, by their nd.sparse names
# (the same operators as the root's: a symbol's storage types come from its variables).
_SPARSE = (
    "ElementWiseSum Embedding FullyConnected LinearRegressionOutput LogisticRegressionOutput "
    "MAERegressionOutput abs adagrad_update adam_update add_n arccos arccosh arcsin arcsinh "
    "arctan arctanh broadcast_add broadcast_div broadcast_minus broadcast_mul broadcast_plus "
    "broadcast_sub cast_storage cbrt ceil clip concat cos cosh degrees dot elemwise_add "
    "elemwise_div elemwise_mul elemwise_sub exp expm1 fix floor ftrl_update gamma gammaln log "
    "log10 log1p log2 make_loss mean negative norm radians relu retain rint round rsqrt "
    "sgd_mom_update sgd_update sigmoid sign sin sinh slice sqrt square stop_gradient sum tan "
    "tanh trunc where zeros_like").split()


def _sparse_namespace():
    module = types.ModuleType(f"{__name__}.sparse", "MXNet's ``sym.sparse``: the operators "
                              "with sparse kernels as symbol functions.")
    for name in _SPARSE:
        op = _registry.get(_ALIASES.get(name, name))
        setattr(module, name, _symbol.SymbolFunction(op.name))
    return module


_ALIASES = {"ElementWiseSum": "add_n", "broadcast_plus": "broadcast_add",
            "broadcast_minus": "broadcast_sub"}
contrib = _namespace("contrib", "_contrib_")
for _flow in ("foreach", "while_loop", "cond"):
    setattr(contrib, _flow, _no_control_flow(_flow))


def _rand_zipfian(true_classes, num_sampled, range_max):
    """MXNet's ``sym.contrib.rand_zipfian``: ``nd.contrib.rand_zipfian`` as a graph (the
    three outputs as separate symbols, ``sym.Group`` them to bind)."""
    if not isinstance(true_classes, Symbol):
        raise TypeError(f"rand_zipfian: true_classes must be a Symbol (got "
                        f"{type(true_classes).__name__})")
    return _zipfian_draw(
        lambda high, shape: random.uniform(0, high, shape=shape, dtype="float64"),
        true_classes, num_sampled, range_max)


contrib.rand_zipfian = _rand_zipfian
globals().update(random.LEGACY)          # mx.sym.random_normal, mx.sym.sample_normal, ...
# MXNet's deprecated aliases of the samplers, as in mx.nd
uniform, normal = random.LEGACY["random_uniform"], random.LEGACY["random_normal"]
shuffle = random.shuffle
linalg = _namespace("linalg", "_linalg_")
image = _namespace("image", "_image_")
sparse = _sparse_namespace()
# MXNet's mx.sym._internal and mx.sym.op: every operator by name, hidden ones
# (_plus_scalar, _identity_with_attr_like_rhs) included
_internal = types.ModuleType(f"{__name__}._internal", "Every registry operator by name, "
                             "hidden ones included (MXNet's mx.sym._internal).")
op = types.ModuleType(f"{__name__}.op", "Every registry operator by name (MXNet's "
                      "mx.sym.op).")
_symbol.install(vars(_internal))
_symbol.install(vars(op))
_symbol.install(globals())

__all__ = ["Symbol", "Variable", "var", "Group", "load", "load_json", "fromjson", "Custom",
           "zeros", "ones", "full", "arange",
           "SymbolFunction", "contrib", "linalg", "image", "sparse", "random"]
