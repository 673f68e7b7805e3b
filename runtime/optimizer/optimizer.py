"""Optimizers (MXNet 1.x's ``mx.optimizer``): :class:`Optimizer`, :class:`SGD`,
:class:`Adam`, :class:`AdaGrad`, :func:`create` and :func:`register`.

An optimizer keeps no arrays of its own: ``create_state(index, weight)`` makes the
state of one weight (momentum, Adam's mean and variance, AdaGrad's history, as dense
arrays beside the weight) and ``update(index, weight, grad, state)`` runs one update
operator of runtime/ops/optimizer_op.py with ``out=weight``, which writes the weight and its
state in place.  A row_sparse ``grad`` takes the operators' row_sparse kernels: with
``lazy_update=True`` only the rows present in the gradient are touched (MXNet's lazy
update), else every row is (the standard update).  Per-weight learning-rate and weight
decay multipliers come from ``param_dict`` (index -> a Parameter with ``lr_mult`` and
``wd_mult``, which gluon's Trainer fills) or from :meth:`Optimizer.set_lr_mult` and
:meth:`Optimizer.set_wd_mult` (index -> multiplier).

The update operators are called through the invoker with their attributes already in
the registry's form (a dict of floats and bools, as ``Op.parse_attrs`` gives), which
spares parsing keyword arguments on every update: Adam's learning rate changes at every
step (the bias corrections), so a parse would not be served by the parse cache.  The
invoker still infers (and checks) every call, bumps the versions of the weight and the
states, and refuses writes into arrays on the tape while recording.
"""

import math
import pickle

import numpy as np

from runtime import nd
from runtime._imperative import invoke_parsed
from runtime.ops import registry
from runtime.ops.optimizer_op import as_number as _number
from runtime.ops.optimizer_op import check_lr, check_number

__all__ = ["Optimizer", "SGD", "Adam", "AdaGrad", "Updater", "get_updater", "create",
           "register"]

_REGISTRY = {}
_OPS = {}            # update operator name -> its registry Op


def register(klass):
    """Register an Optimizer subclass under its lower-case class name (a decorator, as
    MXNet's ``mx.optimizer.register``)."""
    if not (isinstance(klass, type) and issubclass(klass, Optimizer)):
        raise TypeError(f"register: klass must be a subclass of Optimizer (got {klass!r})")
    _REGISTRY[klass.__name__.lower()] = klass
    return klass


def create(name, **kwargs):
    """The optimizer registered as ``name`` (case-insensitive: 'sgd', 'adam', 'adagrad'),
    made with ``kwargs`` (MXNet's ``mx.optimizer.create``)."""
    if not isinstance(name, str):
        raise TypeError(f"create: name must be a str (got {type(name).__name__})")
    try:
        klass = _REGISTRY[name.lower()]
    except KeyError:
        raise ValueError(f"create: name must be one of {', '.join(sorted(_REGISTRY))} "
                         f"(got {name!r})") from None
    return klass(**kwargs)


