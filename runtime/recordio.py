"""MXNet's RecordIO files (``mx.recordio``): ``.rec`` files of binary records, their
``.idx`` index, and the image-record header.

The format (dmlc-core's RecordIO): each record is the little-endian uint32 magic
``0xced7230a``, a uint32 ``lrecord`` (the top 3 bits a continuation flag, the low 29 bits
the byte length), the bytes, and zero padding to a multiple of 4.  A record whose bytes
contain the magic at a 4-byte aligned position is written in parts split there (the
magic itself dropped from the data): flag 1 starts, 2 continues, 3 ends such a record;
flag 0 is a whole record.  An index file holds one ``key<TAB>byte offset`` line per
record.  Files written here are byte-identical to MXNet's.
"""

import numbers
import os
import struct
from collections import namedtuple

import numpy as np

from runtime import _image_codec

__all__ = ["MXRecordIO", "MXIndexedRecordIO", "IRHeader", "pack", "unpack", "pack_img",
           "unpack_img"]

MAGIC = 0xCED7230A
_MAGIC_BYTES = struct.pack("<I", MAGIC)
_HEAD = struct.Struct("<II")
_MAX_LENGTH = 1 << 29


def _lrecord(flag, length):
    return (flag << 29) | length


class MXRecordIO:
    """Reads or writes one RecordIO file, one record at a time.

    Parameters
    ----------
    uri : str
        Path of the ``.rec`` file.
    flag : {'r', 'w'}
        Read an existing file, or write a new one (truncating it).

    An instance that was pickled (or that lives in a forked DataLoader worker) opens its
    own file handle where it is used, at the start of the file.
    """

    def __init__(self, uri, flag):
        self.is_open = False
        if not isinstance(uri, (str, os.PathLike)):
            raise TypeError(f"MXRecordIO: uri must be a path (got {uri!r})")
        if flag not in ("r", "w"):
            raise ValueError(f"MXRecordIO: flag must be 'r' or 'w' (got {flag!r})")
        self.uri = os.fspath(uri)
        self.flag = flag
        self.writable = flag == "w"
        self.handle = None
        self.pid = None
        self.open()

    def open(self):
        """Open the file (``reset`` reopens it)."""
        try:
            self.handle = open(self.uri, "wb" if self.writable else "rb")
        except FileNotFoundError:
            raise FileNotFoundError(f"MXRecordIO: no RecordIO file at {self.uri!r}") from None
        self.is_open = True
        self.pid = os.getpid()

    def close(self):
        """Close the file (writes are flushed)."""
        if self.is_open:
            self.handle.close()
            self.is_open = False
            self.pid = None

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __getstate__(self):
        state = self.__dict__.copy()
        state.update(handle=None, pid=None)
        return state

    def __setstate__(self, state):
        was_open = state["is_open"]
        self.__dict__.update(state, is_open=False)
        if was_open:
            self.open()

    def _check(self, what):
        if not self.is_open:
            raise ValueError(f"MXRecordIO: {what} needs an open file ({self.uri!r} is closed)")
        if self.pid != os.getpid():
            # A forked process shares the parent's file offset: reopen privately.
            self.handle = open(self.uri, "rb" if not self.writable else "ab")
            self.pid = os.getpid()

    def reset(self):
        """Back to the first record (a writer starts the file anew)."""
        self.close()
        self.open()

    def write(self, buf):
        """Append one record holding the bytes ``buf``."""
        if not self.writable:
            raise ValueError(f"MXRecordIO: write needs flag 'w' ({self.uri!r} is open for "
                             "reading)")
        self._check("write")
        buf = bytes(buf)
        if len(buf) >= _MAX_LENGTH:
            raise ValueError(f"MXRecordIO: a record must be shorter than 2**29 bytes (got "
                             f"{len(buf)})")
        self.handle.write(encode(buf))

    def read(self):
        """The next record's bytes, or None at the end of the file."""
        if self.writable:
            raise ValueError(f"MXRecordIO: read needs flag 'r' ({self.uri!r} is open for "
                             "writing)")
        self._check("read")
        return _read_record(self.handle, self.uri)

    def tell(self):
        """The byte offset where the next record starts."""
        self._check("tell")
        return self.handle.tell()


def encode(buf):
    """The bytes of one record holding ``buf``, as dmlc-core's writer lays them out."""
    n = len(buf)
    parts, start = [], 0
    for i in range(0, n - n % 4, 4):
        if buf[i:i + 4] == _MAGIC_BYTES:
            parts.append(_HEAD.pack(MAGIC, _lrecord(1 if start == 0 else 2, i - start)))
            parts.append(buf[start:i])
            start = i + 4
    parts.append(_HEAD.pack(MAGIC, _lrecord(3 if start else 0, n - start)))
    parts.append(buf[start:])
    parts.append(b"\0" * (-n % 4))
    return b"".join(parts)


def _read_record(f, uri):
    out = []
    while True:
        pos = f.tell()
        head = f.read(8)
        if not head:
            if out:
                raise ValueError(f"MXRecordIO: {uri!r} ends inside a record (at byte {pos})")
            return None
        if len(head) < 8:
            raise ValueError(f"MXRecordIO: {uri!r} is not a RecordIO file (a truncated "
                             f"record header at byte {pos})")
        magic, lrec = _HEAD.unpack(head)
        if magic != MAGIC:
            raise ValueError(f"MXRecordIO: {uri!r} is not a RecordIO file (magic "
                             f"{magic:#010x} at byte {pos}, expected {MAGIC:#010x})")
        flag, length = lrec >> 29, lrec & (_MAX_LENGTH - 1)
        data = f.read(length + (-length % 4))
        if len(data) < length:
            raise ValueError(f"MXRecordIO: {uri!r} is truncated (a record of {length} bytes "
                             f"at byte {pos})")
        out.append(data[:length])
        if flag in (0, 3):
            return _MAGIC_BYTES.join(out)


