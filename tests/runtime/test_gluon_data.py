"""gluon.data datasets against plain Python/NumPy indexing."""

import numpy as np
import pytest

from runtime import nd
from runtime.gluon import data


def test_array_dataset_pairs_and_single():
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    y = nd.array([0, 1, 2, 3])
    ds = data.ArrayDataset(x, y)
    assert len(ds) == 4
    sx, sy = ds[2]
    np.testing.assert_array_equal(sx, x[2])
    assert isinstance(sy, np.float32) and sy == 2
    single = data.ArrayDataset([5, 6, 7])
    assert [single[i] for i in range(3)] == [5, 6, 7]


def test_array_dataset_lengths_must_agree():
    with pytest.raises(ValueError, match=r"same length \(got 3 for array 0 and 2 for array 1\)"):
        data.ArrayDataset(np.zeros(3), np.zeros(2))
    with pytest.raises(ValueError, match="at least one array"):
        data.ArrayDataset()


def test_simple_dataset_and_transforms():
    ds = data.SimpleDataset([(1, 10), (2, 20)])
    assert ds.transform(lambda a, b: a + b)[1] == 22
    assert ds.transform_first(lambda a: -a)[0] == (-1, 10)
    eager = data.SimpleDataset([1, 2, 3]).transform(lambda v: v * v, lazy=False)
    assert isinstance(eager, data.SimpleDataset) and [eager[i] for i in range(3)] == [1, 4, 9]
    with pytest.raises(TypeError, match="fn must be callable"):
        ds.transform(3)


def test_dataset_base_needs_its_methods():
    with pytest.raises(NotImplementedError, match="__getitem__"):
        data.Dataset()[0]


# -- MXNet's test_gluon_data.py, in our words ----------------------------------------------

import gzip
import multiprocessing
import os
import pickle
import struct
import subprocess
import sys
import tarfile
import time

from runtime import random as mx_random
from runtime import recordio
from runtime.gluon.contrib.data import IntervalSampler
from runtime.gluon.data import _shared_batch
from runtime.gluon.data.dataloader import default_batchify_fn

from tests.runtime.conftest import child_env, free_failing_tests
from tests.runtime.mxnet_data_fixtures import records

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def test_samplers_sequential_random_batch():
    assert list(data.SequentialSampler(10)) == list(range(10))
    assert list(data.SequentialSampler(4, start=3)) == [3, 4, 5, 6]
    rand = data.RandomSampler(10)
    assert sorted(rand) == list(range(10)) and len(rand) == 10
    seq = data.SequentialSampler(10)
    keep = data.BatchSampler(seq, 3, "keep")
    assert list(keep) == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]] and len(keep) == 4
    discard = data.BatchSampler(seq, 3, "discard")
    assert sum(list(discard), []) == list(range(9)) and len(discard) == 3
    assert sorted(sum(list(data.BatchSampler(rand, 3, "keep")), [])) == list(range(10))


def test_random_sampler_follows_runtime_seed():
    mx_random.seed(5)
    a = list(data.RandomSampler(20))
    mx_random.seed(5)
    assert list(data.RandomSampler(20)) == a
    assert a != list(range(20))


def test_batch_sampler_rollover_carries_the_rest_into_the_next_pass():
    s = data.BatchSampler(data.SequentialSampler(10), 4, "rollover")
    assert len(s) == 2
    assert list(s) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert len(s) == 3           # 2 carried + 10 new
    assert list(s) == [[8, 9, 0, 1], [2, 3, 4, 5], [6, 7, 8, 9]]
    assert list(s)[0] == [0, 1, 2, 3]


def test_batch_sampler_rejects_bad_arguments():
    with pytest.raises(ValueError, match=r"last_batch must be one of .* \(got 'pad'\)"):
        data.BatchSampler(data.SequentialSampler(3), 2, "pad")
    with pytest.raises(ValueError, match=r"batch_size must be an integer >= 1 \(got 0\)"):
        data.BatchSampler(data.SequentialSampler(3), 0)


def test_interval_sampler():
    assert list(IntervalSampler(13, 3)) == [0, 3, 6, 9, 12, 1, 4, 7, 10, 2, 5, 8, 11]
    assert len(IntervalSampler(13, 3)) == 13
    no_roll = IntervalSampler(13, 3, rollover=False)
    assert list(no_roll) == [0, 3, 6, 9, 12] and len(no_roll) == 5
    with pytest.raises(ValueError, match="interval must be smaller than length"):
        IntervalSampler(3, 3)


