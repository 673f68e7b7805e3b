"""MXNet's ``mx.model``: checkpoints of symbolic models (``save_checkpoint``,
``load_checkpoint``, ``load_params``, ``BatchEndParam``) and ``FeedForward``, the
training API of MXNet before ``Module`` (deprecated in MXNet 1.x, which still ships it).

A checkpoint is MXNet's pair ``prefix-symbol.json`` and ``prefix-%04d.params`` (the
binary NDArray format, names prefixed ``arg:`` and ``aux:``), so files move between
ndrt and MXNet 1.x either way.

``FeedForward`` runs on a :class:`~runtime.module.Module` (a
:class:`~runtime.module.BucketingModule` for a symbol generator): ``fit`` trains one
bound to the data's and labels' names and shapes and keeps the parameters it ends with
(``arg_params``, ``aux_params``); ``predict`` and ``score`` bind one for inference.
"""

import logging
import warnings

import numpy as np

from runtime import initializer as _init, io, metric as _metric, nd
from runtime.context import Context, cpu
from runtime.module._checkpoint import (BatchEndParam, load_checkpoint, load_params,
                                        save_checkpoint)
from runtime.module.bucketing_module import BucketingModule
from runtime.module.module import Module
from runtime.symbol import Symbol


def _contexts(ctx):
    if ctx is None:
        return [cpu()]
    return [ctx] if isinstance(ctx, Context) else list(ctx)


