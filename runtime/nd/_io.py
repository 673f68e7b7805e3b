"""``nd.save`` / ``nd.load``: ndrt's file format, built on NumPy's ``.npz``.

A file is a zip archive of ``.npy`` members (written by ``numpy.savez``, no pickle):

- ``__ndrt__.npy``: uint8 bytes of a UTF-8 JSON header
  ``{"format": "ndrt", "version": 1, "container": "list" | "dict", "arrays": [...]}``
  where each array entry is ``{"name": str | null, "stype": "default" | "csr" |
  "row_sparse", "dtype": "float32"..., "shape": [...], "device_type": "cpu" | "gpu" |
  "cpu_pinned", "device_id": int, "parts": [member names]}``;
- one member per part: dense arrays have one (the values); csr arrays three (data,
  indptr, indices); row_sparse arrays two (data, row indices).

Loading never runs code: members are parsed with ``numpy.lib.format``'s header reader,
object dtypes are refused, every size is checked against the bytes present, and sparse
arrays pass the full format check.  Anything wrong raises ValueError naming the file.

Loading never inflates more than the header declares: the header member is read only up
to a size that grows with the number of members; every member is named by one part of one
array and read once; a member is read only after the zip's declared size, its ``.npy``
header and the size the JSON header allows for it agree, and then with that bound (a
deflate bomb is refused after a few kilobytes).

Loading makes the process hold at most HOLD_RATIO (16) times the file's size plus
HOLD_FLOOR (64 MiB), each array part counted as at least a 4 KiB page (see ``_Budget``),
and reads only regular files.  Saving writes a temporary file beside the target and
renames it over the target once complete: a failed save leaves the old file whole.

Unpickling an NDArray runs the same per-array check (``runtime._storage.check_array``).

MXNet's binary files (``mx.nd.save`` output, ``.params`` checkpoints) are read too, found by
their magic number, and written with ``save(..., format='mxnet')``; see
:mod:`runtime.nd._mxnet_format`.
"""

import contextlib
import errno
import io
import json
import os
import secrets
import stat
import struct
import zipfile

import numpy as np
from numpy.lib import format as npformat

from allocator import OutOfMemoryError
from runtime._ndarray import DTYPES, STYPES, NDArray, as_ctx, from_numpy, shape_size, storage_host
from runtime._storage import PARTS, check_array, from_parts
from runtime.context import saved_context
from runtime.errors import MXNetValueError
from runtime.nd import _mxnet_format

