"""gluon's ``Trainer``: applies an optimizer to a set of parameters.

Parameters are taken duck-typed, as Gluon's: ``params`` is a dict name -> Parameter (what
``collect_params()`` returns; anything with ``.values()``) or a list of Parameters, a
Parameter having ``.name``, ``.grad_req`` ('write', 'add' or 'null': skipped),
``.data()`` and ``.grad()`` (NDArrays; the gradient dense or row_sparse), and optionally
``.lr_mult`` and ``.wd_mult`` (1.0 when absent).  One context: there is no kvstore.
"""

from runtime._ndarray import NDArray
from runtime.optim.optimizer import SGD, AdaGrad, Adam, Optimizer, create

__all__ = ["Trainer", "StaleGradientError"]


class StaleGradientError(RuntimeError, UserWarning):
    """A parameter's gradient was not written by backward since the last step.  gluon
    raises UserWarning here (as an exception); this is also a RuntimeError, what it is."""

_NONE = object()     # no state made yet (None is the state of a stateless optimizer)


class Trainer:
    """Applies ``optimizer`` to ``params`` (gluon's ``Trainer``).

    Parameters
    ----------
    params : dict name -> Parameter, or list of Parameters
    optimizer : str or Optimizer
        A name for :func:`runtime.optim.create` ('sgd', 'adam', 'adagrad'), or an
        optimizer (then ``optimizer_params`` must be None).
    optimizer_params : dict, optional
        Keyword arguments of the optimizer made from a name (``learning_rate``, ``wd``,
        ``momentum`` ...).
    """

    def __init__(self, params, optimizer, optimizer_params=None):
        if hasattr(params, "values") and callable(params.values):
            params = list(params.values())
        elif isinstance(params, (list, tuple)):
            params = list(params)
        else:
            raise TypeError(f"Trainer: params must be a dict of Parameters (collect_params()) "
                            f"or a list of Parameters (got {type(params).__name__})")
        seen = set()
        for i, p in enumerate(params):
            missing = [m for m in ("name", "grad_req", "data", "grad") if not hasattr(p, m)]
            if missing:
                raise TypeError(f"Trainer: params[{i}] must be a Parameter with name, "
                                f"grad_req, data() and grad() (got {type(p).__name__} "
                                f"without {', '.join(missing)})")
            if p.grad_req not in ("write", "add", "null"):
                raise ValueError(f"Trainer: grad_req of parameter {p.name!r} must be one of "
                                 f"write, add, null (got {p.grad_req!r})")
            if p.name in seen:
                raise ValueError(f"Trainer: parameter names must be unique (got {p.name!r} "
                                 "twice)")
            seen.add(p.name)
        self._params = params
        if isinstance(optimizer, Optimizer):
            if optimizer_params:
                raise ValueError("Trainer: optimizer_params must be None when optimizer is "
                                 f"an Optimizer instance (got {optimizer_params!r})")
            self._optimizer = optimizer
        elif isinstance(optimizer, str):
            self._optimizer = create(optimizer, **dict(optimizer_params or {}))
        else:
            raise TypeError(f"Trainer: optimizer must be a name or an Optimizer (got "
                            f"{type(optimizer).__name__})")
        self._optimizer.param_dict = {i: p for i, p in enumerate(params)}
        self._scale = self._optimizer.rescale_grad
        self._states = {}
        # index -> (shape, dtype, context) of the weight that a state made by
        # _init_states was made for, until its first update checks it still fits
        self._early = {}
        self._init_states()
        # index -> (the grad's chunk, its version) at the last update, or when the Trainer
        # was made: a write bumps the version, a row_sparse grad's backward gives it a new
        # chunk.  (The chunk is held, so that a new one cannot take its id: a row_sparse
        # grad's old storage lives until the next step.)  Seeding it here makes a step
        # before any backward stale, as gluon's fresh-gradient flag does.
        self._seen = {}
        for i, _, grad in self._initialised():
            self._seen[i] = (grad.chunk, grad.version)

    def _initialised(self):
        """(index, weight, grad) of each parameter that has its arrays (deferred ones do
        not yet) and takes updates (grad_req not 'null')."""
        for i, p in enumerate(self._params):
            if p.grad_req == "null":
                continue
            try:
                weight, grad = p.data(), p.grad()
            except RuntimeError:          # not initialised yet (deferred)
                continue
            if isinstance(weight, NDArray) and isinstance(grad, NDArray):
                yield i, weight, grad

    def _init_states(self):
        """The optimizer's state of every parameter already initialised (the others get
        theirs at their first update).  Made here, before any forward or backward, the
        states take memory beside the model's rather than blocks that the first
        backward frees (which the next step would then ask the pool's upstream for
        again): training allocates nothing upstream after its first step.  The states
        of SGD, Adam and AdaGrad are zeros of the weight's shape, dtype and context, so
        making them early changes no update; another optimizer's create_state may read
        the weight's values, and runs at the first update, as in gluon."""
        if type(self._optimizer).create_state not in (SGD.create_state, Adam.create_state,
                                                      AdaGrad.create_state):
            return
        for i, weight, _ in self._initialised():
            if i not in self._states:
                self._states[i] = self._optimizer.create_state(i, weight)
                self._early[i] = (weight.shape, weight.dtype, weight.context)

    @property
    def optimizer(self):
        return self._optimizer

    @property
    def learning_rate(self):
        """The optimizer's current learning rate."""
        return self._optimizer.learning_rate

    def set_learning_rate(self, lr):
        """Set the optimizer's learning rate."""
        self._optimizer.set_learning_rate(lr)

    def step(self, batch_size, ignore_stale_grad=False):
        """One update of every parameter whose grad_req is not 'null', from gradients
        that ``backward`` computed for a batch of ``batch_size`` samples: the gradients
        are rescaled by 1 / batch_size (times the optimizer's own rescale_grad).

        A gradient not written since the last step is stale: StaleGradientError (a
        RuntimeError and, as gluon raises, a UserWarning) in gluon's words, naming the
        parameter, or with ``ignore_stale_grad=True`` that parameter is skipped (as
        gluon)."""
        self.update(batch_size, ignore_stale_grad)

    def allreduce_grads(self):
        """Nothing to reduce on one context (gluon's API)."""

    def update(self, batch_size, ignore_stale_grad=False):
        """The update half of :meth:`step` (gluon's ``Trainer.update``)."""
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, float)) or \
                not batch_size > 0:
            raise ValueError(f"Trainer.step: batch_size must be a number > 0 (got "
                             f"{batch_size!r})")
        work = []
        seen = self._seen
        for i, p in enumerate(self._params):
            if p.grad_req == "null":
                continue
            weight, grad = p.data(), p.grad()
            if not isinstance(weight, NDArray) or not isinstance(grad, NDArray):
                raise TypeError(f"Trainer.step: parameter {p.name!r} must give NDArrays "
                                f"from data() and grad() (got {type(weight).__name__}, "
                                f"{type(grad).__name__})")
            last = seen.get(i)
            if last is not None and last[0] is grad.chunk and last[1] == grad.version:
                if not ignore_stale_grad:
                    raise StaleGradientError(
                        f"Gradient of Parameter `{p.name}` on context {grad.context} has not "
                        "been updated by backward since last `step`. This could mean a bug in "
                        "your model that made it only use a subset of the Parameters (Blocks) "
                        "for this iteration. If you are intentionally only using a subset, "
                        "call step with ignore_stale_grad=True to suppress this warning and "
                        "skip updating of Parameters with stale gradient")
                continue
            work.append((i, weight, grad))
        opt = self._optimizer
        opt.rescale_grad = self._scale / batch_size
        states = self._states
        for i, weight, grad in work:
            state = states.get(i, _NONE)
            if self._early and self._early.pop(i, None) not in (
                    None, (weight.shape, weight.dtype, weight.context)):
                state = _NONE         # the weight was re-made (cast, reinitialised)
            if state is _NONE:
                state = states[i] = opt.create_state(i, weight)
            opt.update(i, weight, grad, state)
            seen[i] = (grad.chunk, grad.version)

