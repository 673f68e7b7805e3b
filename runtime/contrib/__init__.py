"""MXNet 1.x's ``mx.contrib``: its contrib operators by interface, ``mx.contrib.ndarray``
(also ``mx.contrib.nd``; the module ``mx.nd.contrib``) and ``mx.contrib.symbol`` (also
``mx.contrib.sym``; the module ``mx.sym.contrib``).  Both are the same modules under a
second name, importable by it as in MXNet (``from mxnet.contrib import ndarray``); and
``mx.contrib.autograd``, MXNet's first autograd interface."""

import sys

from runtime.contrib import autograd
from runtime.nd import contrib as ndarray
from runtime.symbol import contrib as symbol

nd = ndarray
sym = symbol
for _name, _module in (("ndarray", ndarray), ("nd", ndarray), ("symbol", symbol),
                       ("sym", symbol)):
    sys.modules[f"{__name__}.{_name}"] = _module

__all__ = ["autograd", "ndarray", "nd", "symbol", "sym"]
