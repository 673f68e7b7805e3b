"""gluon's ``Trainer``: applies an optimizer to a set of parameters.

Parameters are taken duck-typed, as Gluon's: ``params`` is a dict name -> Parameter (what
``collect_params()`` returns; anything with ``.values()``) or a list of Parameters, a
Parameter having ``.name``, ``.grad_req`` ('write', 'add' or 'null': skipped),
``.data()`` and ``.grad()`` (NDArrays; the gradient dense or row_sparse), and optionally
``.lr_mult`` and ``.wd_mult`` (1.0 when absent).  One context: there is no kvstore.
"""

import math

import numpy as np

import allocator
from runtime import nd
from runtime._ndarray import NDArray
from runtime.optimizer.optimizer import SGD, AdaGrad, Adam, Optimizer, create

__all__ = ["Trainer", "StaleGradientError"]


class StaleGradientError(RuntimeError, UserWarning):
    """A parameter's gradient was not written by backward since the last step.  gluon
    raises UserWarning here (as an exception); this is also a RuntimeError, what it is."""

_TWIN_TRIES = 64     # blocks of one size that _reserve_twin takes at most


class Trainer:
    """Applies ``optimizer`` to ``params`` (gluon's ``Trainer``).

    Parameters
    ----------
    params : dict name -> Parameter, or list of Parameters
    optimizer : str or Optimizer
        A name for :func:`runtime.optimizer.create` ('sgd', 'adam', 'adagrad'), or an
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
        self._twinned = set()     # sparse gradients whose pool blocks _reserve_twin took
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
        """The update half of :meth:`step` (gluon's ``Trainer.update``).

        All or nothing: every parameter's update is checked (batch_size, stale
        gradients, the update operators' attributes, shapes, dtypes and storage types)
        before any weight, optimizer state, update count or rescale_grad changes, so a
        refused step leaves everything as it was.  An optimizer that overrides
        ``update`` itself cannot be checked ahead: its weights and states are copied
        first and put back if one of its updates raises."""
        rescale = self._rescale(batch_size)
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
        made = {}           # states made by this step, kept only if it succeeds
        for i, weight, _ in work:
            early = self._early.get(i)
            if i not in self._states or (early is not None and early != (
                    weight.shape, weight.dtype, weight.context)):
                made[i] = opt.create_state(i, weight)   # (re-made: a cast, a reinit)
        states = [made[i] if i in made else self._states[i] for i, _, _ in work]
        before = (opt.rescale_grad, dict(opt._index_update_count), opt.num_update)
        opt.rescale_grad = rescale
        try:
            if type(opt).update is Optimizer.update:
                plans = []
                for (i, weight, grad), state in zip(work, states):
                    opt._update_count(i)
                    plans.append(opt._plan(i, weight, grad, state))
                    opt._check_plan(*plans[-1])
                for plan in plans:
                    opt._run(*plan)
            else:
                _update_restoring(opt, work, states)
        except BaseException:
            opt.rescale_grad, opt._index_update_count, opt.num_update = before
            raise
        self._states.update(made)
        for i, weight, grad in work:
            self._early.pop(i, None)
            if grad.stype != "default" and i not in self._twinned:
                self._twinned.add(i)
                _reserve_twin(grad)
            seen[i] = (grad.chunk, grad.version)

    def _rescale(self, batch_size):
        """The optimizer's rescale_grad for a step over ``batch_size`` samples."""
        if isinstance(batch_size, (bool, np.bool_)) or not isinstance(
                batch_size, (int, float, np.integer, np.floating)):
            raise TypeError(f"Trainer.step: batch_size must be a number (got "
                            f"{batch_size!r})")
        try:
            b = float(batch_size)
        except OverflowError:
            b = math.inf
        if not (math.isfinite(b) and b > 0):
            raise ValueError(f"Trainer.step: batch_size must be a finite number > 0 (got "
                             f"{batch_size!r})")
        rescale = self._scale / b
        if not math.isfinite(rescale):
            raise ValueError(f"Trainer.step: batch_size must leave rescale_grad / "
                             f"batch_size finite (got {batch_size!r}: {self._scale!r} / "
                             f"{batch_size!r} overflows)")
        return rescale


def _update_restoring(opt, work, states):
    """``opt.update`` of every (index, weight, grad) of ``work`` with its state; if one
    raises, the weights and the NDArrays of the states are put back as they were."""
    kept = []
    for (_, weight, _), state in zip(work, states):
        for x in [weight, *(state if isinstance(state, (tuple, list)) else [state])]:
            if isinstance(x, NDArray):
                kept.append((x, x.copy()))
    try:
        for (i, weight, grad), state in zip(work, states):
            opt.update(i, weight, grad, state)
    except BaseException:
        for x, copy in kept:
            copy.copyto(x)
        raise


def _reserve_twin(grad):
    """Grow the pool by blocks for a second copy of sparse ``grad``'s storage, once, at
    its parameter's first update.  The backward of the next step makes the new gradient
    while this one still lives (a sparse gradient is replaced, not written into), so
    from the second step on training needs one such copy more than in the first; the
    blocks taken here come from the pool's upstream (each part is allocated, held,
    until the pool has had to ask upstream for one), then go back to the pool's cache,
    so that the next steps find them there (the pool's size classes absorb the
    batch-to-batch changes of the gradient's row count)."""
    c = grad.chunk
    pool = allocator.get_pool(grad.context)
    parts = [(c.storage_shape, grad.dtype)] + [(s, np.int64) for s in c.aux_shapes]
    for shape, dtype in parts:
        start, held = pool.memory_stats()["num_device_alloc"], []
        for _ in range(_TWIN_TRIES):
            held.append(nd.zeros(shape, ctx=grad.context, dtype=dtype))
            if pool.memory_stats()["num_device_alloc"] != start:
                break