HEADER = "__ndrt__"
VERSION = 1
# NumPy's own limit on a .npy header; a member's magic, version, header length and header
# fit in _NPY_PREFIX bytes.
_NPY_HEADER_MAX = 10000
_NPY_PREFIX = npformat.MAGIC_LEN + 4 + _NPY_HEADER_MAX
# Bodies are read into their array this much at a time (the only copy besides the array).
_CHUNK = 1 << 20
_NOT_BYTES = "the header is not a byte string"
# What loading may hold in memory (see _Budget): HOLD_RATIO times the file's size plus
# HOLD_FLOOR, each array part counted as at least PAGE bytes.
HOLD_RATIO = 16
HOLD_FLOOR = 64 << 20
PAGE = 4096
_KINDS = {stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
          stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket"}


def _header_cap(members):
    """The most bytes of JSON header a file of `members` zip members may have: about 200
    bytes per part plus the names, so 4 KiB per member leaves room for long names."""
    return (1 << 20) + 4096 * members


def save(fname, data, format="ndrt"):
    """Save a list or a str-keyed dict of NDArrays (dense or sparse) to ``fname``.

    The file name is used as given (no suffix is added).  Arrays keep their storage
    type, dtype, shape and context.

    Parameters
    ----------
    fname : str or path
    data : NDArray, list of NDArray or dict of str to NDArray
    format : {'ndrt', 'mxnet'}
        ``'ndrt'``: ndrt's own ``.npz``-based file; ``'mxnet'``: MXNet's binary layout
        (what ``mx.nd.save`` writes and ``mx.nd.load`` reads: dense, row_sparse and csr
        arrays of every ndrt dtype, names and contexts kept).  :func:`load` reads both.
    """
    if format not in ("ndrt", "mxnet"):
        raise ValueError(f"save: format must be 'ndrt' or 'mxnet' (got {format!r})")
    if isinstance(data, NDArray):
        data = [data]
    if isinstance(data, dict):
        container, items = "dict", list(data.items())
        for k, _ in items:
            if not isinstance(k, str):
                raise TypeError(f"save: dict keys must be str (got {k!r})")
    elif isinstance(data, (list, tuple)):
        container, items = "list", [(None, v) for v in data]
    else:
        raise TypeError(f"save: data must be an NDArray, a list of them or a dict of them "
                        f"(got {type(data).__name__})")
    members, entries = {}, []
    for i, (name, x) in enumerate(items):
        if not isinstance(x, NDArray):
            raise TypeError(f"save: every value must be an NDArray (got "
                            f"{type(x).__name__} at {name if name is not None else i!r})")
    if format == "mxnet":
        _write_replacing(fname, lambda f: _mxnet_format.write(f, items))
        return
    for i, (name, x) in enumerate(items):
        if x.stype == "default":
            parts = [x.asnumpy()]
        else:
            parts = [storage_host(x, j) for j in range(-1, len(x.chunk.aux_shapes))]
        names = [f"{i}.{j}" for j in range(len(parts))]
        members.update(zip(names, parts))
        entries.append({"name": name, "stype": x.stype, "dtype": np.dtype(x.dtype).name,
                        "shape": list(x.shape), "device_type": x.ctx.device_type,
                        "device_id": x.ctx.device_id, "parts": names})
    head = json.dumps({"format": "ndrt", "version": VERSION, "container": container,
                       "arrays": entries}).encode()
    # load refuses a longer header (it bounds what it inflates); only very long names get here
    cap = _header_cap(len(members) + 1)
    if len(head) > cap:
        raise ValueError(f"save: the header must be at most {cap} bytes (got {len(head)}; "
                         "the names are too long)")
    members[HEADER] = np.frombuffer(head, np.uint8)
    _write_replacing(fname, lambda f: np.savez(f, **members))


def _write_replacing(fname, write):
    """``write(f)`` into a new file beside ``fname``, renamed over it once complete: a
    save that fails leaves the file that was there as it was (and no new one).  The new
    file keeps the old one's permissions (else the umask's); a name that is a symbolic
    link has its target replaced.  What is not a regular file (a device, a FIFO) is
    written in place."""
    given = os.fsdecode(os.fspath(fname))
    if given.endswith(os.sep):          # a folder's name (realpath would drop the slash)
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), given)
    path = os.path.realpath(given)
    try:
        old = os.stat(path)
    except FileNotFoundError:
        old = None
    if old is not None and not stat.S_ISREG(old.st_mode):
        with open(path, "wb") as f:
            write(f)
        return
    folder, base = os.path.split(path)
    tmp = os.path.join(folder, f".{base}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as e:          # name the file asked for, not the temporary one
        raise type(e)(e.errno, e.strerror, os.fspath(fname)) from None
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        if old is not None:
            os.chmod(tmp, stat.S_IMODE(old.st_mode))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def load(fname, ctx=None):
    """Load what :func:`save` wrote, or an MXNet file (``mx.nd.save`` output, ``.params``
    checkpoints; found by its magic number): a list or a dict of NDArrays (MXNet files with
    names give a dict, as ``mx.nd.load``).

    Parameters
    ----------
    fname : str or path
    ctx : Context, optional
        Put every array there instead of the context kind it was saved from (without
        ``ctx``, an array saved from a GPU loads onto ``cpu(0)`` on a machine without
        GPUs, as in MXNet).

    Raises
    ------
    ValueError
        (``errors.MXNetValueError``: also MXNet's MXNetError) The file is truncated, corrupted or neither an ndrt nor an MXNet file, is not a
        regular file (a device such as /dev/urandom, a FIFO), or its arrays would make
        the process hold more memory than HOLD_RATIO (16) times the file's size plus
        HOLD_FLOOR (64 MiB), each array part counted as at least one 4 KiB page (very
        many tiny arrays, or members that inflate far beyond the file); the message
        names the file and what is wrong.
    MemoryError
        The arrays do not fit in memory (the pool's OutOfMemoryError stays one); the
        message names the file, the array and its size.
    TypeError
        ``ctx`` is not a Context.
    OSError
        The file cannot be opened (missing, a directory, no permission).

    The file is parsed and validated completely before any array is allocated, so that
    errors of the target context (no GPU) keep their own type.
    """
    ctx = as_ctx(ctx) if ctx is not None else None
    # opened without blocking (a FIFO would wait for a writer), then refused unless it
    # is a regular file: /dev/urandom or a FIFO has no end to read to
    fd = os.open(fname, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as f:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), fname)
        if not stat.S_ISREG(mode):
            raise MXNetValueError(f"load: {str(fname)!r} must be a regular file (got "
                                  f"{_KINDS.get(stat.S_IFMT(mode), 'a special file')})")
        os.set_blocking(fd, True)
        return _load_stream(f, fname, ctx)