class Optimizer:
    """The base of every optimizer (MXNet's ``mx.optimizer.Optimizer``).

    Parameters
    ----------
    learning_rate : float, >= 0
    wd : float
        Weight decay (L2 regularisation) coefficient.
    rescale_grad : float
        Every gradient is multiplied by it first (gluon's Trainer sets 1 / batch_size).
    clip_gradient : float or None
        Clip the rescaled gradient to [-clip_gradient, clip_gradient]; None: no clipping.
    lr_scheduler : callable num_update -> learning rate, optional
    param_dict : dict index -> Parameter, optional
        Whose ``lr_mult`` and ``wd_mult`` scale the learning rate and wd of each index.
    begin_num_update : int
        The update count to start from.
    """

    name = "optimizer"

    def __init__(self, learning_rate=0.01, wd=0.0, rescale_grad=1.0, clip_gradient=None,
                 lr_scheduler=None, param_dict=None, begin_num_update=0):
        owner = type(self).__name__
        self.lr = _number(owner, "learning_rate", learning_rate, lo=0)
        self.wd = _number(owner, "wd", wd)
        self.rescale_grad = _number(owner, "rescale_grad", rescale_grad)
        self.clip_gradient = (None if clip_gradient is None else
                              _number(owner, "clip_gradient", clip_gradient, lo=0))
        if lr_scheduler is not None and not callable(lr_scheduler):
            raise TypeError(f"{owner}: lr_scheduler must be callable num_update -> lr (got "
                            f"{lr_scheduler!r})")
        self.lr_scheduler = lr_scheduler
        if lr_scheduler is not None and hasattr(lr_scheduler, "base_lr"):
            lr_scheduler.base_lr = self.lr
        self.param_dict = dict(param_dict or {})
        self.lr_mult = {}
        self.wd_mult = {}
        self.begin_num_update = self.num_update = int(begin_num_update)
        self._index_update_count = {}

    # -- the learning rate and the multipliers --------------------------------------

    @property
    def learning_rate(self):
        """The current learning rate (the scheduler's, when there is one)."""
        if self.lr_scheduler is not None:
            return self.lr_scheduler(self.num_update)
        return self.lr

    def set_learning_rate(self, lr):
        """Set the learning rate; refused when an lr_scheduler owns it (as MXNet)."""
        if self.lr_scheduler is not None:
            raise UserWarning("LRScheduler of the optimizer has already been defined: "
                              "set_learning_rate can change the learning rate only of an "
                              "optimizer without one")
        self.lr = _number(type(self).__name__, "lr", lr, lo=0)

    def set_lr_mult(self, args_lr_mult):
        """Learning-rate multipliers by index (used where param_dict has no entry)."""
        self.lr_mult = dict(args_lr_mult)

    def set_wd_mult(self, args_wd_mult):
        """Weight-decay multipliers by index (used where param_dict has no entry)."""
        self.wd_mult = dict(args_wd_mult)

    def _mult(self, index, attr, table):
        p = self.param_dict.get(index)
        if p is not None:
            return float(getattr(p, attr, 1.0))
        return float(table.get(index, 1.0))

    def _get_lr(self, index):
        return self.learning_rate * self._mult(index, "lr_mult", self.lr_mult)

    def _get_wd(self, index):
        return self.wd * self._mult(index, "wd_mult", self.wd_mult)

    def _lr_wd(self, index):
        """(``_get_lr(index)``, ``_get_wd(index)``) as floats, with one look-up of the
        index's multipliers (the updates' per-step path)."""
        p = self.param_dict.get(index)
        if p is not None:
            lm, wm = getattr(p, "lr_mult", 1.0), getattr(p, "wd_mult", 1.0)
        else:
            lm, wm = self.lr_mult.get(index, 1.0), self.wd_mult.get(index, 1.0)
        return float(self.learning_rate * float(lm)), float(self.wd * float(wm))

    def _update_count(self, index):
        """Count one update of ``index``; returns its count (Adam's t)."""
        n = self._index_update_count.get(index, self.begin_num_update) + 1
        self._index_update_count[index] = n
        self.num_update = max(n, self.num_update)
        return n

    def _clip(self):
        """clip_gradient in the operators' form (< 0: no clipping)."""
        return -1.0 if self.clip_gradient is None else float(self.clip_gradient)

    @staticmethod
    def _op(name):
        op = _OPS.get(name)
        if op is None:
            op = _OPS[name] = registry.get(name)
        return op

    @classmethod
    def _run(cls, name, inputs, attrs):
        """Update operator ``name`` on ``inputs`` (weight, grad, states...) with ``out=``
        the weight; ``attrs`` every attribute of the op, as floats and bools."""
        invoke_parsed(cls._op(name), inputs, attrs, inputs[0], None)

    @classmethod
    def _check_plan(cls, name, inputs, attrs):
        """Raise what update operator ``name`` would raise on ``inputs`` and ``attrs``
        before writing anything (its attribute, context, shape, dtype and storage type
        checks), without running it: gluon's Trainer checks every parameter's update
        with it before it applies any."""
        op = cls._op(name)
        check_lr(name, attrs)
        ctx = inputs[0].context
        for x in inputs[1:]:
            if x.context != ctx:
                raise ValueError(f"{name}: all inputs must be on one context (got {ctx} "
                                 f"and {x.context})")
        op.infer_shape(attrs, [x.shape for x in inputs])
        op.infer_type(attrs, [np.dtype(x.dtype) for x in inputs])
        op.infer_storage(attrs, [x.stype for x in inputs])

    # -- the interface of subclasses ------------------------------------------------

    def create_state(self, index, weight):
        """The state of the weight at ``index`` (None: stateless)."""
        return None

    def update(self, index, weight, grad, state):
        """Update ``weight`` (and ``state``) in place from ``grad``: count the update,
        then run the operator that :meth:`_plan` names."""
        self._update_count(index)
        self._run(*self._plan(index, weight, grad, state))

    def _plan(self, index, weight, grad, state):
        """The update of ``index`` as (operator name, inputs, attributes), for the count
        already made by ``_update_count``; changes nothing.  A subclass defines it (the
        built-in optimizers do), or overrides :meth:`update` instead."""
        raise NotImplementedError(f"{type(self).__name__} must define update")

    @staticmethod
    def _zeros_like(weight):
        return nd.zeros(weight.shape, ctx=weight.context, dtype=weight.dtype)

    def __repr__(self):
        return f"{type(self).__name__}(learning_rate={self.learning_rate!r}, wd={self.wd!r})"


