"""Configuration by environment and by API."""

import subprocess
import sys

import pytest

import allocator
from allocator import _config


def test_defaults():
    cfg, bad = _config.from_environment({})
    assert cfg["pool_type"] == _config.DEFAULT_POOL_TYPE and bad == {}
    assert (cfg["page_size"], cfg["round_cutoff"], cfg["large_alloc_round_size"],
            cfg["reserve_percent"]) == (4096, 24, 2 << 20, 5)


def test_environment_values_are_parsed():
    cfg, bad = _config.from_environment({"NDRT_CPU_MEM_POOL_TYPE": "Naive",
                                         "NDRT_GPU_MEM_POOL_TYPE": "unpooled",
                                         "NDRT_MEM_POOL_PAGE_SIZE": "8192",
                                         "NDRT_MEM_POOL_ROUND_LINEAR_CUTOFF": "20"})
    assert cfg["pool_type"]["cpu"] == "naive" and cfg["pool_type"]["gpu"] == "unpooled"
    assert cfg["page_size"] == 8192 and cfg["round_cutoff"] == 20 and bad == {}


@pytest.mark.parametrize("var, value, rule, kind, env", [
    ("NDRT_CPU_MEM_POOL_TYPE", "fancy", "naive, round, bestfit, unpooled", "cpu", {}),
    ("NDRT_CPU_PINNED_MEM_POOL_TYPE", "", "naive, round, bestfit, unpooled", "cpu_pinned", {}),
    ("NDRT_MEM_POOL_PAGE_SIZE", "1000", "a power of two", "cpu", {}),
    ("NDRT_MEM_POOL_ROUND_LINEAR_CUTOFF", "99", r"\[12, 40\]", "cpu", {}),
    ("NDRT_MEM_LARGE_ALLOC_ROUND_SIZE", "abc", "multiple of 4096", "cpu",
     {"NDRT_CPU_MEM_POOL_TYPE": "naive"}),
    ("NDRT_GPU_MEM_POOL_RESERVE", "150", r"\[0, 100\]", "gpu", {}),
    ("NDRT_MEM_POOL_MAX_SPLIT_SIZE", "-1", r"in \(1 MiB, 20 MiB\]", "gpu", {}),
])
def test_bad_environment_value_names_variable_value_and_rule(var, value, rule, kind, env):
    cfg, bad = _config.from_environment({var: value, **env})   # read, not yet checked
    with pytest.raises(ValueError, match=var) as ei:
        _config.pool_settings(kind, cfg, bad)
    assert repr(value) in str(ei.value)
    assert ei.match(rule)


def test_a_bad_variable_stops_only_the_pools_that_read_it():
    cfg, bad = _config.from_environment({
        "NDRT_GPU_MEM_POOL_TYPE": "bogus", "NDRT_GPU_MEM_POOL_RESERVE": "101",
        "NDRT_CPU_PINNED_MEM_POOL_TYPE": "x", "NDRT_MEM_POOL_MAX_SPLIT_SIZE": "0",
        "NDRT_MEM_LARGE_ALLOC_ROUND_SIZE": "abc"})
    assert _config.pool_settings("cpu", cfg, bad) == {
        "pool_type": "round", "page_size": 4096, "round_cutoff": 24}
    with pytest.raises(ValueError, match="NDRT_GPU_MEM_POOL_TYPE must be one of"):
        _config.pool_settings("gpu", cfg, bad)
    with pytest.raises(ValueError, match="NDRT_CPU_PINNED_MEM_POOL_TYPE must be one of"):
        _config.pool_settings("cpu_pinned", cfg, bad)
    cfg, bad = _config.from_environment({"NDRT_GPU_MEM_POOL_RESERVE": "101"})
    with pytest.raises(ValueError, match=r"NDRT_GPU_MEM_POOL_RESERVE must be .*\(got '101'\)"):
        _config.pool_settings("gpu", cfg, bad)


@pytest.mark.parametrize("env, kind, match", [
    ({"NDRT_MEM_POOL_PAGE_SIZE": "8192", "NDRT_MEM_POOL_ROUND_LINEAR_CUTOFF": "12"}, "cpu",
     r"round_cutoff must give 2\*\*round_cutoff >= page_size=8192 \(got 12\).*"
     r"NDRT_MEM_POOL_ROUND_LINEAR_CUTOFF"),
    ({"NDRT_CPU_MEM_POOL_TYPE": "naive", "NDRT_MEM_POOL_PAGE_SIZE": "8192",
      "NDRT_MEM_LARGE_ALLOC_ROUND_SIZE": "12288"}, "cpu",
     r"large_alloc_round_size must be a multiple of page_size=8192 \(got 12288\).*"
     r"NDRT_MEM_LARGE_ALLOC_ROUND_SIZE"),
])
def test_settings_that_disagree_are_refused_when_a_pool_reads_both(env, kind, match):
    cfg, bad = _config.from_environment(env)
    with pytest.raises(ValueError, match=match):
        _config.pool_settings(kind, cfg, bad)
    assert _config.pool_settings("gpu", cfg, bad)["pool_type"] == "bestfit"   # reads neither


