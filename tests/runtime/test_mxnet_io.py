"""MXNet's binary NDArray files: ``nd.load`` reads them, ``nd.save(format='mxnet')`` writes
them.

The reference files are built here byte by byte from MXNet's documented layout
(``src/ndarray/ndarray.cc`` ``NDArray::Save/Load``, dmlc-core's vector and string
serialisers), independently of ``runtime.nd._mxnet_format``.
"""

import struct

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import allocator
from runtime import context, nd
from runtime.context import Context
from tests.runtime.conftest import run_limited
from tests.runtime.test_io import assert_refused

# mshadow type flags, as MXNet's mshadow/base.h numbers them
FLAGS = {np.float32: 0, np.float64: 1, np.float16: 2, np.uint8: 3, np.int32: 4, np.int8: 5,
         np.int64: 6, np.bool_: 7}
V1, V2, V3 = 0xF993FAC8, 0xF993FAC9, 0xF993FACA


def shape_bytes(shape):
    return struct.pack("<i", len(shape)) + b"".join(struct.pack("<q", s) for s in shape)


def dense(a, magic=V2, dev=(1, 0)):
    a = np.asarray(a, order="C")      # (ascontiguousarray would make a 0-d array 1-d)
    return (struct.pack("<I", magic) + struct.pack("<i", 0) + shape_bytes(a.shape)
            + struct.pack("<ii", *dev) + struct.pack("<i", FLAGS[a.dtype.type]) + a.tobytes())


def row_sparse(m, dev=(1, 0)):
    """``m`` (2-D NumPy) as MXNet's row_sparse record: stype 1, storage shape, shape, ctx,
    dtype, aux (row indices, int64), data, aux data."""
    rows = np.flatnonzero(np.any(m != 0, axis=1)).astype(np.int64)
    data = np.ascontiguousarray(m[rows])
    return (struct.pack("<Ii", V2, 1) + shape_bytes(data.shape) + shape_bytes(m.shape)
            + struct.pack("<ii", *dev) + struct.pack("<i", FLAGS[m.dtype.type])
            + struct.pack("<i", 6) + shape_bytes(rows.shape)
            + data.tobytes() + rows.tobytes())


def csr(m, index_flag=6):
    c = sp.csr_matrix(m)
    itype = {6: np.int64, 4: np.int32}[index_flag]
    indptr, indices = c.indptr.astype(itype), c.indices.astype(itype)
    return (struct.pack("<Ii", V2, 2) + shape_bytes(c.data.shape) + shape_bytes(m.shape)
            + struct.pack("<ii", 1, 0) + struct.pack("<i", FLAGS[m.dtype.type])
            + struct.pack("<i", index_flag) + shape_bytes(indptr.shape)
            + struct.pack("<i", index_flag) + shape_bytes(indices.shape)
            + c.data.tobytes() + indptr.tobytes() + indices.tobytes())


def container(records, names=()):
    out = struct.pack("<QQQ", 0x112, 0, len(records)) + b"".join(records)
    out += struct.pack("<Q", len(names))
    for n in names:
        raw = n.encode()
        out += struct.pack("<Q", len(raw)) + raw
    return out


M = np.array([[0, 1.5, 0, 2], [0, 0, 0, 0], [3, 0, -4, 0]], np.float32)


def load_bytes(tmp_path, raw, name="f.params", **kw):
    path = tmp_path / name
    path.write_bytes(raw)
    return nd.load(str(path), **kw)


# -- reading ------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", list(FLAGS))
@pytest.mark.parametrize("shape", [(5,), (2, 3), (3, 1, 2)])
def test_dense_v2_every_dtype(tmp_path, dtype, shape):
    a = (np.arange(np.prod(shape)).reshape(shape) % 7).astype(dtype)
    (got,) = load_bytes(tmp_path, container([dense(a)]))
    assert got.stype == "default" and got.dtype == np.dtype(dtype) and got.shape == shape
    np.testing.assert_array_equal(got.asnumpy(), a)


def test_names_give_a_dict_in_file_order(tmp_path):
    a, b = np.ones((2, 2), np.float32), np.arange(3, dtype=np.float64)
    got = load_bytes(tmp_path, container([dense(a), dense(b)], ["arg:fc_weight", "aux:mean"]))
    assert list(got) == ["arg:fc_weight", "aux:mean"]
    np.testing.assert_array_equal(got["arg:fc_weight"].asnumpy(), a)
    np.testing.assert_array_equal(got["aux:mean"].asnumpy(), b)


