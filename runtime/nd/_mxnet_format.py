"""MXNet's binary NDArray files (``mx.nd.save`` output and ``.params`` checkpoints).

The layout, from MXNet 1.x ``src/ndarray/ndarray.cc`` (``NDArray::Save``/``Load``) and
dmlc-core's stream serialisers, all little-endian:

- the list: ``uint64 0x112`` (kMXAPINDArrayListMagic), ``uint64 0`` (reserved), ``uint64 n``
  then ``n`` arrays, then ``uint64 k`` names (``k`` is 0 or ``n``), each ``uint64 length`` and
  that many UTF-8 bytes;
- one array: ``uint32 magic`` (V2 ``0xF993FAC9``; V3 ``0xF993FACA``, NumPy shape semantics,
  dense only), ``int32 stype`` (0 default, 1 row_sparse, 2 csr), the storage shape if sparse,
  the shape, then (unless the array is "none": ``ndim`` 0 in V2, -1 in V3) the context
  (``int32 dev_type`` 1 cpu, 2 gpu, 3 cpu_pinned, 5 cpu_shared; ``int32 dev_id``), ``int32
  type_flag`` (mshadow's dtype codes), for each aux array (row_sparse: row indices; csr:
  indptr, indices) its ``int32 type_flag`` and shape, then the data bytes and the aux bytes;
- a shape: ``int32 ndim`` and ``ndim`` int64 dimensions.

Arrays written before V2 (MXNet < 1.0) are read too: ``0xF993FAC8`` (V1) then a V2-style shape,
or no magic at all, the first uint32 being ``ndim`` of uint32 dimensions; both dense, with
no storage type.

Loading checks every count, shape and size against the bytes left in the file before it
reads or allocates, and sparse arrays pass ndrt's full format check: a damaged file is a
ValueError naming it.  "None" arrays (MXNet's ``NDArray()``), unknown shapes and bfloat16 have no ndrt
counterpart and are refused by name.
"""

import os
import struct

import numpy as np

from runtime._ndarray import DTYPES, shape_size, storage_host
from runtime._storage import check_array
from runtime.context import saved_context

LIST_MAGIC = 0x112
V1_MAGIC, V2_MAGIC, V3_MAGIC = 0xF993FAC8, 0xF993FAC9, 0xF993FACA
STYPES = {0: "default", 1: "row_sparse", 2: "csr"}      # MXNet's storage-type codes
STYPE_CODES = {v: k for k, v in STYPES.items()}
_NUM_AUX = {"default": 0, "row_sparse": 1, "csr": 2}
# mshadow's type flags (mshadow/base.h); 12 (bfloat16) has no ndrt dtype
_DTYPES = {0: "float32", 1: "float64", 2: "float16", 3: "uint8", 4: "int32", 5: "int8",
           6: "int64", 7: "bool", 8: "int16", 9: "uint16", 10: "uint32", 11: "uint64"}
_DTYPE_CODES = {v: k for k, v in _DTYPES.items()}
_DEVICES = {1: "cpu", 2: "gpu", 3: "cpu_pinned", 5: "cpu"}     # 5: kCPUShared
_DEVICE_CODES = {"cpu": 1, "gpu": 2, "cpu_pinned": 3}
_MAX_NDIM = 32


class Bad(Exception):
    """A defect of the file (the caller turns it into ValueError naming the file)."""


def is_mxnet_file(head):
    """True when the first 8 bytes ``head`` are MXNet's list magic."""
    return len(head) >= 8 and struct.unpack("<Q", head[:8])[0] == LIST_MAGIC


# -- load ------------------------------------------------------------------------------------

class _Reader:
    """Reads exact byte counts from a file, refusing any count beyond what is left."""

    def __init__(self, f, size):
        self.f, self.left = f, size

    def take(self, n, what):
        if n > self.left:
            raise Bad(f"{what} needs {n} bytes but only {self.left} are left")
        b = self.f.read(n)
        if len(b) != n:
            raise Bad(f"{what} ends after {len(b)} of its {n} bytes")
        self.left -= n
        return b

    def unpack(self, fmt, what):
        return struct.unpack("<" + fmt, self.take(struct.calcsize("<" + fmt), what))

    def array(self, dtype, count, what):
        """``count`` values of ``dtype`` read straight into a new NumPy array."""
        nbytes = count * dtype.itemsize
        if nbytes > self.left:
            raise Bad(f"{what} needs {nbytes} bytes but only {self.left} are left")
        out = np.empty(count, dtype)
        got = self.f.readinto(memoryview(out.view(np.uint8)))
        if got != nbytes:
            raise Bad(f"{what} ends after {got} of its {nbytes} bytes")
        self.left -= nbytes
        return out


