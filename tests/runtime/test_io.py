"""``nd.save`` / ``nd.load`` and pickling: round trips, and damaged or hostile files.

Every damaged file must give a ValueError that names the file — never another exception
type, a crash or a hang — and loading must never unpickle anything.
"""

import io
import json
import os
import pickle
import subprocess
import sys
import tracemalloc
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import allocator
import runtime as rt
from runtime import nd
from runtime.base import MXNetError
from runtime.gluon import nn
from runtime.nd import _mxnet_format
from runtime.nd.sparse import CSRNDArray, RowSparseNDArray
from tests.runtime.conftest import DTYPES, assert_same, child_env, run_isolated, run_limited

S = nd.sparse
DENSE_SHAPES = [(), (0,), (5,), (2, 3), (2, 0, 4), (3, 2, 4)]
A = np.array([[0, 1.5, 0, 2], [0, 0, 0, 0], [3, 0, -4, 0]], np.float32)


def values(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(-50, 50, size=shape) * (rng.random(shape) < 0.6)
    if np.dtype(dtype) == np.uint8:
        a = np.abs(a)
    return a.astype(dtype)


def sparse_samples():
    """Sparse arrays of several dtypes and shapes, with the dense reference of each."""
    out = []
    for i, dtype in enumerate(DTYPES):
        a = values(dtype, (5, 4), seed=i)
        out.append(S.csr_matrix(a))
        out.append(S.row_sparse_array(values(dtype, (4, 2, 3), seed=i)))
    out += [S.zeros("csr", (0, 0)), S.zeros("csr", (3, 0)), S.zeros("csr", (0, 3), dtype="int8"),
            S.zeros("row_sparse", (0,)), S.zeros("row_sparse", (3, 0, 2), dtype="bool"),
            S.row_sparse_array(values("float64", (7,))),
            # a stored row of zeros is part of the storage and must survive
            S.row_sparse_array(([[0.0, 0.0], [1.0, 2.0]], [1, 3]), shape=(4, 2))]
    return out


def assert_identical(got, want):
    """Same class, stype, dtype, shape, context, values, and for sparse arrays the same
    stored parts (not only the same dense values)."""
    assert type(got) is type(want)
    assert got.stype == want.stype and got.dtype == want.dtype and got.shape == want.shape
    assert got.ctx == want.ctx
    assert got.chunk is not want.chunk
    assert_same(got.tostype("default") if got.stype != "default" else got,
                want.asnumpy())
    if want.stype == "csr":
        for part in ("data", "indices", "indptr"):
            assert_same(getattr(got, part), getattr(want, part).asnumpy())
    elif want.stype == "row_sparse":
        for part in ("data", "indices"):
            assert_same(getattr(got, part), getattr(want, part).asnumpy())
    if got.stype != "default":
        got.check_format()


def sample_arrays():
    return [nd.array([1, 2, 3]), S.csr_matrix(A), S.row_sparse_array(A)]


@pytest.fixture
def sample_file(tmp_path):
    """A small valid file: a dense, a csr and a row_sparse array (``sample_arrays()``).

    Fixtures return no NDArray: pytest keeps fixture values until after the autouse
    pool check, which would count them as leaked."""
    path = tmp_path / "sample.params"
    nd.save(str(path), sample_arrays())
    return path


def assert_refused(path, match=None):
    """``nd.load(path)`` raises MXNet's MXNetError, also a ValueError, naming the file
    (and matching ``match``)."""
    with pytest.raises(MXNetError) as info:
        nd.load(str(path))
    msg = str(info.value)
    assert isinstance(info.value, ValueError)
    assert msg.startswith("load: ") and repr(str(path)) in msg, msg
    if match is not None:
        assert match in msg, msg
    return msg


# -- round trips ------------------------------------------------------------------------------

def test_dense_list_round_trip_every_dtype_and_shape(tmp_path):
    want = [nd.array(values(d, s, seed=i), dtype=d)
            for i, (d, s) in enumerate((d, s) for d in DTYPES for s in DENSE_SHAPES)]
    path = tmp_path / "dense"
    nd.save(str(path), want)
    got = nd.load(str(path))
    assert isinstance(got, list) and len(got) == len(want)
    for g, w in zip(got, want):
        assert_identical(g, w)


def test_sparse_list_round_trip(tmp_path):
    want = sparse_samples()
    nd.save(str(tmp_path / "sparse"), want)
    got = nd.load(str(tmp_path / "sparse"))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_identical(g, w)
    assert isinstance(got[0], CSRNDArray) and isinstance(got[1], RowSparseNDArray)


def test_dict_round_trip_keeps_names_and_order(tmp_path):
    want = {"weight": nd.array(values("float32", (3, 4))),
            "bias": nd.zeros((0,), dtype="int64"),
            "": nd.array(7.0),                               # any str is a name
            "emb.csr": S.csr_matrix(A),
            "emb rsp/ü": S.row_sparse_array(values("float16", (4, 2, 2))),
            "__ndrt__": nd.array([True, False])}             # no clash with the header
    nd.save(str(tmp_path / "d"), want)
    got = nd.load(str(tmp_path / "d"))
    assert isinstance(got, dict) and list(got) == list(want)
    for k in want:
        assert_identical(got[k], want[k])


def test_containers(tmp_path):
    x = nd.array([1, 2])
    path = str(tmp_path / "c")
    nd.save(path, x)                                    # one array: a list of one
    got = nd.load(path)
    assert isinstance(got, list) and len(got) == 1
    assert_identical(got[0], x)
    nd.save(path, (x, S.csr_matrix(A)))                 # a tuple: a list
    assert [g.stype for g in nd.load(path)] == ["default", "csr"]
    nd.save(path, [])
    assert nd.load(path) == []
    nd.save(path, {})
    assert nd.load(path) == {}
    nd.save(path, [x, x])                               # the same array twice
    a, b = nd.load(path)
    assert a.chunk is not b.chunk
    assert_identical(a, x)


def test_saving_views_saves_only_the_view(tmp_path):
    base = nd.array(np.arange(24, dtype=np.float32).reshape(6, 4))
    views = [base[1:3], base[4], base.reshape(4, 6), base[2:2]]
    nd.save(str(tmp_path / "v"), views)
    for g, v in zip(nd.load(str(tmp_path / "v")), views):
        assert_identical(g, v)


def test_file_name_is_used_exactly(tmp_path):
    for name in ("weights", "model.params", "x.npz", "no_suffix."):
        path = tmp_path / name
        nd.save(str(path), [nd.array([1])])
        assert path.is_file()
        assert not (tmp_path / (name + ".npz")).exists()
        assert_same(nd.load(str(path))[0], np.array([1], np.float32))
    assert sorted(os.listdir(tmp_path)) == sorted(["weights", "model.params", "x.npz",
                                                   "no_suffix."])
    nd.save(tmp_path / "pathlib", [nd.array([2])])      # os.PathLike works too
    assert_same(nd.load(tmp_path / "pathlib")[0], np.array([2], np.float32))


def test_load_to_a_context(sample_file):
    path, arrays = sample_file, sample_arrays()
    for ctx in (rt.cpu(), "cpu", rt.Context("cpu", 0)):
        got = nd.load(str(path), ctx=ctx)
        for g, w in zip(got, arrays):
            assert g.ctx == rt.cpu()
            assert_identical(g, w)
    with pytest.raises(TypeError, match="ctx must be a Context"):
        nd.load(str(path), ctx=5)


def test_the_saved_context_kind_is_restored_unless_ctx_is_given(tmp_path, sample_file):
    path, arrays = sample_file, sample_arrays()
    # a file saved on a GPU machine loads anywhere when ctx is given (nothing touches a GPU)
    def on_gpu(meta):
        for e in meta["arrays"]:
            e.update(device_type="gpu", device_id=1)
    gpu_file = rewrite_header(path, tmp_path / "gpu", on_gpu)
    for g, w in zip(nd.load(str(gpu_file), ctx=rt.cpu()), arrays):
        assert_identical(g, w)
    meta = read_header(path)
    assert [e["device_type"] for e in meta["arrays"]] == ["cpu"] * 3


def test_no_pickles_in_the_file(sample_file):
    path = sample_file
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        assert "__ndrt__.npy" in names and len(names) == 1 + 1 + 3 + 2
        for name in names:
            a = np.load(io.BytesIO(zf.read(name)), allow_pickle=False)
            assert not a.dtype.hasobject and a.dtype.name in DTYPES
    meta = read_header(path)
    assert meta["format"] == "ndrt" and meta["version"] == 1 and meta["container"] == "list"
    assert [e["stype"] for e in meta["arrays"]] == ["default", "csr", "row_sparse"]
    assert meta["arrays"][1]["shape"] == [3, 4] and meta["arrays"][1]["dtype"] == "float32"


# -- pickle -------------------------------------------------------------------------------------

@pytest.mark.parametrize("protocol", range(2, pickle.HIGHEST_PROTOCOL + 1))
def test_pickle_round_trips(protocol):
    base = nd.array(np.arange(12).reshape(3, 4), dtype="float64")
    arrays = [nd.array(values(d, (2, 3), seed=i), dtype=d) for i, d in enumerate(DTYPES)]
    arrays += [nd.array(3.5), nd.zeros((0, 2), dtype="int8"), base[1:3], base[2]]
    arrays += sparse_samples()
    for x in arrays:
        y = pickle.loads(pickle.dumps(x, protocol=protocol))
        assert_identical(y, x)
    y = pickle.loads(pickle.dumps(base[1:2], protocol=protocol))
    assert y.chunk.nbytes == 4 * 8                      # only the view travels
    many = pickle.loads(pickle.dumps({"a": arrays[:3], "b": (arrays[-1],)}, protocol))
    assert_identical(many["b"][0], arrays[-1])


def test_pickled_copy_is_independent():
    x = S.csr_matrix(A)
    y = pickle.loads(pickle.dumps(x))
    y[:] = np.zeros(A.shape, np.float32)
    assert_same(x.tostype("default"), A)


def test_unpickling_object_arrays_is_refused():
    # Bug report 8, item 4: object arrays reached pool memory (PyObject pointers in a
    # pool block): a segfault, from a crafted pickle too.
    out = run_isolated("""
import pickle
import numpy as np
from runtime import _ndarray, _storage

class Crafted:
    def __reduce__(self):
        return (_storage.rebuild, ("default", "|O", (2,), "cpu", 0,
                                   [np.array([None, 1], dtype=object)]))

for call in (lambda: _storage.rebuild("default", "|O", (2,), "cpu", 0,
                                      [np.array([None, 1], dtype=object)]),
             lambda: pickle.loads(pickle.dumps(Crafted())),
             lambda: _storage.rebuild("default", "<f8", (2,), "cpu", 0,
                                      [np.array([None, 1], dtype=object)]),
             lambda: _ndarray.from_numpy(np.array([None, 1], dtype=object))):
    try:
        x = call()
    except (TypeError, ValueError) as e:
        print(type(e).__name__, e)
    else:
        print("accepted", x)
""")
    lines = out.splitlines()
    assert lines[0] == lines[1] == ("TypeError unpickle: dtype must be one of float16, float32, "
                                    "float64, uint8, int8, int32, int64, bool (got '|O')")
    assert lines[2] == "ValueError unpickle: data must have dtype float64 (got object)"
    assert lines[3] == ("TypeError dtype must be one of float16, float32, float64, uint8, int8, "
                        "int32, int64, bool (got dtype('O'))")


_D = np.array([1.5, 2.5], np.float32)
_IP, _IX, _DATA = np.array([0, 1, 2]), np.array([1, 0]), np.array([1.0, 2.0], np.float32)


@pytest.mark.parametrize("args, exc, match", [
    (("coo", "<f4", (2,), "cpu", 0, [_D]), ValueError,
     "^unpickle: stype must be one of default, row_sparse, csr \\(got 'coo'\\)"),
    ((None, "<f4", (2,), "cpu", 0, [_D]), ValueError, "stype must be one of"),
    (("default", "<i2", (2,), "cpu", 0, [_D.astype("<i2")]), TypeError,
     "^unpickle: dtype must be one of float16, .* \\(got '<i2'\\)"),
    (("default", np.float32, (2,), "cpu", 0, [_D]), TypeError, "dtype must be a str"),
    (("default", "<f4", [2], "cpu", 0, [_D]), TypeError, "shape must be a tuple of ints"),
    (("default", "<f4", (2.0,), "cpu", 0, [_D]), TypeError, "shape must be a tuple of ints"),
    (("default", "<f4", (True,), "cpu", 0, [_D]), TypeError, "shape must be a tuple of ints"),
    (("default", "<f4", (-2,), "cpu", 0, [_D]), ValueError,
     "^unpickle: shape must contain non-negative integers \\(got \\(-2,\\)\\)"),
    (("default", "<f4", (0, 2 ** 62, 2 ** 62), "cpu", 0, [_D]), ValueError,
     "^unpickle: shape \\(0, 4611686018427387904, 4611686018427387904\\) is too large"),
    (("default", "<f4", (1,) * 33, "cpu", 0, [_D]), ValueError,
     "^unpickle: shape must have at most 32 dimensions \\(got 33\\)"),
    (("default", "<f4", (5,), "cpu", 0, [_D]), ValueError,
     "^unpickle: data must have shape \\(5,\\) \\(got \\(2,\\)\\)"),
    (("default", "<f4", (2,), "cpu", 0, [_D, _D]), TypeError, "parts must be 1 NumPy array"),
    (("default", "<f4", (2,), "cpu", 0, [[1.5, 2.5]]), TypeError, "got \\['list'\\]"),
    (("default", "<f4", (2,), "cpu", 0, None), TypeError, "got NoneType"),
    (("default", "<f4", (2,), "cpu", 0, [_D.astype(">f4")]), ValueError,
     "data must have dtype float32 \\(got >f4\\)"),
    (("default", "<f4", (2,), "tpu", 0, [_D]), ValueError, "device_type must be one of"),
    (("csr", "<f4", (2, 2), "cpu", 0, [_DATA, np.array([0, 2, 2]), _IX]), ValueError,
     "^unpickle: indices must be strictly increasing within each row"),
    (("csr", "<f4", (2, 2), "cpu", 0, [_DATA, _IP, np.array([1, 5])]), ValueError,
     "^unpickle: indices must be in \\[0, ncols=2\\)"),
    (("csr", "<f4", (2, 2), "cpu", 0, [_DATA, _IP.astype(np.int32), _IX]), ValueError,
     "sparse indices must be int64 and 1-D"),
    (("csr", "<f4", (2, 2), "cpu", 0, [_DATA, _IP]), TypeError, "parts must be 3 NumPy"),
    (("csr", "<f4", (2,), "cpu", 0, [_DATA, np.array([0, 2]), _IX]), ValueError,
     "a csr array must be 2-D"),
    (("csr", "<f4", (2 ** 62, 2 ** 62), "cpu", 0, [_DATA, _IP, _IX]), ValueError,
     "its size overflows int64"),
    (("row_sparse", "<f4", (3,), "cpu", 0, [_DATA, np.array([2, 0])]), ValueError,
     "^unpickle: indices must be strictly increasing"),
    (("row_sparse", "<f4", (3,), "cpu", 0, [_DATA, np.array([[0, 2]])]), ValueError,
     "sparse indices must be int64 and 1-D"),
    (("row_sparse", "<f4", (), "cpu", 0, [_DATA, np.array([0, 2])]), ValueError,
     "needs at least 1 dimension"),
    (("row_sparse", "<f4", (3, 4), "cpu", 0, [_DATA, np.array([0, 2])]), ValueError,
     "data rows must have shape \\(4,\\)"),
])
def test_unpickling_validates_every_field(args, exc, match):
    from runtime._storage import rebuild
    with pytest.raises(exc, match=match):
        rebuild(*args)


def test_unpickling_checks_the_shape_it_is_given():
    # the shape field used to be ignored for dense arrays
    assert pickle.loads(pickle.dumps(nd.zeros((2, 3)))).shape == (2, 3)
    good = nd.zeros((2, 3)).__reduce__()
    fn, (stype, dtype, shape, dev, dev_id, parts) = good
    with pytest.raises(ValueError, match=r"data must have shape \(3, 2\) \(got \(2, 3\)\)"):
        fn(stype, dtype, (3, 2), dev, dev_id, parts)


# -- bad arguments to save --------------------------------------------------------------------

def test_bad_save_arguments_raise_type_error_and_write_nothing(tmp_path, sample_file):
    path, arrays = sample_file, sample_arrays()
    before = path.read_bytes()
    new = tmp_path / "new"
    cases = [
        [nd.array([1]), 3],
        [nd.array([1]), np.zeros(3)],
        [[nd.array([1])]],
        {"a": nd.array([1]), "b": "x"},
        {"a": nd.array([1]), 1: nd.array([2])},
        {("a",): nd.array([1])},
        {None: nd.array([1])},
        3, "x", None, np.zeros(3), {nd.array([1])},
    ]
    for data in cases:
        for target in (path, new):
            with pytest.raises(TypeError, match=r"^save: "):
                nd.save(str(target), data)
    assert not new.exists()                              # nothing created...
    assert path.read_bytes() == before                   # ...and nothing overwritten
    for g, w in zip(nd.load(str(path)), arrays):
        assert_identical(g, w)


def test_load_of_missing_file_or_directory_is_an_os_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        nd.load(str(tmp_path / "missing"))
    with pytest.raises(IsADirectoryError):
        nd.load(str(tmp_path))


# -- damaged and hostile files --------------------------------------------------------------

def read_header(path):
    with zipfile.ZipFile(path) as zf:
        return json.loads(np.load(io.BytesIO(zf.read("__ndrt__.npy"))).tobytes())


def npy_bytes(a, **kw):
    f = io.BytesIO()
    np.save(f, a, **kw)
    return f.getvalue()


def header_bytes(meta):
    raw = meta if isinstance(meta, bytes) else json.dumps(meta).encode()
    return npy_bytes(np.frombuffer(raw, np.uint8))


def write_zip(path, members):
    """A zip archive of raw member bytes ({name: bytes})."""
    with zipfile.ZipFile(path, "w") as zf:
        for name, raw in members.items():
            zf.writestr(name, raw)
    return path


def members_of(path):
    with zipfile.ZipFile(path) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def rewrite_header(src, dst, edit):
    """Copy ``src`` to ``dst`` with its header JSON changed by ``edit(meta)`` (in place,
    or the new header as the return value)."""
    meta = read_header(src)
    new = edit(meta)
    members = members_of(src)
    members["__ndrt__.npy"] = header_bytes(meta if new is None else new)
    return write_zip(dst, members)


def replace_member(src, dst, name, raw):
    members = members_of(src)
    members[name] = raw
    return write_zip(dst, members)


EVIL_CALLS = []


def _evil(*args):
    """Called only if something unpickles our payloads."""
    EVIL_CALLS.append(args)
    return np.zeros(3)


class _Payload:
    def __reduce__(self):
        return (_evil, ("unpickled",))


def test_loading_never_unpickles(tmp_path, sample_file):
    path = sample_file
    obj = np.array([_Payload(), 1], dtype=object)
    cases = {
        # an object-dtype member where the header belongs
        "header": write_zip(tmp_path / "h", {"__ndrt__.npy": npy_bytes(obj,
                                                                      allow_pickle=True)}),
        # a valid header, an object-dtype data member
        "data": replace_member(path, tmp_path / "d", "0.0.npy", npy_bytes(obj,
                                                                          allow_pickle=True)),
        # a plain pickle of NDArrays, and a pickle of a payload
        "pickle": tmp_path / "p",
        "payload": tmp_path / "q",
        # a zip member that is a pickle, not a .npy
        "member": replace_member(path, tmp_path / "m", "1.0.npy", pickle.dumps(_Payload())),
    }
    cases["pickle"].write_bytes(pickle.dumps([nd.array([1, 2]), _Payload()]))
    cases["payload"].write_bytes(pickle.dumps(_Payload()))
    for name, p in cases.items():
        assert_refused(p)
    assert EVIL_CALLS == []
    assert pickle.loads(pickle.dumps(_Payload())) is not None and EVIL_CALLS  # the bait works
    EVIL_CALLS.clear()


def test_every_truncation_is_refused(tmp_path):
    path = tmp_path / "small"
    nd.save(str(path), [nd.array([1, 2]), S.csr_matrix([[0, 1], [2, 0]])])
    raw = path.read_bytes()
    cut = tmp_path / "cut"
    for n in range(len(raw)):
        cut.write_bytes(raw[:n])
        assert_refused(cut)


@pytest.fixture(scope="module")
def flip_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("flips")
    path = d / "orig"
    arrays = [nd.array([1, 2, 3], dtype="int32"), S.csr_matrix(A), S.row_sparse_array(A)]
    nd.save(str(path), arrays)
    want = [(type(x), x.stype, x.dtype, x.shape, x.asnumpy()) for x in arrays]
    del arrays
    return d, path.read_bytes(), want


@settings(deadline=None, max_examples=200)
@given(data=st.data())
def test_single_byte_flips_are_refused_or_harmless(flip_dir, data):
    d, raw, want = flip_dir
    pos = data.draw(st.integers(0, len(raw) - 1), label="pos")
    val = data.draw(st.integers(0, 255).filter(lambda v: v != raw[pos]), label="value")
    path = d / "flipped"
    path.write_bytes(raw[:pos] + bytes([val]) + raw[pos + 1:])
    try:
        got = nd.load(str(path))
    except ValueError as e:
        assert str(e).startswith("load: ") and repr(str(path)) in str(e)
        return
    # zip metadata the reader ignores (times, attributes, versions): the same arrays
    assert [(type(x), x.stype, x.dtype, x.shape) for x in got] == [w[:4] for w in want]
    for x, w in zip(got, want):
        np.testing.assert_array_equal(x.asnumpy(), w[4])


@settings(deadline=None, max_examples=50)
@given(raw=st.binary(max_size=600))
def test_random_bytes_are_refused(raw):
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "random")
        with open(path, "wb") as f:
            f.write(raw)
        assert_refused(path)