def test_sparse_records_match_scipy(tmp_path):
    r, c, c32 = load_bytes(tmp_path, container([row_sparse(M), csr(M), csr(M, index_flag=4)]))
    assert r.stype == "row_sparse" and r.shape == M.shape
    np.testing.assert_array_equal(r.indices.asnumpy(), [0, 2])
    np.testing.assert_array_equal(r.asnumpy(), M)
    ref = sp.csr_matrix(M)
    for x in (c, c32):
        assert x.stype == "csr" and x.dtype == np.float32
        np.testing.assert_array_equal(x.indptr.asnumpy(), ref.indptr)
        np.testing.assert_array_equal(x.indices.asnumpy(), ref.indices)
        np.testing.assert_array_equal(x.asnumpy(), M)


def test_v3_scalars_and_zero_size(tmp_path):
    s, z = load_bytes(tmp_path, container([dense(np.array(2.5), V3),
                                           dense(np.zeros((0, 3), np.int32), V3)]))
    assert s.shape == () and float(s.asnumpy()) == 2.5
    assert z.shape == (0, 3) and z.dtype == np.int32


def test_pre_v2_files(tmp_path):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    # V1: magic, int64 shape, context, dtype, data (no storage type)
    v1 = struct.pack("<I", V1) + shape_bytes(a.shape) + struct.pack("<iii", 1, 0, 0) \
        + a.tobytes()
    # before V1: the first uint32 is ndim, then uint32 dims
    v0 = struct.pack("<III", 2, 2, 3) + struct.pack("<iii", 1, 0, 0) + a.tobytes()
    for raw in (v1, v0):
        (got,) = load_bytes(tmp_path, container([raw]))
        np.testing.assert_array_equal(got.asnumpy(), a)


def test_saved_context_is_kept_unless_ctx_is_given(tmp_path):
    a = np.ones(2, np.float32)
    (x,) = load_bytes(tmp_path, container([dense(a, dev=(5, 0))]))     # kCPUShared: cpu
    assert x.ctx == Context("cpu", 0)
    (y,) = load_bytes(tmp_path, container([dense(a, dev=(2, 1))]), ctx=Context("cpu", 0))
    assert y.ctx.device_type == "cpu"
    np.testing.assert_array_equal(y.asnumpy(), a)


def test_gpu_arrays_load_onto_the_cpu_without_gpus(tmp_path, monkeypatch):
    monkeypatch.setattr(context, "num_gpus", lambda: 0)
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    (x,) = load_bytes(tmp_path, container([dense(a, dev=(2, 1))]))
    assert x.ctx == Context("cpu", 0)
    np.testing.assert_array_equal(x.asnumpy(), a)
    # MXNet's pickles hold the same record
    y = nd.zeros(1)
    y.__setstate__({"handle": bytearray(dense(a, dev=(2, 0)))})
    assert y.ctx == Context("cpu", 0) and y.shape == (2, 3)
    np.testing.assert_array_equal(y.asnumpy(), a)


@pytest.mark.gpu
def test_gpu_arrays_keep_their_gpu(tmp_path):
    a = np.ones(2, np.float32)
    (z,) = load_bytes(tmp_path, container([dense(a, dev=(2, 0))]))
    assert z.ctx == Context("gpu", 0)


# -- writing ------------------------------------------------------------------------------------

def test_save_writes_mxnet_bytes_exactly(tmp_path):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.array([1, -2], np.int64)
    path = tmp_path / "out"
    nd.save(str(path), {"a": nd.array(a), "b": nd.array(b, dtype="int64")}, format="mxnet")
    assert path.read_bytes() == container([dense(a), dense(b)], ["a", "b"])
    nd.save(str(path), [nd.sparse.row_sparse_array(M), nd.sparse.csr_matrix(M)],
            format="mxnet")
    assert path.read_bytes() == container([row_sparse(M), csr(M)])
    nd.save(str(path), [nd.array(np.array(2.5), dtype="float64")], format="mxnet")
    assert path.read_bytes() == container([dense(np.array(2.5), V3)])


