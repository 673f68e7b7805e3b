"""Callbacks of ``Module.fit`` (MXNet's ``mx.callback``): ``Speedometer``,
``ProgressBar`` and ``log_train_metric`` (batch end), ``do_checkpoint`` and
``module_checkpoint`` (epoch end), ``LogValidationMetricsCallback`` (``eval_end``)."""

import logging
import math
import time

from runtime import model


def do_checkpoint(prefix, period=1):
    """An epoch-end callback saving a checkpoint every ``period`` epochs (the epoch
    number in the file name is the epoch just finished plus one, as MXNet's)."""
    period = int(max(1, period))

    def _callback(iter_no, sym, arg, aux):
        if (iter_no + 1) % period == 0:
            model.save_checkpoint(prefix, iter_no + 1, sym, arg, aux)
    return _callback


def module_checkpoint(mod, prefix, period=1, save_optimizer_states=False):
    """An epoch-end callback calling ``mod.save_checkpoint(prefix, epoch + 1,
    save_optimizer_states)`` every ``period`` epochs (with the optimizer's states in
    ``prefix-%04d.states`` when asked), as MXNet's."""
    period = int(max(1, period))

    def _callback(iter_no, sym=None, arg=None, aux=None):
        if (iter_no + 1) % period == 0:
            mod.save_checkpoint(prefix, iter_no + 1, save_optimizer_states)
    return _callback


def log_train_metric(period, auto_reset=False):
    """A batch-end callback logging the training metric every ``period`` batches."""
    def _callback(param):
        if param.nbatch % period == 0 and param.eval_metric is not None:
            for name, value in param.eval_metric.get_name_value():
                logging.info("Iter[%d] Batch[%d] Train-%s=%f", param.epoch, param.nbatch,
                             name, value)
            if auto_reset:
                _reset_local(param.eval_metric)
    return _callback


def _reset_local(metric):
    """Clear the statistics since the last log, keeping the epoch's (``reset_local``),
    for a metric that keeps both; otherwise ``reset``."""
    getattr(metric, "reset_local", metric.reset)()


class Speedometer:
    """A batch-end callback logging samples per second (and the metric) every
    ``frequent`` batches."""

    def __init__(self, batch_size, frequent=50, auto_reset=True):
        self.batch_size = batch_size
        self.frequent = frequent
        self.auto_reset = auto_reset
        self.init = False
        self.tic = 0
        self.last_count = 0
        self.speed = None

    def __call__(self, param):
        count = param.nbatch
        if self.last_count > count:
            self.init = False
        self.last_count = count
        if not self.init:
            self.init = True
            self.tic = time.time()
            return
        if count % self.frequent == 0:
            elapsed = max(time.time() - self.tic, 1e-12)
            self.speed = self.frequent * self.batch_size / elapsed
            if param.eval_metric is not None:
                pairs = param.eval_metric.get_name_value()
                msg = "\t".join(f"{n}={v:f}" for n, v in pairs)
                # MXNet's line: the batches since the last log when it resets, else all
                first = count - self.frequent if self.auto_reset else 0
                if self.auto_reset:
                    _reset_local(param.eval_metric)
                logging.info("Epoch[%d] Batch [%d-%d]\tSpeed: %.2f samples/sec\t%s",
                             param.epoch, first, count, self.speed, msg)
            else:
                logging.info("Iter[%d] Batch [%d]\tSpeed: %.2f samples/sec", param.epoch,
                             count, self.speed)
            self.tic = time.time()


class ProgressBar:
    """A batch-end callback logging a bar of ``length`` characters that fills as the
    batch count ``nbatch`` approaches ``total`` (MXNet's line: ``[====---] 42%``)."""

    def __init__(self, total, length=80):
        if isinstance(total, bool) or not isinstance(total, int) or total < 1:
            raise ValueError(f"ProgressBar: total must be an int >= 1 (got {total!r})")
        if isinstance(length, bool) or not isinstance(length, int) or length < 1:
            raise ValueError(f"ProgressBar: length must be an int >= 1 (got {length!r})")
        self.total = total
        self.bar_len = length

    def __call__(self, param):
        count = param.nbatch
        filled = int(round(self.bar_len * count / float(self.total)))
        percents = math.ceil(100.0 * count / float(self.total))
        logging.info("[%s] %s%s\r", "=" * filled + "-" * (self.bar_len - filled), percents,
                     "%")


class LogValidationMetricsCallback:
    """An ``eval_end`` callback logging each validation metric at the end of an epoch
    (``Epoch[3] Validation-accuracy=0.910000``); nothing without a metric."""

    def __call__(self, param):
        if not param.eval_metric:
            return
        for name, value in param.eval_metric.get_name_value():
            logging.info("Epoch[%d] Validation-%s=%f", param.epoch, name, value)


__all__ = ["Speedometer", "ProgressBar", "LogValidationMetricsCallback", "do_checkpoint",
           "module_checkpoint", "log_train_metric"]