def test_not_ndrt_files(tmp_path):
    (tmp_path / "empty").write_bytes(b"")
    assert_refused(tmp_path / "empty", "not an ndrt or MXNet file")
    (tmp_path / "random").write_bytes(np.random.default_rng(0).bytes(4096))
    assert_refused(tmp_path / "random", "not an ndrt or MXNet file")
    (tmp_path / "text").write_text("weights = [1, 2, 3]\n")
    assert_refused(tmp_path / "text")
    np.savez(tmp_path / "plain.npz", a=np.zeros(3), b=np.ones((2, 2)))   # numpy's own npz
    assert_refused(tmp_path / "plain.npz", "member '__ndrt__' is missing")
    np.save(tmp_path / "plain.npy", np.zeros(3))
    assert_refused(tmp_path / "plain.npy")
    write_zip(tmp_path / "emptyzip", {})
    assert_refused(tmp_path / "emptyzip", "missing")


def _set(i, key, value):
    def edit(meta):
        meta["arrays"][i][key] = value
    return edit


def _top(key, value):
    def edit(meta):
        if value is _DELETE:
            del meta[key]
        else:
            meta[key] = value
    return edit


_DELETE = object()

HEADER_DEFECTS = [
    (_top("version", 2), "version 2 is not supported"),
    (_top("version", 0), "version 0 is not supported"),
    (_top("version", "1"), "version '1' is not supported"),
    (_top("version", True), "version True is not supported"),
    (_top("version", 1.0), "version 1.0 is not supported"),
    (_top("version", _DELETE), "version None is not supported"),
    (_top("format", "mxnet"), "format 'ndrt'"),
    (_top("format", _DELETE), "format 'ndrt'"),
    (_top("container", "set"), "container must be 'list' or 'dict'"),
    (_top("container", "dict"), "dict entries need a str name"),
    (_top("arrays", {}), "no array list"),
    (_top("arrays", None), "no array list"),
    (_top("arrays", [1]), "header field 'stype' must be str"),
    (lambda m: [1, 2], "does not say format 'ndrt'"),
    (lambda m: "ndrt", "does not say format 'ndrt'"),
    (_set(0, "stype", 1), "header field 'stype' must be str (got 1)"),
    (_set(0, "stype", "coo"), "unknown stype 'coo'"),
    (_set(0, "dtype", ["float32"]), "header field 'dtype' must be str"),
    (_set(0, "dtype", "complex64"), "dtype 'complex64'"),
    (_set(0, "dtype", "int32"), "data must have dtype int32 (got float32)"),
    (_set(0, "shape", "3"), "header field 'shape' must be list"),
    (_set(0, "shape", [3.0]), "shape must be a tuple of ints"),
    (_set(0, "shape", [True, 3]), "shape must be a tuple of ints"),
    (_set(0, "shape", [-3]), "shape must contain non-negative integers (got (-3,))"),
    (_set(0, "shape", [2 ** 70]), "its size overflows int64"),
    (_set(0, "shape", [4]), "data must have shape (4,) (got (3,))"),
    (_set(0, "shape", [3, 1]), "data must have shape (3, 1)"),
    (_set(1, "shape", [3]), "a csr array must be 2-D"),
    (_set(1, "shape", [4, 4]), "indptr must have rows + 1 = 5 entries"),
    (_set(1, "shape", [3, 3]), "indices must be in [0, ncols=3)"),
    (_set(1, "shape", [3, 2 ** 64]), "its size overflows int64"),
    (_set(1, "shape", [2 ** 62, 2 ** 62]), "array 1: shape (4611686018427387904, "
                                           "4611686018427387904) is too large"),
    (_set(0, "shape", [0, 2 ** 62, 2 ** 62]), "is too large: its size overflows int64"),
    (_set(0, "shape", [1] * 33), "array 0: shape must have at most 32 dimensions (got 33)"),
    (_set(2, "shape", []), "needs at least 1 dimension"),
    (_set(2, "shape", [2, 4]), "indices must be in [0, nrows=2)"),
    (_set(2, "shape", [3, 5]), "data rows must have shape (5,)"),
    (_set(0, "parts", "0.0"), "header field 'parts' must be list"),
    (_set(0, "parts", []), "a default array needs 1 parts"),
    (_set(1, "parts", ["1.0", "1.1"]), "a csr array needs 3 parts"),
    (_set(0, "parts", [0]), "needs 1 parts"),
    (_set(0, "parts", ["nope"]), "member 'nope' is missing"),
    (_set(1, "parts", ["1.0", "1.2", "1.1"]), "indptr[0] must be 0 (got 1)"),   # swapped
    (_set(1, "parts", ["0.0", "1.1", "1.2"]), "part '0.0' must name a member no other part "
                                              "uses (got one that array 0 uses)"),
    (_set(0, "device_type", 0), "header field 'device_type' must be str"),
    (_set(0, "device_type", "tpu"), "device_type must be one of"),
    (_set(0, "device_id", "0"), "header field 'device_id' must be int"),
    (_set(0, "device_id", False), "header field 'device_id' must be int"),
    (_set(0, "device_id", -1), "device_id must be an integer >= 0"),
    (_set(0, "name", 3), None),       # names are ignored in lists: this one loads (below)
]


