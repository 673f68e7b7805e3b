"""Checkpoints of symbolic models (what ``mx.model`` offers besides ``FeedForward``):
``save_checkpoint``, ``load_checkpoint``, ``load_params`` and ``BatchEndParam``, the
record a batch-end callback receives.

A checkpoint is MXNet's pair ``prefix-symbol.json`` and ``prefix-%04d.params`` (the
binary NDArray format, names prefixed ``arg:`` and ``aux:``), so files move between
ndrt and MXNet 1.x either way.
"""

import logging
import os
from collections import namedtuple

from runtime import nd, symbol

BatchEndParam = namedtuple("BatchEndParam", ["epoch", "nbatch", "eval_metric", "locals"])


def save_checkpoint(prefix, epoch, symbol_, arg_params, aux_params, remove_amp_cast=True):
    """Write ``prefix-symbol.json`` (when ``symbol_`` is given) and
    ``prefix-%04d.params``; the parameters go through a temporary file."""
    if symbol_ is not None:
        symbol_.save(f"{prefix}-symbol.json")
    arrays = {f"arg:{k}": v for k, v in arg_params.items()}
    arrays.update({f"aux:{k}": v for k, v in aux_params.items()})
    name = f"{prefix}-{int(epoch):04d}.params"
    tmp = f"{name}.tmp-{os.getpid()}"
    try:
        nd.save(tmp, arrays, format="mxnet")
        os.replace(tmp, name)
        logging.info('Saved checkpoint to "%s"', name)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def load_params(prefix, epoch):
    """(arg_params, aux_params) of ``prefix-%04d.params``."""
    name = f"{prefix}-{int(epoch):04d}.params"
    loaded = nd.load(name)
    if not isinstance(loaded, dict):
        raise ValueError(f"load_checkpoint: {name!r} holds a list of arrays, not named "
                         "parameters")
    arg_params, aux_params = {}, {}
    for key, value in loaded.items():
        kind, _, pname = key.partition(":")
        if kind == "arg" and pname:
            arg_params[pname] = value
        elif kind == "aux" and pname:
            aux_params[pname] = value
        else:
            raise ValueError(f"load_checkpoint: {name!r} holds {key!r}, which is not "
                             "'arg:<name>' or 'aux:<name>'")
    return arg_params, aux_params


def load_checkpoint(prefix, epoch):
    """(symbol, arg_params, aux_params) of the checkpoint ``prefix``/``epoch``."""
    sym = symbol.load(f"{prefix}-symbol.json")
    arg_params, aux_params = load_params(prefix, epoch)
    return sym, arg_params, aux_params


__all__ = ["BatchEndParam", "save_checkpoint", "load_checkpoint", "load_params"]
