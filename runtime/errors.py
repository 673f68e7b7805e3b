"""Warnings and errors of the runtime."""

from runtime.base import MXNetError


class StorageFallbackWarning(UserWarning):
    """An operator had no kernel for its inputs' storage types and densified them."""


class StorageFallbackError(NotImplementedError, MXNetError):
    """Storage fallback happened while ``set_storage_fallback('error')`` is in force."""


# MXNet's message (src/imperative/imperative.cc) for a backward from a head off the tape or
# through a graph an earlier backward consumed; the raiser appends which case it is.
NOT_IN_GRAPH = ("Cannot differentiate node because it is not in a computational graph. You "
                "need to set is_recording to true or use autograd.record() to save "
                "computational graphs for backward. If you want to differentiate the same "
                "graph twice, you need to pass retain_graph=True to backward.")
