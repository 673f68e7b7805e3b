"""``MXNetError`` (MXNet 1.x's ``mx.base.MXNetError``), the exception class that user code
catches around operations MXNet's engine refused.

ndrt's own errors for such refusals derive from it (a storage fallback refused under
``set_storage_fallback('error')``, a parameter used before its deferred initialisation,
a backward from an array off the tape), while keeping the built-in class they are
(``NotImplementedError``, ``RuntimeError``), so ``except MXNetError`` and ``except
RuntimeError`` both catch them.  Bad arguments are ``TypeError``/``ValueError`` as in
Python; see docs/differences.md.
"""

__all__ = ["MXNetError"]


class MXNetError(RuntimeError):
    """An operation the runtime refused (MXNet's ``MXNetError``, a RuntimeError)."""