def test_dataset_filter_shard_take_sample():
    ds = data.SimpleDataset(list(range(10)))
    assert list(ds.filter(lambda v: v % 3 == 0)) == [0, 3, 6, 9]
    shards = [list(ds.shard(3, i)) for i in range(3)]
    assert shards == [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]
    assert list(ds.take(4)) == [0, 1, 2, 3] and len(ds.take(None)) == 10
    assert list(ds.sample(data.SequentialSampler(3, start=5))) == [5, 6, 7]
    with pytest.raises(ValueError, match=r"index must be in \[0, num_shards\)"):
        ds.shard(3, 3)


def test_default_batchify_stacks_as_gluon():
    b = default_batchify_fn([nd.array([1, 2]), nd.array([3, 4])])
    assert b.shape == (2, 2) and b.dtype == np.float32
    np.testing.assert_array_equal(b.asnumpy(), [[1, 2], [3, 4]])
    x, y = default_batchify_fn([(np.ones(2, np.float64), 1), (np.zeros(2, np.float64), 2)])
    assert x.dtype == np.float64 and y.dtype == np.int64
    np.testing.assert_array_equal(y.asnumpy(), [1, 2])


def _loader_batches(loader):
    return [[b.asnumpy() for b in batch] if isinstance(batch, list) else batch.asnumpy()
            for batch in loader]


@pytest.mark.parametrize("workers", [0, 2])
def test_dataloader_over_a_list_dataset(workers):
    # MXNet's test_list_dataset: a plain list of (features, label) pairs
    loader = data.DataLoader([([1, 2], 0), ([3, 4], 1)], batch_size=1, num_workers=workers)
    got = _loader_batches(loader)
    loader.close()
    assert [g[0].tolist() for g in got] == [[[1, 2]], [[3, 4]]]
    assert [g[1].tolist() for g in got] == [[0], [1]]


class _FullDataset(data.Dataset):
    def __init__(self, shape=(10,), n=50):
        self._shape, self._n = shape, n

    def __len__(self):
        return self._n

    def __getitem__(self, key):
        return nd.full(self._shape, key)


@pytest.mark.parametrize("workers", [0, 2])
@pytest.mark.parametrize("thread_pool", [False, True])
def test_dataloader_orders_batches_like_the_sampler(workers, thread_pool):
    loader = data.DataLoader(_FullDataset((2, 3)), batch_size=4, num_workers=workers,
                             thread_pool=thread_pool)
    assert len(loader) == 13
    for _ in range(2):        # the workers serve a second pass
        got = [b.asnumpy() for b in loader]
        assert len(got) == 13
        for i, b in enumerate(got):
            rows = list(range(4 * i, min(4 * i + 4, 50)))
            np.testing.assert_array_equal(b, np.array(rows, np.float32)[:, None, None]
                                          * np.ones((2, 3), np.float32))
    loader.close()


def test_dataloader_last_batch_and_shuffle():
    ds = data.ArrayDataset(np.arange(10, dtype=np.float32))
    keep = [b.shape[0] for b in data.DataLoader(ds, batch_size=4)]
    assert keep == [4, 4, 2]
    assert [b.shape[0] for b in data.DataLoader(ds, batch_size=4, last_batch="discard")] == [4, 4]
    roll = data.DataLoader(ds, batch_size=4, last_batch="rollover")
    assert [b.asnumpy().tolist() for b in roll] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert [b.asnumpy().tolist() for b in roll][0] == [8, 9, 0, 1]
    mx_random.seed(3)
    shuffled = np.concatenate([b.asnumpy() for b in data.DataLoader(ds, 3, shuffle=True)])
    assert sorted(shuffled.tolist()) == list(range(10)) and shuffled.tolist() != list(range(10))


def test_dataloader_rejects_conflicting_arguments():
    ds = data.SimpleDataset(list(range(4)))
    with pytest.raises(ValueError, match="batch_size must be given unless batch_sampler is"):
        data.DataLoader(ds)
    with pytest.raises(ValueError, match="shuffle must not be given with a sampler"):
        data.DataLoader(ds, 2, shuffle=True, sampler=data.SequentialSampler(4))
    with pytest.raises(ValueError, match="must not be given with a batch_sampler"):
        data.DataLoader(ds, 2, batch_sampler=data.BatchSampler(data.SequentialSampler(4), 2))
    with pytest.raises(ValueError, match=r"timeout must be a positive number \(got 0\)"):
        data.DataLoader(ds, 2, timeout=0)
    bs = data.BatchSampler(data.SequentialSampler(4), 3)
    assert [b.asnumpy().tolist() for b in data.DataLoader(ds, batch_sampler=bs)] == \
        [[0, 1, 2], [3]]


