"""Callbacks of ``Module.fit`` (MXNet's ``mx.callback``): ``Speedometer`` and
``log_train_metric`` (batch end), ``do_checkpoint`` (epoch end)."""

import logging
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


__all__ = ["Speedometer", "do_checkpoint", "log_train_metric"]
