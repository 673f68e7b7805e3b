"""Linear algebra on batches of matrices (MXNet's ``mx.nd.linalg``): ``gemm``, ``gemm2``,
``potrf``, ``potri``, ``trsm``, ``trmm``, ``syrk``, ``inverse``, ``det``, ``slogdet``,
``sumlogdiag``, the registry operators ``_linalg_<name>`` (runtime.ops.linalg_la documents
them)."""

from runtime.nd._ops import make_function
from runtime.ops import registry

__all__ = ["gemm", "gemm2", "potrf", "potri", "trsm", "trmm", "syrk", "inverse", "det",
           "slogdet", "sumlogdiag"]

for _name in __all__:
    globals()[_name] = make_function(registry.get(f"_linalg_{_name}"))
