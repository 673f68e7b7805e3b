"""Layers (Gluon's ``nn``): ``Sequential``, ``Dense``, ``Embedding``, ``Dropout``,
``Activation``, ``Flatten``.  Each layer is a
``HybridBlock`` whose ``hybrid_forward`` is registry operators (``FullyConnected``,
``Embedding``, ``Dropout``, ``Activation`` ...) called through ``F``: imperatively,
autograd records them; hybridized, they form the cached graph."""

import math

import numpy as np

from runtime import nd
from runtime.gluon.block import Block, HybridBlock

ACTIVATIONS = ("relu", "sigmoid", "tanh", "softrelu", "softsign")


class Sequential(Block):
    """Blocks applied one after the other (Gluon's ``nn.Sequential``)."""

    def add(self, *blocks):
        """Append ``blocks`` (registered as children '0', '1', ...)."""
        for block in blocks:
            self.register_child(block)
        return self

    def forward(self, x, *args):
        for block in self._children.values():
            x = block(x, *args)
            args = ()
            if isinstance(x, (tuple, list)):
                x, args = x[0], tuple(x[1:])
        return (x,) + args if args else x

    def __getitem__(self, key):
        layers = list(self._children.values())[key]
        if isinstance(key, slice):
            net = type(self)(prefix=self._prefix)
            net.add(*layers)
            return net
        return layers

    def __len__(self):
        return len(self._children)

    def __iter__(self):
        return iter(self._children.values())


def _positive_int(layer, name, value, minimum=1):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{layer}: {name} must be an integer >= {minimum} (got {value!r})")
    return int(value)


def _activation(layer, act):
    if act is not None and act not in ACTIVATIONS:
        raise ValueError(f"{layer}: activation must be one of {ACTIVATIONS} or None (got "
                         f"{act!r})")
    return act


class Activation(HybridBlock):
    """An activation function: ``'relu'``, ``'sigmoid'``, ``'tanh'``, ``'softrelu'``
    (``log(1 + exp(x))``) or ``'softsign'`` (``x / (1 + |x|)``)."""

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        if activation is None:
            raise ValueError(f"Activation: activation must be one of {ACTIVATIONS} (got None)")
        self._act_type = _activation("Activation", activation)

    def hybrid_forward(self, F, x):
        return F.Activation(x, act_type=self._act_type, name="fwd")

    def __repr__(self):
        return f"Activation({self._act_type})"


class Dense(HybridBlock):
    """A fully connected layer: ``activation(dot(x, weight.T) + bias)`` (the
    ``FullyConnected`` operator).

    Parameters
    ----------
    units : int
        Output size; ``weight`` has shape (units, in_units), ``bias`` (units,).
    activation : str, optional
        As :class:`Activation`; None is the identity.
    use_bias : bool
    flatten : bool
        True: the input is reshaped to (batch, -1) first; False: the layer applies to
        the last axis.
    dtype : str or numpy dtype
    weight_initializer, bias_initializer : Initializer or str
        The parameters' own initialisers (None: the one given to ``initialize``;
        the bias is zeros by default).
    in_units : int
        Input size; 0 infers it on the first call.
    """

    def __init__(self, units, activation=None, use_bias=True, flatten=True, dtype="float32",
                 weight_initializer=None, bias_initializer="zeros", in_units=0, **kwargs):
        super().__init__(**kwargs)
        self._units = _positive_int("Dense", "units", units)
        self._in_units = _positive_int("Dense", "in_units", in_units, minimum=0)
        self._act = _activation("Dense", activation)
        self._flatten = bool(flatten)
        self._use_bias = bool(use_bias)
        self.weight = self.params.get("weight", shape=(self._units, self._in_units),
                                      dtype=dtype, init=weight_initializer,
                                      allow_deferred_init=True)
        if self._use_bias:
            self.bias = self.params.get("bias", shape=(self._units,), dtype=dtype,
                                        init=bias_initializer, allow_deferred_init=True)
        else:
            self.bias = None

    def _infer_params(self, x, *args):
        if x.ndim < 1 or (math.prod(x.shape[1:]) if self._flatten else x.shape[-1]) == 0:
            raise ValueError(f"Dense: cannot infer in_units from input of shape "
                             f"{x.shape!r}")
        super()._infer_params(x, *args)

    def hybrid_forward(self, F, x, weight, bias=None):
        out = F.FullyConnected(x, weight, bias, num_hidden=self._units,
                               no_bias=bias is None, flatten=self._flatten, name="fwd")
        if self._act is None:
            return out
        return F.Activation(out, act_type=self._act, name=f"{self._act}_fwd")

    def __repr__(self):
        shape = self.weight.shape
        return (f"Dense({shape[1] if shape[1] else None} -> {self._units}, "
                f"{'linear' if self._act is None else self._act})")


class Embedding(HybridBlock):
    """Maps indices to rows of a (input_dim, output_dim) weight (the ``Embedding``
    operator).  ``sparse_grad=True`` gives the weight a row_sparse gradient holding only
    the rows looked up."""

    def __init__(self, input_dim, output_dim, dtype="float32", weight_initializer=None,
                 sparse_grad=False, **kwargs):
        super().__init__(**kwargs)
        self._input_dim = _positive_int("Embedding", "input_dim", input_dim)
        self._output_dim = _positive_int("Embedding", "output_dim", output_dim)
        self._dtype = nd.as_dtype(dtype)
        self._sparse_grad = bool(sparse_grad)
        self.weight = self.params.get(
            "weight", shape=(self._input_dim, self._output_dim), dtype=dtype,
            init=weight_initializer, allow_deferred_init=True,
            grad_stype="row_sparse" if self._sparse_grad else "default")

    def hybrid_forward(self, F, x, weight):
        return F.Embedding(x, weight, input_dim=self._input_dim, output_dim=self._output_dim,
                           dtype=self._dtype, sparse_grad=self._sparse_grad)

    def __repr__(self):
        return f"Embedding({self._input_dim} -> {self._output_dim}, {np.dtype(self._dtype)})"


class Dropout(HybridBlock):
    """Zeroes each value with probability ``rate`` and scales the rest by 1 / (1 - rate)
    under ``autograd.record()`` (training mode); the identity otherwise.  ``axes``
    share one mask value along those axes."""

    def __init__(self, rate, axes=(), **kwargs):
        super().__init__(**kwargs)
        if isinstance(rate, bool) or not isinstance(rate, (int, float, np.integer,
                                                           np.floating)) \
                or not 0.0 <= rate < 1.0:
            raise ValueError(f"Dropout: rate must be a number in [0, 1) (got {rate!r})")
        self._rate = float(rate)
        self._axes = tuple(axes)

    def hybrid_forward(self, F, x):
        if self._rate == 0.0:
            return x
        return F.Dropout(x, p=self._rate, axes=self._axes)

    def __repr__(self):
        return f"Dropout(p = {self._rate}, axes={self._axes})"


class Flatten(HybridBlock):
    """Reshapes the input to (batch, -1)."""

    def hybrid_forward(self, F, x):
        return F.flatten(x)

    def __repr__(self):
        return "Flatten"


__all__ = ["Sequential", "Dense", "Embedding", "Dropout", "Activation", "Flatten"]
