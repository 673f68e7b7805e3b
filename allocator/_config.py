"""Pool configuration: environment variables (MXNet's meanings) and ``configure()``.

| variable                            | default   | meaning                                    |
|-------------------------------------|-----------|--------------------------------------------|
| NDRT_CPU_MEM_POOL_TYPE              | see README| naive, round, bestfit or unpooled          |
| NDRT_GPU_MEM_POOL_TYPE              | see README|                                            |
| NDRT_CPU_PINNED_MEM_POOL_TYPE       | see README|                                            |
| NDRT_MEM_POOL_PAGE_SIZE             | 4096      | naive/round: smallest block, size granule  |
| NDRT_MEM_POOL_ROUND_LINEAR_CUTOFF   | 24        | round: powers of two up to 2**cutoff       |
| NDRT_MEM_LARGE_ALLOC_ROUND_SIZE     | 2097152   | naive: granule above this size             |
| NDRT_GPU_MEM_POOL_RESERVE           | 5         | gpu: percent of device memory left free    |
| NDRT_MEM_POOL_MAX_SPLIT_SIZE        | 10485760  | bestfit: requests this large get their own segment, never split |

Each pool reads its settings when it is created, as MXNet reads a device's variables
when it creates that device's pool: a bad value raises ValueError there, naming the
variable, so a bad GPU variable never stops a program that uses only the CPU.
"""

import operator
import os

POOL_TYPES = ("naive", "round", "bestfit", "unpooled")
# Chosen from asv_bench/benchmarks/bench_allocator.py; the README gives the figures.
DEFAULT_POOL_TYPE = {"cpu": "round", "gpu": "bestfit", "cpu_pinned": "round"}

TYPE_VARS = {"cpu": "NDRT_CPU_MEM_POOL_TYPE", "gpu": "NDRT_GPU_MEM_POOL_TYPE",
             "cpu_pinned": "NDRT_CPU_PINNED_MEM_POOL_TYPE"}
# name -> (environment variable, default, check, rule for the message)
PARAMS = {
    "page_size": ("NDRT_MEM_POOL_PAGE_SIZE", 4096,
                  lambda v: v >= 64 and v & (v - 1) == 0, "a power of two >= 64"),
    "round_cutoff": ("NDRT_MEM_POOL_ROUND_LINEAR_CUTOFF", 24,
                     lambda v: 12 <= v <= 40, "an integer in [12, 40]"),
    "large_alloc_round_size": ("NDRT_MEM_LARGE_ALLOC_ROUND_SIZE", 2 << 20,
                               lambda v: v >= 4096 and v % 4096 == 0,
                               "a positive multiple of 4096"),
    "reserve_percent": ("NDRT_GPU_MEM_POOL_RESERVE", 5,
                        lambda v: 0 <= v <= 100, "an integer percentage in [0, 100]"),
    "max_split_size": ("NDRT_MEM_POOL_MAX_SPLIT_SIZE", 10 << 20,
                       lambda v: (1 << 20) < v <= (20 << 20),
                       "an integer number of bytes in (1 MiB, 20 MiB]"),
}
# The settings a pool reads besides its pool type: those of its strategy, those of its
# device kind.  A setting concerns only the pools that read it.
STRATEGY_PARAMS = {"naive": ("page_size", "large_alloc_round_size"),
                   "round": ("page_size", "round_cutoff"),
                   "bestfit": ("max_split_size",), "unpooled": ()}
KIND_PARAMS = {"cpu": (), "gpu": ("reserve_percent",), "cpu_pinned": ()}


def params_read(strategy, kind):
    """Names of the settings a ``strategy`` pool of device ``kind`` reads."""
    return STRATEGY_PARAMS[strategy] + KIND_PARAMS[kind]


def check_pool_type(value, source="pool_type"):
    if not isinstance(value, str):
        raise TypeError(f"{source} must be a string, one of {', '.join(POOL_TYPES)} "
                        f"(got {value!r})")
    v = value.strip().lower()
    if v not in POOL_TYPES:
        raise ValueError(f"{source} must be one of {', '.join(POOL_TYPES)} (got {value!r})")
    return v


def check_param(name, value):
    """``value`` as the int that setting ``name`` takes: any integral (``operator.index``);
    bool, float and str raise TypeError."""
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise TypeError(f"{name} must be an integer (got {type(value).__name__} {value!r})")
    return _in_range(name, operator.index(value), name, value)


def _param_from_environment(name, raw, var):
    try:
        number = int(raw.strip(), 0)
    except ValueError:
        number = None   # not a number: _in_range reports the raw string
    return _in_range(name, number, var, raw)


def _in_range(name, number, source, given):
    _, _, ok, rule = PARAMS[name]
    if number is None or not ok(number):
        raise ValueError(f"{source} must be {rule} (got {given!r})")
    return number


# Settings a pool reads together that must agree: (name, other, agree(value, other's), rule)
_PAIRS = (("round_cutoff", "page_size", lambda c, p: (1 << c) >= p, "give 2**round_cutoff >="),
          ("large_alloc_round_size", "page_size", lambda v, p: v % p == 0,
           "be a multiple of"))


def check_combinations(cfg, names, involving=None):
    """Raise ValueError when two settings among ``names`` (values in ``cfg``, each one
    already checked) disagree; with ``involving``, only pairs that include one of those."""
    for name, other, agree, rule in _PAIRS:
        pair = {name, other}
        if (pair <= names and (involving is None or pair & involving)
                and not agree(cfg[name], cfg[other])):
            raise ValueError(f"{name} must {rule} {other}={cfg[other]} (got {cfg[name]}); "
                             f"configure() or {PARAMS[name][0]} and {PARAMS[other][0]} set "
                             f"them")


def from_environment(environ=os.environ):
    """The configuration the environment asks for, read but not enforced.

    Returns
    -------
    (cfg, bad)
        ``cfg``: {'pool_type': {kind: strategy}, setting: value}, defaults where a
        variable is unset; a variable whose value is not valid keeps its string there
        and its error message in ``bad`` ({variable: message}), raised by
        :func:`pool_settings` for the pools that read it.
    """
    cfg, bad = {"pool_type": {}}, {}
    for kind, var in TYPE_VARS.items():
        raw = environ.get(var)
        cfg["pool_type"][kind] = DEFAULT_POOL_TYPE[kind]
        if raw is not None:
            try:
                cfg["pool_type"][kind] = check_pool_type(raw, var)
            except ValueError as e:
                cfg["pool_type"][kind], bad[var] = raw, str(e)
    for name, (var, default, _, _) in PARAMS.items():
        raw = environ.get(var)
        cfg[name] = default
        if raw is not None:
            try:
                cfg[name] = _param_from_environment(name, raw, var)
            except ValueError as e:
                cfg[name], bad[var] = raw, str(e)
    return cfg, bad


def pool_settings(kind, cfg, bad):
    """What the pool of device ``kind`` reads from ``cfg``: {'pool_type': strategy,
    setting: value}; ValueError when one of those settings is bad (see
    :func:`from_environment`) or two of them disagree."""
    var = TYPE_VARS[kind]
    if var in bad:
        raise ValueError(bad[var])
    strategy = cfg["pool_type"][kind]
    names = params_read(strategy, kind)
    for name in names:
        var = PARAMS[name][0]
        if var in bad:
            raise ValueError(bad[var])
    check_combinations(cfg, set(names))
    return {"pool_type": strategy, **{name: cfg[name] for name in names}}
