"""ndrt's runtime: NDArray with dense and sparse storage in pooled memory.

>>> import runtime as rt
>>> from runtime import nd
>>> x = nd.array([[1, 2], [3, 4]], ctx=rt.cpu())
"""

from runtime import autograd, random
from runtime._imperative import get_storage_fallback, set_storage_fallback
from runtime.errors import StorageFallbackError, StorageFallbackWarning
from runtime.context import Context, cpu, cpu_pinned, current_context, gpu, num_gpus
from runtime import nd
from runtime._ndarray import NDArray

__all__ = ["Context", "cpu", "gpu", "cpu_pinned", "current_context", "num_gpus", "nd",
           "NDArray", "random", "autograd", "set_storage_fallback", "get_storage_fallback",
           "StorageFallbackWarning", "StorageFallbackError"]
