"""Configuration by environment and by API."""

import subprocess
import sys

import pytest

import allocator
from allocator import _config


def test_defaults():
    cfg = _config.from_environment({})
    assert cfg["pool_type"] == _config.DEFAULT_POOL_TYPE
    assert (cfg["page_size"], cfg["round_cutoff"], cfg["large_alloc_round_size"],
            cfg["reserve_percent"]) == (4096, 24, 2 << 20, 5)


def test_environment_values_are_parsed():
    cfg = _config.from_environment({"NDRT_CPU_MEM_POOL_TYPE": "Naive",
                                    "NDRT_GPU_MEM_POOL_TYPE": "unpooled",
                                    "NDRT_MEM_POOL_PAGE_SIZE": "8192",
                                    "NDRT_MEM_POOL_ROUND_LINEAR_CUTOFF": "20"})
    assert cfg["pool_type"]["cpu"] == "naive" and cfg["pool_type"]["gpu"] == "unpooled"
    assert cfg["page_size"] == 8192 and cfg["round_cutoff"] == 20


@pytest.mark.parametrize("var, value, rule", [
    ("NDRT_CPU_MEM_POOL_TYPE", "fancy", "naive, round, bestfit, unpooled"),
    ("NDRT_CPU_PINNED_MEM_POOL_TYPE", "", "naive, round, bestfit, unpooled"),
    ("NDRT_MEM_POOL_PAGE_SIZE", "1000", "a power of two"),
    ("NDRT_MEM_POOL_ROUND_LINEAR_CUTOFF", "99", r"\[12, 40\]"),
    ("NDRT_MEM_LARGE_ALLOC_ROUND_SIZE", "abc", "multiple of 4096"),
    ("NDRT_GPU_MEM_POOL_RESERVE", "150", r"\[0, 100\]"),
    ("NDRT_MEM_POOL_MAX_SPLIT_SIZE", "-1", r"in \(1 MiB, 20 MiB\]"),
])
def test_bad_environment_value_names_variable_value_and_rule(var, value, rule):
    with pytest.raises(ValueError, match=var) as ei:
        _config.from_environment({var: value})
    assert repr(value) in str(ei.value)
    assert ei.match(rule)


def test_bad_environment_value_raises_on_first_use_not_import():
    code = ("import allocator\n"
            "try:\n    allocator.alloc(8)\nexcept ValueError as e:\n    print('ERR', e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={"NDRT_CPU_MEM_POOL_TYPE": "bogus", "PATH": ""}, timeout=60)
    assert "ERR NDRT_CPU_MEM_POOL_TYPE must be one of" in out.stdout, out.stderr


def test_environment_selects_the_pool_type():
    code = "import allocator; print(allocator.get_pool().strategy)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={"NDRT_CPU_MEM_POOL_TYPE": "bestfit"}, timeout=60)
    assert out.stdout.strip() == "bestfit", out.stderr


def test_configure_rebuilds_idle_pools_and_refuses_busy_ones():
    original = allocator.config()["pool_type"]["cpu"]
    try:
        allocator.configure("cpu", pool_type="naive")
        assert allocator.get_pool().strategy == "naive"
        held = allocator.alloc(100)
        with pytest.raises(RuntimeError, match="cannot reconfigure the cpu\\(0\\) pool"):
            allocator.configure("cpu", pool_type="bestfit")
        assert allocator.get_pool().strategy == "naive"       # unchanged
        del held
        allocator.configure("cpu", pool_type="bestfit")
        assert allocator.get_pool().strategy == "bestfit"
    finally:
        allocator.configure("cpu", pool_type=original)


@pytest.mark.parametrize("kwargs, match", [
    (dict(kind="cpu", pool_type="huge"), "pool_type must be one of"),
    (dict(kind="tpu", pool_type="round"), "kind must be one of"),
    (dict(page_size=3), "page_size must be a power of two"),
    (dict(round_cutoff=10), r"round_cutoff must be an integer in \[12, 40\]"),
])
def test_configure_rejects_bad_values_without_changing_anything(kwargs, match):
    before = allocator.config()
    with pytest.raises(ValueError, match=match):
        allocator.configure(**kwargs)
    assert allocator.config() == before