def test_header_defects(tmp_path, sample_file):
    path, arrays = sample_file, sample_arrays()
    bad = tmp_path / "bad"
    for i, (edit, match) in enumerate(HEADER_DEFECTS):
        rewrite_header(path, bad, edit)
        if match is None:
            for g, w in zip(nd.load(str(bad)), arrays):
                assert_identical(g, w)
            continue
        msg = assert_refused(bad)
        assert match in msg, (i, msg)


def test_header_member_defects(tmp_path, sample_file):
    path = sample_file
    bad = tmp_path / "bad"
    good = read_header(path)
    cases = [
        (header_bytes(b"{not json"), "not valid JSON"),
        (header_bytes(b"\xff\xfe"), "not valid JSON"),
        (header_bytes(json.dumps(good).encode()[:-1]), "not valid JSON"),
        (header_bytes(b"[" * 100000 + b"]" * 100000), None),       # deep nesting
        (npy_bytes(np.frombuffer(json.dumps(good).encode(), np.uint8).reshape(1, -1)),
         "not a byte string"),
        (npy_bytes(np.frombuffer(json.dumps(good).encode(), np.int8)), "not a byte string"),
        (npy_bytes(np.zeros(3, np.complex64)), "must be a C-ordered array"),
        (npy_bytes(np.asfortranarray(np.zeros((2, 2), np.uint8))), "fortran_order=True"),
        (b"", None),
        (b"\x93NUMPY\x03\x00" + b"\x00" * 20, "unknown .npy version"),
        (b"not an npy at all", None),
    ]
    for raw, match in cases:
        replace_member(path, bad, "__ndrt__.npy", raw)
        msg = assert_refused(bad)
        if match is not None:
            assert match in msg, msg


