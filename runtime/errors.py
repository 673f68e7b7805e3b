"""Warnings and errors of the runtime."""

from runtime.base import MXNetError


class StorageFallbackWarning(UserWarning):
    """An operator had no kernel for its inputs' storage types and densified them."""


class StorageFallbackError(NotImplementedError, MXNetError):
    """Storage fallback happened while ``set_storage_fallback('error')`` is in force."""
