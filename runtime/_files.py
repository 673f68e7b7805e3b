"""Files written whole or not at all: the data goes to a temporary file beside the
target, which is renamed over it only once complete, so a failed write leaves the old
file (or none) in place."""

import os
import tempfile


def write_bytes(path, data):
    """Write ``data`` (bytes) to ``path`` through a temporary file renamed into place."""
    write_chunks(path, (data,))


def write_chunks(path, chunks, check=None):
    """Write the bytes of the iterable ``chunks`` to ``path`` through a temporary file
    renamed into place; ``check(tmp_path)``, when given, runs on the complete temporary
    file before the rename, and its exception leaves ``path`` untouched."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}-")
    try:
        with os.fdopen(fd, "wb") as f:
            for chunk in chunks:
                f.write(chunk)
        if check is not None:
            check(tmp)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
