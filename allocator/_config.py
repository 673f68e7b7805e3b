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
"""

import os

POOL_TYPES = ("naive", "round", "bestfit", "unpooled")
# Chosen from asv_bench/benchmarks/bench_allocator.py; the README gives the figures.
DEFAULT_POOL_TYPE = {"cpu": "round", "gpu": "bestfit", "cpu_pinned": "round"}

_TYPE_VARS = {"cpu": "NDRT_CPU_MEM_POOL_TYPE", "gpu": "NDRT_GPU_MEM_POOL_TYPE",
              "cpu_pinned": "NDRT_CPU_PINNED_MEM_POOL_TYPE"}
# name -> (environment variable, default, check, rule for the message)
_PARAMS = {
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


def check_pool_type(value, source="pool_type"):
    v = value.strip().lower() if isinstance(value, str) else value
    if v not in POOL_TYPES:
        raise ValueError(f"{source} must be one of {', '.join(POOL_TYPES)} (got {value!r})")
    return v


def check_param(name, value, source=None):
    source = source or name
    raw = value
    if isinstance(value, str):
        try:
            value = int(value.strip(), 0)
        except ValueError:
            pass   # not a number: the check below reports the raw string
    var, _, ok, rule = _PARAMS[name]
    if type(value) is not int or not ok(value):
        raise ValueError(f"{source} must be {rule} (got {raw!r})")
    return value


def from_environment(environ=os.environ):
    """The configuration the environment asks for; a bad value raises ValueError."""
    cfg = {"pool_type": {}}
    for kind, var in _TYPE_VARS.items():
        raw = environ.get(var)
        cfg["pool_type"][kind] = (check_pool_type(raw, var) if raw is not None
                                  else DEFAULT_POOL_TYPE[kind])
    for name, (var, default, _, _) in _PARAMS.items():
        raw = environ.get(var)
        cfg[name] = check_param(name, raw, var) if raw is not None else default
    if (1 << cfg["round_cutoff"]) < cfg["page_size"]:
        raise ValueError(f"NDRT_MEM_POOL_ROUND_LINEAR_CUTOFF must give 2**cutoff >= the page "
                         f"size {cfg['page_size']} (got {cfg['round_cutoff']})")
    return cfg
