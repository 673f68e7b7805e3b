"""runtime._device, the kernels' device boundary: NumPy arrays stay NumPy and never import
CuPy; any other kernel array goes through the CuPy module (a stand-in here, the real one
under the gpu marker)."""

import sys
import types

import numpy as np
import pytest

from runtime import _device


@pytest.fixture
def no_cupy(monkeypatch):
    """CuPy not installed (an import of it raises ImportError)."""
    monkeypatch.setattr(_device, "_cupy", None)
    monkeypatch.setitem(sys.modules, "cupy", None)


class _FakeDeviceArray:
    """A device array as kernels see one: not a NumPy array, ``get()`` copies to host."""

    def __init__(self, values):
        self.values = np.array(values)

    def get(self):
        return self.values.copy()

    def __setitem__(self, key, value):
        self.values[key] = value.values if isinstance(value, _FakeDeviceArray) else value


@pytest.fixture
def fake_cupy(monkeypatch):
    """A stand-in CuPy module: asarray wraps host values as a _FakeDeviceArray, and it
    records the devices made current."""
    mod = types.ModuleType("cupy")
    mod.asarray = _FakeDeviceArray
    mod.devices = []

    class Device:
        def __init__(self, i):
            self.i = i

        def __enter__(self):
            mod.devices.append(self.i)

        def __exit__(self, *exc):
            return False
    mod.cuda = types.SimpleNamespace(Device=Device)
    mod.lib = types.SimpleNamespace(stride_tricks=types.SimpleNamespace(
        as_strided=lambda a, shape, strides: ("strided", a, shape, strides)))
    monkeypatch.setattr(_device, "_cupy", None)
    monkeypatch.setitem(sys.modules, "cupy", mod)
    return mod


def test_numpy_arrays_use_numpy_and_never_import_cupy(no_cupy):
    a = np.arange(6.0).reshape(2, 3)
    assert _device.array_module(a) is np
    assert _device.to_host(a) is a
    values = np.array([1.0, 2.0, 3.0])
    assert _device.like(a, values) is values
    assert _device._cupy is None


def test_to_host_copy_gives_an_independent_numpy_array():
    a = np.arange(4, dtype=np.int32)
    c = _device.to_host(a, copy=True)
    assert c is not a and c.dtype == a.dtype
    np.testing.assert_array_equal(c, np.arange(4))
    c[0] = 9
    assert a[0] == 0


def test_store_writes_host_values_into_a_numpy_output_broadcasting():
    out = np.zeros((2, 3), np.float32)
    _device.store(out, np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(out, [[1, 2, 3], [1, 2, 3]])


def test_as_strided_of_a_numpy_array_is_numpys_view():
    a = np.arange(6.0)
    v = _device.as_strided(a, (2, 2), (a.itemsize * 2, a.itemsize))
    np.testing.assert_array_equal(v, np.lib.stride_tricks.as_strided(a, (2, 2), (16, 8)))
    assert np.shares_memory(v, a)


@pytest.mark.parametrize("call", [
    lambda: _device.cupy("from_dlpack of GPU memory"),
    lambda: _device.array_module(_FakeDeviceArray([1.0])),
    lambda: _device.like(_FakeDeviceArray([1.0]), np.ones(1)),
])
def test_a_device_array_without_cupy_raises_naming_the_gpu_extra(no_cupy, call):
    with pytest.raises(ImportError, match=r"needs CuPy: pip install 'ndrt\[gpu\]'$"):
        call()


def test_the_import_error_names_what_needed_cupy(no_cupy):
    with pytest.raises(ImportError, match=r"^from_dlpack of GPU memory needs CuPy"):
        _device.cupy("from_dlpack of GPU memory")


class _BrokenCupyFinder:
    """An import finder for which CuPy is installed but fails to import."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name == "cupy":
            raise RuntimeError("CUDA driver version is insufficient")
        return None


def test_a_broken_cupy_import_propagates_its_own_error(monkeypatch):
    monkeypatch.setattr(_device, "_cupy", None)
    monkeypatch.delitem(sys.modules, "cupy", raising=False)
    monkeypatch.setattr(sys, "meta_path", [_BrokenCupyFinder()] + sys.meta_path)
    with pytest.raises(RuntimeError, match="CUDA driver version is insufficient"):
        _device.cupy()


def test_device_arrays_go_through_the_cupy_module(fake_cupy):
    x = _FakeDeviceArray([[1.0, 2.0]])
    assert _device.cupy() is fake_cupy and _device.array_module(x) is fake_cupy
    host = _device.to_host(x)
    assert type(host) is np.ndarray
    np.testing.assert_array_equal(host, [[1.0, 2.0]])
    moved = _device.like(x, np.array([5.0, 6.0]))
    assert isinstance(moved, _FakeDeviceArray)
    np.testing.assert_array_equal(moved.values, [5.0, 6.0])
    _device.store(x, np.array([[7.0, 8.0]]))
    np.testing.assert_array_equal(x.values, [[7.0, 8.0]])
    assert _device.as_strided(x, (1,), (8,)) == ("strided", x, (1,), (8,))


def test_cupy_view_makes_the_arrays_device_current(fake_cupy):
    gpu_array = types.SimpleNamespace(ctx=types.SimpleNamespace(device_id=3))
    fake_cupy.asarray = lambda a: ("view", a)
    assert _device.cupy_view(gpu_array) == ("view", gpu_array)
    assert fake_cupy.devices == [3]


@pytest.mark.gpu
def test_real_cupy_round_trip():
    import runtime as rt
    from runtime import nd

    cp = _device.cupy()
    d = cp.arange(6, dtype=cp.float32).reshape(2, 3)
    assert _device.array_module(d) is cp
    host = _device.to_host(d)
    assert type(host) is np.ndarray
    np.testing.assert_array_equal(host, np.arange(6, dtype=np.float32).reshape(2, 3))
    moved = _device.like(d, np.array([1, 2, 3], np.int64))
    assert isinstance(moved, cp.ndarray)
    _device.store(d, np.array([9.0, 8.0, 7.0]))
    np.testing.assert_array_equal(d.get(), [[9, 8, 7], [9, 8, 7]])
    x = nd.array(np.arange(4.0), ctx=rt.gpu(0))
    v = _device.cupy_view(x)
    assert v.data.ptr == x.__cuda_array_interface__["data"][0]
    np.testing.assert_array_equal(v.get(), np.arange(4.0))