def load_frombuffer(buf, ctx=None):
    """:func:`load` from the bytes of a file (MXNet's ``nd.load_frombuffer``): what
    :func:`save` writes, in either format, read from memory.  Errors as :func:`load`'s,
    naming the buffer ``'<buffer>'``; TypeError when ``buf`` is not bytes-like."""
    if not isinstance(buf, (bytes, bytearray, memoryview)):
        raise TypeError(f"load_frombuffer: buf must be bytes-like (got "
                        f"{type(buf).__name__})")
    ctx = as_ctx(ctx) if ctx is not None else None
    return _load_stream(io.BytesIO(bytes(buf)), "<buffer>", ctx)


def from_mxnet_state(state):
    """The array that an MXNet 1.x pickle's state holds: ``{'handle': bytes}``, the array
    in MXNet's binary format (``NDArray.__getstate__`` of MXNet 1.x, its raw bytes as one
    array of a :func:`load` file).  ``NDArray.__setstate__`` calls it."""
    if not isinstance(state, dict) or set(state) != {"handle"}:
        raise TypeError(f"NDArray.__setstate__: state must be an MXNet pickle's "
                        f"{{'handle': bytes}} (got {type(state).__name__}"
                        f"{' with keys ' + repr(sorted(map(str, state))) if isinstance(state, dict) else ''})")
    raw = state["handle"]
    if raw is None:
        raise MXNetValueError("NDArray.__setstate__: the pickled MXNet NDArray has no data "
                              "(handle None), which ndrt arrays cannot be")
    if not isinstance(raw, (bytes, bytearray, memoryview)):
        raise TypeError(f"NDArray.__setstate__: state['handle'] must be bytes-like (got "
                        f"{type(raw).__name__})")
    whole = (struct.pack("<QQQ", _mxnet_format.LIST_MAGIC, 0, 1) + bytes(raw)
             + struct.pack("<Q", 0))
    return load_frombuffer(whole)[0]


class _Budget:
    """What loading a file of ``size`` bytes may make the process hold: HOLD_RATIO times
    the size plus HOLD_FLOOR bytes, each part of an array counted as at least PAGE bytes
    (the host pool's smallest block: a file of many one-element arrays would otherwise
    take a page per 40 bytes of file, over 100 times its size)."""

    def __init__(self, size):
        self.size, self.left = size, HOLD_RATIO * size + HOLD_FLOOR

    def spend(self, what, sizes):
        """Count the parts of ``what`` (their sizes in bytes); _OverBudget past the
        budget."""
        self.left -= sum(max(n, PAGE) for n in sizes)
        if self.left < 0:
            raise _OverBudget(
                f"{what} brings what the file's arrays would hold in memory past "
                f"{HOLD_RATIO * self.size + HOLD_FLOOR} bytes ({HOLD_RATIO} times the "
                f"file's {self.size} bytes plus {HOLD_FLOOR >> 20} MiB, each array part "
                f"counted as at least a {PAGE}-byte page)")


