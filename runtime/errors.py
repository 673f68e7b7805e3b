"""Warnings and errors of the runtime."""


class StorageFallbackWarning(UserWarning):
    """An operator had no kernel for its inputs' storage types and densified them."""


class StorageFallbackError(NotImplementedError):
    """Storage fallback happened while ``set_storage_fallback('error')`` is in force."""
