"""``MXNetError`` (MXNet 1.x's ``mx.base.MXNetError``), the exception class that user code
catches around operations MXNet's engine refused.

ndrt's own errors for such refusals derive from it (a storage fallback refused under
``set_storage_fallback('error')``, a parameter used before its deferred initialisation,
a backward from an array off the tape), while keeping the built-in class they are
(``NotImplementedError``, ``RuntimeError``), so ``except MXNetError`` and ``except
RuntimeError`` both catch them.  Bad arguments are ``TypeError``/``ValueError`` as in
Python; see docs/differences.md.
"""

__all__ = ["MXNetError", "NotImplementedForSymbol"]


class MXNetError(RuntimeError):
    """An operation the runtime refused (MXNet's ``MXNetError``, a RuntimeError)."""


class NotImplementedForSymbol(MXNetError, TypeError):
    """An operation that a Symbol does not support (MXNet's ``NotImplementedForSymbol``;
    ``bool(sym)`` raises it); also a TypeError."""

    def __init__(self, function, alias=None, *args):
        self.function = getattr(function, "__name__", str(function))
        self.alias = alias
        what = f"{self.function}" + (f" ({alias})" if alias else "")
        super().__init__(f"{what} is not supported on a Symbol: a symbol is a graph, not "
                         "a value; evaluate it with eval() or bind()")
