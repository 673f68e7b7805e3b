"""Optimizers (MXNet 1.x's ``mx.optimizer``): :class:`Optimizer`, :class:`SGD`,
:class:`Adam`, :class:`AdaGrad`, :func:`create` and :func:`register`.

An optimizer keeps no arrays of its own: ``create_state(index, weight)`` makes the
state of one weight (momentum, Adam's mean and variance, AdaGrad's history, as arrays
beside the weight) and ``update(index, weight, grad, state)`` runs one update
operator of runtime/ops/optimizer_op.py with ``out=weight``, which writes the weight and its
state in place.  A row_sparse ``grad`` takes the operators' row_sparse kernels: with
``lazy_update=True`` only the rows present in the gradient are touched (MXNet's lazy
update), else every row is (the standard update).  A row_sparse weight (which must store
every row: gluon's row_sparse Parameters do) gets row_sparse states, as in MXNet, so that
the lazy update keeps its meaning; the operators' docstring says which update each
storage-type combination takes.  Per-weight learning-rate and weight
decay multipliers come from ``param_dict`` (index -> a Parameter with ``lr_mult`` and
``wd_mult``, which gluon's Trainer fills) or from :meth:`Optimizer.set_lr_mult` and
:meth:`Optimizer.set_wd_mult` (index or name -> multiplier; names through
``param_idx2name``, defaults from ``sym``'s attributes, as Module sets them).

The update operators are called through the invoker with their attributes already in
the registry's form (a dict of floats and bools, as ``Op.parse_attrs`` gives), which
spares parsing keyword arguments on every update: Adam's learning rate changes at every
step (the bias corrections), so a parse would not be served by the parse cache.  The
invoker still infers (and checks) every call, bumps the versions of the weight and the
states, and refuses writes into arrays on the tape while recording.
"""

import math
import os
import pickle
import warnings

import numpy as np

from runtime import _files, nd
from runtime._imperative import invoke_parsed
from runtime.ops import registry
from runtime.ops.optimizer_op import as_number as _number
from runtime.ops.optimizer_op import MAX_WEIGHTS, check_lr, check_lrs, check_number, check_rows