def test_data_member_defects(tmp_path, sample_file):
    path = sample_file
    bad = tmp_path / "bad"
    dense = npy_bytes(np.array([1, 2, 3], np.float32))
    cases = [
        ("0.0.npy", dense[:-4], "holds 8 bytes"),                        # short body
        ("0.0.npy", dense + b"\x00" * 4, "holds 16 bytes"),              # long body
        ("0.0.npy", npy_bytes(np.array([1, 2, 3], ">f4")), "(got >f4)"),
        ("0.0.npy", npy_bytes(np.array([1, 2, 3], np.float64)), "(got float64)"),
        ("0.0.npy", npy_bytes(np.array([1, 2, 3], np.uint16)), "must be a C-ordered array"),
        ("0.0.npy", npy_bytes(np.zeros((3, 1), np.float32)), "(got (3, 1))"),
        ("0.0.npy", dense.replace(b"(3,)", b"(-3,)"), None),
        ("0.0.npy", dense.replace(b"(3,)", b"(3.)"), None),
        ("0.0.npy", dense.replace(b"'<f4'", b"'|O'"), None),
        # csr parts: 1.0 data, 1.1 indptr, 1.2 indices (of A: indptr [0 2 2 4], indices
        # [1 3 0 2])
        ("1.1.npy", npy_bytes(np.array([1, 2, 2, 4])), "indptr[0] must be 0 (got 1)"),
        ("1.1.npy", npy_bytes(np.array([0, 3, 2, 4])), "indptr must be non-decreasing"),
        ("1.1.npy", npy_bytes(np.array([0, 2, 2, 3])), "indptr[-1] must equal nnz=4"),
        ("1.1.npy", npy_bytes(np.array([0, 2, 4])), "indptr must have rows + 1 = 4"),
        ("1.1.npy", npy_bytes(np.array([0, 2, 2, 4], np.int32)), "sparse indices must be int64"),
        ("1.2.npy", npy_bytes(np.array([3, 1, 0, 2])), "strictly increasing within each row"),
        ("1.2.npy", npy_bytes(np.array([1, 1, 0, 2])), "strictly increasing within each row"),
        ("1.2.npy", npy_bytes(np.array([1, 4, 0, 2])), "indices must be in [0, ncols=4)"),
        ("1.2.npy", npy_bytes(np.array([1, 3, -1, 2])), "indices must be in [0, ncols=4)"),
        ("1.2.npy", npy_bytes(np.array([1, 3, 0])), "data and indices must have the same"),
        ("1.2.npy", npy_bytes(np.array([[1, 3, 0, 2]])), None),
        ("1.0.npy", npy_bytes(np.array([1.5, 2, 3], np.float32)), None),
        ("1.0.npy", npy_bytes(np.float32(1)), None),
        # row_sparse parts: 2.0 data (2, 4), 2.1 row indices [0 2]
        ("2.1.npy", npy_bytes(np.array([2, 0])), "indices must be strictly increasing"),
        ("2.1.npy", npy_bytes(np.array([0, 0])), "indices must be strictly increasing"),
        ("2.1.npy", npy_bytes(np.array([0, 3])), "indices must be in [0, nrows=3)"),
        ("2.1.npy", npy_bytes(np.array([0])), "data has 2 rows but indices has 1"),
        ("2.1.npy", npy_bytes(np.array([[0, 2]])), None),
        ("2.1.npy", npy_bytes(np.array([0.0, 2.0])), "sparse indices must be int64"),
        ("2.0.npy", npy_bytes(np.zeros((2, 3), np.float32)), "data rows must have shape (4,)"),
        ("2.0.npy", npy_bytes(np.zeros(8, np.float32)), "data rows must have shape"),
    ]
    for i, (member, raw, match) in enumerate(cases):
        replace_member(path, bad, member, raw)
        msg = assert_refused(bad)
        if match is not None:
            assert match in msg, (i, msg)


