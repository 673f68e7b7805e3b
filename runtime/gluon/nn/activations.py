"""Activation layers with a parameter or a constant of their own (Gluon's
``nn.activations``): ``LeakyReLU``, ``PReLU``, ``ELU``, ``SELU``, ``Swish``, ``GELU``.
``Activation`` (the parameterless ``Activation`` operator) lives in
:mod:`runtime.gluon.nn.basic_layers`.  Each forward is the ``LeakyReLU`` operator (or
``sigmoid`` for Swish), so autograd records it."""

import numpy as np

from runtime import nd
from runtime import initializer as _init
from runtime.gluon.block import Block


def _number(layer, name, value, minimum=None):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer,
                                                         np.floating)):
        raise TypeError(f"{layer}: {name} must be a number (got {value!r})")
    if minimum is not None and not value >= minimum:
        raise ValueError(f"{layer}: {name} must be >= {minimum} (got {value!r})")
    return float(value)


class LeakyReLU(Block):
    """``x`` for ``x >= 0``, ``alpha * x`` below (Gluon's ``nn.LeakyReLU``); ``alpha``
    must be >= 0."""

    def __init__(self, alpha, **kwargs):
        super().__init__(**kwargs)
        self._alpha = _number("LeakyReLU", "alpha", alpha, minimum=0)

    def forward(self, x):
        return nd.LeakyReLU(x, act_type="leaky", slope=self._alpha)

    def __repr__(self):
        return f"LeakyReLU({self._alpha})"


class PReLU(Block):
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

    def forward(self, x):
        return nd.LeakyReLU(x, self.alpha.data(), act_type="prelu")


class ELU(Block):
    """``alpha * (exp(x) - 1)`` for ``x < 0``, ``x`` otherwise (Gluon's ``nn.ELU``)."""

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self._alpha = _number("ELU", "alpha", alpha)

    def forward(self, x):
        return nd.LeakyReLU(x, act_type="elu", slope=self._alpha)


class SELU(Block):
    """The scaled ELU of Klambauer et al. (Gluon's ``nn.SELU``)."""

    def forward(self, x):
        return nd.LeakyReLU(x, act_type="selu")


class GELU(Block):
    """``x * Phi(x)``, ``Phi`` the standard normal CDF (the erf form; Gluon's
    ``nn.GELU``)."""

    def forward(self, x):
        return nd.LeakyReLU(x, act_type="gelu")


class Swish(Block):
    """``x * sigmoid(beta * x)`` (Gluon's ``nn.Swish``)."""

    def __init__(self, beta=1.0, **kwargs):
        super().__init__(**kwargs)
        self._beta = _number("Swish", "beta", beta)

    def forward(self, x):
        return x * nd.sigmoid(x * self._beta)


__all__ = ["LeakyReLU", "PReLU", "ELU", "SELU", "Swish", "GELU"]
