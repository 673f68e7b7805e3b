"""``MXNetError`` (MXNet 1.x's ``mx.base.MXNetError``), the exception class that user code
catches around operations MXNet's engine refused.

ndrt's own errors for such refusals derive from it (a storage fallback refused under
``set_storage_fallback('error')``, a parameter used before its deferred initialisation,
a backward from an array off the tape), while keeping the built-in class they are
(``NotImplementedError``, ``RuntimeError``), so ``except MXNetError`` and ``except
RuntimeError`` both catch them.  Bad arguments are ``TypeError``/``ValueError`` as in
Python; see docs/differences.md.
"""

import numbers

import numpy as np

__all__ = ["MXNetError", "NotImplementedForSymbol", "py_str", "string_types", "numeric_types",
           "integer_types", "mx_real_t"]

string_types = (str,)
"""What MXNet counts as a string (its Python 3 value)."""
numeric_types = (float, int, np.generic)
"""Scalars MXNet accepts where a number is expected."""
integer_types = (int, np.integer)
"""Integers MXNet accepts where an integer is expected."""
mx_real_t = np.float32
"""MXNet's default floating type (arrays and parameters are float32 unless told)."""


def py_str(x):
    """Decode MXNet's C-API bytes to ``str`` (UTF-8); a ``str`` passes through unchanged."""
    return x.decode("utf-8") if isinstance(x, bytes) else x


def _as_list(obj):
    """``obj`` itself when it is a list or tuple, else ``[obj]`` (MXNet's ``_as_list``)."""
    return obj if isinstance(obj, (list, tuple)) else [obj]


class _ThreadCurrentType(type):
    """Gives a scope class MXNet's class attribute ``current`` (``AttrScope.current``,
    ``NameManager.current``): the scope in force in the calling thread, a new ``cls()``
    of the root class until one is entered or assigned; assigning it replaces the
    scope of this thread only.  The class keeps it in ``_state``, a threading.local."""

    def _root(cls):
        return [c for c in cls.__mro__ if isinstance(c, _ThreadCurrentType)][-1]

    @property
    def current(cls):
        """The scope in force in this thread; assigning it replaces that scope."""
        scope = getattr(cls._state, "current", None)
        if scope is None:
            scope = cls._state.current = cls._root()()
        return scope

    @current.setter
    def current(cls, scope):
        root = cls._root()
        if not isinstance(scope, root):
            raise TypeError(f"{root.__name__}.current must be an instance of "
                            f"{root.__name__} (got "
                            f"{type(scope).__name__})")
        cls._state.current = scope


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
