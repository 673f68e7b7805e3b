"""Learning-rate schedules (MXNet 1.x's ``mx.lr_scheduler``).

A scheduler is called with the optimizer's update count and returns the learning rate
for that update.  An optimizer given one sets the scheduler's ``base_lr`` (and the end of
its warm-up) to its own ``learning_rate``; an optimizer made without a learning rate
takes the scheduler's ``base_lr``.  Every schedule may start with ``warmup_steps`` updates
of warm-up: from ``warmup_begin_lr`` rising linearly to ``base_lr`` (``warmup_mode=
'linear'``) or staying at ``warmup_begin_lr`` (``'constant'``), as MXNet's.
"""

import math

from runtime.ops.optimizer_op import as_number as _number

__all__ = ["LRScheduler", "FactorScheduler", "MultiFactorScheduler", "PolyScheduler",
           "CosineScheduler"]


def _count(owner, name, value, lo):
    if isinstance(value, bool) or not isinstance(value, int) or value < lo:
        raise ValueError(f"{owner}: {name} must be an integer >= {lo} (got {value!r})")
    return value


class LRScheduler:
    """The base of every schedule (MXNet's ``mx.lr_scheduler.LRScheduler``): holds
    ``base_lr`` and the warm-up; subclasses implement ``__call__(num_update)``."""

    def __init__(self, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0, warmup_mode="linear"):
        owner = type(self).__name__
        self.base_lr = _number(owner, "base_lr", base_lr, lo=0)
        self.warmup_steps = _count(owner, "warmup_steps", warmup_steps, 0)
        self.warmup_begin_lr = _number(owner, "warmup_begin_lr", warmup_begin_lr, lo=0)
        self.warmup_final_lr = self.base_lr
        if self.warmup_begin_lr > self.warmup_final_lr:
            raise ValueError(f"{owner}: warmup_begin_lr must be <= base_lr (got "
                             f"{warmup_begin_lr!r} > {base_lr!r})")
        if warmup_mode not in ("linear", "constant"):
            raise ValueError(f"{owner}: warmup_mode must be 'linear' or 'constant' (got "
                             f"{warmup_mode!r})")
        self.warmup_mode = warmup_mode

    def _set_base_lr(self, lr):
        """The optimizer's learning rate becomes the schedule's start."""
        self.base_lr = self.warmup_final_lr = lr

    def get_warmup_lr(self, num_update):
        """The learning rate of update ``num_update`` < ``warmup_steps``."""
        if self.warmup_mode == "linear":
            return self.warmup_begin_lr + (self.warmup_final_lr - self.warmup_begin_lr) * \
                float(num_update) / float(self.warmup_steps)
        return self.warmup_begin_lr

    def __call__(self, num_update):
        raise NotImplementedError(f"{type(self).__name__} must implement __call__")


class FactorScheduler(LRScheduler):
    """The learning rate times ``factor`` every ``step`` updates, never below
    ``stop_factor_lr`` (MXNet's ``mx.lr_scheduler.FactorScheduler``)."""

    def __init__(self, step, factor=1.0, stop_factor_lr=1e-8, base_lr=0.01, warmup_steps=0,
                 warmup_begin_lr=0, warmup_mode="linear"):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if isinstance(step, bool) or not isinstance(step, int) or step < 1:
            raise ValueError(f"FactorScheduler: step must be an integer >= 1 (got {step!r})")
        self.step = step
        self.factor = _number("FactorScheduler", "factor", factor, lo=0, lo_open=True)
        if self.factor > 1.0:
            raise ValueError(f"FactorScheduler: factor must be <= 1 to make the learning "
                             f"rate decay (got {factor!r})")
        self.stop_factor_lr = _number("FactorScheduler", "stop_factor_lr", stop_factor_lr,
                                      lo=0)
        self.count = 0

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        while num_update > self.count + self.step:
            self.count += self.step
            self.base_lr = max(self.base_lr * self.factor, self.stop_factor_lr)
        return self.base_lr


class MultiFactorScheduler(LRScheduler):
    """The learning rate times ``factor`` after each update count of the increasing list
    ``step`` (MXNet's ``mx.lr_scheduler.MultiFactorScheduler``)."""

    def __init__(self, step, factor=1.0, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0,
                 warmup_mode="linear"):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if not isinstance(step, (list, tuple)) or not step:
            raise ValueError(f"MultiFactorScheduler: step must be a non-empty list of "
                             f"update counts (got {step!r})")
        for i, s in enumerate(step):
            _count("MultiFactorScheduler", f"step[{i}]", s, 1)
            if i and s <= step[i - 1]:
                raise ValueError(f"MultiFactorScheduler: step must be increasing (got "
                                 f"{list(step)!r})")
        self.factor = _number("MultiFactorScheduler", "factor", factor, lo=0, lo_open=True)
        if self.factor > 1.0:
            raise ValueError(f"MultiFactorScheduler: factor must be <= 1 to make the "
                             f"learning rate decay (got {factor!r})")
        self.step = list(step)
        self.cur_step_ind = 0
        self.count = 0

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        while self.cur_step_ind < len(self.step) and num_update > self.step[self.cur_step_ind]:
            self.count = self.step[self.cur_step_ind]
            self.cur_step_ind += 1
            self.base_lr *= self.factor
        return self.base_lr


class _Annealing(LRScheduler):
    """Poly and Cosine: from base_lr at the end of the warm-up to final_lr at
    max_update, then final_lr."""

    def __init__(self, max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr,
                 warmup_mode):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        owner = type(self).__name__
        self.max_update = _count(owner, "max_update", max_update, 1)
        if self.max_update <= self.warmup_steps:
            raise ValueError(f"{owner}: max_update must be > warmup_steps (got "
                             f"{max_update!r} <= {warmup_steps!r})")
        self.final_lr = _number(owner, "final_lr", final_lr, lo=0)
        self.base_lr_orig = self.base_lr
        self.max_steps = self.max_update - self.warmup_steps

    def _set_base_lr(self, lr):
        super()._set_base_lr(lr)
        self.base_lr_orig = lr

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        if num_update <= self.max_update:
            done = float(num_update - self.warmup_steps) / float(self.max_steps)
            self.base_lr = self.final_lr + (self.base_lr_orig - self.final_lr) * \
                self._shape(done)
        return self.base_lr


class PolyScheduler(_Annealing):
    """final_lr + (base_lr - final_lr) (1 - t)^pwr over t from 0 (end of the warm-up) to
    1 (``max_update``) (MXNet's ``mx.lr_scheduler.PolyScheduler``)."""

    def __init__(self, max_update, base_lr=0.01, pwr=2, final_lr=0, warmup_steps=0,
                 warmup_begin_lr=0, warmup_mode="linear"):
        super().__init__(max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr,
                         warmup_mode)
        self.power = _number("PolyScheduler", "pwr", pwr, lo=0)

    def _shape(self, t):
        return pow(1.0 - t, self.power)


class CosineScheduler(_Annealing):
    """final_lr + (base_lr - final_lr) (1 + cos(pi t)) / 2 over t from 0 (end of the
    warm-up) to 1 (``max_update``) (MXNet's ``mx.lr_scheduler.CosineScheduler``)."""

    def __init__(self, max_update, base_lr=0.01, final_lr=0, warmup_steps=0,
                 warmup_begin_lr=0, warmup_mode="linear"):
        super().__init__(max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr,
                         warmup_mode)

    def _shape(self, t):
        return (1.0 + math.cos(math.pi * t)) / 2.0
