"""How the estimator trains and evaluates one batch (MXNet 1.9.1's
``gluon.contrib.estimator.batch_processor``)."""

from runtime import autograd
from runtime.gluon.utils import split_and_load

__all__ = ["BatchProcessor"]


class BatchProcessor:
    """The estimator's per-batch work: :meth:`fit_batch` and :meth:`evaluate_batch`.
    Subclass it and override them to change one step (several outputs, a custom
    backward ...), then pass an instance as the estimator's ``batch_processor``.

    A batch is ``(data, label, ...)``; both are split along ``batch_axis`` over the
    estimator's contexts with :func:`runtime.gluon.utils.split_and_load`.  Both methods
    return ``(data, label, pred, loss)``, lists with one entry per context.
    """

    def _get_data_and_label(self, batch, ctx, batch_axis=0):
        data = split_and_load(batch[0], ctx_list=ctx, batch_axis=batch_axis)
        label = split_and_load(batch[1], ctx_list=ctx, batch_axis=batch_axis)
        return data, label

    def evaluate_batch(self, estimator, val_batch, batch_axis=0):
        """Predict ``val_batch`` with ``estimator.val_net`` and compute
        ``estimator.val_loss`` (not recorded)."""
        data, label = self._get_data_and_label(val_batch, estimator.context, batch_axis)
        pred = [estimator.val_net(x) for x in data]
        loss = [estimator.val_loss(p, y) for p, y in zip(pred, label)]
        return data, label, pred, loss

    def fit_batch(self, estimator, train_batch, batch_axis=0):
        """Forward ``train_batch`` through ``estimator.net`` and ``estimator.loss`` under
        ``autograd.record()`` and run backward on each loss; the trainer's step is
        :class:`GradientUpdateHandler`'s."""
        data, label = self._get_data_and_label(train_batch, estimator.context, batch_axis)
        with autograd.record():
            pred = [estimator.net(x) for x in data]
            loss = [estimator.loss(p, y) for p, y in zip(pred, label)]
        for part in loss:
            part.backward()
        return data, label, pred, loss
