"""Activation layers with a parameter or a constant of their own (Gluon's
``nn.activations``): ``LeakyReLU``, ``PReLU``, ``ELU``, ``SELU``, ``Swish``, ``GELU``.
``Activation`` (the parameterless ``Activation`` operator) lives in
:mod:`runtime.gluon.nn.basic_layers`.  Each is a ``HybridBlock`` whose ``hybrid_forward``
is the ``LeakyReLU`` operator (or ``sigmoid`` for Swish) called through ``F``, so autograd
records it and, hybridized, it is part of the cached graph."""

import numpy as np

from runtime import initializer as _init
from runtime.gluon.block import HybridBlock


def _number(layer, name, value, minimum=None):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer,
                                                         np.floating)):
        raise TypeError(f"{layer}: {name} must be a number (got {value!r})")
    if minimum is not None and not value >= minimum:
        raise ValueError(f"{layer}: {name} must be >= {minimum} (got {value!r})")
    return float(value)


class LeakyReLU(HybridBlock):
    """``x`` for ``x >= 0``, ``alpha * x`` below (Gluon's ``nn.LeakyReLU``); ``alpha``
    must be >= 0."""

    def __init__(self, alpha, **kwargs):
        super().__init__(**kwargs)
        self._alpha = _number("LeakyReLU", "alpha", alpha, minimum=0)

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type="leaky", slope=self._alpha, name="fwd")

    def __repr__(self):
        return f"LeakyReLU({self._alpha})"


class PReLU(HybridBlock):
    """A leaky rectifier whose slope ``alpha`` is learned (Gluon's ``nn.PReLU``):
    parameter ``alpha`` of shape ``(in_channels,)``, one slope per channel (axis 1) or one
    shared (``in_channels=1``, the default), initialised to 0.25."""

    def __init__(self, alpha_initializer=None, in_channels=1, **kwargs):
        super().__init__(**kwargs)
        if isinstance(in_channels, bool) or not isinstance(in_channels, (int, np.integer)) \
                or in_channels < 1:
            raise ValueError(f"PReLU: in_channels must be an integer >= 1 (got "
                             f"{in_channels!r})")
        init = _init.Constant(0.25) if alpha_initializer is None else alpha_initializer
        self.alpha = self.params.get("alpha", shape=(int(in_channels),), init=init)

    def hybrid_forward(self, F, x, alpha):
        return F.LeakyReLU(x, alpha, act_type="prelu", name="fwd")


class ELU(HybridBlock):
    """``alpha * (exp(x) - 1)`` for ``x < 0``, ``x`` otherwise (Gluon's ``nn.ELU``)."""

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self._alpha = _number("ELU", "alpha", alpha)

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type="elu", slope=self._alpha, name="fwd")


class SELU(HybridBlock):
    """The scaled ELU of Klambauer et al. (Gluon's ``nn.SELU``)."""

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type="selu", name="fwd")


class GELU(HybridBlock):
    """``x * Phi(x)``, ``Phi`` the standard normal CDF (the erf form; Gluon's
    ``nn.GELU``)."""

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type="gelu", name="fwd")


class Swish(HybridBlock):
    """``x * sigmoid(beta * x)`` (Gluon's ``nn.Swish``)."""

    def __init__(self, beta=1.0, **kwargs):
        super().__init__(**kwargs)
        self._beta = _number("Swish", "beta", beta)

    def hybrid_forward(self, F, x):
        return x * F.sigmoid(x * self._beta, name="fwd")


__all__ = ["LeakyReLU", "PReLU", "ELU", "SELU", "Swish", "GELU"]