def _pad_batchify(samples):
    """Pads variable-length samples with -1 (a user batchify returning NumPy)."""
    n = max(len(s) for s in samples)
    out = np.full((len(samples), n), -1, np.int32)
    for i, s in enumerate(samples):
        out[i, :len(s)] = s
    return out, [len(s) for s in samples]


@pytest.mark.parametrize("workers", [0, 2])
def test_dataloader_custom_batchify_variable_lengths(workers):
    ds = data.SimpleDataset([list(range(i % 4 + 1)) for i in range(9)])
    loader = data.DataLoader(ds, batch_size=3, num_workers=workers, batchify_fn=_pad_batchify)
    got = list(loader)
    loader.close()
    arr, lengths = got[0]
    assert isinstance(arr, np.ndarray) and arr.dtype == np.int32
    assert lengths == [1, 2, 3]
    np.testing.assert_array_equal(arr, [[0, -1, -1], [0, 1, -1], [0, 1, 2]])


class _Failing(data.Dataset):
    def __len__(self):
        return 20

    def __getitem__(self, i):
        if i == 9:
            raise KeyError(f"sample {i} is broken")
        return np.full(3, i, np.float32)


def _prefix_files(loader):
    return _shared_batch.leftovers(loader._workers.prefix) if loader._workers else []


def test_dataloader_worker_error_stops_workers_and_frees_shared_memory():
    loader = data.DataLoader(_Failing(), batch_size=2, num_workers=2)
    it = iter(loader)
    prefix = loader._workers.prefix
    procs = list(loader._workers.pool._pool)
    got = [next(it).asnumpy()[0, 0] for _ in range(4)]
    assert got == [0, 2, 4, 6]
    with pytest.raises(KeyError, match="sample 9 is broken"):
        next(it)
    assert loader._workers is None
    for p in procs:
        p.join(5)
        assert not p.is_alive()
    assert _shared_batch.leftovers(prefix) == []
    # the next pass starts new workers
    assert len([b for b in data.DataLoader(_FullDataset(), 10, num_workers=2)]) == 5


def test_dataloader_abandoned_pass_leaves_no_shared_memory():
    loader = data.DataLoader(_FullDataset((100,), n=64), batch_size=2, num_workers=2,
                             prefetch=6)
    it = iter(loader)
    next(it)
    prefix = loader._workers.prefix
    del it                        # batches in flight are received and removed
    assert _shared_batch.leftovers(prefix) == []
    assert len(list(loader)) == 32
    loader.close()
    assert _shared_batch.leftovers(prefix) == []


