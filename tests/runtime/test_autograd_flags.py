"""runtime.autograd: the recording and training flags belong to the thread that sets them
(MXNet's are thread-local), and the set_* functions return the previous value."""

import threading

import numpy as np
import pytest

from runtime import _imperative, autograd, nd
from runtime.ops import registry
from tests.runtime.conftest import in_thread


@pytest.fixture(autouse=True)
def flags_restored():
    yield
    autograd.set_recording(False)
    autograd.set_training(False)


@pytest.mark.parametrize("flag", ["recording", "training"])
def test_set_returns_the_previous_value(flag):
    get, set_ = getattr(autograd, f"is_{flag}"), getattr(autograd, f"set_{flag}")
    assert get() is False
    assert set_(True) is False
    assert get() is True
    assert set_(True) is True
    assert set_(False) is True
    assert get() is False


@pytest.mark.parametrize("flag", ["recording", "training"])
def test_another_thread_does_not_see_this_thread_s_flag(flag):
    get, set_ = getattr(autograd, f"is_{flag}"), getattr(autograd, f"set_{flag}")
    set_(True)
    assert in_thread(get) is False               # a new thread starts with it off
    assert in_thread(lambda: (set_(True), get())[1]) is True
    assert get() is True                          # untouched by the other thread
    set_(False)
    assert in_thread(lambda: (set_(True), get())[1]) is True
    assert get() is False


def test_scopes_are_per_thread():
    barrier = threading.Barrier(2)
    seen = {}

    def worker():
        with autograd.train_mode():
            barrier.wait()
            seen["worker"] = autograd.is_training()
            barrier.wait()

    t = threading.Thread(target=worker)
    t.start()
    barrier.wait()                                # the worker is inside train_mode()
    seen["main"] = autograd.is_training()
    barrier.wait()
    t.join()
    assert seen == {"worker": True, "main": False}


def test_dropout_reads_the_training_flag_of_its_thread():
    x = nd.ones((50, 50))
    with autograd.train_mode():
        dropped = in_thread(lambda: nd.Dropout(x, p=0.5).asnumpy())
        here = nd.Dropout(x, p=0.5).asnumpy()
    np.testing.assert_array_equal(dropped, 1.0)   # the other thread is not training
    assert (here == 0).any()


def test_the_short_road_records_only_on_the_recording_thread():
    x = nd.ones(4)
    x.attach_grad()
    assert (x + x)._entry is None                  # not recording: nothing on the tape
    autograd.set_recording(True)
    y = x + x
    assert y._entry is not None and y._entry.node.name == "add"
    assert in_thread(lambda: (x + x)._entry) is None     # not recording there
    assert _imperative.is_recording() is True
    autograd.set_recording(False)
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), np.full(4, 2.0, np.float32))
