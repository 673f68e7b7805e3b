"""Vision datasets (Gluon's ``gluon.data.vision``) read from local files in their
original formats.  ndrt downloads nothing: a missing file raises FileNotFoundError naming
the path and the file to put there.

Samples are ``(image, label)``: the image a uint8 HxWxC NDArray, the label a NumPy
int32 scalar (a float32 scalar or array for record files), as Gluon's.
"""

import gzip
import os
import shutil
import tarfile
import tempfile
import warnings

import numpy as np

from runtime import image, nd, recordio
from runtime.gluon.data.dataset import Dataset, RecordFileDataset
from runtime.io._file_iters import read_idx

__all__ = ["MNIST", "FashionMNIST", "CIFAR10", "CIFAR100", "ImageRecordDataset",
           "ImageFolderDataset"]


def _root(root):
    return os.path.expanduser(os.fspath(root))


def _missing(who, path, what):
    return FileNotFoundError(f"{who}: no file at {path!r}; ndrt does not download data sets: "
                             f"put {what} there")


class _DownloadedDataset(Dataset):
    """Images and labels held in memory, read once from the files under ``root``."""

    def __init__(self, root, transform):
        self._root = _root(root)
        self._transform = transform
        self._data = None
        self._label = None
        self._get_data()

    def __getitem__(self, idx):
        if self._transform is not None:
            return self._transform(self._data[idx], self._label[idx])
        return self._data[idx], self._label[idx]

    def __len__(self):
        return len(self._label)


def _open_idx(path):
    """The file at ``path`` or at ``path`` without its '.gz' (decompressed already)."""
    if os.path.isfile(path):
        return gzip.open(path, "rb")
    plain = path[:-3]
    if os.path.isfile(plain):
        return open(plain, "rb")
    return None


def _read_idx(who, path, magic, dims):
    f = _open_idx(path)
    if f is None:
        raise _missing(who, path, f"{os.path.basename(path)} (or it uncompressed, "
                                  f"{os.path.basename(path)[:-3]})")
    with f:
        return read_idx(who, f, path, magic, dims)