class FeedForward:
    """A symbol with one data input trained and run as one model (MXNet's deprecated
    ``mx.model.FeedForward``).

    Parameters
    ----------
    symbol : Symbol or callable
        The network, or a symbol generator ``symbol(bucket_key) -> Symbol`` for data
        whose batches carry a ``bucket_key`` (``fit`` then trains a
        :class:`~runtime.module.BucketingModule` from the data's
        ``default_bucket_key``, and the default bucket's symbol becomes ``symbol``).
    ctx : Context or list of Contexts, optional
        Default ``cpu()``.
    num_epoch : int, optional
        The epochs ``fit`` trains for (required by ``fit``).
    optimizer : str or Optimizer
        Default 'sgd'; a name is made with ``kwargs`` and ``rescale_grad`` = 1 / batch
        size.
    initializer : Initializer
        For the parameters ``arg_params`` does not give (default ``Uniform(0.01)``).
    numpy_batch_size : int
        The batch size of NumPy or NDArray data.
    arg_params, aux_params : dict of str to NDArray, optional
        Parameters to start from.
    allow_extra_params : bool
        Drop the entries of ``arg_params``/``aux_params`` the symbol does not have (else
        they are refused).
    begin_epoch : int
    kwargs
        The optimizer's arguments (``learning_rate``, ``momentum``, ``wd`` ...).

    Differences from MXNet: ``epoch_size`` other than None is refused; ``fit`` does not
    log 'Resetting Data Iterator'.
    """

    def __init__(self, symbol, ctx=None, num_epoch=None, epoch_size=None, optimizer="sgd",
                 initializer=None, numpy_batch_size=128, arg_params=None,
                 aux_params=None, allow_extra_params=False, begin_epoch=0, **kwargs):
        warnings.warn("mxnet.model.FeedForward has been deprecated. Please use "
                      "mxnet.mod.Module instead.", DeprecationWarning, stacklevel=2)
        if not isinstance(symbol, Symbol) and not callable(symbol):
            raise TypeError(f"FeedForward: symbol must be a Symbol or a symbol generator "
                            f"(got {type(symbol).__name__})")
        if epoch_size is not None:
            raise NotImplementedError("FeedForward: epoch_size must be None (an epoch is "
                                      f"one pass over the data) (got {epoch_size!r})")
        self.sym_gen = None if isinstance(symbol, Symbol) else symbol
        self.symbol = symbol if self.sym_gen is None else None
        self.allow_extra_params = allow_extra_params
        self.ctx = _contexts(ctx)
        self.num_epoch = num_epoch
        self.epoch_size = epoch_size
        self.optimizer = optimizer
        self.initializer = initializer if initializer is not None else _init.Uniform(0.01)
        self.numpy_batch_size = numpy_batch_size
        self.begin_epoch = begin_epoch
        self.kwargs = dict(kwargs)
        self.arg_params = arg_params
        self.aux_params = aux_params
        if self.symbol is not None:
            self._drop_extra_params()

    def _drop_extra_params(self):
        """With ``allow_extra_params``, forget the given parameters the symbol lacks."""
        if not self.allow_extra_params:
            return
        args = set(self.symbol.list_arguments())
        aux = set(self.symbol.list_auxiliary_states())
        if self.arg_params is not None:
            self.arg_params = {k: v for k, v in self.arg_params.items() if k in args}
        if self.aux_params is not None:
            self.aux_params = {k: v for k, v in self.aux_params.items() if k in aux}

    # -- data ------------------------------------------------------------------------------
    def _iter(self, X, y, is_train):
        """``X`` as a data iterator: itself, or NumPy/NDArray data (labels ``y``, zeros
        when predicting) in batches of ``numpy_batch_size``."""
        if isinstance(X, io.DataIter):
            return X
        if not isinstance(X, (np.ndarray, nd.NDArray)):
            raise TypeError(f"FeedForward: X must be a DataIter, an NDArray or a "
                            f"numpy.ndarray (got {type(X).__name__})")
        if y is None:
            if is_train:
                raise ValueError("FeedForward: y must be given when X is an array")
            y = np.zeros(X.shape[0], np.float32)
        y = y.asnumpy() if isinstance(y, nd.NDArray) else np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y.ravel()
        if y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise ValueError(f"FeedForward: y must hold one label per sample of X "
                             f"({X.shape[0]}) (got shape {y.shape})")
        batch = min(X.shape[0], self.numpy_batch_size)
        if is_train:
            return io.NDArrayIter(X, y, batch, shuffle=True, last_batch_handle="roll_over")
        return io.NDArrayIter(X, y, batch, shuffle=False)

    def _eval_iter(self, eval_data):
        if eval_data is None or isinstance(eval_data, io.DataIter):
            return eval_data
        if isinstance(eval_data, (tuple, list)) and len(eval_data) == 2:
            data, label = (np.array(v) if isinstance(v, list) else v for v in eval_data)
            if label is None and isinstance(data, io.DataIter):
                return data
            return self._iter(data, label, is_train=True)
        raise TypeError("FeedForward: eval_data must be a DataIter or a pair (data, label) "
                        f"of arrays (got {type(eval_data).__name__})")

    def _module(self, data, logger=logging, work_load_list=None):
        """An unbound Module of the symbol fed by ``data``'s names."""
        return Module(self.symbol, data_names=[d[0] for d in data.provide_data],
                      label_names=[d[0] for d in data.provide_label], context=self.ctx,
                      logger=logger, work_load_list=work_load_list)

    def _bound(self, X, what):
        if self.arg_params is None or self.symbol is None:
            raise RuntimeError(f"FeedForward.{what}: no parameters: call fit() first or "
                               "give arg_params")
        data = self._iter(X, None, is_train=False)
        mod = self._module(data)
        mod.bind(data.provide_data, data.provide_label, for_training=False)
        mod.set_params(self.arg_params, self.aux_params or {}, allow_missing=False)
        return data, mod

    # -- training and inference ------------------------------------------------------------
    def fit(self, X, y=None, eval_data=None, eval_metric="acc", epoch_end_callback=None,
            batch_end_callback=None, kvstore="local", logger=None, work_load_list=None,
            monitor=None, eval_end_callback=None, eval_batch_end_callback=None):
        """Train for ``num_epoch`` epochs from ``begin_epoch`` on ``X`` (a DataIter, or
        arrays with labels ``y``), logging the training metric and, given
        ``eval_data``, the validation metric after each epoch (as ``Module.fit``)."""
        if self.num_epoch is None:
            raise ValueError("FeedForward.fit: num_epoch must be given to the constructor")
        data = self._iter(X, y, is_train=True)
        eval_data = self._eval_iter(eval_data)
        if self.sym_gen is not None:
            key = getattr(data, "default_bucket_key", None)
            if key is None:
                raise ValueError("FeedForward.fit: a symbol generator needs data with a "
                                 "default_bucket_key (a bucketing iterator)")
            self.symbol = self.sym_gen(key)
            self._drop_extra_params()
            data_names = [d[0] for d in data.provide_data]
            label_names = [d[0] for d in data.provide_label]
            mod = BucketingModule(lambda k: (self.sym_gen(k), data_names, label_names),
                                  default_bucket_key=key, context=self.ctx,
                                  logger=logger or logging, work_load_list=work_load_list)
        else:
            mod = self._module(data, logger or logging, work_load_list)
        (logger or logging).info("Start training with %s", str(self.ctx))
        mod.fit(data, eval_data=eval_data, eval_metric=eval_metric,
                epoch_end_callback=epoch_end_callback, batch_end_callback=batch_end_callback,
                kvstore=kvstore, optimizer=self.optimizer, optimizer_params=self.kwargs,
                eval_batch_end_callback=eval_batch_end_callback,
                initializer=self.initializer, arg_params=self.arg_params,
                aux_params=self.aux_params, allow_missing=True,
                begin_epoch=self.begin_epoch, num_epoch=self.num_epoch, monitor=monitor)
        self.arg_params, self.aux_params = mod.get_params()

    def predict(self, X, num_batch=None, return_data=False, reset=True):
        """The outputs over ``X`` as NumPy arrays (one array for one output), padding
        removed; with ``return_data`` also the data and labels, ``(outputs, data,
        label)``."""
        data, mod = self._bound(X, "predict")
        outs, datas, labels = [], [], []
        for outputs, _, batch in mod.iter_predict(data, num_batch=num_batch, reset=reset):
            outs.append([o.asnumpy() for o in outputs])
            if return_data:
                real = batch.data[0].shape[0] - (batch.pad or 0)
                datas.append([x[:real].asnumpy() for x in batch.data])
                labels.append([x[:real].asnumpy() for x in batch.label])

        def joined(parts):
            arrays = [np.concatenate(p) for p in zip(*parts)]
            return arrays[0] if len(arrays) == 1 else arrays
        if not return_data:
            return joined(outs)
        return joined(outs), joined(datas), joined(labels)

    def score(self, X, eval_metric="acc", num_batch=None, batch_end_callback=None,
              reset=True):
        """The value of ``eval_metric`` over ``X``."""
        data, mod = self._bound(X, "score")
        if not isinstance(eval_metric, _metric.EvalMetric):
            eval_metric = _metric.create(eval_metric)
        mod.score(data, eval_metric, num_batch=num_batch,
                  batch_end_callback=batch_end_callback, reset=reset)
        return eval_metric.get()[1]

    # -- files -----------------------------------------------------------------------------
    def save(self, prefix, epoch=None, remove_amp_cast=True):
        """Write the checkpoint ``prefix``/``epoch`` (default ``num_epoch``)."""
        epoch = self.num_epoch if epoch is None else epoch
        if epoch is None:
            raise ValueError("FeedForward.save: epoch must be given (no num_epoch)")
        if self.symbol is None:
            raise RuntimeError("FeedForward.save: a symbol generator's model has a symbol "
                               "once fit() has run")
        save_checkpoint(prefix, epoch, self.symbol, self.arg_params or {},
                        self.aux_params or {})

    @staticmethod
    def load(prefix, epoch, ctx=None, **kwargs):
        """A FeedForward of the checkpoint ``prefix``/``epoch``, to train on from that
        epoch."""
        sym, arg_params, aux_params = load_checkpoint(prefix, epoch)
        return FeedForward(sym, ctx=ctx, arg_params=arg_params, aux_params=aux_params,
                           begin_epoch=epoch, **kwargs)

    @staticmethod
    def create(symbol, X, y=None, ctx=None, num_epoch=None, epoch_size=None,
               optimizer="sgd", initializer=None, eval_data=None, eval_metric="acc",
               epoch_end_callback=None, batch_end_callback=None, kvstore="local",
               logger=None, work_load_list=None, eval_end_callback=None,
               eval_batch_end_callback=None, **kwargs):
        """Make a FeedForward and ``fit`` it."""
        model = FeedForward(symbol, ctx=ctx, num_epoch=num_epoch, epoch_size=epoch_size,
                            optimizer=optimizer, initializer=initializer, **kwargs)
        model.fit(X, y, eval_data=eval_data, eval_metric=eval_metric,
                  epoch_end_callback=epoch_end_callback,
                  batch_end_callback=batch_end_callback, kvstore=kvstore, logger=logger,
                  work_load_list=work_load_list, eval_end_callback=eval_end_callback,
                  eval_batch_end_callback=eval_batch_end_callback)
        return model


__all__ = ["BatchEndParam", "FeedForward", "save_checkpoint", "load_checkpoint",
           "load_params"]
