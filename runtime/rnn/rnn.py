"""Checkpoints of models built from RNN cells (MXNet's ``mx.rnn.save_rnn_checkpoint``,
``load_rnn_checkpoint``, ``do_rnn_checkpoint``): the files hold each cell's weights
unpacked per gate (``cell.unpack_weights``), so that fused and unfused cells read the
same checkpoint."""

from runtime.model import load_checkpoint, save_checkpoint
from runtime.rnn.rnn_cell import BaseRNNCell


def _cells(cells):
    return [cells] if isinstance(cells, BaseRNNCell) else list(cells)


def save_rnn_checkpoint(cells, prefix, epoch, symbol, arg_params, aux_params):
    """``model.save_checkpoint`` of ``arg_params`` unpacked by ``cells`` (one cell or a
    list)."""
    for cell in _cells(cells):
        arg_params = cell.unpack_weights(arg_params)
    save_checkpoint(prefix, epoch, symbol, arg_params, aux_params)


def load_rnn_checkpoint(cells, prefix, epoch):
    """``model.load_checkpoint`` with the arguments packed again by ``cells``:
    ``(symbol, arg_params, aux_params)``."""
    sym, args, aux = load_checkpoint(prefix, epoch)
    for cell in _cells(cells):
        args = cell.pack_weights(args)
    return sym, args, aux


def do_rnn_checkpoint(cells, prefix, period=1):
    """An epoch-end callback (``Module.fit(epoch_end_callback=...)``) that writes
    :func:`save_rnn_checkpoint` every ``period`` epochs, numbered from 1."""
    period = int(max(1, period))

    def _callback(iter_no, sym=None, arg=None, aux=None):
        if (iter_no + 1) % period == 0:
            save_rnn_checkpoint(cells, prefix, iter_no + 1, sym, arg, aux)
    return _callback


__all__ = ["save_rnn_checkpoint", "load_rnn_checkpoint", "do_rnn_checkpoint"]
