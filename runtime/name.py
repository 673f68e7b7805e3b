"""Automatic names of symbols (MXNet's ``mx.name``): ``NameManager`` and ``Prefix``.

A symbol made without ``name=`` is named by the current manager from a hint (the operator's
name lowercased): ``fullyconnected0``, ``fullyconnected1``.  ``with mx.name.Prefix('net_'):``
prepends a prefix to every name, given or automatic, made inside it.  Managers nest; the
current one is per thread.
"""

import threading

from runtime.base import _ThreadCurrentType


class NameManager(metaclass=_ThreadCurrentType):
    """Names symbols: a given name is kept, else ``hint`` followed by a counter per hint."""

    _state = threading.local()     # the scope in force, per thread

    def __init__(self):
        self._counter = {}
        self._old = None

    def get(self, name, hint):
        """``name`` when given, else the next automatic name for ``hint``."""
        if name:
            return name
        count = self._counter.get(hint, 0)
        self._counter[hint] = count + 1
        return f"{hint}{count}"

    def __enter__(self):
        self._old = current()
        NameManager.current = self
        return self

    def __exit__(self, *exc):
        NameManager.current = self._old
        self._old = None


class Prefix(NameManager):
    """A manager that prepends ``prefix`` to every name it gives (``Prefix('net_')``)."""

    def __init__(self, prefix):
        if not isinstance(prefix, str):
            raise TypeError(f"Prefix: prefix must be a str (got {prefix!r})")
        super().__init__()
        self._prefix = prefix

    def get(self, name, hint):
        return self._prefix + super().get(name, hint)


def current():
    """The manager in force in this thread (a process default when none was entered)."""
    return NameManager.current


__all__ = ["NameManager", "Prefix", "current"]
