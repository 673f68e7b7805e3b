"""Autograd scopes (MXNet's ``mx.autograd``).

The per-thread flags that the invoker reads without a Python call (C ``thread_local`` in
``runtime._imperative``; a new thread starts with both off, as in MXNet): training, which
operators such as Dropout read (``train_mode()``, ``predict_mode()``, ``is_training()``,
``set_training()``), and recording (``is_recording()``, ``set_recording()``), which sends
operators down the general path.  The ``set_*`` functions return the previous value.
Recording scopes and ``backward`` come with the tape.
"""

from runtime._imperative import is_recording, is_training, set_recording, set_training


class _TrainingScope:
    def __init__(self, on):
        self._on = on
        self._prev = None

    def __enter__(self):
        self._prev = set_training(self._on)
        return self

    def __exit__(self, *exc):
        set_training(self._prev)


def train_mode():
    """Scope in which operators run in training mode (Dropout drops)."""
    return _TrainingScope(True)


def predict_mode():
    """Scope in which operators run in inference mode (Dropout is the identity)."""
    return _TrainingScope(False)


__all__ = ["is_recording", "set_recording", "is_training", "set_training", "train_mode",
           "predict_mode"]
