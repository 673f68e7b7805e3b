"""MXNet 1.x's ``mx.contrib.autograd``: the first autograd interface, kept by MXNet for
old programs.  One switch, ``set_is_training``, turns recording and training mode on or
off together; ``train_section``/``test_section`` are its scopes; ``grad_and_loss`` and
``grad`` wrap a function so that calling it returns the gradients of its output with
respect to its arguments.  Everything runs on ``runtime.autograd``'s tape.
"""

from runtime import autograd as _autograd
from runtime import nd
from runtime._imperative import set_recording, set_training
from runtime._ndarray import NDArray

__all__ = ["set_is_training", "TrainingStateScope", "train_section", "test_section",
           "mark_variables", "backward", "compute_gradient", "grad_and_loss", "grad"]


def set_is_training(is_train):
    """Turn recording and training mode both on or off; returns whether training mode
    was on before (MXNet's return value)."""
    set_recording(bool(is_train))
    return bool(set_training(bool(is_train)))


class TrainingStateScope:
    """A ``with`` scope inside which recording and training mode are ``enter_state``;
    the previous training state is put back on exit (both switches take it, as
    ``set_is_training`` does)."""

    def __init__(self, enter_state):
        self._enter_state = bool(enter_state)
        self._prev = None

    def __enter__(self):
        self._prev = set_is_training(self._enter_state)
        return self

    def __exit__(self, *exc):
        if self._prev != self._enter_state:
            set_is_training(self._prev)
        return False


def train_section():
    """A scope that records operators in training mode (``autograd.record()``)."""
    return TrainingStateScope(True)


def test_section():
    """A scope that neither records nor trains, also inside ``train_section``."""
    return TrainingStateScope(False)


def mark_variables(variables, gradients, grad_reqs="write"):
    """``autograd.mark_variables``: gradients of ``variables`` go to ``gradients``."""
    _autograd.mark_variables(variables, gradients, grad_reqs)


def backward(outputs, out_grads=None, retain_graph=False):
    """``autograd.backward`` of ``outputs`` (an NDArray or a list) in training mode,
    ``out_grads`` their head gradients (ones where None)."""
    _autograd.backward(outputs, out_grads, retain_graph=retain_graph, train_mode=True)


def compute_gradient(outputs):
    """Backward of ``outputs`` with ones as head gradients."""
    backward(outputs)


def grad_and_loss(func, argnum=None):
    """Wrap ``func`` so that ``wrapped(*args)`` returns ``(gradients, outputs)``: the
    gradients of ``func(*args)`` with respect to the arguments at positions ``argnum``
    (an int or a list of ints; every argument when None), each a new array.

    Raises TypeError when a differentiated argument is not an NDArray.
    """
    def wrapped(*args):
        if argnum is None:
            variables = list(args)
        else:
            positions = [argnum] if isinstance(argnum, int) else list(argnum)
            variables = [args[i] for i in positions]
        for i, x in enumerate(variables):
            if not isinstance(x, NDArray):
                raise TypeError(f"grad_and_loss: differentiated argument {i} must be an "
                                f"NDArray (got {type(x).__name__})")
        grads = [nd.zeros_like(x) for x in variables]
        mark_variables(variables, grads)
        with train_section():
            outputs = func(*args)
        compute_gradient([outputs] if isinstance(outputs, NDArray) else outputs)
        return grads, outputs
    return wrapped


def grad(func, argnum=None):
    """Wrap ``func`` so that ``wrapped(*args)`` returns only the gradients of
    :func:`grad_and_loss`."""
    grad_with_loss = grad_and_loss(func, argnum)

    def wrapped(*args):
        return grad_with_loss(*args)[0]
    return wrapped