def test_bad_gpu_variables_leave_cpu_arrays_working():
    code = ("import allocator\n"
            "from runtime import nd\n"
            "print('SUM', nd.ones(3).asnumpy().sum())\n"
            "print('CONFIG', allocator.config()['pool_type']['gpu'])\n"
            "for dev in ('gpu(0)', 'cpu_pinned'):\n"
            "    try:\n        allocator.get_pool(dev)\n"
            "    except ValueError as e:\n        print('ERR', e)\n")
    env = {"NDRT_GPU_MEM_POOL_TYPE": "bogus", "NDRT_GPU_MEM_POOL_RESERVE": "101",
           "NDRT_CPU_PINNED_MEM_POOL_TYPE": "x", "PATH": ""}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=60)
    assert "SUM 3.0" in out.stdout and "CONFIG bogus" in out.stdout, out.stderr
    assert ("ERR NDRT_GPU_MEM_POOL_TYPE must be one of naive, round, bestfit, unpooled "
            "(got 'bogus')") in out.stdout, out.stderr
    assert ("ERR NDRT_CPU_PINNED_MEM_POOL_TYPE must be one of naive, round, bestfit, "
            "unpooled (got 'x')") in out.stdout, out.stderr


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
    (dict(page_size=8192, round_cutoff=12),
     r"round_cutoff must give 2\*\*round_cutoff >= page_size=8192 \(got 12\)"),
])
def test_configure_rejects_bad_values_without_changing_anything(kwargs, match):
    before = allocator.config()
    with pytest.raises(ValueError, match=match):
        allocator.configure(**kwargs)
    assert allocator.config() == before


def test_configure_waits_only_for_the_pools_a_setting_concerns():
    before = allocator.config()
    held = None
    try:
        allocator.configure("cpu", pool_type="round")
        held = allocator.alloc(100)                  # the cpu pool is busy
        allocator.configure(reserve_percent=10)      # gpu pools only
        allocator.configure(max_split_size=8 << 20)  # bestfit pools only
        assert allocator.get_pool().strategy == "round"
        with pytest.raises(RuntimeError, match=r"cannot reconfigure the cpu\(0\) pool"):
            allocator.configure(page_size=8192)      # round pools read it
        assert allocator.config()["page_size"] == before["page_size"]
    finally:
        del held
        allocator.configure("cpu", pool_type=before["pool_type"]["cpu"],
                            reserve_percent=before["reserve_percent"],
                            max_split_size=before["max_split_size"])
    assert allocator.config() == before


def test_configure_takes_any_integral_and_refuses_bool_float_and_non_strings():
    np = pytest.importorskip("numpy")
    before = allocator.config()
    try:
        cfg = allocator.configure(page_size=np.int64(8192))
        assert cfg["page_size"] == 8192 and type(cfg["page_size"]) is int
    finally:
        allocator.configure(page_size=before["page_size"])
    for bad in (True, 4096.0, "4096"):
        with pytest.raises(TypeError, match=r"page_size must be an integer \(got "):
            allocator.configure(page_size=bad)
    with pytest.raises(TypeError, match=r"pool_type must be a string, one of"):
        allocator.configure("cpu", pool_type=3)
    assert allocator.config() == before


def test_configure_replaces_a_bad_environment_value():
    code = ("import allocator\n"
            "print('BEFORE', repr(allocator.config()['reserve_percent']))\n"
            "print('AFTER', repr(allocator.configure(reserve_percent=10)['reserve_percent']))\n"
            "from allocator import _registry, _config\n"
            "print('GPU', _config.pool_settings('gpu', _registry._config_now(), "
            "_registry._bad))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={"NDRT_GPU_MEM_POOL_RESERVE": "101", "PATH": ""}, timeout=60)
    assert "BEFORE '101'" in out.stdout and "AFTER 10" in out.stdout, out.stderr
    assert "'reserve_percent': 10" in out.stdout, out.stderr
