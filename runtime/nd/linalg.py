"""``runtime.nd.linalg``: MXNet's ``mx.nd.linalg`` namespace (``gemm``, ``gemm2``, ``potrf``,
``potri``, ``trmm``, ``trsm``, ``syrk``, ``sumlogdiag``, ``inverse``, ``det``, ``slogdet``).

Each name is the registry operator ``_linalg_<name>`` (see ``runtime/ops/la.py``), also
reachable as ``nd.linalg_<name>``; calls, ``out=`` and recording are those of every nd
function.
"""

import runtime.ops  # noqa: F401  (registers the operators)
from runtime.nd._ops import make_function
from runtime.ops import registry

NAMES = ("gemm", "gemm2", "potrf", "potri", "trmm", "trsm", "syrk", "sumlogdiag", "inverse",
         "det", "slogdet")

for _name in NAMES:
    globals()[_name] = make_function(registry.get("_linalg_" + _name))

__all__ = list(NAMES)
