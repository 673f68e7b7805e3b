"""One pool per device, built lazily from the configuration."""

import os

from allocator import _config, _cuda
from allocator._device import as_device
from allocator._pool import (BestFitPool, NaivePool, RoundPool, UnpooledPool,
                             _clear_pool_cache, _set_resolver)
from allocator._upstream import HostUpstream

_pools = {}
_cfg = None
_bad = {}     # {variable: message} of environment values that are not valid
_STRATEGIES = {"naive": NaivePool, "round": RoundPool, "bestfit": BestFitPool,
               "unpooled": UnpooledPool}


def _config_now():
    global _cfg, _bad
    if _cfg is None:
        _cfg, _bad = _config.from_environment()
    return _cfg


def _make_pool(dev):
    # The settings first: a bad one is reported as such even where the device is missing.
    settings = _config.pool_settings(dev.kind, _config_now(), _bad)
    if dev.kind == "cpu":
        if dev.id != 0:
            raise ValueError(f"device id must be 0 for the cpu (got {dev}): there is one host pool")
        upstream = HostUpstream()
    elif dev.kind == "gpu":
        _cuda.activate(dev.id)  # fails early and clearly: no driver, no such device
        upstream = _cuda.CudaUpstream(dev.id, settings["reserve_percent"])
    else:
        if dev.id != 0:
            raise ValueError(f"device id must be 0 for cpu_pinned (got {dev})")
        _cuda.activate(0)
        upstream = _cuda.PinnedUpstream()
    strategy = settings["pool_type"]
    kw = {name: settings[name] for name in _config.STRATEGY_PARAMS[strategy]}
    return _STRATEGIES[strategy](upstream, dev, **kw)


def get_pool(device=None):
    """The pool of ``device`` (created on first use).

    Parameters
    ----------
    device : Device, str, context or None
        None means the CPU; see :func:`allocator.as_device` for the accepted forms.
    """
    dev = as_device(device)
    pool = _pools.get(dev)
    if pool is None:
        pool = _pools[dev] = _make_pool(dev)
    return pool


def pools():
    """The pools created so far, as {Device: Pool}."""
    return dict(_pools)


def configure(kind=None, *, pool_type=None, page_size=None, round_cutoff=None,
              large_alloc_round_size=None, reserve_percent=None, max_split_size=None):
    """Change the pool configuration (the API twin of the NDRT_* variables).

    Parameters
    ----------
    kind : {'cpu', 'gpu', 'cpu_pinned'}, optional
        Device kind whose ``pool_type`` to set; required with ``pool_type``.
    pool_type : {'naive', 'round', 'bestfit', 'unpooled'}, optional
    page_size, round_cutoff, large_alloc_round_size, reserve_percent, max_split_size : int
        As the environment variables of the same meaning (see README); any integral
        (``numpy.int64`` too), not bool or float.  A value given here replaces the
        environment's, a bad one included.

    A setting concerns only the pools that read it: ``pool_type`` the pools of ``kind``,
    ``reserve_percent`` the GPU pools, the others the pools of the strategies that use
    them (``page_size``: naive and round; ``round_cutoff``: round;
    ``large_alloc_round_size``: naive; ``max_split_size``: bestfit).  Concerned pools
    that hold no allocation are dropped (their cache goes back to the upstream) and
    rebuilt on next use; when one still holds allocations the call raises RuntimeError
    without changing anything.

    Returns
    -------
    dict
        The configuration now in force, as :func:`config` gives it.
    """
    cfg = _config_now()
    new = {**cfg, "pool_type": dict(cfg["pool_type"])}
    bad = dict(_bad)
    if pool_type is not None:
        if kind not in _config.DEFAULT_POOL_TYPE:
            raise ValueError(f"kind must be one of {tuple(_config.DEFAULT_POOL_TYPE)} when "
                             f"pool_type is given (got {kind!r})")
        new["pool_type"][kind] = _config.check_pool_type(pool_type)
        bad.pop(_config.TYPE_VARS[kind], None)
    elif kind is not None and kind not in _config.DEFAULT_POOL_TYPE:
        raise ValueError(f"kind must be one of {tuple(_config.DEFAULT_POOL_TYPE)} (got {kind!r})")
    given = {name: value for name, value in dict(
        page_size=page_size, round_cutoff=round_cutoff,
        large_alloc_round_size=large_alloc_round_size, reserve_percent=reserve_percent,
        max_split_size=max_split_size).items() if value is not None}
    for name, value in given.items():
        new[name] = _config.check_param(name, value)
        bad.pop(_config.PARAMS[name][0], None)
    # Only pairs with a value given here: a bad environment value is its pools' to report.
    _config.check_combinations(new, {n for n, (var, *_) in _config.PARAMS.items()
                                     if var not in bad}, given.keys())
    changed = {name for name in given if new[name] != cfg[name]}
    affected = [d for d, p in _pools.items()
                if new["pool_type"][d.kind] != cfg["pool_type"][d.kind]
                or changed.intersection(_config.params_read(p.strategy, d.kind))]
    for d in affected:
        held = _pools[d].memory_stats()["allocated_bytes.all.current"]
        if held:
            raise RuntimeError(f"cannot reconfigure the {d} pool while it holds {held} bytes "
                               "of live allocations; free them (or configure before use)")
    for d in affected:
        _pools.pop(d).empty_cache()
    cfg.clear()
    cfg.update(new)
    _bad.clear()
    _bad.update(bad)
    _clear_pool_cache()
    return config()