class _OverBudget(Exception):
    """A file whose arrays would hold more memory than its _Budget allows."""


def _load_stream(f, fname, ctx):
    """The arrays of the file open as ``f`` (seekable), ``fname`` naming it in errors."""
    mxnet = _mxnet_format.is_mxnet_file(f.read(8))
    budget = _Budget(f.seek(0, os.SEEK_END))
    f.seek(0)
    if mxnet:
        try:
            container, plan = _mxnet_format.read(f, ctx, budget.spend)
        except (_mxnet_format.Bad, _OverBudget) as e:
            raise MXNetValueError(f"load: {str(fname)!r} (an MXNet file): {e}") from None
        except MemoryError as e:
            raise _out_of_memory(fname, "its arrays", e) from e
    else:
        container, plan = _load_ndrt(f, fname, ctx, budget)
    out = []
    for i, (name, stype, shape, d, where, arrays) in enumerate(plan):
        try:
            if stype == "default":
                x = from_numpy(arrays[0], where)
            else:       # validated by _load
                x = from_parts(stype, shape, d, where, arrays[0], arrays[1:], check=False)
        except MemoryError as e:
            raise _out_of_memory(fname, f"array {i} ({sum(a.nbytes for a in arrays)} bytes)",
                                 e) from e
        out.append((name, x))
    return dict(out) if container == "dict" else [x for _, x in out]


def _load_ndrt(f, fname, ctx, budget):
    """(container, plan) of the ndrt file open as ``f``, validated; ValueError naming the
    file."""
    try:
        zf = zipfile.ZipFile(f)
    except Exception as e:
        raise MXNetValueError(f"load: {str(fname)!r} is not an ndrt or MXNet file (not a "
                              f"readable zip archive nor MXNet's magic: {e})") from None
    try:
        with zf:
            return _load(zf, ctx, budget)
    except (_Bad, _OverBudget) as e:
        raise MXNetValueError(f"load: {str(fname)!r}: {e}") from None
    except _NoMemory as e:   # the file may be fine: its arrays do not fit
        raise _out_of_memory(fname, e.args[0], e.__cause__) from e.__cause__
    except Exception as e:   # zip, zlib, header parsing: the file is damaged
        raise MXNetValueError(f"load: {str(fname)!r} is corrupted ({type(e).__name__}: "
                              f"{e})") from None


def _out_of_memory(fname, what, err):
    """A MemoryError naming the file and what did not fit (a pool's OutOfMemoryError stays
    one; NumPy's subclass needs arguments of its own and becomes a plain MemoryError)."""
    kind = OutOfMemoryError if isinstance(err, OutOfMemoryError) else MemoryError
    return kind(f"load: {str(fname)!r}: out of memory for {what}: {err}")


class _Bad(Exception):
    """A defect of the file itself (load turns it into ValueError naming the file)."""


class _NoMemory(Exception):
    """Raised from the MemoryError of reading what args[0] describes (load turns it back
    into a MemoryError naming the file; a MemoryError must not read as a damaged file)."""


def _zip_entry(zf, name, limit):
    """The ZipInfo of member `name`, refused unless its declared size can hold a .npy of at
    most `limit` bytes of values and it is stored or deflated (whose reads are bounded:
    bzip2 and lzma inflate a whole compressed block at once)."""
    try:
        info = zf.getinfo(name + ".npy")
    except KeyError:
        raise _Bad(f"member {name!r} is missing") from None
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise _Bad(f"member {name!r} must be stored or deflated (got compression method "
                   f"{info.compress_type})")
    if info.file_size > _NPY_PREFIX + limit:
        raise _Bad(f"member {name!r} must hold at most {limit} bytes of values and a .npy "
                   f"header (got {info.file_size} bytes)")
    return info


