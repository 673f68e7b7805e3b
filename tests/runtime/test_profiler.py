"""runtime.profiler: every operator call the invoker runs lands in the trace and the
table, with MXNet 1.x's API (set_config, set_state, pause/resume, dump, dumps)."""

import json

import numpy as np
import pytest

from runtime import _imperative, autograd, nd, profiler
from tests.runtime.conftest import free_failing_tests


@pytest.fixture(autouse=True)
def clean_profiler(tmp_path):
    profiler.set_config(filename=str(tmp_path / "trace.json"), profile_all=False,
                        profile_imperative=True)
    profiler.dumps(reset=True)
    yield
    profiler.set_state("stop")
    profiler.dump(finished=True)
    profiler.dumps(reset=True)


def _ops(path):
    with open(path) as f:
        trace = json.load(f)
    return [e for e in trace["traceEvents"] if e.get("cat") == "operator"], trace


def test_every_call_is_recorded_in_order_with_its_device(tmp_path):
    x = nd.ones((4, 3))
    w = nd.ones((3, 2))
    profiler.set_state("run")
    a = x + x                  # an elementwise call the short road would otherwise take
    b = nd.dot(a, w)
    c = b.sum()
    profiler.set_state("stop")
    d = x * 2                  # after stop: not recorded
    profiler.dump()
    ops, trace = _ops(tmp_path / "trace.json")
    assert [e["name"] for e in ops] == ["add", "dot", "sum"]
    for e in ops:
        assert e["ph"] == "X" and e["args"]["device"] == "cpu(0)" and e["dur"] >= 0
    for prev, nxt in zip(ops, ops[1:]):      # one thread: each call ends before the next
        assert nxt["ts"] >= prev["ts"] + prev["dur"]
    names = {m["args"]["name"] for m in trace["traceEvents"] if m["ph"] == "M"}
    assert names == {"cpu(0)"}
    assert c.asscalar() == 48 and d.shape == (4, 3)


def test_backward_calls_are_recorded(tmp_path):
    x = nd.array(np.arange(6, dtype=np.float32).reshape(2, 3))
    x.attach_grad()
    profiler.set_state("run")
    with autograd.record():
        y = (x * x).sum()
    y.backward()
    profiler.set_state("stop")
    profiler.dump()
    names = [e["name"] for e in _ops(tmp_path / "trace.json")[0]]
    forward = names[:2]
    assert forward == ["multiply", "sum"]
    # the gradient rules follow, C-level ones under MXNet's backward names
    assert names[2:] == ["_backward_sum", "_backward_multiply"], names
    np.testing.assert_array_equal(x.grad.asnumpy(), 2 * x.asnumpy())


def test_pause_resume_and_the_short_road_comes_back():
    x = nd.ones((2, 2))
    profiler.set_state("run")
    x + x
    profiler.pause()
    x + x
    x - x
    profiler.resume()
    x - x
    profiler.set_state("stop")
    table = json.loads(profiler.dumps(format="json"))["Time"]["operator"]
    assert table["add"]["Total Count"] == 1
    assert table["subtract"]["Total Count"] == 1
    # stopped: no hook, so the invoker's short road serves elementwise calls again
    seen = []
    _imperative.set_profile_hook(lambda *a: seen.append(a[0]))
    x + x
    _imperative.set_profile_hook(None)
    x + x
    assert seen == ["add"]


def test_dumps_table_sums_and_sorts():
    x = nd.ones((8, 8))
    profiler.set_state("run")
    for _ in range(3):
        nd.dot(x, x)
    nd.relu(x)
    profiler.set_state("stop")
    stats = json.loads(profiler.dumps(format="json"))["Time"]["operator"]
    assert stats["dot"]["Total Count"] == 3 and stats["relu"]["Total Count"] == 1
    d = stats["dot"]
    assert d["Min Time"] <= d["Avg Time"] <= d["Max Time"]
    assert d["Total Time"] == pytest.approx(3 * d["Avg Time"])
    table = profiler.dumps(sort_by="count")
    lines = table.splitlines()
    assert "Profile Statistics:" in lines and "operator" in lines
    rows = [ln.split() for ln in lines if ln.startswith(("dot", "relu"))]
    assert [r[0] for r in rows] == ["dot", "relu"] and rows[0][1] == "3"
    ascending = [ln.split()[0] for ln in profiler.dumps(sort_by="count", ascending=True,
                                                        reset=True).splitlines()
                 if ln.startswith(("dot", "relu"))]
    assert ascending == ["relu", "dot"]
    assert "dot" not in profiler.dumps()
    with pytest.raises(ValueError, match=r"sort_by must be one of .* \(got 'speed'\)"):
        profiler.dumps(sort_by="speed")


def test_dump_finished_drops_records_but_keeps_sums(tmp_path):
    x = nd.ones((2,))
    profiler.set_state("run")
    x + x
    profiler.dump(finished=False)
    assert len(_ops(tmp_path / "trace.json")[0]) == 1
    x + x
    profiler.dump(finished=True)
    assert len(_ops(tmp_path / "trace.json")[0]) == 2
    x + x
    profiler.set_state("stop")
    profiler.dump()
    assert len(_ops(tmp_path / "trace.json")[0]) == 1
    assert json.loads(profiler.dumps(format="json"))["Time"]["operator"]["add"][
        "Total Count"] == 3


def test_user_ranges_counters_and_markers(tmp_path):
    domain = profiler.Domain("train")
    task = domain.new_task("epoch")
    counter = domain.new_counter("samples", 0)
    profiler.set_state("run")
    with task:
        nd.ones((2,)) + 1
    counter += 5
    domain.new_marker("checkpoint").mark()
    with profiler.scope("eval"):
        pass
    profiler.set_state("stop")
    profiler.dump()
    with open(tmp_path / "trace.json") as f:
        events = json.load(f)["traceEvents"]
    by_name = {e["name"]: e for e in events}
    assert by_name["epoch"]["cat"] == "train" and by_name["epoch"]["ph"] == "X"
    assert by_name["samples"]["args"] == {"samples": 5} and by_name["samples"]["ph"] == "C"
    assert by_name["checkpoint"]["ph"] == "i" and by_name["eval"]["cat"] == "event"
    op = by_name["_plus_scalar"]
    assert by_name["epoch"]["ts"] <= op["ts"] and op["ts"] + op["dur"] <= (
        by_name["epoch"]["ts"] + by_name["epoch"]["dur"])


def test_bad_configuration_is_refused():
    with pytest.raises(ValueError, match=r"'profile_everything' must be one of"):
        profiler.set_config(profile_everything=True)
    with pytest.raises(ValueError, match=r"state must be 'run' or 'stop' \(got 'go'\)"):
        profiler.set_state("go")
    with pytest.raises(ValueError, match=r"mode must be 'symbolic' or 'all'"):
        profiler.profiler_set_config(mode="some")
    with pytest.raises(TypeError, match="hook must be callable or None"):
        _imperative.set_profile_hook(3)


free_failing_tests(globals())