def config():
    """The configuration in force (a copy).

    Environment values are read at the first use of any pool and checked when a pool
    that reads them is created; one that is not valid shows here as the string the
    environment gave.
    """
    cfg = _config_now()
    return {**cfg, "pool_type": dict(cfg["pool_type"])}


def _each(device):
    return list(_pools.values()) if device is None else [get_pool(device)]


_holders = []       # release functions of the layers above that keep pool memory cached


def on_empty_cache(release):
    """Register ``release()``, called by :func:`empty_cache` before the pools empty their
    caches: a layer above that keeps pool memory between uses (the runtime's backward
    plans) gives it back there."""
    if release not in _holders:
        _holders.append(release)


def empty_cache(device=None):
    """Return every fully free cached block to its upstream (all pools when device is None),
    after the layers registered with :func:`on_empty_cache` released what they keep."""
    for release in _holders:
        release()
    for p in _each(device):
        p.empty_cache()


def memory_stats(device=None):
    """Statistics of one pool under PyTorch's key names."""
    return get_pool(device).memory_stats()


def memory_allocated(device=None):
    """Bytes currently handed out by the pool of ``device``."""
    return get_pool(device).memory_stats()["allocated_bytes.all.current"]


def memory_reserved(device=None):
    """Bytes currently held from the upstream by the pool of ``device``."""
    return get_pool(device).memory_stats()["reserved_bytes.all.current"]


def max_memory_allocated(device=None):
    """Peak of ``memory_allocated`` since the start or the last ``reset_peak_stats``."""
    return get_pool(device).memory_stats()["allocated_bytes.all.peak"]


def reset_peak_stats(device=None):
    """Set the peaks of one pool (all pools when device is None) to their current values."""
    for p in _each(device):
        p.reset_peak_stats()


def memory_summary(device=None):
    """A printable table of one pool's statistics."""
    return get_pool(device).memory_summary()


def set_limit(limit, device=None):
    """Cap the bytes the pool of ``device`` may reserve (0: no cap)."""
    get_pool(device).set_limit(limit)


def _after_fork_in_child():
    _cuda.after_fork_in_child()
    for dev, pool in _pools.items():
        if dev.kind != "cpu":
            pool._poison(f"{dev} pool: " + _cuda.FORK_MESSAGE)


_set_resolver(get_pool)
os.register_at_fork(after_in_child=_after_fork_in_child)
