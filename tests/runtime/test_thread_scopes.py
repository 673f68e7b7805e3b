"""MXNet 1.x's class-level handles on the per-thread scopes: ``AttrScope.current``,
``NameManager.current`` (assignable, seen only by the thread that assigns them) and
``Context.devtype2str``/``devstr2type``, MXNet's device type numbers."""

import threading

import pytest

import runtime as mx
from runtime import attribute, name
from runtime.attribute import AttrScope
from runtime.context import Context
from runtime.name import NameManager
from tests.runtime.conftest import in_thread


@pytest.fixture(autouse=True)
def scopes_restored():
    old_attr, old_name = attribute.current(), name.current()
    yield
    AttrScope.current = old_attr
    NameManager.current = old_name


def test_assigned_attr_scope_is_this_thread_s_and_tags_new_symbols():
    AttrScope.current = AttrScope(group="a")
    assert AttrScope.current is attribute.current()
    assert mx.sym.Variable("v").attr("group") == "a"
    assert in_thread(lambda: AttrScope.current._attr) == {}


def test_a_with_scope_in_another_thread_is_not_replaced_by_this_thread():
    entered, go, seen = threading.Event(), threading.Event(), []

    def worker():
        with AttrScope(x="inner"):
            entered.set()
            go.wait()
            seen.append(AttrScope.current._attr)
    t = threading.Thread(target=worker)
    t.start()
    entered.wait()
    AttrScope.current = AttrScope(x="main")
    go.set()
    t.join()
    assert seen == [{"x": "inner"}]


def test_assigned_name_manager_names_this_thread_s_symbols_only():
    NameManager.current = NameManager()
    assert mx.sym.FullyConnected(mx.sym.Variable("d"), num_hidden=2).name == \
        "fullyconnected0"
    assert "fullyconnected" in NameManager.current._counter
    assert "fullyconnected" not in in_thread(lambda: NameManager.current._counter)


def test_current_refuses_other_types():
    with pytest.raises(TypeError, match=r"AttrScope.current must be an instance of AttrScope \(got dict\)"):
        AttrScope.current = {}
    with pytest.raises(TypeError, match=r"NameManager.current must be an instance of NameManager \(got str\)"):
        NameManager.current = "x"


def test_device_type_numbers_are_mxnet_s():
    assert Context.devtype2str == {1: "cpu", 2: "gpu", 3: "cpu_pinned"}
    assert Context.devstr2type == {"cpu": 1, "gpu": 2, "cpu_pinned": 3}
    assert mx.gpu(3).device_typeid == 2 and mx.cpu().device_typeid == 1
    assert mx.cpu_pinned().device_typeid == 3