class _Slow(data.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        time.sleep(5)
        return np.zeros(1, np.float32)


def test_dataloader_timeout_stops_workers():
    loader = data.DataLoader(_Slow(), batch_size=1, num_workers=1, timeout=0.5)
    it = iter(loader)
    prefix = loader._workers.prefix
    with pytest.raises(multiprocessing.TimeoutError, match=r"timeout=0.5s"):
        next(it)
    assert loader._workers is None and _shared_batch.leftovers(prefix) == []


def test_dropped_loaders_release_their_workers():
    # MXNet's test_multi_worker_dataloader_release_pool: many loaders made, used and
    # dropped in turn leave no worker process behind
    before = len(multiprocessing.active_children())
    for _ in range(8):
        loader = data.DataLoader(_FullDataset((3,), n=6), batch_size=2, num_workers=2)
        assert next(iter(loader)).shape == (2, 3)
        del loader
    assert len(multiprocessing.active_children()) == before


def test_dataloader_batches_borrow_shared_memory_outside_the_pool():
    loader = data.DataLoader(_FullDataset((4,), n=8), batch_size=4, num_workers=2)
    b = next(iter(loader))
    assert b.ctx == mx_cpu() and b.dtype == np.float32
    b += 1                        # private to this process: writable
    np.testing.assert_array_equal(b.asnumpy()[:, 0], [1, 2, 3, 4])
    loader.close()


def mx_cpu():
    from runtime.context import cpu
    return cpu()


def test_dataloader_pin_memory_without_a_driver_keeps_host_memory():
    from tests.conftest import HAVE_GPU
    ds = _FullDataset((2,), n=4)
    b = next(iter(data.DataLoader(ds, batch_size=2, pin_memory=True)))
    assert b.ctx.device_type == ("cpu_pinned" if HAVE_GPU else "cpu")
    np.testing.assert_array_equal(b.asnumpy(), [[0, 0], [1, 1]])


_CHILD = r"""
import sys, numpy as np
from runtime.gluon import data
from runtime.gluon.data import _shared_batch
class DS(data.Dataset):
    def __len__(self): return 1000
    def __getitem__(self, i): return np.full((64,), i, np.float32), i
loader = data.DataLoader(DS(), batch_size=8, num_workers=2, prefetch=8)
it = iter(loader)
for _ in range(3):
    x, y = next(it)
assert y.asnumpy().tolist() == list(range(16, 24))
print(loader._workers.prefix, flush=True)
# exit without closing: the loader's finalizer stops the workers and sweeps the files
"""


def test_dataloader_workers_exit_with_the_program_and_leave_no_files():
    proc = subprocess.Popen([sys.executable, "-c", _CHILD], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=child_env(),
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.communicate()
        pytest.fail("a program with DataLoader workers did not exit (a hang at exit)")
    assert proc.returncode == 0, err[-2000:]
    prefix = out.strip()
    assert prefix.startswith("ndrt_dl_") and _shared_batch.leftovers(prefix) == []
    # no worker of that program survives it
    ps = subprocess.run(["pgrep", "-s", str(proc.pid)], capture_output=True, text=True)
    assert ps.stdout.strip() == ""


# -- RecordIO ------------------------------------------------------------------------------

def test_recordio_writes_mxnet_files_byte_for_byte(tmp_path):
    rec, idx = tmp_path / "a.rec", tmp_path / "a.idx"
    w = recordio.MXIndexedRecordIO(str(idx), str(rec), "w")
    for i, r in enumerate(records(recordio.pack)):
        w.write_idx(i, r)
    w.close()
    with open(os.path.join(DATA, "mxnet191_records.rec"), "rb") as f:
        assert rec.read_bytes() == f.read()
    with open(os.path.join(DATA, "mxnet191_records.idx")) as f:
        assert idx.read_text() == f.read()


def test_recordio_reads_mxnet_files():
    expect = records(recordio.pack)
    r = recordio.MXRecordIO(os.path.join(DATA, "mxnet191_records.rec"), "r")
    got = []
    while (rec := r.read()) is not None:
        got.append(rec)
    assert got == expect
    r.reset()
    assert r.read() == expect[0]
    r.close()
    ir = recordio.MXIndexedRecordIO(os.path.join(DATA, "mxnet191_records.idx"),
                                    os.path.join(DATA, "mxnet191_records.rec"), "r")
    assert ir.keys == list(range(len(expect)))
    for k in (7, 2, 9, 5):
        assert ir.read_idx(k) == expect[k]
    header, payload = recordio.unpack(ir.read_idx(8))
    assert (header.flag, header.label, header.id, header.id2, payload) == (0, 3.5, 7, 0,
                                                                         b"payload")
    header, payload = recordio.unpack(ir.read_idx(9))
    assert header.flag == 3 and payload == b"p2"
    np.testing.assert_array_equal(header.label, np.array([1, 2, 3], np.float32))
    with pytest.raises(KeyError, match="no record with key 42"):
        ir.read_idx(42)
    ir.close()


def test_recordio_rejects_bad_files(tmp_path):
    bad = tmp_path / "bad.rec"
    bad.write_bytes(b"\x00" * 12)
    r = recordio.MXRecordIO(str(bad), "r")
    with pytest.raises(ValueError, match=r"is not a RecordIO file \(magic 0x00000000 at byte 0"):
        r.read()
    r.close()
    with open(os.path.join(DATA, "mxnet191_records.rec"), "rb") as f:
        whole = f.read()
    cut = tmp_path / "cut.rec"
    cut.write_bytes(whole[:30])
    r = recordio.MXRecordIO(str(cut), "r")
    r.read(), r.read()
    with pytest.raises(ValueError, match="is truncated"):
        r.read()
    r.close()
    with pytest.raises(FileNotFoundError, match="no RecordIO file at"):
        recordio.MXRecordIO(str(tmp_path / "none.rec"), "r")
    with pytest.raises(ValueError, match=r"flag must be 'r' or 'w' \(got 'a'\)"):
        recordio.MXRecordIO(str(bad), "a")


def test_recordio_pickles_and_reads_in_a_forked_child(tmp_path):
    ds = data.RecordFileDataset(os.path.join(DATA, "mxnet191_records.rec"))
    expect = records(recordio.pack)
    assert len(ds) == len(expect) and ds[3] == expect[3]
    clone = pickle.loads(pickle.dumps(ds))
    assert clone[6] == expect[6] and clone[1] == expect[1]
    # every DataLoader worker reads through its own handle
    loader = data.DataLoader(ds, batch_size=1, num_workers=2, batchify_fn=lambda s: s[0])
    assert list(loader) == expect
    loader.close()


# -- vision datasets -----------------------------------------------------------------------

def _write_idx(path, magic, array):
    with gzip.open(path, "wb") as f:
        f.write(struct.pack(">I", magic) + struct.pack(">" + "I" * array.ndim, *array.shape))
        f.write(array.astype(np.uint8).tobytes())


def test_mnist_reads_the_idx_files(tmp_path):
    rng = np.random.default_rng(1)
    images = rng.integers(0, 256, (7, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, 7).astype(np.uint8)
    _write_idx(tmp_path / "t10k-images-idx3-ubyte.gz", 2051, images)
    _write_idx(tmp_path / "t10k-labels-idx1-ubyte.gz", 2049, labels)
    ds = data.vision.MNIST(root=str(tmp_path), train=False)
    assert len(ds) == 7
    img, lab = ds[3]
    assert img.shape == (28, 28, 1) and img.dtype == np.uint8
    assert isinstance(lab, np.int32) and lab == labels[3]
    np.testing.assert_array_equal(img.asnumpy()[:, :, 0], images[3])
    with pytest.raises(FileNotFoundError, match=r"train-labels-idx1-ubyte.gz'; ndrt does not "
                                                r"download data sets: put train-labels"):
        data.vision.FashionMNIST(root=str(tmp_path), train=True)
    t = data.vision.MNIST(root=str(tmp_path), train=False,
                          transform=lambda x, y: (x.astype("float32") / 255, y + 1))
    assert t[3][1] == labels[3] + 1


def _cifar_records(rng, n, n_labels):
    rec = rng.integers(0, 256, (n, n_labels + 3072), dtype=np.uint8)
    return rec


def test_cifar10_and_cifar100_read_the_binary_batches(tmp_path):
    rng = np.random.default_rng(2)
    folder = tmp_path / "c10" / "cifar-10-batches-bin"
    folder.mkdir(parents=True)
    recs = [_cifar_records(rng, 3, 1) for _ in range(5)]
    for i, r in enumerate(recs):
        (folder / f"data_batch_{i + 1}.bin").write_bytes(r.tobytes())
    ds = data.vision.CIFAR10(root=str(tmp_path / "c10"))
    assert len(ds) == 15
    img, lab = ds[4]            # batch 2, record 1
    assert img.shape == (32, 32, 3) and lab == recs[1][1, 0]
    np.testing.assert_array_equal(img.asnumpy(), recs[1][1, 1:].reshape(3, 32, 32)
                                  .transpose(1, 2, 0))
    with pytest.raises(FileNotFoundError, match="test_batch.bin"):
        data.vision.CIFAR10(root=str(tmp_path / "c10"), train=False)
    # CIFAR-100 from its archive, extracted on first use
    r100 = _cifar_records(rng, 4, 2)
    src = tmp_path / "src" / "cifar-100-binary"
    src.mkdir(parents=True)
    (src / "test.bin").write_bytes(r100.tobytes())
    root = tmp_path / "c100"
    root.mkdir()
    with tarfile.open(root / "cifar-100-binary.tar.gz", "w:gz") as tar:
        tar.add(src, arcname="cifar-100-binary")
    coarse = data.vision.CIFAR100(root=str(root), train=False)
    fine = data.vision.CIFAR100(root=str(root), train=False, fine_label=True)
    assert [coarse[i][1] for i in range(4)] == r100[:, 0].tolist()
    assert [fine[i][1] for i in range(4)] == r100[:, 1].tolist()
    assert not [p for p in os.listdir(root) if p.startswith(".extract")]


free_failing_tests(globals())
