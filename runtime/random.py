"""MXNet 1.x's ``mx.random``: ``seed`` and the samplers of ``mx.nd.random``
(``mx.random.uniform(0, 1, shape=(2, 3))`` is ``mx.nd.random.uniform``'s call).

Every draw comes from one NumPy generator on the host (``runtime._rng``), which
``seed`` resets."""

from runtime._rng import seed
from runtime.nd.random import *  # noqa: F401,F403  (MXNet's module re-exports them too)
from runtime.nd.random import __all__ as _samplers

__all__ = ["seed", *_samplers]