def _shape(r, what, legacy_ndim=None):
    """A shape: int32 ndim and int64 dims (``legacy_ndim``: the pre-V1 form, uint32 dims)."""
    if legacy_ndim is None:
        (ndim,) = r.unpack("i", f"{what} ndim")
        wide = "q"
    else:
        ndim, wide = legacy_ndim, "I"
    if ndim < -1 or ndim > _MAX_NDIM:
        raise Bad(f"{what} must have at most {_MAX_NDIM} dimensions (got ndim={ndim})")
    if ndim <= 0:
        return ndim
    dims = r.unpack(f"{ndim}{wide}", f"{what} dims")
    if any(d < 0 for d in dims):
        raise Bad(f"{what} has an unknown dimension (got {dims}); such arrays cannot be "
                  "loaded")
    return tuple(dims)


def _read_array(r, i, ctx, spend):
    where = f"array {i}"
    (magic,) = r.unpack("I", f"{where} magic")
    if magic in (V2_MAGIC, V3_MAGIC):
        (code,) = r.unpack("i", f"{where} storage type")
        if code not in STYPES:
            raise Bad(f"{where}: storage type must be 0 (default), 1 (row_sparse) or 2 (csr) "
                      f"(got {code})")
        stype = STYPES[code]
        if magic == V3_MAGIC and stype != "default":
            raise Bad(f"{where}: a V3 (NumPy shape) array must be dense (got {stype})")
        storage = _shape(r, f"{where} storage shape") if stype != "default" else None
        shape = _shape(r, f"{where} shape")
        none = shape == 0 if magic == V2_MAGIC else shape == -1
        if shape == 0 and magic == V3_MAGIC:
            shape = ()
    else:
        stype, storage = "default", None
        shape = _shape(r, f"{where} shape") if magic == V1_MAGIC else \
            _shape(r, f"{where} shape", legacy_ndim=magic)
        none = shape == 0
    if none:
        raise Bad(f"{where} is an empty (none) NDArray, which ndrt does not have")
    if isinstance(shape, int) or (storage is not None and isinstance(storage, int)):
        raise Bad(f"{where}: shape of unknown rank")
    dev_type, dev_id = r.unpack("ii", f"{where} context")
    if dev_type not in _DEVICES or dev_id < 0:
        raise Bad(f"{where}: context must be a cpu (1, 3, 5) or gpu (2) device with id >= 0 "
                  f"(got dev_type={dev_type}, dev_id={dev_id})")
    (flag,) = r.unpack("i", f"{where} dtype")
    dtype = _dtype(flag, f"{where} dtype")
    aux = []
    for j in range(_NUM_AUX[stype]):
        (aflag,) = r.unpack("i", f"{where} aux {j} dtype")
        adtype = _dtype(aflag, f"{where} aux {j} dtype")
        if adtype.kind not in "iu":
            raise Bad(f"{where}: aux {j} must hold integers (got {adtype})")
        ashape = _shape(r, f"{where} aux {j} shape")
        if isinstance(ashape, int) and ashape != 0:
            raise Bad(f"{where}: aux {j} shape of unknown rank")
        aux.append((adtype, () if isinstance(ashape, int) else ashape))
    data_shape = shape if storage is None else storage
    try:                    # NumPy's rule (and ndrt's): the size fits in int64 bytes
        shape_size(shape, dtype, f"{where}: shape")
        size = shape_size(data_shape, dtype, f"{where}: storage shape")
    except ValueError as err:
        raise Bad(str(err)) from None
    data = r.array(dtype, size, f"{where} data").reshape(data_shape)
    parts = [data]
    for j, (adtype, ashape) in enumerate(aux):
        if len(ashape) != 1:
            raise Bad(f"{where}: aux {j} must be 1-D (got shape {ashape})")
        a = r.array(adtype, ashape[0], f"{where} aux {j}")
        if adtype != np.int64:
            if adtype.kind == "u" and a.size and a.max() > np.iinfo(np.int64).max:
                raise Bad(f"{where}: aux {j} holds indices beyond int64")
            a = a.astype(np.int64)
        parts.append(a)
    spend(where, [p.nbytes for p in parts])
    try:
        d, shape = check_array(where, stype, dtype.name, shape, parts)
    except (TypeError, ValueError) as err:
        raise Bad(str(err)) from None
    place = ctx if ctx is not None else saved_context(_DEVICES[dev_type], dev_id)
    return stype, shape, d, place, parts