__all__ = ["Optimizer", "SGD", "ccSGD", "Adam", "AdaGrad", "NAG", "RMSProp", "Ftrl", "Signum",
           "Adamax", "AdaDelta", "Nadam", "SGLD", "DCASGD", "LAMB", "FTML", "LARS", "LBSGD",
           "Updater",
           "get_updater", "create", "register"]

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
    learning_rate : float >= 0, optional
        None: the lr_scheduler's ``base_lr`` when one is given, else the class's default
        (0.01; Adam and RMSProp 0.001, Ftrl 0.1).
    wd : float
        Weight decay (L2 regularisation) coefficient.
    rescale_grad : float
        Every gradient is multiplied by it first (gluon's Trainer sets 1 / batch_size).
    clip_gradient : float or None
        Clip the rescaled gradient to [-clip_gradient, clip_gradient]; None: no clipping.
    lr_scheduler : callable num_update -> learning rate, optional
    param_dict : dict index -> Parameter, optional
        Whose ``lr_mult`` and ``wd_mult`` scale the learning rate and wd of each index.
    sym : Symbol, optional
        Its arguments' ``__lr_mult__`` and ``__wd_mult__`` attributes become the
        multipliers of those names (Module passes its symbol).
    param_idx2name : dict index -> str, optional
        The name of each index, for multipliers given by name; as in MXNet, every name
        that ends neither in ``_weight`` nor in ``_gamma`` (biases, BatchNorm's beta)
        gets weight decay multiplier 0 unless given one.
    begin_num_update : int
        The update count to start from.
    multi_precision : bool
        Keep a float32 master copy of each float16 weight: the update runs on it (and
        the state is made for it) and the weight receives it cast back to float16
        (MXNet's ``create_state_multi_precision``/``update_multi_precision``, which the
        Updater and gluon's Trainer call).
    """

    name = "optimizer"
    default_lr = 0.01

    def __init__(self, learning_rate=None, wd=0.0, rescale_grad=1.0, clip_gradient=None,
                 lr_scheduler=None, param_dict=None, begin_num_update=0,
                 multi_precision=False, sym=None, param_idx2name=None):
        owner = type(self).__name__
        if learning_rate is None:
            learning_rate = getattr(lr_scheduler, "base_lr", self.default_lr)
        self.lr = _number(owner, "learning_rate", learning_rate, lo=0)
        self.wd = _number(owner, "wd", wd)
        self.rescale_grad = _number(owner, "rescale_grad", rescale_grad)
        self.clip_gradient = (None if clip_gradient is None else
                              _number(owner, "clip_gradient", clip_gradient, lo=0))
        if lr_scheduler is not None and not callable(lr_scheduler):
            raise TypeError(f"{owner}: lr_scheduler must be callable num_update -> lr (got "
                            f"{lr_scheduler!r})")
        self.lr_scheduler = lr_scheduler
        if hasattr(lr_scheduler, "_set_base_lr"):
            lr_scheduler._set_base_lr(self.lr)
        elif lr_scheduler is not None and hasattr(lr_scheduler, "base_lr"):
            lr_scheduler.base_lr = self.lr
        self.param_dict = dict(param_dict or {})
        if param_idx2name is not None and not isinstance(param_idx2name, dict):
            raise TypeError(f"{owner}: param_idx2name must be a dict index -> name (got "
                            f"{type(param_idx2name).__name__})")
        self.idx2name = dict(param_idx2name or {})
        self.sym_info = (sym.attr_dict(), sym.list_arguments()) if sym is not None else ()
        self.set_lr_mult({})
        self.set_wd_mult({})
        self.begin_num_update = self.num_update = int(begin_num_update)
        self.multi_precision = bool(multi_precision)
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
        """Learning-rate multipliers by index or name, over those of the symbol's
        ``__lr_mult__`` attributes (used where param_dict has no entry)."""
        self.lr_mult = self._sym_mults("__lr_mult__")
        self.lr_mult.update(args_lr_mult)

    def set_wd_mult(self, args_wd_mult):
        """Weight-decay multipliers by index or name, over those of the symbol's
        ``__wd_mult__`` attributes and 0 for every name of ``param_idx2name`` that ends
        neither in ``_weight`` nor in ``_gamma`` (used where param_dict has no entry)."""
        self.wd_mult = {n: 0.0 for n in self.idx2name.values()
                        if not (n.endswith("_weight") or n.endswith("_gamma"))}
        self.wd_mult.update(self._sym_mults("__wd_mult__"))
        self.wd_mult.update(args_wd_mult)

    def _sym_mults(self, key):
        if not self.sym_info:
            return {}
        attrs, names = self.sym_info
        return {n: float(attrs[n][key]) for n in names if key in attrs.get(n, ())}

    def _mult(self, index, attr, table):
        p = self.param_dict.get(index)
        if p is not None:
            return float(getattr(p, attr, 1.0))
        m = table.get(index)
        if m is None:
            m = table.get(self.idx2name.get(index), 1.0)
        return float(m)

    def __getstate__(self):
        # the parameters are the caller's, not part of a saved optimizer (MXNet 1.x
        # pickles an optimizer without its param_dict as well)
        state = self.__dict__.copy()
        state["param_dict"] = {}
        return state

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
            lm, wm = self.lr_mult.get(index), self.wd_mult.get(index)
            if lm is None:
                lm = self.lr_mult.get(self.idx2name.get(index), 1.0)
            if wm is None:
                wm = self.wd_mult.get(self.idx2name.get(index), 1.0)
        return float(self.learning_rate * float(lm)), float(self.wd * float(wm))

    def _update_count(self, index):
        """Count one update of ``index``; returns its count (Adam's t)."""
        n = self._index_update_count.get(index, self.begin_num_update) + 1
        self._index_update_count[index] = n
        self.num_update = max(n, self.num_update)
        return n

    def _count_and_common(self, index):
        """Count one update of ``index`` and return the attributes every update operator
        takes (lr, wd, rescale_grad, clip_gradient) for it."""
        self._update_count(index)
        lr, wd = self._lr_wd(index)
        return {"lr": lr, "wd": wd, "rescale_grad": float(self.rescale_grad),
                "clip_gradient": self._clip()}

    def _scaled_grad(self, weight, grad, wd):
        """clip(rescale_grad grad + wd weight) (wd None: without the term) as a new dense
        array (the Python-level updates of MXNet's optimizers without an update operator;
        a row_sparse gradient counts as its dense form, as in their formulas; wd = 0 still
        adds 0 * weight, as they do, so a NaN weight makes a NaN gradient)."""
        g = grad.tostype("default") if grad.stype != "default" else grad
        g = g * float(self.rescale_grad)
        if wd is not None:
            g = g + weight * wd
        if self.clip_gradient is not None:
            g = nd.clip(g, -float(self.clip_gradient), float(self.clip_gradient))
        return g

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
    def _run_multi(cls, name, inputs, attrs):
        """Aggregated update operator ``name`` (the arrays of each weight in turn, the
        weight first) with ``out=`` the weights."""
        k = len(inputs) // attrs["num_weights"]
        invoke_parsed(cls._op(name), inputs, attrs, inputs[::k], None)

    @classmethod
    def _check_plan(cls, name, inputs, attrs):
        """Raise what update operator ``name`` would raise on ``inputs`` and ``attrs``
        before writing anything (its attribute, context, shape, dtype and storage type
        checks), without running it: gluon's Trainer checks every parameter's update
        with it before it applies any."""
        op = cls._op(name)
        if "lrs" in attrs:
            check_lrs(name, attrs["lrs"], attrs["num_weights"])
        else:
            check_lr(name, attrs)
        ctx = inputs[0].context
        for x in inputs[1:]:
            if x.context != ctx:
                raise ValueError(f"{name}: all inputs must be on one context (got {ctx} "
                                 f"and {x.context})")
        op.infer_shape(attrs, [x.shape for x in inputs])
        op.infer_type(attrs, [np.dtype(x.dtype) for x in inputs])
        op.infer_storage(attrs, [x.stype for x in inputs])
        if any(x.stype != "default" for x in inputs):
            check_rows(name, op.inputs[2:], inputs)

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

    # How many dense weights of one dtype and context one call may update (MXNet's
    # aggregate_num): 0, no aggregated update; gluon's Trainer calls :meth:`_plan_multi`
    # for groups of that many where an optimizer sets it.
    aggregate_num = 0

    def _plan_multi(self, indices, weights, grads, states):
        """The update of the dense weights ``weights`` (one dtype and context) at
        ``indices`` as one (operator name, inputs, attributes), for the counts already
        made by ``_update_count``; changes nothing.  Defined where ``aggregate_num`` is
        set."""
        raise NotImplementedError(f"{type(self).__name__} has no aggregated update")

    def _master(self, weight):
        return self.multi_precision and np.dtype(weight.dtype) == np.float16

    def create_state_multi_precision(self, index, weight):
        """The state of ``weight``; with ``multi_precision`` and a float16 weight,
        (float32 master copy, the state made for the copy)."""
        if self._master(weight):
            master = weight.astype(np.float32)
            return (master, self.create_state(index, master))
        if np.dtype(weight.dtype) == np.float16:
            warnings.warn("Accumulating with float16 in optimizer can lead to poor accuracy "
                          "or slow convergence. Consider using multi_precision=True option "
                          "of the optimizer", UserWarning, stacklevel=2)
        return self.create_state(index, weight)

    def update_multi_precision(self, index, weight, grad, state):
        """:meth:`update`, on the float32 master copy of a float16 weight (then cast
        back into the weight) when ``multi_precision``."""
        if self._master(weight):
            master, inner = state
            self.update(index, master, grad.astype(np.float32), inner)
            weight[:] = master.astype(weight.dtype)
        else:
            self.update(index, weight, grad, state)

    @staticmethod
    def _zeros_like(weight):
        return nd.zeros(weight.shape, ctx=weight.context, dtype=weight.dtype)

    @staticmethod
    def _state_like(weight):
        """Zeros of the weight's shape, dtype, context and storage type: the state of an
        update operator (MXNet's ``create_state``); a row_sparse one stores no rows
        until the first update gives it every row."""
        return nd.zeros(weight.shape, ctx=weight.context, dtype=weight.dtype,
                        stype=weight.stype)

    def __repr__(self):
        return f"{type(self).__name__}(learning_rate={self.learning_rate!r}, wd={self.wd!r})"


def _aggregation_size():
    """MXNET_OPTIMIZER_AGGREGATION_SIZE (default 4, at most MAX_WEIGHTS), as MXNet reads it
    when it makes an optimizer."""
    raw = os.environ.get("MXNET_OPTIMIZER_AGGREGATION_SIZE", "4")
    try:
        n = int(raw)
    except ValueError:
        raise ValueError(f"MXNET_OPTIMIZER_AGGREGATION_SIZE must be an integer (got "
                         f"{raw!r})") from None
    return max(1, min(MAX_WEIGHTS, n))


@register
class SGD(Optimizer):
    """SGD with optional momentum (MXNet's ``mx.optimizer.SGD``): ``sgd_update``, or
    ``sgd_mom_update`` when momentum is not 0 (state: the momentum).  With
    ``lazy_update`` a row_sparse gradient updates only its rows of weight and momentum.
    gluon's Trainer updates the dense weights of one dtype and context in groups of
    ``aggregate_num`` (MXNET_OPTIMIZER_AGGREGATION_SIZE when the optimizer is made,
    default 4, 1 to 60) with one ``multi_sgd_update`` / ``multi_sgd_mom_update`` each, as
    MXNet 1.9.1's SGD does."""

    def __init__(self, momentum=0.0, lazy_update=True, **kwargs):
        super().__init__(**kwargs)
        self.momentum = _number("SGD", "momentum", momentum, lo=0, hi=1)
        self.lazy_update = bool(lazy_update)
        self.aggregate_num = _aggregation_size()

    def _plan_multi(self, indices, weights, grads, states):
        """``multi_sgd_update`` (``multi_sgd_mom_update`` with momentum) of every weight,
        as MXNet 1.9.1's SGD updates the dense weights of one dtype; for float16 weights
        with ``multi_precision``, ``multi_mp_sgd_update`` (``multi_mp_sgd_mom_update``)
        on their float32 master copies."""
        lrs, wds = zip(*[self._lr_wd(i) for i in indices])
        attrs = {"lrs": lrs, "wds": wds}
        mp = self._master(weights[0])            # a group has one dtype
        masters = [s[0] for s in states] if mp else None
        moms = [s[1] for s in states] if mp else states
        arrays = [weights, grads]
        if self.momentum != 0.0:
            attrs["momentum"] = float(self.momentum)
            arrays.append(moms)
        if mp:
            arrays.append(masters)
        name = (f"multi_{'mp_' if mp else ''}sgd_"
                f"{'mom_' if self.momentum != 0.0 else ''}update")
        inputs = [x for group in zip(*arrays) for x in group]
        attrs.update({"rescale_grad": float(self.rescale_grad),
                      "clip_gradient": self._clip(), "num_weights": len(indices)})
        return name, inputs, attrs

    def create_state(self, index, weight):
        return self._state_like(weight) if self.momentum != 0.0 else None

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
class ccSGD(SGD):
    """MXNet 1.x's deprecated ``ccsgd``: the same as :class:`SGD`, kept for the
    programs that still name it."""


@register
class Adam(Optimizer):
    """Adam (MXNet's ``mx.optimizer.Adam``): the bias corrections fold into the learning
    rate, lr * sqrt(1 - beta2^t) / (1 - beta1^t) at the t-th update of a weight, and
    ``adam_update`` does the rest (state: mean and variance).  With ``lazy_update`` a
    row_sparse gradient updates only its rows of weight, mean and variance."""

    default_lr = 0.001

    def __init__(self, learning_rate=None, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 lazy_update=True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = _number("Adam", "beta1", beta1, lo=0, hi=1)
        self.beta2 = _number("Adam", "beta2", beta2, lo=0, hi=1)
        self.epsilon = _number("Adam", "epsilon", epsilon, lo=0, lo_open=True)
        self.lazy_update = bool(lazy_update)

    def create_state(self, index, weight):
        return (self._state_like(weight), self._state_like(weight))

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
    and row_sparse gradients alike: history += g^2; weight -= lr (g / sqrt(history +
    eps) + wd weight), eps inside the square root as in MXNet 1.9.1's dense Python path
    and its sparse operator.  A row_sparse gradient updates only its rows (state: the
    history)."""

    def __init__(self, eps=1e-7, **kwargs):
        super().__init__(**kwargs)
        self.float_stable_eps = _number("AdaGrad", "eps", eps, lo=0, lo_open=True)

    def create_state(self, index, weight):
        return self._state_like(weight)

    def _plan(self, index, weight, grad, state):
        lr, wd = self._lr_wd(index)
        return "adagrad_update", [weight, grad, state], {
            "lr": lr, "epsilon": float(self.float_stable_eps),
            "wd": wd, "rescale_grad": float(self.rescale_grad),
            "clip_gradient": self._clip()}


@register
class NAG(Optimizer):
    """Nesterov accelerated gradient (MXNet's ``mx.optimizer.NAG``): ``nag_mom_update``
    (state: the momentum), or ``sgd_update`` when momentum is 0.  A row_sparse gradient
    takes the standard update (every row), as MXNet's storage fallback gives."""

    def __init__(self, momentum=0.0, **kwargs):
        super().__init__(**kwargs)
        self.momentum = _number("NAG", "momentum", momentum, lo=0, hi=1)

    def create_state(self, index, weight):
        return self._state_like(weight) if self.momentum != 0.0 else None

    def update(self, index, weight, grad, state):
        common = self._count_and_common(index)
        if state is None:
            self._run("sgd_update", [weight, grad], {**common, "lazy_update": False})
        else:
            self._run("nag_mom_update", [weight, grad, state],
                      {**common, "momentum": float(self.momentum)})


@register
class RMSProp(Optimizer):
    """RMSProp (MXNet's ``mx.optimizer.RMSProp``): Tieleman and Hinton's form through
    ``rmsprop_update`` (state: the 1-tuple ``(n,)`` of the mean square, as in MXNet
    1.x), or with ``centered=True`` Graves' form through ``rmspropalex_update`` (states:
    n, the mean gradient g, delta; ``gamma2`` is its momentum)."""

    default_lr = 0.001

    def __init__(self, learning_rate=None, gamma1=0.9, gamma2=0.9, epsilon=1e-8,
                 centered=False, clip_weights=None, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.gamma1 = _number("RMSProp", "gamma1", gamma1, lo=0, hi=1)
        self.gamma2 = _number("RMSProp", "gamma2", gamma2, lo=0, hi=1)
        self.epsilon = _number("RMSProp", "epsilon", epsilon, lo=0, lo_open=True)
        self.centered = bool(centered)
        self.clip_weights = (None if clip_weights is None else
                             _number("RMSProp", "clip_weights", clip_weights, lo=0))

    def create_state(self, index, weight):
        if self.centered:
            return tuple(self._state_like(weight) for _ in range(3))
        return (self._state_like(weight),)

    def update(self, index, weight, grad, state):
        attrs = {**self._count_and_common(index), "gamma1": float(self.gamma1),
                 "epsilon": float(self.epsilon),
                 "clip_weights": -1.0 if self.clip_weights is None else float(self.clip_weights)}
        if self.centered:
            self._run("rmspropalex_update", [weight, grad, *state],
                      {**attrs, "gamma2": float(self.gamma2)})
        else:
            self._run("rmsprop_update", [weight, grad, *state], attrs)


@register
class Ftrl(Optimizer):
    """FTRL-proximal (MXNet's ``mx.optimizer.Ftrl``) through ``ftrl_update`` (states: z
    and n); a row_sparse gradient takes the standard update, as in MXNet."""

    default_lr = 0.1

    def __init__(self, lamda1=0.01, learning_rate=None, beta=1, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.lamda1 = _number("Ftrl", "lamda1", lamda1, lo=0)
        self.beta = _number("Ftrl", "beta", beta, lo=0)

    def create_state(self, index, weight):
        return (self._state_like(weight), self._state_like(weight))

    def update(self, index, weight, grad, state):
        z, n = state
        self._run("ftrl_update", [weight, grad, z, n], {
            **self._count_and_common(index), "lamda1": float(self.lamda1),
            "beta": float(self.beta)})


@register
class FTML(Optimizer):
    """FTML, Follow the Moving Leader (MXNet's ``mx.optimizer.FTML``) through
    ``ftml_update`` (states: d, v, z); a row_sparse gradient takes the standard update,
    as in MXNet."""

    def __init__(self, learning_rate=None, beta1=0.6, beta2=0.999, epsilon=1e-8, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = _number("FTML", "beta1", beta1, lo=0, hi=1)
        self.beta2 = _number("FTML", "beta2", beta2, lo=0, hi=1)
        self.epsilon = _number("FTML", "epsilon", epsilon, lo=0, lo_open=True)

    def create_state(self, index, weight):
        return tuple(self._state_like(weight) for _ in range(3))

    def update(self, index, weight, grad, state):
        attrs = self._count_and_common(index)
        attrs["clip_grad"] = attrs.pop("clip_gradient")
        self._run("ftml_update", [weight, grad, *state], {
            **attrs, "beta1": float(self.beta1), "beta2": float(self.beta2),
            "epsilon": float(self.epsilon), "t": self._index_update_count[index]})


@register
class LARS(Optimizer):
    """LARS, layer-wise adaptive rate scaling (MXNet's ``mx.optimizer.LARS``): SGD (with
    momentum) whose learning rate, for a weight whose name does not end in ``gamma``,
    ``beta`` or ``bias``, is scaled by eta ||weight|| / (||rescale_grad grad|| + wd
    ||weight|| + eps) when both norms are > 0 (MXNet's ``multi_lars``), through
    ``sgd_update``/``sgd_mom_update``.  With ``momentum_correction`` the momentum is
    scaled by the ratio of this update's learning rate to the previous one's (a schedule
    that changes it); a name comes from ``param_dict`` (else the index)."""

    def __init__(self, momentum=0.0, lazy_update=True, eta=0.001, eps=0.0,
                 momentum_correction=True, **kwargs):
        super().__init__(**kwargs)
        self.momentum = _number("LARS", "momentum", momentum, lo=0, hi=1)
        self.lazy_update = bool(lazy_update)
        self.eta = _number("LARS", "eta", eta, lo=0)
        self.eps = _number("LARS", "eps", eps, lo=0)
        self.momentum_correction = bool(momentum_correction)
        self.last_lr = self.cur_lr = None

    def create_state(self, index, weight):
        return self._state_like(weight) if self.momentum != 0.0 else None

    @staticmethod
    def _norm(x):
        values = x if x.stype == "default" else x.data
        return math.sqrt(float(nd.square_sum(values.astype(np.float32)).asscalar())) \
            if values.size else 0.0

    def update(self, index, weight, grad, state):
        base = self.learning_rate
        self.last_lr = base if self.cur_lr is None else self.cur_lr
        self.cur_lr = base
        attrs = self._count_and_common(index)
        p = self.param_dict.get(index)
        name = getattr(p, "name", str(index))
        if not name.endswith(("gamma", "beta", "bias")):
            w_norm = self._norm(weight)
            g_norm = self._norm(grad) * abs(float(self.rescale_grad))
            if w_norm > 0.0 and g_norm > 0.0:
                attrs["lr"] *= self.eta * w_norm / (g_norm + attrs["wd"] * w_norm + self.eps)
        attrs["lazy_update"] = self.lazy_update
        if state is None:
            self._run("sgd_update", [weight, grad], attrs)
            return
        momentum = self.momentum
        if self.momentum_correction and self.last_lr != 0:
            momentum *= self.cur_lr / self.last_lr
        self._run("sgd_mom_update", [weight, grad, state], {**attrs, "momentum": momentum})


@register
class LBSGD(Optimizer):
    """Large-batch SGD (MXNet's ``mx.optimizer.LBSGD``): SGD with momentum through
    ``sgd_update``/``sgd_mom_update`` (lazy for a row_sparse gradient), its learning rate
    scaled by a warm-up multiplier, with gradients accumulated over ``batch_scale``
    calls.

    Each call adds the gradient to the index's accumulated one and counts it (the count
    starts at ``begin_epoch * updates_per_epoch`` and is never reset); when the count is a
    multiple of ``batch_scale`` the update runs with the mean of the accumulated
    gradients, which then restart from zero, else the weight is left as it is (MXNet
    runs ``sgd_update`` with lr 0, which changes nothing).  The multiplier at count n,
    with nw = warmup_epochs * updates_per_epoch and B = batch_scale: B where n >= nw;
    else 1 where nw <= 1; else ``linear`` 1 + (B - 1) n / nw, ``power2`` 1 + (B - 1)
    (n / nw)^2, ``sqrt`` 1 + (B - 1) sqrt(n / nw); ``lars``: sqrt(||w||^2 / (||g||^2 + wd
    ||w||^2 + 1e-18)) within [0.01, 100], g the mean gradient before rescaling.  The
    learning rate and wd are read before the update is counted, as in MXNet.  Unlike
    MXNet's, the accumulated gradient is a copy (MXNet keeps the first gradient array
    itself, which the next backward overwrites), and an unknown ``warmup_strategy`` is
    refused (MXNet silently uses 1)."""

    STRATEGIES = ("linear", "power2", "sqrt", "lars")

    def __init__(self, momentum=0.0, multi_precision=False, warmup_strategy="linear",
                 warmup_epochs=5, batch_scale=1, updates_per_epoch=32, begin_epoch=0,
                 num_epochs=60, **kwargs):
        super().__init__(multi_precision=multi_precision, **kwargs)
        self.momentum = _number("LBSGD", "momentum", momentum, lo=0, hi=1)
        if warmup_strategy not in self.STRATEGIES:
            raise ValueError(f"LBSGD: warmup_strategy must be one of "
                             f"{', '.join(self.STRATEGIES)} (got {warmup_strategy!r})")
        self.warmup_strategy = warmup_strategy
        self.warmup_epochs = _count("warmup_epochs", warmup_epochs, 0)
        self.batch_scale = _count("batch_scale", batch_scale, 1)
        self.updates_per_epoch = _count("updates_per_epoch", updates_per_epoch, 1)
        self.init_updates = _count("begin_epoch", begin_epoch, 0) * self.updates_per_epoch
        self.num_epochs = _count("num_epochs", num_epochs, 0)
        self.cumgrads = {}       # index -> [accumulated gradient or None, count]

    def create_state(self, index, weight):
        return self._zeros_like(weight) if self.momentum != 0.0 else None

    def _get_lbmult(self, nup):
        """The warm-up multiplier at count ``nup`` (class docstring)."""
        nwup = self.warmup_epochs * self.updates_per_epoch
        most = float(self.batch_scale)
        if nup >= nwup:
            return most
        if nwup <= 1:
            return 1.0
        if self.warmup_strategy == "linear":
            return 1.0 + (most - 1) * nup / nwup
        if self.warmup_strategy == "power2":
            return 1.0 + (most - 1) * (nup * nup) / (nwup * nwup)
        return 1.0 + (most - 1) * math.sqrt(float(nup) / nwup)

    @staticmethod
    def _sq_norm(x):
        v = x.asnumpy()
        return float((v * v).sum())

    def _get_lars(self, weight, g, wd):
        """The ``lars`` multiplier (class docstring)."""
        w2, g2 = self._sq_norm(weight), self._sq_norm(g)
        return min(max(math.sqrt(w2 / (g2 + wd * w2 + 1e-18)), 0.01), 100.0)

    def update(self, index, weight, grad, state):
        lr, wd = self._lr_wd(index)
        self._update_count(index)
        entry = self.cumgrads.get(index)
        if entry is None:
            entry = self.cumgrads[index] = [None, self.init_updates]
        entry[0] = grad.copy() if entry[0] is None else entry[0] + grad
        entry[1] += 1
        if entry[1] % self.batch_scale:
            return
        g = entry[0] / float(self.batch_scale)
        entry[0] = None
        if self.warmup_strategy == "lars":
            lr *= self._get_lars(weight, g, wd)
        else:
            lr *= self._get_lbmult(entry[1])
        attrs = {"lr": lr, "wd": wd, "rescale_grad": float(self.rescale_grad),
                 "clip_gradient": float(self.clip_gradient) if self.clip_gradient else -1.0,
                 "lazy_update": True}
        if state is None:
            self._run("sgd_update", [weight, g], attrs)
        else:
            self._run("sgd_mom_update", [weight, g, state],
                      {**attrs, "momentum": float(self.momentum)})


def _count(name, v, lo):
    """``v`` as an int >= ``lo`` (LBSGD's counts)."""
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
        raise ValueError(f"LBSGD: {name} must be an integer >= {lo} (got {v!r})")
    return int(v)


@register
class Signum(Optimizer):
    """Signum (MXNet's ``mx.optimizer.Signum``): ``signum_update`` (state: the
    momentum), or ``signsgd_update`` when momentum is 0; ``wd_lh`` is the decoupled
    weight decay.  A row_sparse gradient takes the standard update, as in MXNet."""

    def __init__(self, learning_rate=None, momentum=0.9, wd_lh=0.0, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.momentum = _number("Signum", "momentum", momentum, lo=0, hi=1)
        self.wd_lh = _number("Signum", "wd_lh", wd_lh)

    def create_state(self, index, weight):
        return self._state_like(weight) if self.momentum != 0.0 else None

    def update(self, index, weight, grad, state):
        common = self._count_and_common(index)
        if state is None:
            self._run("signsgd_update", [weight, grad], common)
        else:
            self._run("signum_update", [weight, grad, state], {
                **common, "momentum": float(self.momentum), "wd_lh": float(self.wd_lh)})


@register
class Adamax(Optimizer):
    """AdaMax, Adam on the infinity norm (MXNet's ``mx.optimizer.Adamax``; MXNet has no
    update operator for it, nor does ndrt: NDArray formulas).  g = clip(rescale_grad
    grad + wd weight); m = beta1 m + (1 - beta1) g; u = max(beta2 u, |g|); weight -= lr /
    (1 - beta1^t) m / u (states: m and u)."""

    default_lr = 0.002

    def __init__(self, learning_rate=None, beta1=0.9, beta2=0.999, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = _number("Adamax", "beta1", beta1, lo=0, hi=1)
        self.beta2 = _number("Adamax", "beta2", beta2, lo=0, hi=1)

    def create_state(self, index, weight):
        return (self._zeros_like(weight), self._zeros_like(weight))

    def update(self, index, weight, grad, state):
        t = self._update_count(index)
        lr, wd = self._lr_wd(index)
        lr /= 1.0 - self.beta1 ** t
        g = self._scaled_grad(weight, grad, wd)
        m, u = state
        m[:] = m * self.beta1 + g * (1.0 - self.beta1)
        u[:] = nd.maximum(u * self.beta2, nd.abs(g))
        weight[:] = weight - m / u * lr


@register
class AdaDelta(Optimizer):
    """AdaDelta (MXNet's ``mx.optimizer.AdaDelta``; NDArray formulas, no update operator
    in MXNet): g = clip(rescale_grad grad); acc_g = rho acc_g + (1 - rho) g^2; delta =
    sqrt(acc_delta + eps) / sqrt(acc_g + eps) g; acc_delta = rho acc_delta + (1 - rho)
    delta^2; weight -= delta + wd weight (the learning rate is not used, as MXNet's)."""

    def __init__(self, rho=0.90, epsilon=1e-5, **kwargs):
        super().__init__(**kwargs)
        self.rho = _number("AdaDelta", "rho", rho, lo=0, hi=1)
        self.epsilon = _number("AdaDelta", "epsilon", epsilon, lo=0, lo_open=True)

    def create_state(self, index, weight):
        return (self._zeros_like(weight), self._zeros_like(weight))

    def update(self, index, weight, grad, state):
        self._update_count(index)
        _, wd = self._lr_wd(index)
        g = self._scaled_grad(weight, grad, None)
        acc_g, acc_delta = state
        rho, eps = self.rho, self.epsilon
        acc_g[:] = acc_g * rho + g * g * (1.0 - rho)
        delta = nd.sqrt(acc_delta + eps) / nd.sqrt(acc_g + eps) * g
        acc_delta[:] = acc_delta * rho + delta * delta * (1.0 - rho)
        weight[:] = weight - (delta + weight * wd)


@register
class Nadam(Optimizer):
    """Adam with Nesterov momentum (MXNet's ``mx.optimizer.Nadam``; NDArray formulas, no
    update operator in MXNet), with Dozat's momentum schedule: momentum_t = beta1 (1 -
    0.5 * 0.96^(t schedule_decay)); the product of the momenta so far, ``m_schedule``, is
    kept by the optimizer for all weights together, as in MXNet (states: m and v)."""

    default_lr = 0.001

    def __init__(self, learning_rate=None, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 schedule_decay=0.004, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = _number("Nadam", "beta1", beta1, lo=0, hi=1)
        self.beta2 = _number("Nadam", "beta2", beta2, lo=0, hi=1)
        self.epsilon = _number("Nadam", "epsilon", epsilon, lo=0, lo_open=True)
        self.schedule_decay = _number("Nadam", "schedule_decay", schedule_decay, lo=0)
        self.m_schedule = 1.0

    def create_state(self, index, weight):
        return (self._zeros_like(weight), self._zeros_like(weight))

    def update(self, index, weight, grad, state):
        t = self._update_count(index)
        lr, wd = self._lr_wd(index)
        g = self._scaled_grad(weight, grad, wd)
        b1, b2 = self.beta1, self.beta2
        mom_t = b1 * (1.0 - 0.5 * 0.96 ** (t * self.schedule_decay))
        mom_next = b1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * self.schedule_decay))
        self.m_schedule *= mom_t
        schedule_next = self.m_schedule * mom_next
        m, v = state
        m[:] = m * b1 + g * (1.0 - b1)
        v[:] = v * b2 + g * g * (1.0 - b2)
        m_bar = (g * ((1.0 - mom_t) / (1.0 - self.m_schedule))
                 + m * (mom_next / (1.0 - schedule_next)))
        v_prime = v / (1.0 - b2 ** t)
        weight[:] = weight - m_bar / (nd.sqrt(v_prime) + self.epsilon) * lr


@register
class SGLD(Optimizer):
    """Stochastic gradient Langevin dynamics (MXNet's ``mx.optimizer.SGLD``; NDArray
    formulas): weight += -lr / 2 (clip(rescale_grad grad) + wd weight) + N(0, sqrt(lr)),
    the noise drawn from ``runtime.random`` (``mx.random.seed`` makes it repeatable)."""

    def create_state(self, index, weight):
        return None

    def update(self, index, weight, grad, state):
        self._update_count(index)
        lr, wd = self._lr_wd(index)
        g = self._scaled_grad(weight, grad, None)
        noise = nd.random.normal(0.0, math.sqrt(lr), shape=weight.shape, dtype=weight.dtype,
                                 ctx=weight.context)
        weight[:] = weight - (g + weight * wd) * (lr / 2) + noise


@register
class DCASGD(Optimizer):
    """Delay-compensated asynchronous SGD (MXNet's ``mx.optimizer.DCASGD``; NDArray
    formulas): step = -lr (g + wd weight + lamda g^2 (weight - previous weight)), with
    g = clip(rescale_grad grad); with momentum, mom = momentum mom + step and the weight
    moves by mom (states: the momentum or None, and the previous weight)."""

    def __init__(self, momentum=0.0, lamda=0.04, **kwargs):
        super().__init__(**kwargs)
        self.momentum = _number("DCASGD", "momentum", momentum, lo=0, hi=1)
        self.lamda = _number("DCASGD", "lamda", lamda)

    def create_state(self, index, weight):
        mom = self._zeros_like(weight) if self.momentum != 0.0 else None
        return (mom, weight.copy())

    def update(self, index, weight, grad, state):
        self._update_count(index)
        lr, wd = self._lr_wd(index)
        g = self._scaled_grad(weight, grad, None)
        mom, previous = state
        step = (g + weight * wd + g * g * (weight - previous) * self.lamda) * -lr
        if mom is not None:
            mom[:] = mom * self.momentum + step
            step = mom
        previous[:] = weight
        weight[:] = weight + step


@register
class LAMB(Optimizer):
    """LAMB (MXNet's ``mx.optimizer.LAMB``) through ``lamb_update_phase1`` (the moments,
    and g = mean / (sqrt(var) + epsilon) + wd weight, bias-corrected with
    ``bias_correction``), then ``lamb_update_phase2`` with r1 = ||weight|| (within
    [lower_bound, upper_bound] when given) and r2 = ||g||: weight -= lr (r1 / r2 when
    both are > 0, else 1) g (states: mean, var).  A row_sparse gradient counts as its
    dense form (MXNet's storage fallback).  ``multi_precision`` with a float16 weight
    runs ``mp_lamb_update_phase1/2`` on its float32 master copy.  As in MXNet, a bound or
    ``clip_gradient`` of 0 (or None) means none."""

    default_lr = 0.001

    def __init__(self, learning_rate=None, beta1=0.9, beta2=0.999, epsilon=1e-6,
                 lower_bound=None, upper_bound=None, bias_correction=True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = _number("LAMB", "beta1", beta1, lo=0, hi=1)
        self.beta2 = _number("LAMB", "beta2", beta2, lo=0, hi=1)
        self.epsilon = _number("LAMB", "epsilon", epsilon, lo=0, lo_open=True)
        self.lower_bound = None if lower_bound is None else \
            _number("LAMB", "lower_bound", lower_bound, lo=0)
        self.upper_bound = None if upper_bound is None else \
            _number("LAMB", "upper_bound", upper_bound, lo=0)
        self.bias_correction = bool(bias_correction)

    def create_state(self, index, weight):
        return (self._zeros_like(weight), self._zeros_like(weight))

    def _phases(self, index, weight, grad, mean, var, master=None):
        attrs = self._count_and_common(index)
        lr = attrs.pop("lr")
        attrs["clip_gradient"] = float(self.clip_gradient) if self.clip_gradient else -1.0
        grad = grad.tostype("default") if grad.stype != "default" else grad
        mp = "" if master is None else "mp_"
        extra = [] if master is None else [master]
        g = nd.empty(weight.shape, ctx=weight.context,
                     dtype=np.float32 if master is not None else weight.dtype)
        invoke_parsed(self._op(mp + "lamb_update_phase1"), [weight, grad, mean, var, *extra],
                      {**attrs, "beta1": float(self.beta1), "beta2": float(self.beta2),
                       "epsilon": float(self.epsilon), "t": self._index_update_count[index],
                       "bias_correction": self.bias_correction}, g, None)
        r1 = nd.norm(weight if master is None else master).reshape((1,))
        r2 = nd.norm(g).reshape((1,))
        self._run(mp + "lamb_update_phase2", [weight, g, r1, r2, *extra], {
            "lr": lr, "lower_bound": float(self.lower_bound) if self.lower_bound else -1.0,
            "upper_bound": float(self.upper_bound) if self.upper_bound else -1.0})

    def update(self, index, weight, grad, state):
        self._phases(index, weight, grad, *state)

    def update_multi_precision(self, index, weight, grad, state):
        """:meth:`update`; with ``multi_precision`` and a float16 weight, the
        mixed-precision phases on the float32 master copy (state: (master, (mean, var)))."""
        if self._master(weight):
            master, (mean, var) = state
            self._phases(index, weight, grad, mean, var, master)
        else:
            self.update(index, weight, grad, state)


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
            self.states[index] = self.optimizer.create_state_multi_precision(index, weight)
        self.optimizer.update_multi_precision(index, weight, grad, self.states[index])

    def get_states(self, dump_optimizer=False):
        """The states (and the optimizer when ``dump_optimizer``), pickled."""
        return pickle.dumps((self.states, self.optimizer) if dump_optimizer else self.states)

    def set_states(self, states):
        """Restore what :meth:`get_states` gave; anything else is a ValueError and
        changes nothing."""
        try:
            loaded = pickle.loads(states)
        except Exception as e:
            raise ValueError(f"set_states: states must be what get_states() wrote ({e})"
                             ) from None
        if isinstance(loaded, tuple) and len(loaded) == 2:
            self.states, self.optimizer = loaded
        else:
            self.states = loaded


def save_states_file(updater, fname, dump_optimizer=False, caller="save_optimizer_states"):
    """Write ``updater.get_states(dump_optimizer)`` to ``fname`` through a temporary file
    renamed into place (what a KVStore and a Module save)."""
    if not hasattr(updater, "get_states"):
        raise RuntimeError(f"{caller}: there is no optimizer: set one first")
    _files.write_bytes(fname, updater.get_states(dump_optimizer))


def load_states_file(updater, fname, caller="load_optimizer_states"):
    """Restore into ``updater`` the states :func:`save_states_file` wrote to ``fname``;
    a file that does not hold them is a ValueError naming it, and changes nothing."""
    if not hasattr(updater, "set_states"):
        raise RuntimeError(f"{caller}: there is no optimizer: set one first")
    with open(fname, "rb") as f:
        data = f.read()
    try:
        pickle.loads(data)
    except Exception as e:
        raise ValueError(f"{caller}: {fname!r} must hold states written by "
                         f"save_optimizer_states ({e})") from None
    updater.set_states(data)


def get_updater(optimizer):
    """An :class:`Updater` of ``optimizer`` (MXNet's ``mx.optimizer.get_updater``)."""
    return Updater(optimizer)