@register
class SGD(Optimizer):
    """SGD with optional momentum (MXNet's ``mx.optimizer.SGD``): ``sgd_update``, or
    ``sgd_mom_update`` when momentum is not 0 (state: the momentum).  With
    ``lazy_update`` a row_sparse gradient updates only its rows of weight and momentum."""

    def __init__(self, momentum=0.0, lazy_update=True, **kwargs):
        super().__init__(**kwargs)
        self.momentum = _number("SGD", "momentum", momentum, lo=0, hi=1)
        self.lazy_update = bool(lazy_update)

    def create_state(self, index, weight):
        return self._zeros_like(weight) if self.momentum != 0.0 else None

    def _plan(self, index, weight, grad, state):
        lr, wd = self._lr_wd(index)
        lazy, rescale, clip = bool(self.lazy_update), float(self.rescale_grad), self._clip()
        if state is None:
            return "sgd_update", [weight, grad], {
                "lr": lr, "wd": wd, "rescale_grad": rescale, "clip_gradient": clip,
                "lazy_update": lazy}
        return "sgd_mom_update", [weight, grad, state], {
            "lr": lr, "momentum": float(self.momentum), "wd": wd, "rescale_grad": rescale,
            "clip_gradient": clip, "lazy_update": lazy}


@register
class Adam(Optimizer):
    """Adam (MXNet's ``mx.optimizer.Adam``): the bias corrections fold into the learning
    rate, lr * sqrt(1 - beta2^t) / (1 - beta1^t) at the t-th update of a weight, and
    ``adam_update`` does the rest (state: mean and variance).  With ``lazy_update`` a
    row_sparse gradient updates only its rows of weight, mean and variance."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 lazy_update=True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = _number("Adam", "beta1", beta1, lo=0, hi=1)
        self.beta2 = _number("Adam", "beta2", beta2, lo=0, hi=1)
        self.epsilon = _number("Adam", "epsilon", epsilon, lo=0, lo_open=True)
        self.lazy_update = bool(lazy_update)

    def create_state(self, index, weight):
        return (self._zeros_like(weight), self._zeros_like(weight))

    def _plan(self, index, weight, grad, state):
        t = self._index_update_count[index]
        lr, wd = self._lr_wd(index)
        beta1, beta2 = float(self.beta1), float(self.beta2)
        lr *= math.sqrt(1.0 - beta2 ** t) / (1.0 - beta1 ** t)
        mean, var = state
        return "adam_update", [weight, grad, mean, var], {
            "lr": lr, "beta1": beta1, "beta2": beta2, "epsilon": float(self.epsilon),
            "wd": wd, "rescale_grad": float(self.rescale_grad),
            "clip_gradient": self._clip(), "lazy_update": bool(self.lazy_update)}


@register
class AdaGrad(Optimizer):
    """AdaGrad (MXNet's ``mx.optimizer.AdaGrad``) through ``adagrad_update`` for dense
    and row_sparse gradients alike: history += g^2; weight -= lr (g / (sqrt(history) +
    eps) + wd weight) (MXNet's dense Python path puts eps inside the square root; its
    sparse operator, used here for both, outside).  A row_sparse gradient updates only
    its rows (state: the history)."""

    def __init__(self, eps=1e-7, **kwargs):
        super().__init__(**kwargs)
        self.float_stable_eps = _number("AdaGrad", "eps", eps, lo=0, lo_open=True)

    def create_state(self, index, weight):
        return self._zeros_like(weight)

    def _plan(self, index, weight, grad, state):
        lr, wd = self._lr_wd(index)
        return "adagrad_update", [weight, grad, state], {
            "lr": lr, "epsilon": float(self.float_stable_eps),
            "wd": wd, "rescale_grad": float(self.rescale_grad),
            "clip_gradient": self._clip()}


class Updater:
    """Applies an optimizer to weights by index, making each weight's state on its first
    update (MXNet's ``mx.optimizer.Updater``, what ``get_updater`` returns and what a
    local KVStore calls): ``updater(index, grad, weight)``, or lists of each."""

    def __init__(self, optimizer):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"Updater: optimizer must be an Optimizer (got "
                            f"{type(optimizer).__name__})")
        self.optimizer = optimizer
        self.states = {}

    def __call__(self, index, grad, weight):
        if isinstance(index, (list, tuple)):
            if not (isinstance(grad, (list, tuple)) and isinstance(weight, (list, tuple))
                    and len(grad) == len(index) == len(weight)):
                raise ValueError("Updater: index, grad and weight must be lists of one "
                                 f"length (got {len(index)} indices)")
            for i, g, w in zip(index, grad, weight):
                self(i, g, w)
            return
        if index not in self.states:
            self.states[index] = self.optimizer.create_state(index, weight)
        self.optimizer.update(index, weight, grad, self.states[index])

    def get_states(self, dump_optimizer=False):
        """The states (and the optimizer when ``dump_optimizer``), pickled."""
        return pickle.dumps((self.states, self.optimizer) if dump_optimizer else self.states)

    def set_states(self, states):
        """Restore what :meth:`get_states` gave."""
        loaded = pickle.loads(states)
        if isinstance(loaded, tuple) and len(loaded) == 2:
            self.states, self.optimizer = loaded
        else:
            self.states = loaded


def get_updater(optimizer):
    """An :class:`Updater` of ``optimizer`` (MXNet's ``mx.optimizer.get_updater``)."""
    return Updater(optimizer)

