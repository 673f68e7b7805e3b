"""Attributes given to every symbol made in a scope (MXNet's ``mx.attribute.AttrScope``,
also ``mx.AttrScope``): ``with mx.AttrScope(ctx_group='dev1'): ...``.  Scopes nest, the
inner one's values winning; the current scope is per thread."""

import threading

from runtime.base import _ThreadCurrentType


class AttrScope(metaclass=_ThreadCurrentType):
    """A scope whose string attributes ``**kwargs`` go on each symbol made inside it."""

    _state = threading.local()     # the scope in force, per thread

    def __init__(self, **kwargs):
        for key, value in kwargs.items():
            if not isinstance(value, str):
                raise ValueError(f"AttrScope: attribute {key!r} must be a str (got "
                                 f"{value!r})")
        self._attr = dict(kwargs)
        self._old = None

    def get(self, attr):
        """The scope's attributes updated with ``attr`` (a dict or None)."""
        if not self._attr:
            return dict(attr) if attr else {}
        merged = dict(self._attr)
        if attr:
            merged.update(attr)
        return merged

    def __enter__(self):
        self._old = current()
        merged = AttrScope()
        merged._attr = self._old.get(self._attr)
        AttrScope.current = merged
        return self

    def __exit__(self, *exc):
        AttrScope.current = self._old
        self._old = None


def current():
    """The scope in force in this thread (an empty one when none was entered)."""
    return AttrScope.current


__all__ = ["AttrScope", "current"]