def test_duplicate_and_extra_members(tmp_path, sample_file):
    path, arrays = sample_file, sample_arrays()
    members = members_of(path)
    members["extra.npy"] = npy_bytes(np.zeros(3))       # unreferenced members are ignored
    write_zip(tmp_path / "extra", members)
    for g, w in zip(nd.load(str(tmp_path / "extra")), arrays):
        assert_identical(g, w)
    # a header that references a member no array of save's uses is checked like any other
    bad = rewrite_header(tmp_path / "extra", tmp_path / "other", _set(0, "parts", ["extra"]))
    assert "data must have dtype float32 (got float64)" in assert_refused(bad)
    # ... but no member is used twice, nor the header as an array
    bad = rewrite_header(path, tmp_path / "swap", _set(0, "parts", ["2.1"]))
    assert_refused(bad, "array 2: part '2.1' must name a member no other part uses (got one "
                        "that array 0 uses)")
    bad = rewrite_header(path, tmp_path / "head", _set(0, "parts", ["__ndrt__"]))
    assert_refused(bad, "array 0: part '__ndrt__' must name a member no other part uses (got "
                        "one that the header uses)")
    # nor does the archive name a member twice (zipfile would read the last)
    members = members_of(path)
    with zipfile.ZipFile(tmp_path / "twice", "w") as zf, warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)      # zipfile: "Duplicate name"
        for name, raw in members.items():
            zf.writestr(name, raw)
        zf.writestr("0.0.npy", npy_bytes(np.array([7, 8, 9], np.float32)))
    assert_refused(tmp_path / "twice", "the archive must name each member once (got "
                                       "'0.0.npy' twice)")


