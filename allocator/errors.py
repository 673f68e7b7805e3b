"""Exceptions of the allocator (importable without a GPU)."""


class OutOfMemoryError(MemoryError):
    """A pool could not serve a request even after freeing its cache and collecting garbage."""


class CudaError(RuntimeError):
    """A CUDA driver call failed; the message names the call and the driver's error.

    Picklable: it carries only its message and the numeric status.
    """

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status

    def __reduce__(self):
        return (type(self), (self.args[0], self.status))