@pytest.mark.parametrize("dtype", list(FLAGS))
def test_round_trip_every_dtype_and_storage(tmp_path, dtype):
    m = (M * 2).astype(dtype)
    arrays = [nd.array(m, dtype=dtype), nd.array(np.zeros((2, 0), dtype), dtype=dtype)]
    if np.dtype(dtype).kind == "f":
        arrays += [nd.sparse.csr_matrix(m), nd.sparse.row_sparse_array(m)]
    path = tmp_path / "rt"
    nd.save(str(path), arrays, format="mxnet")
    got = nd.load(str(path))
    for x, y in zip(arrays, got):
        assert (y.stype, y.dtype, y.shape) == (x.stype, x.dtype, x.shape)
        np.testing.assert_array_equal(y.asnumpy(), x.asnumpy())


def test_bad_format_argument(tmp_path):
    with pytest.raises(ValueError, match="format must be 'ndrt' or 'mxnet'"):
        nd.save(str(tmp_path / "x"), [nd.ones(2)], format="hdf5")
    assert not (tmp_path / "x").exists()


# -- damaged and hostile files -----------------------------------------------------------------

GOOD = container([dense(np.arange(4, dtype=np.float32)), row_sparse(M), csr(M)],
                 ["w", "r", "c"])


def test_every_truncation_is_refused(tmp_path):
    path = tmp_path / "cut"
    for n in range(8, len(GOOD)):
        path.write_bytes(GOOD[:n])
        assert_refused(path)


@settings(deadline=None, max_examples=300)
@given(data=st.data())
def test_single_byte_flips_are_refused_or_harmless(tmp_path_factory, data):
    pos = data.draw(st.integers(0, len(GOOD) - 1), label="pos")
    val = data.draw(st.integers(0, 255).filter(lambda v: v != GOOD[pos]), label="value")
    path = tmp_path_factory.mktemp("flip") / "f"
    path.write_bytes(GOOD[:pos] + bytes([val]) + GOOD[pos + 1:])
    try:     # ctx=: a context flipped to a valid device is not a defect of the file
        got = nd.load(str(path), ctx=Context("cpu", 0))
    except ValueError as e:
        assert str(e).startswith("load: ") and repr(str(path)) in str(e)
        return
    # a flipped data byte or name byte, or the reserved word: a well-formed file
    assert isinstance(got, dict) and len(got) == 3


@pytest.mark.parametrize("raw, match", [
    (container([dense(np.ones(2, np.float32))])[:-8] + struct.pack("<Q", 3),
     "name count must be 0 or the array count 1"),
    (struct.pack("<QQQ", 0x112, 0, 1 << 60), "array count"),
    (container([struct.pack("<Ii", V2, 7)]), "storage type must be"),
    (container([dense(np.ones(2, np.float32)).replace(struct.pack("<ii", 1, 0),
                                                      struct.pack("<ii", 9, 0), 1)]),
     "context must be"),
    (container([dense(np.ones(2, np.float32))[:-12] + struct.pack("<i", 12)
                + np.ones(2, np.float32).tobytes()]), "type flag 12"),
    (container([struct.pack("<Ii", V2, 0) + struct.pack("<iq", 1, 1 << 40)
                + struct.pack("<iii", 1, 0, 0)]), "needs"),
    (container([struct.pack("<Ii", V2, 0) + struct.pack("<i", 40)]), "at most 32 dimensions"),
    (container([struct.pack("<Ii", V2, 0) + struct.pack("<iq", 1, -1)]), "unknown dimension"),
    (container([struct.pack("<Ii", V2, 0) + struct.pack("<i", 0)]), "empty (none) NDArray"),
    (container([dense(np.ones(1, np.float32))] * 2, ["a", "a"]), "unique"),
    (container([dense(np.ones(1, np.float32))]) + b"x", "bytes follow the last name"),
    (container([dense(np.ones(1, np.float32))])[:-8] + struct.pack("<QQ", 1, 2) + b"\xff\xfe",
     "name 0 is not UTF-8"),
])
def test_defects_are_value_errors_naming_the_file(tmp_path, raw, match):
    assert_refused(_write(tmp_path, raw), match)


