"""ndrt's runtime, in MXNet 1.x's module layout: ``import runtime as mx`` ports a
Gluon/NDArray program.

>>> import runtime as mx
>>> x = mx.nd.array([[1, 2], [3, 4]], ctx=mx.cpu())
>>> net = mx.gluon.nn.Dense(2)
>>> net.initialize(mx.init.Xavier())

Module paths follow MXNet's: ``runtime.nd`` (also ``runtime.ndarray``), ``runtime.autograd``,
``runtime.context``, ``runtime.random``, ``runtime.gluon`` (``nn``, ``rnn``, ``loss``, ``data``,
``utils``), ``runtime.optimizer``, ``runtime.lr_scheduler``, ``runtime.initializer`` (also
``runtime.init``), ``runtime.kvstore`` (also ``runtime.kv``), ``runtime.io``,
``runtime.metric``, ``runtime.test_utils``, ``runtime.base``, ``runtime.recordio``,
``runtime.image``, ``runtime.profiler``; graph mode:
``runtime.symbol`` (also ``runtime.sym``), ``runtime.executor``, ``runtime.name``,
``runtime.attribute`` (``AttrScope``), ``runtime.operator`` (custom operators),
``runtime.module`` (also ``runtime.mod``), ``runtime.model``, ``runtime.callback``,
``runtime.rnn`` (the symbolic RNN cells).  The
second name of a module is the same module object (registered in ``sys.modules``), not a
copy.
"""

import sys

__version__ = "0.1.0"    # ndrt's own version, not the MXNet release it follows (1.x)

from runtime import _wiring  # noqa: F401  (first: the hooks of the lower layers)
from runtime import autograd, random
from runtime._imperative import get_storage_fallback, set_storage_fallback
from runtime.base import MXNetError
from runtime.errors import StorageFallbackError, StorageFallbackWarning
from runtime.context import Context, cpu, cpu_pinned, current_context, gpu, num_gpus
from runtime import context, nd
from runtime._ndarray import NDArray
from runtime import initializer, lr_scheduler, optimizer
from runtime import attribute, name, operator, symbol, executor
from runtime.attribute import AttrScope
from runtime import kvstore
from runtime import gluon, io, metric, test_utils
from runtime import image, profiler, recordio, runtime
from runtime import callback, model, module, rnn
from runtime import contrib, engine, util, visualization
from runtime.util import (is_np_array, is_np_shape, np_array, np_shape, reset_np, set_np,
                          set_np_shape, use_np, use_np_array, use_np_shape)


def _alias(name, module):
    """Make ``runtime.<name>`` the same module as ``module``, with its loaded submodules
    (``runtime.ndarray.sparse`` is ``runtime.nd.sparse``), as MXNet's
    ``from . import ndarray as nd`` makes both names work."""
    globals()[name] = module
    prefix = module.__name__
    for key, mod in list(sys.modules.items()):
        if key == prefix or key.startswith(prefix + "."):
            sys.modules[f"{__name__}.{name}{key[len(prefix):]}"] = mod


_alias("ndarray", nd)
_alias("init", initializer)
_alias("rnd", random)
_alias("viz", visualization)
_alias("kv", kvstore)
_alias("sym", symbol)
_alias("mod", module)

__all__ = ["Context", "cpu", "gpu", "cpu_pinned", "current_context", "num_gpus", "context",
           "nd", "ndarray", "NDArray", "random", "autograd", "gluon", "optimizer",
           "lr_scheduler", "initializer", "init", "kvstore", "kv", "io", "metric", "test_utils",
           "image", "recordio", "profiler", "runtime",
           "MXNetError", "symbol", "sym", "executor", "name", "attribute", "AttrScope",
           "operator", "module", "mod", "model", "callback", "rnn", "contrib", "engine",
           "util",
           "rnd", "visualization", "viz", "is_np_shape", "set_np_shape", "np_shape",
           "use_np_shape", "is_np_array", "np_array", "use_np_array", "use_np", "set_np",
           "reset_np",
           "set_storage_fallback", "get_storage_fallback", "StorageFallbackWarning",
           "StorageFallbackError"]
