"""Learning-rate schedules (MXNet 1.x's ``mx.lr_scheduler``).

A scheduler is called with the optimizer's update count and returns the learning rate
for that update; an optimizer given one sets the scheduler's ``base_lr`` to its own
``learning_rate``, as MXNet's does.
"""

from runtime.ops.optimizer_op import as_number as _number

__all__ = ["LRScheduler", "FactorScheduler"]


class LRScheduler:
    """The base of every schedule (MXNet's ``mx.lr_scheduler.LRScheduler``): holds
    ``base_lr``; subclasses implement ``__call__(num_update)``."""

    def __init__(self, base_lr=0.01):
        self.base_lr = _number(type(self).__name__, "base_lr", base_lr, lo=0)

    def __call__(self, num_update):
        raise NotImplementedError(f"{type(self).__name__} must implement __call__")


class FactorScheduler(LRScheduler):
    """The learning rate times ``factor`` every ``step`` updates, never below
    ``stop_factor_lr`` (MXNet's ``mx.lr_scheduler.FactorScheduler``); an optimizer
    given it sets ``base_lr`` to its learning_rate."""

    def __init__(self, step, factor=1.0, stop_factor_lr=1e-8, base_lr=0.01):
        super().__init__(base_lr)
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
        while num_update > self.count + self.step:
            self.count += self.step
            self.base_lr = max(self.base_lr * self.factor, self.stop_factor_lr)
        return self.base_lr