def _member(zf, info, name, limit, refuse):
    """One .npy member as a NumPy array of at most `limit` bytes.

    The .npy header is read from the first few kilobytes; `refuse(dtype)` returns why the
    caller cannot use that dtype, or None.  The body is read only if the size the header
    implies is within `limit` and is what the zip entry declares, and then at most that
    many bytes, straight into the array.
    """
    with zf.open(info) as f:
        prefix = f.read(min(info.file_size, _NPY_PREFIX))
        head = io.BytesIO(prefix)
        version = npformat.read_magic(head)
        if version == (1, 0):
            shape, fortran, dtype = npformat.read_array_header_1_0(head, _NPY_HEADER_MAX)
        elif version == (2, 0):
            shape, fortran, dtype = npformat.read_array_header_2_0(head, _NPY_HEADER_MAX)
        else:
            raise _Bad(f"member {name!r} has an unknown .npy version {version}")
        if dtype.hasobject or dtype.name not in DTYPES or fortran:
            raise _Bad(f"member {name!r} must be a C-ordered array of {', '.join(DTYPES)} "
                       f"(got dtype {dtype}, fortran_order={fortran})")
        why = refuse(dtype)
        if why is not None:
            raise _Bad(why)
        try:
            nbytes = shape_size(shape, dtype, f"member {name!r}: shape") * dtype.itemsize
        except ValueError as err:
            raise _Bad(str(err)) from None
        if nbytes > limit:
            raise _Bad(f"member {name!r} must hold at most {limit} bytes of values (got "
                       f"shape {shape} of {dtype}, {nbytes} bytes)")
        start = head.tell()
        if info.file_size - start != nbytes:
            raise _Bad(f"member {name!r} claims shape {shape} of {dtype} ({nbytes} bytes) "
                       f"but holds {info.file_size - start} bytes")
        body = np.empty(nbytes, np.uint8)
        view = memoryview(body)
        got = len(prefix) - start
        view[:got] = prefix[start:]
        while got < nbytes:      # the last read reaches the end of the entry: CRC checked
            n = f.readinto(view[got:got + _CHUNK])
            if n == 0:
                raise _Bad(f"member {name!r} ends after {got} of its {nbytes} bytes")
            got += n
    return body.view(dtype).reshape(shape)


def _field(entry, key, kind, i):
    v = entry.get(key) if isinstance(entry, dict) else None
    if not isinstance(v, kind) or isinstance(v, bool) and kind is not bool:
        raise _Bad(f"array {i}: header field {key!r} must be {kind.__name__} (got {v!r})")
    return v


def _part_limits(stype, shape, itemsize):
    """The most bytes each part of an array of this header entry can hold: a csr array has
    at most rows * cols entries, a row_sparse array at most rows stored rows."""
    size = 1
    for s in shape:
        size *= s
    if stype == "default":
        return [size * itemsize]
    if stype == "csr":
        return [size * itemsize, (shape[0] + 1) * 8, size * 8]
    return [size * itemsize, shape[0] * 8]


