"""Autograd scopes (MXNet's ``mx.autograd``).

This layer has the thread-local training flag that operators such as Dropout read:
``train_mode()``, ``predict_mode()``, ``is_training()``, ``set_training()``.  Recording and
``backward`` come with the tape.
"""

import threading


class _State(threading.local):
    training = False


_state = _State()


def is_training():
    """True inside ``train_mode()`` (or after ``set_training(True)``) on this thread."""
    return _state.training


def set_training(train_mode):
    """Set the training flag of this thread; returns the previous value."""
    prev = _state.training
    _state.training = bool(train_mode)
    return prev


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