class MXIndexedRecordIO(MXRecordIO):
    """A RecordIO file with an index file, read and written by key.

    Parameters
    ----------
    idx_path : str
        Path of the ``.idx`` file: one ``key<TAB>offset`` line per record.
    uri : str
        Path of the ``.rec`` file.
    flag : {'r', 'w'}
    key_type : type
        What the keys of the index are converted to when read (default int).
    """

    def __init__(self, idx_path, uri, flag, key_type=int):
        self.idx_path = os.fspath(idx_path)
        self.idx = {}
        self.keys = []
        self.key_type = key_type
        self.fidx = None
        super().__init__(uri, flag)

    def open(self):
        super().open()
        self.idx = {}
        self.keys = []
        if self.writable:
            self.fidx = open(self.idx_path, "w")
            return
        try:
            with open(self.idx_path) as fidx:
                lines = fidx.read().splitlines()
        except FileNotFoundError:
            self.handle.close()
            self.is_open = False
            raise FileNotFoundError(f"MXIndexedRecordIO: no index file at "
                                    f"{self.idx_path!r}") from None
        for n, line in enumerate(lines):
            fields = line.strip().split("\t")
            if not fields[0]:
                continue
            if len(fields) < 2:
                raise ValueError(f"MXIndexedRecordIO: line {n + 1} of {self.idx_path!r} must "
                                 f"be 'key<TAB>offset' (got {line!r})")
            key = self.key_type(fields[0])
            self.idx[key] = int(fields[1])
            self.keys.append(key)

    def close(self):
        if not self.is_open:
            return
        super().close()
        if self.fidx is not None:
            self.fidx.close()
            self.fidx = None

    def __getstate__(self):
        state = super().__getstate__()
        state["fidx"] = None
        return state

    def seek(self, idx):
        """Make the record of key ``idx`` the next one ``read`` returns."""
        if idx not in self.idx:
            raise KeyError(f"MXIndexedRecordIO: no record with key {idx!r} in "
                           f"{self.idx_path!r}")
        self._check("seek")
        self.handle.seek(self.idx[idx])

    def read_idx(self, idx):
        """The bytes of the record of key ``idx``."""
        self.seek(idx)
        return self.read()

    def write_idx(self, idx, buf):
        """Append one record under key ``idx`` (its offset goes to the index file)."""
        key = self.key_type(idx)
        pos = self.tell()
        self.write(buf)
        self.fidx.write(f"{key}\t{pos}\n")
        self.idx[key] = pos
        self.keys.append(key)


IRHeader = namedtuple("HEADER", ["flag", "label", "id", "id2"])
IRHeader.__doc__ = """The header of an image record: ``flag`` (0, or the number of float32
labels stored before the payload), ``label`` (a float, or an array of ``flag`` float32
labels), ``id`` and ``id2`` (uint64 identifiers)."""
_IR = struct.Struct("<IfQQ")


def pack(header, s):
    """The bytes of an image record: ``header`` (an :class:`IRHeader`) then the payload
    ``s``.  An array label is stored as ``flag`` float32 values before the payload."""
    header = IRHeader(*header)
    if isinstance(header.label, numbers.Number):
        header = header._replace(flag=0)
    else:
        label = np.asarray(header.label, dtype=np.float32)
        header = header._replace(flag=label.size, label=0)
        s = label.tobytes() + bytes(s)
    return _IR.pack(*header) + bytes(s)


def unpack(s):
    """``(header, payload)`` of an image record made by :func:`pack`."""
    if len(s) < _IR.size:
        raise ValueError(f"unpack: an image record must hold at least {_IR.size} bytes "
                         f"(got {len(s)})")
    header = IRHeader(*_IR.unpack(s[:_IR.size]))
    s = s[_IR.size:]
    if header.flag > 0:
        header = header._replace(label=np.frombuffer(s, np.float32, header.flag))
        s = s[header.flag * 4:]
    return header, s


def unpack_img(s, iscolor=-1):
    """``(header, image)`` of an image record: the payload decoded into a uint8 NumPy
    array, HxWx3 RGB for ``iscolor=1``, HxW grey for 0, and for -1 (MXNet's default,
    OpenCV's 'unchanged') as stored: HxW for a grey image, else RGB (needs Pillow).
    MXNet decodes with OpenCV into BGR; ndrt's images are RGB throughout, as
    ``mx.image.imdecode`` gives."""
    header, s = unpack(s)
    mode = "L" if iscolor == 0 else "RGB" if iscolor > 0 else None
    return header, _image_codec.decode(s, mode)


def pack_img(header, img, quality=95, img_fmt=".jpg"):
    """An image record of the uint8 HxWx3 (RGB) or HxW array ``img`` encoded as
    ``img_fmt`` ('.jpg' with ``quality``, or '.png') (needs Pillow)."""
    return pack(header, _image_codec.encode(img, img_fmt, quality))