def test_bad_sparse_parts_are_refused(tmp_path):
    bad = bytearray(csr(M))
    # indptr's last entry (the final 8 bytes before indices) claims more values than exist
    nnz = int(sp.csr_matrix(M).nnz)
    at = len(bad) - nnz * 8 - 8
    bad[at:at + 8] = struct.pack("<q", nnz + 5)
    assert_refused(_write(tmp_path, container([bytes(bad)])), "indptr")
    rsp = bytearray(row_sparse(M))
    rsp[-16:] = struct.pack("<qq", 2, 0)          # row indices not increasing
    assert_refused(_write(tmp_path, container([bytes(rsp)])))


def _write(tmp_path, raw):
    path = tmp_path / "bad"
    path.write_bytes(raw)
    return path


def test_huge_claims_allocate_nothing(tmp_path):
    before = allocator.memory_stats()["allocated_bytes.all.current"]
    raw = container([struct.pack("<Ii", V2, 0) + struct.pack("<iqq", 2, 1 << 20, 1 << 20)
                     + struct.pack("<iii", 1, 0, 0)])
    assert_refused(_write(tmp_path, raw), "needs 4398046511104 bytes")
    assert allocator.memory_stats()["allocated_bytes.all.current"] == before


@pytest.mark.parametrize("shape, match", [
    ((1 << 62, 1 << 62, 0), "array 0: shape (4611686018427387904, 4611686018427387904, 0) is "
                            "too large: its size overflows int64"),
    ((0, (1 << 63) - 1), "array 0: shape (0, 9223372036854775807) of float32 is too large: "
                         "its size in bytes overflows int64")])
def test_zero_size_shapes_too_large_for_numpy_are_refused_by_the_loader(tmp_path, shape,
                                                                         match):
    raw = container([struct.pack("<Ii", V2, 0) + shape_bytes(shape) + struct.pack("<iii", 1, 0, 0)])
    assert_refused(_write(tmp_path, raw), match)
    sparse_raw = container([struct.pack("<Ii", V2, 1) + shape_bytes(shape) + shape_bytes((4, 2))
                            + struct.pack("<iii", 1, 0, 0) + struct.pack("<i", 6)
                            + shape_bytes((0,))])
    assert_refused(_write(tmp_path, sparse_raw), "array 0: storage shape")


TINY_CODE = """
import sys
from runtime import nd
try:
    nd.load(sys.argv[1])
except ValueError as e:
    print("ValueError", e)
else:
    print("loaded")
"""


def test_many_tiny_arrays_are_refused_before_they_exhaust_memory(tmp_path):
    """100,000 named one-element arrays (about 5 MB of file) would hold a 4 KiB page each,
    400 MB: refused once past 16 times the file's size plus 64 MiB, in a child whose
    memory would not hold them all."""
    one = dense(np.ones(1, np.float32))
    names = b"".join(struct.pack("<Q", 7) + f"p{i:06d}".encode() for i in range(100_000))
    path = _write(tmp_path, container([one] * 100_000)[:-8] + struct.pack("<Q", 100_000)
                  + names)
    size = path.stat().st_size
    res = run_limited(TINY_CODE, path, memory=(300 + 256) << 20)
    budget = 16 * size + (64 << 20)
    first = budget // 4096 + 1          # the array whose page passes the budget
    assert res.stdout == (f"ValueError load: {str(path)!r} (an MXNet file): array {first - 1} "
                          f"brings what the file's arrays would hold in memory past {budget} "
                          f"bytes (16 times the file's {size} bytes plus 64 MiB, each array "
                          "part counted as at least a 4096-byte page)\n"), \
        res.stdout + res.stderr[-2000:]
    # a file of fewer such arrays loads
    small = _write(tmp_path, container([one] * 1000))
    assert len(nd.load(str(small))) == 1000


@settings(deadline=None, max_examples=200)
@given(body=st.binary(max_size=400))
def test_random_bodies_after_the_magic_are_refused(tmp_path_factory, body):
    path = tmp_path_factory.mktemp("rand") / "f"
    path.write_bytes(struct.pack("<QQ", 0x112, 0) + body)
    try:
        got = nd.load(str(path), ctx=Context("cpu", 0))
    except ValueError as e:
        assert str(e).startswith("load: ") and repr(str(path)) in str(e)
    else:       # only a well-formed list can load: zero arrays and zero names
        assert got == [] and body == bytes(16)