def _load(zf, ctx, budget):
    infos = zf.infolist()
    seen = set()
    for info in infos:
        if info.filename in seen:
            raise _Bad(f"the archive must name each member once (got {info.filename!r} "
                       "twice)")
        seen.add(info.filename)
    cap = _header_cap(len(infos))
    try:
        head = _member(zf, _zip_entry(zf, HEADER, cap), HEADER, cap,
                       lambda got: None if got == np.uint8 else _NOT_BYTES)
    except MemoryError as err:
        raise _NoMemory(f"the header (at most {cap} bytes)") from err
    if head.ndim != 1:
        raise _Bad(_NOT_BYTES)
    try:
        meta = json.loads(head.tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise _Bad(f"the header is not valid JSON ({e})") from None
    if not isinstance(meta, dict) or meta.get("format") != "ndrt":
        raise _Bad("the header does not say format 'ndrt'")
    version = meta.get("version")
    if type(version) is not int or version != VERSION:
        raise _Bad(f"format version {meta.get('version')!r} is not supported (this ndrt "
                   f"reads version {VERSION})")
    container = meta.get("container")
    if container not in ("list", "dict"):
        raise _Bad(f"container must be 'list' or 'dict' (got {container!r})")
    entries = meta.get("arrays")
    if not isinstance(entries, list):
        raise _Bad("the header has no array list")
    # Every entry and the zip entry of every part are checked before any part is read, so
    # that no member is read twice and none is read past what the header declares.
    owner = {HEADER: "the header"}      # member -> who uses it
    names = {}                          # dict container: name -> array index
    checked = []
    for i, e in enumerate(entries):
        stype = _field(e, "stype", str, i)
        dtype = _field(e, "dtype", str, i)
        shape = tuple(_field(e, "shape", list, i))
        parts = _field(e, "parts", list, i)
        device_type = _field(e, "device_type", str, i)
        device_id = _field(e, "device_id", int, i)
        name = e.get("name")
        if stype not in STYPES or dtype not in DTYPES:
            raise _Bad(f"array {i}: unknown stype {stype!r} or dtype {dtype!r}")
        if len(parts) != PARTS[stype] or not all(isinstance(p, str) for p in parts):
            raise _Bad(f"array {i}: a {stype} array needs {PARTS[stype]} parts (got {parts!r})")
        if stype == "csr" and len(shape) != 2:
            raise _Bad(f"array {i}: a csr array must be 2-D (got shape {shape})")
        if stype == "row_sparse" and len(shape) < 1:
            raise _Bad(f"array {i}: a row_sparse array needs at least 1 dimension")
        if container == "dict":
            if not isinstance(name, str):
                raise _Bad(f"array {i}: dict entries need a str name (got {name!r})")
            if name in names:
                raise _Bad(f"array {i}: the name must be unique (got {name!r}, the name of "
                           f"array {names[name]})")
            names[name] = i
        for p in parts:
            if p in owner:
                raise _Bad(f"array {i}: part {p!r} must name a member no other part uses "
                           f"(got one that {owner[p]} uses)")
            owner[p] = f"array {i}"
        try:
            where = ctx if ctx is not None else saved_context(device_type, device_id)
        except ValueError as err:
            raise _Bad(f"array {i}: {err}") from None
        d = np.dtype(dtype)
        if not all(type(s) is int for s in shape):
            raise _Bad(f"array {i}: shape must be a tuple of ints (got {shape!r})")
        try:
            shape_size(shape, d, f"array {i}: shape")
        except ValueError as err:
            raise _Bad(str(err)) from None
        limits = _part_limits(stype, shape, d.itemsize)
        zinfos = [_zip_entry(zf, p, lim) for p, lim in zip(parts, limits)]
        # counted before any member is read, by the sizes the zip declares
        budget.spend(f"array {i}", [min(zi.file_size, lim) for zi, lim in zip(zinfos, limits)])
        checked.append((name, stype, dtype, shape, where, parts, limits, zinfos))
    out = []
    for i, (name, stype, dtype, shape, where, parts, limits, zinfos) in enumerate(checked):
        def data_dtype(got):
            if got != dtype:
                return f"array {i}: data must have dtype {dtype} (got {got})"
            return None

        def index_dtype(got):
            return None if got == np.int64 else f"array {i}: sparse indices must be int64"

        refuse = [data_dtype] + [index_dtype] * (len(parts) - 1)
        try:
            arrays = [_member(zf, *args) for args in zip(zinfos, parts, limits, refuse)]
        except MemoryError as err:
            raise _NoMemory(f"array {i} ({sum(zi.file_size for zi in zinfos)} bytes)") \
                from err
        try:
            d, shape = check_array(f"array {i}", stype, dtype, shape, arrays)
        except (TypeError, ValueError) as err:
            raise _Bad(str(err)) from None
        out.append((name, stype, shape, d, where, arrays))
    return container, out