def test_duplicate_names_in_a_dict_file_are_refused(tmp_path):
    path = tmp_path / "dict"
    nd.save(str(path), {"a": nd.array([1, 2]), "b": nd.array([3, 4])})
    bad = rewrite_header(path, tmp_path / "bad", _set(1, "name", "a"))
    assert_refused(bad, "array 1: the name must be unique (got 'a', the name of array 0)")


def test_only_stored_or_deflated_members(tmp_path, sample_file):
    # bzip2 and lzma inflate a whole compressed block per read, so reads cannot be bounded
    members = members_of(sample_file)
    for method in (zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA):
        with zipfile.ZipFile(tmp_path / "packed", "w", method) as zf:
            for name, raw in members.items():
                zf.writestr(name, raw)
        assert_refused(tmp_path / "packed", "member '__ndrt__' must be stored or deflated "
                                            f"(got compression method {method})")
    with zipfile.ZipFile(tmp_path / "deflated", "w", zipfile.ZIP_DEFLATED) as zf:
        for name, raw in members.items():
            zf.writestr(name, raw)
    for g, w in zip(nd.load(str(tmp_path / "deflated")), sample_arrays()):
        assert_identical(g, w)


def test_save_refuses_a_header_load_would_refuse(tmp_path):
    with pytest.raises(ValueError, match=r"save: the header must be at most 1056768 bytes "
                                         r"\(got \d+; the names are too long\)"):
        nd.save(str(tmp_path / "long"), {"x" * (1 << 21): nd.array([1])})
    assert not (tmp_path / "long").exists()
    nd.save(str(tmp_path / "ok"), {"x" * (1 << 19): nd.array([1])})
    assert list(nd.load(str(tmp_path / "ok"))) == ["x" * (1 << 19)]


# -- decompression bombs: refused before they inflate -------------------------------------------

BOMB = 64 << 20     # bytes a bomb member inflates to (about 300 KiB deflated)


