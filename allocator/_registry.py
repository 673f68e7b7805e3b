"""One pool per device, built lazily from the configuration."""

import os

from allocator import _config, _cuda
from allocator._device import as_device
from allocator._pool import (BestFitPool, NaivePool, RoundPool, UnpooledPool,
                             _clear_pool_cache, _set_resolver)
from allocator._upstream import HostUpstream

_pools = {}
_cfg = None
_STRATEGIES = {"naive": NaivePool, "round": RoundPool, "bestfit": BestFitPool,
               "unpooled": UnpooledPool}


def _config_now():
    global _cfg
    if _cfg is None:
        _cfg = _config.from_environment()
    return _cfg


def _make_pool(dev):
    cfg = _config_now()
    if dev.kind == "cpu":
        if dev.id != 0:
            raise ValueError(f"device id must be 0 for the cpu (got {dev}): there is one host pool")
        upstream = HostUpstream()
    elif dev.kind == "gpu":
        _cuda.activate(dev.id)  # fails early and clearly: no driver, no such device
        upstream = _cuda.CudaUpstream(dev.id, cfg["reserve_percent"])
    else:
        if dev.id != 0:
            raise ValueError(f"device id must be 0 for cpu_pinned (got {dev})")
        _cuda.activate(0)
        upstream = _cuda.PinnedUpstream()
    kind = cfg["pool_type"][dev.kind]
    kw = {}
    if kind == "naive":
        kw = dict(page_size=cfg["page_size"],
                  large_alloc_round_size=cfg["large_alloc_round_size"])
    elif kind == "round":
        kw = dict(page_size=cfg["page_size"], round_cutoff=cfg["round_cutoff"])
    elif kind == "bestfit":
        kw = dict(max_split_size=cfg["max_split_size"])
    return _STRATEGIES[kind](upstream, dev, **kw)


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
        As the environment variables of the same meaning (see README).

    Pools of the affected kinds that hold no allocation are dropped (their cache goes
    back to the upstream) and rebuilt on next use; a pool that still holds
    allocations cannot change, and the call raises RuntimeError without changing
    anything.

    Returns
    -------
    dict
        The configuration now in force.
    """
    cfg = _config_now()
    new = {"pool_type": dict(cfg["pool_type"])}
    new.update({k: v for k, v in cfg.items() if k != "pool_type"})
    if pool_type is not None:
        if kind not in _config.DEFAULT_POOL_TYPE:
            raise ValueError(f"kind must be one of {tuple(_config.DEFAULT_POOL_TYPE)} when "
                             f"pool_type is given (got {kind!r})")
        new["pool_type"][kind] = _config.check_pool_type(pool_type)
    elif kind is not None and kind not in _config.DEFAULT_POOL_TYPE:
        raise ValueError(f"kind must be one of {tuple(_config.DEFAULT_POOL_TYPE)} (got {kind!r})")
    params = dict(page_size=page_size, round_cutoff=round_cutoff,
                  large_alloc_round_size=large_alloc_round_size,
                  reserve_percent=reserve_percent, max_split_size=max_split_size)
    for name, value in params.items():
        if value is not None:
            new[name] = _config.check_param(name, value)
    if (1 << new["round_cutoff"]) < new["page_size"]:
        raise ValueError(f"round_cutoff must give 2**round_cutoff >= page_size="
                         f"{new['page_size']} (got {new['round_cutoff']})")
    changed_params = any(new[k] != cfg[k] for k in params)
    kinds = {k for k in new["pool_type"] if new["pool_type"][k] != cfg["pool_type"][k]}
    if changed_params:
        kinds = set(_config.DEFAULT_POOL_TYPE)
    affected = [d for d in _pools if d.kind in kinds]
    for d in affected:
        held = _pools[d].memory_stats()["allocated_bytes.all.current"]
        if held:
            raise RuntimeError(f"cannot reconfigure the {d} pool while it holds {held} bytes "
                               "of live allocations; free them (or configure before use)")
    for d in affected:
        _pools.pop(d).empty_cache()
    _cfg.clear()
    _cfg.update(new)
    _clear_pool_cache()
    return config()


def config():
    """The configuration in force (a copy)."""
    cfg = _config_now()
    return {**cfg, "pool_type": dict(cfg["pool_type"])}


def _each(device):
    return list(_pools.values()) if device is None else [get_pool(device)]


def empty_cache(device=None):
    """Return every fully free cached block to its upstream (all pools when device is None)."""
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
