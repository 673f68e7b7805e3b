"""``BaseModule`` (MXNet's ``mx.module.BaseModule``): the loops every module runs the
same way, ``fit``, ``score``, ``iter_predict`` and ``predict``, over the steps a module
defines (``bind``, ``init_params``, ``init_optimizer``, ``prepare``, ``forward``,
``backward``, ``update``, ``update_metric``, ``get_outputs``, ``get_params``).

``eval_metric`` is an object with MXNet's metric interface (``update(labels, preds)``,
``reset()``, ``get_name_value()``), such as ``runtime.metric``'s, or what
``metric.create`` takes.
"""

import logging
import time

from runtime import metric as _metric_mod, nd
from runtime.module import _checkpoint


def _metric(eval_metric):
    """``eval_metric`` as a metric object: a name (``'acc'``), a list of names or metrics,
    or a function ``f(label, pred)`` goes through ``metric.create``, as in MXNet."""
    if isinstance(eval_metric, (str, list, tuple)) or (
            callable(eval_metric) and not hasattr(eval_metric, "update")):
        eval_metric = _metric_mod.create(list(eval_metric) if isinstance(eval_metric, tuple)
                                         else eval_metric)
    for method in ("update", "reset", "get_name_value"):
        if not callable(getattr(eval_metric, method, None)):
            raise TypeError(f"eval_metric must have MXNet's metric interface (update, "
                            f"reset, get_name_value): an object such as runtime.metric's "
                            f"(got {eval_metric!r})")
    return eval_metric



class BaseModule:
    """What :class:`~runtime.module.Module` and
    :class:`~runtime.module.SequentialModule` share: the training, scoring and
    prediction loops."""

    logger = logging
    symbol = None
    binded = params_initialized = optimizer_initialized = False

    def _check(self, what, binded=True, params=False, optimizer=False):
        if binded and not self.binded:
            raise RuntimeError(f"{what}: call bind() first")
        if params and not self.params_initialized:
            raise RuntimeError(f"{what}: call init_params() first")
        if optimizer and not self.optimizer_initialized:
            raise RuntimeError(f"{what}: call init_optimizer() first")

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        """Copy the given parameters in (``init_params`` with these arrays)."""
        self.init_params(None, arg_params, aux_params, allow_missing, force_init,
                         allow_extra)

    def forward_backward(self, data_batch):
        self.forward(data_batch, is_train=True)
        self.backward()

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Nothing to get ready (a module holding parameters on a kvstore pulls here)."""

    # -- loops -------------------------------------------------------------------------------
    def fit(self, train_data, eval_data=None, eval_metric="acc", epoch_end_callback=None,
            batch_end_callback=None, kvstore="local", optimizer="sgd",
            optimizer_params=(("learning_rate", 0.01),), eval_end_callback=None,
            eval_batch_end_callback=None, initializer=None, arg_params=None,
            aux_params=None, allow_missing=False, force_rebind=False, force_init=False,
            begin_epoch=0, num_epoch=None, validation_metric=None, monitor=None,
            sparse_row_id_fn=None):
        """Train for ``num_epoch`` epochs over ``train_data`` (a data iterator), which,
        as MXNet's, is read from where it stands and reset at the end of every epoch (an
        exhausted iterator is refused).  ``eval_metric`` and ``validation_metric``: a
        metric, its name or a list of them (``metric.create``); each epoch logs the whole
        epoch's training metric."""
        if num_epoch is None:
            raise ValueError("fit: num_epoch must be given")
        eval_metric = _metric(eval_metric)
        self.bind(train_data.provide_data, train_data.provide_label, for_training=True,
                  force_rebind=force_rebind)
        self.init_params(initializer, arg_params, aux_params, allow_missing, force_init)
        self.init_optimizer(kvstore, optimizer, optimizer_params, force_init)
        validation_metric = validation_metric or eval_metric
        for epoch in range(begin_epoch, num_epoch):
            tic = time.time()
            eval_metric.reset()
            nbatch = -1
            for nbatch, batch in enumerate(train_data):
                self.prepare(batch, sparse_row_id_fn)
                self.forward_backward(batch)
                self.update()
                self.update_metric(eval_metric, batch.label)
                for cb in _callbacks(batch_end_callback):
                    cb(_checkpoint.BatchEndParam(epoch, nbatch, eval_metric, locals()))
            if nbatch < 0:
                raise ValueError(f"fit: train_data must yield batches (epoch {epoch} got none; "
                                 "reset() an exhausted iterator before fit)")
            # The epoch's whole metric: a Speedometer's auto_reset clears only the local one.
            totals = getattr(eval_metric, "get_global_name_value", eval_metric.get_name_value)
            for name, value in totals():
                self.logger.info("Epoch[%d] Train-%s=%f", epoch, name, value)
            self.logger.info("Epoch[%d] Time cost=%.3f", epoch, time.time() - tic)
            arg, aux = self.get_params()
            for cb in _callbacks(epoch_end_callback):
                cb(epoch, self.symbol, arg, aux)
            if eval_data is not None:
                for name, value in self.score(eval_data, validation_metric,
                                              batch_end_callback=eval_batch_end_callback,
                                              epoch=epoch):
                    self.logger.info("Epoch[%d] Validation-%s=%f", epoch, name, value)
            # MXNet resets at the end of an epoch: fit leaves the iterator at its start
            train_data.reset()

    def score(self, eval_data, eval_metric, num_batch=None, batch_end_callback=None,
              score_end_callback=None, reset=True, epoch=0, sparse_row_id_fn=None):
        """Run ``eval_data`` in inference mode and return the metric's (name, value)
        pairs."""
        self._check("score", params=True)
        eval_metric = _metric(eval_metric)
        if reset:
            eval_data.reset()
        eval_metric.reset()
        for nbatch, batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.forward(batch, is_train=False)
            self.update_metric(eval_metric, batch.label)
            for cb in _callbacks(batch_end_callback):
                cb(_checkpoint.BatchEndParam(epoch, nbatch, eval_metric, locals()))
        return eval_metric.get_name_value()

    def iter_predict(self, eval_data, num_batch=None, reset=True, sparse_row_id_fn=None):
        """Run ``eval_data`` in inference mode, yielding ``(outputs, nbatch, batch)`` per
        batch: the outputs without the batch's padding, views of the executors' outputs
        that the next batch overwrites (MXNet's)."""
        self._check("iter_predict", params=True)
        if reset:
            eval_data.reset()
        for nbatch, batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(batch, sparse_row_id_fn)
            self.forward(batch, is_train=False)
            pad = batch.pad or 0
            yield [o[:o.shape[0] - pad] for o in self.get_outputs()], nbatch, batch

    def predict(self, eval_data, num_batch=None, merge_batches=True, reset=True,
                always_output_list=False, sparse_row_id_fn=None):
        """The outputs over ``eval_data`` (padding removed), concatenated over batches
        when ``merge_batches``."""
        self._check("predict", params=True)
        outputs = [[o.copy() for o in outs] for outs, _, _ in
                   self.iter_predict(eval_data, num_batch, reset, sparse_row_id_fn)]
        if not merge_batches:
            return outputs
        merged = [nd.concat(*[b[i] for b in outputs], dim=0)
                  for i in range(len(outputs[0]))] if outputs else []
        return merged[0] if len(merged) == 1 and not always_output_list else merged


def _callbacks(cb):
    if cb is None:
        return []
    return list(cb) if isinstance(cb, (list, tuple)) else [cb]


__all__ = ["BaseModule"]