class MNIST(_DownloadedDataset):
    """The MNIST handwritten digits: 28x28x1 uint8 images and int32 labels.

    Parameters
    ----------
    root : str
        Folder holding ``train-images-idx3-ubyte.gz``, ``train-labels-idx1-ubyte.gz``,
        ``t10k-images-idx3-ubyte.gz`` and ``t10k-labels-idx1-ubyte.gz`` (the original IDX
        files; uncompressed ones without '.gz' serve too).
    train : bool
        The 60,000 training samples, or the 10,000 test samples.
    transform : callable, optional
        ``transform(image, label)`` returns the sample.
    """

    _files = {True: ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
              False: ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")}

    def __init__(self, root=os.path.join("~", ".mxnet", "datasets", "mnist"), train=True,
                 transform=None):
        self._train = train
        super().__init__(root, transform)

    def _get_data(self):
        who = type(self).__name__
        images, labels = (os.path.join(self._root, f) for f in self._files[bool(self._train)])
        label = _read_idx(who, labels, 2049, 1).astype(np.int32)
        data = _read_idx(who, images, 2051, 3)
        if data.shape[0] != label.shape[0]:
            raise ValueError(f"{who}: {images!r} holds {data.shape[0]} images but {labels!r} "
                             f"{label.shape[0]} labels")
        self._data = nd.array(data[..., None], dtype=np.uint8)
        self._label = label


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST: MNIST's format and file names, under its own ``root``."""

    def __init__(self, root=os.path.join("~", ".mxnet", "datasets", "fashion-mnist"),
                 train=True, transform=None):
        super().__init__(root, train, transform)


def _extract(who, archive, root, folder):
    """Extract ``folder`` of the tar ``archive`` into ``root``: into a temporary folder
    first, then renamed, so that a failed extraction leaves nothing half-written."""
    tmp = tempfile.mkdtemp(prefix=".extract-", dir=root)
    try:
        with tarfile.open(archive) as tar:
            for m in tar.getmembers():
                name = os.path.normpath(m.name)
                if os.path.isabs(name) or name.startswith("..") or not (m.isfile() or m.isdir()):
                    raise ValueError(f"{who}: {archive!r} holds a member that would land "
                                     f"outside {root!r} or is not a plain file ({m.name!r})")
            # the members were checked above; tarfile's "data" filter (where this Python
            # has it: the default from 3.14, 3.12 and 3.13 warn without a filter) checks
            # them again by its own rule
            safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
            tar.extractall(tmp, members=[m for m in tar.getmembers()
                                         if os.path.normpath(m.name).split(os.sep)[0] == folder],
                           **safe)
        src = os.path.join(tmp, folder)
        if not os.path.isdir(src):
            raise ValueError(f"{who}: {archive!r} must hold the folder {folder!r}")
        os.replace(src, os.path.join(root, folder))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


class CIFAR10(_DownloadedDataset):
    """CIFAR-10: 32x32x3 uint8 images in 10 classes, int32 labels.

    Parameters
    ----------
    root : str
        Folder holding ``cifar-10-batches-bin/`` (``data_batch_1.bin`` ...
        ``data_batch_5.bin``, ``test_batch.bin``: the binary version) or the archive
        ``cifar-10-binary.tar.gz``, which is extracted there on first use.
    train : bool
    transform : callable, optional
    """

    _archive = "cifar-10-binary.tar.gz"
    _folder = "cifar-10-batches-bin"
    _train_files = tuple(f"data_batch_{i}.bin" for i in range(1, 6))
    _test_files = ("test_batch.bin",)
    _n_labels = 1

    def __init__(self, root=os.path.join("~", ".mxnet", "datasets", "cifar10"), train=True,
                 transform=None):
        self._train = train
        super().__init__(root, transform)

    def _label_column(self):
        return 0

    def _paths(self):
        names = self._train_files if self._train else self._test_files
        paths = [os.path.join(self._root, self._folder, n) for n in names]
        archive = os.path.join(self._root, self._archive)
        if not all(os.path.isfile(p) for p in paths) and os.path.isfile(archive):
            _extract(type(self).__name__, archive, self._root, self._folder)
        for p in paths:
            if not os.path.isfile(p):
                raise _missing(type(self).__name__, p,
                               f"the binary version's {os.path.basename(p)} (or the archive "
                               f"{self._archive} in {self._root!r})")
        return paths

    def _get_data(self):
        width = self._n_labels + 3072
        datas, labels = [], []
        for p in self._paths():
            with open(p, "rb") as f:
                raw = np.frombuffer(f.read(), dtype=np.uint8)
            if raw.size % width:
                raise ValueError(f"{type(self).__name__}: {p!r} must hold records of {width} "
                                 f"bytes (got {raw.size} bytes)")
            raw = raw.reshape(-1, width)
            datas.append(raw[:, self._n_labels:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1))
            labels.append(raw[:, self._label_column()].astype(np.int32))
        self._data = nd.array(np.concatenate(datas), dtype=np.uint8)
        self._label = np.concatenate(labels)


class CIFAR100(CIFAR10):
    """CIFAR-100: 32x32x3 uint8 images, with the 20 coarse labels or (``fine_label``) the
    100 fine ones.  ``root`` holds ``cifar-100-binary/train.bin`` and ``test.bin`` or the
    archive ``cifar-100-binary.tar.gz``."""

    _archive = "cifar-100-binary.tar.gz"
    _folder = "cifar-100-binary"
    _train_files = ("train.bin",)
    _test_files = ("test.bin",)
    _n_labels = 2

    def __init__(self, root=os.path.join("~", ".mxnet", "datasets", "cifar100"),
                 fine_label=False, train=True, transform=None):
        self._fine_label = fine_label
        super().__init__(root, train, transform)

    def _label_column(self):
        return int(bool(self._fine_label))


class ImageRecordDataset(RecordFileDataset):
    """Images and labels of a RecordIO image file (made by MXNet's ``im2rec`` or
    :func:`runtime.recordio.pack_img`): samples ``(image, label)``, the image decoded
    into HxWxC uint8 (``flag`` 1 colour, 0 grey), the label the header's float label
    (or float32 array).  Decoding needs Pillow."""

    def __init__(self, filename, flag=1, transform=None):
        super().__init__(filename)
        self._flag = flag
        self._transform = transform

    def __getitem__(self, idx):
        header, img = recordio.unpack(super().__getitem__(idx))
        img = image.imdecode(img, self._flag)
        if self._transform is not None:
            return self._transform(img, header.label)
        return img, header.label


class ImageFolderDataset(Dataset):
    """Images in one sub-folder per class: ``root/<class>/<image>``; the classes are the
    sorted sub-folder names (``synsets``), the label of an image its class's position.
    Files whose extension is not an image's are skipped with a warning.  Decoding needs
    Pillow."""

    _exts = (".jpg", ".jpeg", ".png")

    def __init__(self, root, flag=1, transform=None):
        self._root = _root(root)
        if not os.path.isdir(self._root):
            raise FileNotFoundError(f"ImageFolderDataset: no folder at {self._root!r}; put "
                                    "one sub-folder of images per class there")
        self._flag = flag
        self._transform = transform
        self.synsets = []
        self.items = []
        for folder in sorted(os.listdir(self._root)):
            path = os.path.join(self._root, folder)
            if not os.path.isdir(path):
                warnings.warn(f"ImageFolderDataset: ignoring {path!r}, which is not a folder",
                              stacklevel=2)
                continue
            label = len(self.synsets)
            self.synsets.append(folder)
            for name in sorted(os.listdir(path)):
                if os.path.splitext(name)[1].lower() not in self._exts:
                    warnings.warn(f"ImageFolderDataset: ignoring {name!r} in {path!r} (its "
                                  f"extension is not one of {self._exts})", stacklevel=2)
                    continue
                self.items.append((os.path.join(path, name), label))

    def __getitem__(self, idx):
        img = image.imread(self.items[idx][0], self._flag)
        label = self.items[idx][1]
        if self._transform is not None:
            return self._transform(img, label)
        return img, label

    def __len__(self):
        return len(self.items)