def _dtype(flag, what):
    name = _DTYPES.get(flag)
    if name is None or name not in DTYPES:
        known = ", ".join(f"{k} ({v})" for k, v in _DTYPES.items() if v in DTYPES)
        raise Bad(f"{what} must be one of {known} (got type flag {flag}"
                  f"{' = ' + name if name else ''})")
    return np.dtype(name)


def read(f, ctx, spend):
    """Parse an open MXNet file: ``(container, [(name, stype, shape, dtype, ctx, parts)])``
    with host NumPy parts, everything validated; raises :class:`Bad`.  ``spend(what,
    sizes)`` is called with the byte sizes of each array's parts as soon as they are
    read (the caller's memory budget, which may raise)."""
    start = f.tell()
    size = f.seek(0, os.SEEK_END) - start       # a file or a BytesIO (load_frombuffer)
    f.seek(start)
    r = _Reader(f, size)
    magic, _reserved = r.unpack("QQ", "the header")
    if magic != LIST_MAGIC:
        raise Bad(f"the list magic must be {LIST_MAGIC:#x} (got {magic:#x})")
    (n,) = r.unpack("Q", "the array count")
    if n > r.left // 12:       # each array takes at least a magic and a shape
        raise Bad(f"the array count {n} cannot fit in the {r.left} bytes left")
    arrays = [_read_array(r, i, ctx, spend) for i in range(n)]
    (k,) = r.unpack("Q", "the name count")
    if k not in (0, n):
        raise Bad(f"the name count must be 0 or the array count {n} (got {k})")
    names = []
    for i in range(k):
        (length,) = r.unpack("Q", f"name {i} length")
        raw = r.take(length, f"name {i}")
        try:
            names.append(raw.decode("utf-8"))
        except UnicodeDecodeError as e:
            raise Bad(f"name {i} is not UTF-8 ({e})") from None
    if len(set(names)) != len(names):
        dup = next(s for s in names if names.count(s) > 1)
        raise Bad(f"the names must be unique (got {dup!r} twice)")
    if r.left:
        raise Bad(f"{r.left} bytes follow the last name")
    if not names:
        return "list", [(None, *a) for a in arrays]
    return "dict", [(nm, *a) for nm, a in zip(names, arrays)]


# -- save ------------------------------------------------------------------------------------

def _write_shape(out, shape):
    out.append(struct.pack(f"<i{len(shape)}q", len(shape), *shape))


def write(f, items):
    """Write ``items`` ([(name or None, NDArray)], all named or none) in MXNet's layout.

    Dense arrays with a 0-size dimension or no dimensions are written as V3 (MXNet's NumPy
    shape semantics, read by MXNet 1.6 and newer); everything else as V2, which every MXNet
    since 1.0 reads."""
    names = []
    for n, _ in items:
        if n is not None:
            try:
                names.append(n.encode("utf-8"))
            except UnicodeEncodeError as e:
                raise ValueError(f"save: name {n!r} must be encodable as UTF-8 ({e.reason} "
                                 f"at position {e.start})") from None
    head = [struct.pack("<QQQ", LIST_MAGIC, 0, len(items))]
    f.write(b"".join(head))
    for name, x in items:
        out = []
        dense = x.stype == "default"
        v3 = dense and (x.ndim == 0 or 0 in x.shape)
        out.append(struct.pack("<Ii", V3_MAGIC if v3 else V2_MAGIC, STYPE_CODES[x.stype]))
        parts = [storage_host(x, j) for j in range(-1, _NUM_AUX[x.stype])] if not dense \
            else [x.asnumpy()]
        if not dense:
            _write_shape(out, parts[0].shape)
        _write_shape(out, x.shape)
        out.append(struct.pack("<ii", _DEVICE_CODES[x.ctx.device_type], x.ctx.device_id))
        out.append(struct.pack("<i", _DTYPE_CODES[np.dtype(x.dtype).name]))
        for a in parts[1:]:
            out.append(struct.pack("<i", _DTYPE_CODES["int64"]))
            _write_shape(out, a.shape)
        f.write(b"".join(out))
        for a in parts:
            f.write(np.ascontiguousarray(a).data)
    f.write(struct.pack("<Q", len(names)))
    for raw in names:
        f.write(struct.pack("<Q", len(raw)) + raw)
