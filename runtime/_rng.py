"""The runtime's random state: one NumPy generator on the host, seeded by
``runtime.random.seed`` (MXNet's ``mx.random.seed``)."""

import numpy as np

_state = {"rng": np.random.default_rng()}


def seed(seed_state, ctx="all"):
    """Seed the generator behind ``nd.random.*`` (and, later, Dropout).

    Parameters
    ----------
    seed_state : int
        Integer seed; the same seed gives the same numbers.  As MXNet's (a C ``int``
        read as unsigned), it is taken modulo 2**32: -1 and 2**32 - 1 are one seed.
    ctx : Context or 'all', optional
        Kept for MXNet compatibility: ndrt draws all numbers on the host from one
        generator, so every context shares the state.
    """
    if isinstance(seed_state, bool) or not isinstance(seed_state, (int, np.integer)):
        raise ValueError(f"seed_state must be an integer (got {seed_state!r})")
    _state["rng"] = np.random.default_rng(int(seed_state) % 2 ** 32)


def generator():
    """The NumPy Generator in use (PCG64)."""
    return _state["rng"]