def bomb_file(path, members, bombs):
    """A deflated zip of raw members ({name: bytes}) and of bombs ({name: npy header bytes}),
    each bomb its header followed by BOMB zero bytes, written without holding them."""
    zero = bytes(1 << 20)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for name, raw in members.items():
            zf.writestr(name, raw)
        for name, head in bombs.items():
            with zf.open(name, "w") as f:
                f.write(head)
                for _ in range(BOMB // len(zero)):
                    f.write(zero)
    return path


def refused_cheaply(path, match):
    """assert_refused, with the peak of Python and NumPy allocations far below BOMB."""
    tracemalloc.start()
    try:
        assert_refused(path, match)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < BOMB // 16, peak


def test_a_member_that_holds_more_than_its_npy_header_says(tmp_path, sample_file):
    # 0.0 claims (3,) float32, 12 bytes, and holds 64 MiB more
    members = members_of(sample_file)
    head = members.pop("0.0.npy")[:-12]
    bomb_file(tmp_path / "bomb", members, {"0.0.npy": head})
    refused_cheaply(tmp_path / "bomb", f"member '0.0' must hold at most 12 bytes of values "
                                       f"and a .npy header (got {len(head) + BOMB} bytes)")


def test_a_header_member_that_inflates(tmp_path, sample_file):
    members = members_of(sample_file)
    meta = members.pop("__ndrt__.npy")
    cap = f"member '__ndrt__' must hold at most {(1 << 20) + 7 * 4096} bytes"   # 7 members
    # the .npy header of the JSON header claims its length, the member holds 64 MiB more
    bomb_file(tmp_path / "bomb", members, {"__ndrt__.npy": meta})
    refused_cheaply(tmp_path / "bomb", cap)
    # the same, with a .npy header that claims all of it (the JSON and the zeros after it)
    body = json.dumps(read_header(sample_file)).encode()
    head = npy_bytes(np.zeros(len(body) + BOMB, np.uint8))[:-(len(body) + BOMB)]
    bomb_file(tmp_path / "padded", members, {"__ndrt__.npy": head + body})
    refused_cheaply(tmp_path / "padded", cap)


def test_entries_that_share_a_member(tmp_path):
    # one 64 MiB member (16 Mi float32 zeros, valid) named by 24 entries: read once per
    # entry, that was 1.5 GiB of arrays
    head = npy_bytes(np.zeros(BOMB // 4, np.float32))[:-BOMB]
    entry = {"name": None, "stype": "default", "dtype": "float32", "shape": [BOMB // 4],
             "device_type": "cpu", "device_id": 0, "parts": ["0.0"]}
    meta = {"format": "ndrt", "version": 1, "container": "list", "arrays": [entry] * 24}
    bomb_file(tmp_path / "shared", {"__ndrt__.npy": header_bytes(meta)}, {"0.0.npy": head})
    refused_cheaply(tmp_path / "shared", "array 1: part '0.0' must name a member no other "
                                         "part uses (got one that array 0 uses)")
    # named once, it loads
    meta["arrays"] = [entry]
    bomb_file(tmp_path / "once", {"__ndrt__.npy": header_bytes(meta)}, {"0.0.npy": head})
    (x,) = nd.load(str(tmp_path / "once"))
    assert x.shape == (BOMB // 4,) and not x.asnumpy().any()


def test_a_member_larger_than_its_sparse_array_allows(tmp_path):
    # a 2x2 csr array holds at most 4 entries: 4 float32 values, 4 indices
    path = tmp_path / "csr"
    nd.save(str(path), [S.csr_matrix(np.eye(2, dtype=np.float32))])
    members = members_of(path)
    big = npy_bytes(np.zeros(5, np.float32))
    members["0.0.npy"] = big
    write_zip(tmp_path / "bad", members)
    assert_refused(tmp_path / "bad", "member '0.0' must hold at most 16 bytes of values (got "
                                     "shape (5,) of float32, 20 bytes)")


# -- out of memory: reported as such, not as a damaged file ---------------------------------------

def declare_size(path, member, size):
    """Make the zip's central directory declare `size` bytes for `member`: zipfile believes
    it until it reads the member to its end."""
    raw = bytearray(path.read_bytes())
    pos = raw.find(b"PK\x01\x02")
    while pos >= 0:
        length = int.from_bytes(raw[pos + 28:pos + 30], "little")
        if raw[pos + 46:pos + 46 + length] == member.encode():
            raw[pos + 24:pos + 28] = size.to_bytes(4, "little")
            path.write_bytes(raw)
            return
        pos = raw.find(b"PK\x01\x02", pos + 46)
    raise AssertionError(f"no central directory entry for {member!r}")


OOM_CODE = """
import os, resource, sys
from runtime import nd
from runtime.nd import _io
_io.HOLD_FLOOR = 1 << 40    # past the memory budget of a small file, to reach the limit
vm = int(next(l for l in open("/proc/self/status") if l.startswith("VmSize")).split()[1])
limit = vm * 1024 + (512 << 20)
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
try:
    nd.load(sys.argv[1])
except MemoryError as e:
    print(type(e).__name__, e)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs RLIMIT_AS, /proc")
def test_out_of_memory_while_reading_is_a_memory_error(tmp_path):
    # a file that declares a 3 GiB array everywhere (JSON, .npy header, zip entry), read by
    # a process that cannot map 3 GiB more
    n = 3 << 30
    path = tmp_path / "huge"
    nd.save(str(path), [nd.array([0], dtype="uint8")])
    members = members_of(path)
    meta = read_header(path)
    meta["arrays"][0]["shape"] = [n]
    members["__ndrt__.npy"] = header_bytes(meta)
    f = io.BytesIO()
    np.lib.format.write_array_header_1_0(f, {"descr": "|u1", "fortran_order": False,
                                             "shape": (n,)})
    members["0.0.npy"] = head = f.getvalue()
    write_zip(path, members)
    declare_size(path, "0.0.npy", len(head) + n)
    res = subprocess.run([sys.executable, "-c", OOM_CODE, str(path)], capture_output=True,
                         text=True, timeout=120, cwd=Path(__file__).resolve().parents[2],
                         env=child_env())
    assert res.stdout.startswith(f"MemoryError load: {str(path)!r}: out of memory for "
                                 f"array 0 ({len(head) + n} bytes): "), res.stdout + res.stderr


def test_out_of_memory_in_the_pool_names_the_file(tmp_path):
    path = tmp_path / "big"
    nd.save(str(path), [nd.zeros((4 << 20,))])        # 16 MiB of float32
    pool = allocator.get_pool()
    pool.empty_cache()          # the saved array's block must not serve the load
    pool.set_limit(pool.memory_stats()["reserved_bytes.all.current"] + (1 << 20))
    try:
        with pytest.raises(allocator.OutOfMemoryError) as info:
            nd.load(str(path))
    finally:
        pool.set_limit(0)
    assert str(info.value).startswith(f"load: {str(path)!r}: out of memory for array 0 "
                                      f"({16 << 20} bytes): ")


def test_a_failed_load_leaves_nothing_allocated(tmp_path, sample_file):
    # the autouse pool check verifies the bytes; here many arrays precede the bad one
    path = tmp_path / "late"
    arrays = [nd.zeros((256, 256)) for _ in range(4)] + [S.csr_matrix(A)]
    nd.save(str(path), arrays)
    replace_member(path, tmp_path / "bad", "4.2.npy", npy_bytes(np.array([3, 1, 0, 2])))
    assert_refused(tmp_path / "bad", "array 4: indices must be strictly increasing")


def test_refusal_names_the_file_and_hides_internal_exceptions(tmp_path, sample_file):
    path = sample_file
    raw = path.read_bytes()
    odd = tmp_path / "we'ird näme.params"
    odd.write_bytes(raw[:len(raw) // 2])
    msg = assert_refused(odd)
    assert repr(str(odd)) in msg
    with pytest.raises(ValueError) as info:
        nd.load(str(odd))
    assert info.value.__cause__ is None and info.value.__suppress_context__


# -- saving replaces the file whole ------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["ndrt", "mxnet"])
def test_a_failed_save_leaves_the_old_file_as_it_was(tmp_path, monkeypatch, fmt):
    path = tmp_path / "model.params"
    nd.save(str(path), {"w": nd.ones(3)}, format=fmt)
    path.chmod(0o640)
    before = path.read_bytes()
    # a name MXNet's layout cannot hold (checked before anything is written)
    if fmt == "mxnet":
        with pytest.raises(ValueError, match=r"^save: name '\\ud800' must be encodable as "
                                             r"UTF-8 \(surrogates not allowed at position 0\)"):
            nd.save(str(path), {"\ud800": nd.zeros(2)}, format="mxnet")
        assert path.read_bytes() == before

    # a failure while the bytes are being written
    def broken(f, *args, **kw):
        f.write(b"half a file")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_mxnet_format, "write", broken)
    monkeypatch.setattr(np, "savez", broken)
    with pytest.raises(OSError, match="No space left"):
        nd.save(str(path), {"w": nd.zeros(5)}, format=fmt)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.params"]   # no leftovers
    with pytest.raises(OSError, match="No space left"):
        nd.save(str(tmp_path / "new"), [nd.zeros(5)], format=fmt)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.params"]
    monkeypatch.undo()
    # a good save replaces it, keeping its permissions; through a symbolic link, its target
    nd.save(str(path), {"w": nd.zeros(5)}, format=fmt)
    assert (path.stat().st_mode & 0o777) == 0o640
    link = tmp_path / "link"
    link.symlink_to(path)
    nd.save(str(link), {"v": nd.full(2, 3.0)}, format=fmt)
    assert link.is_symlink() and list(nd.load(str(path))) == ["v"]


def test_a_failed_save_parameters_leaves_the_old_file(tmp_path, monkeypatch):
    net = nn.Dense(2, in_units=3)
    net.initialize()
    path = tmp_path / "net.params"
    net.save_parameters(str(path))
    before = path.read_bytes()

    def broken(f, **members):
        f.write(b"PK")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(np, "savez", broken)
    net.weight.data()[:] = 5.0
    with pytest.raises(OSError):
        net.save_parameters(str(path))
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["net.params"]


# -- what a file may make the process hold ----------------------------------------------------

LOAD_CODE = """
import sys
from runtime import nd
try:
    got = nd.load(sys.argv[1])
except (ValueError, MemoryError) as e:
    print(type(e).__name__, e)
else:
    print("loaded", len(got))
"""


def test_a_deflated_member_far_larger_than_the_file_is_refused_before_reading(tmp_path):
    """A well-formed file whose one member inflates to 160 MiB from a few hundred KiB:
    past 16 times the file's size plus 64 MiB, refused before the member is read (in a
    child limited to what the runtime needs plus 64 MiB)."""
    n = 160 << 20
    path = tmp_path / "inflates"
    meta = {"format": "ndrt", "version": 1, "container": "list", "arrays": [
        {"name": None, "stype": "default", "dtype": "uint8", "shape": [n],
         "device_type": "cpu", "device_id": 0, "parts": ["0.0"]}]}
    f = io.BytesIO()
    np.lib.format.write_array_header_1_0(f, {"descr": "|u1", "fortran_order": False,
                                             "shape": (n,)})
    zero = bytes(1 << 20)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        zf.writestr("__ndrt__.npy", header_bytes(meta))
        with zf.open("0.0.npy", "w", force_zip64=True) as m:
            m.write(f.getvalue())
            for _ in range(n >> 20):
                m.write(zero)
    size = path.stat().st_size
    res = run_limited(LOAD_CODE, path, memory=(300 + 64) << 20)
    assert res.stdout.startswith(f"MXNetValueError load: {str(path)!r}: array 0 brings what the "
                                 f"file's arrays would hold in memory past "
                                 f"{16 * size + (64 << 20)} bytes (16 times the file's {size} "
                                 "bytes plus 64 MiB, each array part counted as at least a "
                                 "4096-byte page)"), res.stdout + res.stderr[-2000:]


# -- files that are not regular files ---------------------------------------------------------

@pytest.mark.skipif(not os.path.exists("/dev/urandom"), reason="needs /dev/urandom")
def test_an_endless_device_is_refused(tmp_path):
    res = run_limited(LOAD_CODE, "/dev/urandom", timeout=60)
    assert res.stdout == ("MXNetValueError load: '/dev/urandom' must be a regular file (got a "
                          "character device)\n"), res.stdout + res.stderr[-2000:]


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    res = run_limited(LOAD_CODE, fifo, timeout=60)
    assert res.stdout == f"MXNetValueError load: {str(fifo)!r} must be a regular file (got a FIFO)\n", \
        res.stdout + res.stderr[-2000:]


# -- GPU (skipped without a driver) -------------------------------------------------------------

@pytest.mark.gpu
def test_gpu_round_trip(tmp_path):
    arrays = [nd.array(values("float32", (3, 4)), ctx=rt.gpu(0)),
              S.csr_matrix(A, ctx=rt.gpu(0)), S.row_sparse_array(A, ctx=rt.gpu(0)),
              nd.array([1, 2], ctx=rt.cpu_pinned())]
    nd.save(str(tmp_path / "g"), arrays)
    got = nd.load(str(tmp_path / "g"))
    for g, w in zip(got, arrays):
        assert_identical(g, w)
    for g, w in zip(nd.load(str(tmp_path / "g"), ctx=rt.cpu()), arrays):
        assert g.ctx == rt.cpu()
        assert_same(g.tostype("default") if g.stype != "default" else g,
                    w.asnumpy())
    for x in arrays:
        assert_identical(pickle.loads(pickle.dumps(x)), x)
