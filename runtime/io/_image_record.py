"""``ImageRecordIter`` (MXNet's ``mx.io.ImageRecordIter``): batches of images decoded
from a RecordIO file of packed images (``recordio.pack_img``, MXNet's ``im2rec``)."""

import numpy as np

from runtime import image as _image
from runtime import nd, recordio
from runtime import _rng as _random
from runtime.io._ndarray_iter import DataBatch, DataDesc, DataIter

__all__ = ["ImageRecordIter"]

# MXNet's arguments that tune its C++ pipeline (threads, prefetching, logging): taken
# and ignored, the decoding here runs in the calling thread
_TUNING = ("preprocess_threads", "prefetch_buffer", "verbose", "num_parts", "part_index")


def _positive(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"ImageRecordIter: {name} must be a positive integer (got "
                         f"{value!r})")
    return int(value)


class ImageRecordIter(DataIter):
    """Batches of images from the RecordIO file ``path_imgrec`` (MXNet's
    ``mx.io.ImageRecordIter``): each record is decoded (RGB; grayscale when
    ``data_shape[0]`` is 1), its shorter side resized to ``resize`` (when > 0,
    bilinear), cropped to ``data_shape`` = (C, H, W) (a random window with
    ``rand_crop``, else the centre), flipped left-right with probability 1/2 with
    ``rand_mirror``, and normalised per channel, ``(x - mean) / std * scale`` (``mean_r``,
    ``mean_g``, ``mean_b``, ``std_r`` ... as MXNet), as float32 CxHxW.

    Batches are :class:`~runtime.io.DataBatch` with ``data`` (batch_size, C, H, W) and
    ``label`` (batch_size,) or (batch_size, ``label_width``).  ``shuffle`` reorders the
    records at every epoch (``runtime.random``'s generator; the file is scanned once for
    the records' offsets).  The last batch of an epoch: with ``round_batch`` (MXNet's
    default) it is completed with the first records of the next pass and ``pad`` says
    how many; the next epoch then starts after them, as MXNet's; without it, the missing
    images are zeros and ``pad`` counts them.  An image smaller than the crop (after
    ``resize``) is an error naming its record.  MXNet's tuning arguments
    (``preprocess_threads``, ``prefetch_buffer``, ``verbose``) are accepted and ignored.
    """

    def __init__(self, path_imgrec, data_shape, batch_size, label_width=1, shuffle=False,
                 rand_crop=False, rand_mirror=False, mean_r=0.0, mean_g=0.0, mean_b=0.0,
                 std_r=1.0, std_g=1.0, std_b=1.0, scale=1.0, resize=-1, round_batch=True,
                 data_name="data", label_name="softmax_label", **kwargs):
        unknown = sorted(set(kwargs) - set(_TUNING))
        if unknown:
            raise TypeError(f"ImageRecordIter: unknown argument(s) {', '.join(unknown)} "
                            f"(MXNet's common ones are taken: path_imgrec, data_shape, "
                            f"batch_size, label_width, shuffle, rand_crop, rand_mirror, "
                            f"mean_r/g/b, std_r/g/b, scale, resize, round_batch)")
        batch_size = _positive("batch_size", batch_size)
        super().__init__(batch_size)
        shape = tuple(data_shape) if isinstance(data_shape, (tuple, list)) else None
        if shape is None or len(shape) != 3 or shape[0] not in (1, 3) or not all(
                isinstance(s, (int, np.integer)) and s > 0 for s in shape):
            raise ValueError(f"ImageRecordIter: data_shape must be (channels, height, "
                             f"width) with 1 or 3 channels (got {data_shape!r})")
        self.data_shape = tuple(int(s) for s in shape)
        self.label_width = _positive("label_width", label_width)
        if isinstance(resize, bool) or not isinstance(resize, (int, np.integer)):
            raise ValueError(f"ImageRecordIter: resize must be an integer, <= 0 for none "
                             f"(got {resize!r})")
        self.resize = int(resize)
        c = self.data_shape[0]
        means, stds = (mean_r, mean_g, mean_b)[:c], (std_r, std_g, std_b)[:c]
        for name, v in zip(("mean_r", "mean_g", "mean_b", "std_r", "std_g", "std_b",
                            "scale"), (mean_r, mean_g, mean_b, std_r, std_g, std_b, scale)):
            if isinstance(v, bool) or not isinstance(v, (int, float, np.number)) or \
                    not np.isfinite(v):
                raise ValueError(f"ImageRecordIter: {name} must be a finite number (got "
                                 f"{v!r})")
        if any(s == 0 for s in stds):
            raise ValueError(f"ImageRecordIter: std_r, std_g, std_b must not be 0 (got "
                             f"{(std_r, std_g, std_b)[:c]!r})")
        self._mean = np.asarray(means, np.float32).reshape(c, 1, 1)
        self._factor = (np.float32(scale) / np.asarray(stds, np.float32)).reshape(c, 1, 1)
        self.shuffle, self.rand_crop = bool(shuffle), bool(rand_crop)
        self.rand_mirror, self.round_batch = bool(rand_mirror), bool(round_batch)
        self._rec = recordio.MXRecordIO(path_imgrec, "r")
        self._offsets = []
        while True:
            at = self._rec.tell()
            if self._rec.read() is None:
                break
            self._offsets.append(at)
        if not self._offsets:
            raise ValueError(f"ImageRecordIter: path_imgrec must hold at least one record "
                             f"({path_imgrec!r} holds none)")
        self.path_imgrec = path_imgrec
        self._provide_data = [DataDesc(data_name, (batch_size,) + self.data_shape)]
        lshape = (batch_size,) if self.label_width == 1 else (batch_size, self.label_width)
        self._provide_label = [DataDesc(label_name, lshape)]
        self._continue = False     # the next epoch goes on in the current pass
        self._done = False         # the epoch's last batch was given
        self._new_pass()

    def _new_pass(self):
        n = len(self._offsets)
        self._order = (_random.generator().permutation(n) if self.shuffle
                       else np.arange(n))
        self._cur = 0

    def reset(self):
        """Start the next epoch (reshuffled with ``shuffle``); after a batch completed
        by ``round_batch``, the epoch goes on after the records that completed it."""
        if self._continue:
            self._continue = False
        else:
            self._new_pass()
        self._done = False

    def _sample(self, i):
        """(label, CxHxW float32) of record ``i``."""
        self._rec.tell()            # reopens privately in a forked process
        self._rec.handle.seek(self._offsets[i])
        header, buf = recordio.unpack(self._rec.read())
        c, h, w = self.data_shape
        img = _image.imdecode(buf, 0 if c == 1 else 1)
        if self.resize > 0:
            img = _image.resize_short(img, self.resize, interp=1)
        a = img.asnumpy()
        if a.ndim == 2:
            a = a[:, :, None]
        ih, iw = a.shape[:2]
        if ih < h or iw < w:
            raise ValueError(f"ImageRecordIter: record {i} of {self.path_imgrec!r} is "
                             f"{iw}x{ih} (after resize), smaller than the crop {w}x{h} of "
                             f"data_shape; give resize >= {max(h, w)}")
        rng = _random.generator()
        if self.rand_crop:
            y0, x0 = int(rng.integers(0, ih - h + 1)), int(rng.integers(0, iw - w + 1))
        else:
            y0, x0 = (ih - h) // 2, (iw - w) // 2
        a = a[y0:y0 + h, x0:x0 + w]
        if self.rand_mirror and rng.random() < 0.5:
            a = a[:, ::-1]
        x = (a.transpose(2, 0, 1).astype(np.float32) - self._mean) * self._factor
        label = np.asarray(header.label, np.float32).reshape(-1)
        if label.size != self.label_width:
            raise ValueError(f"ImageRecordIter: record {i} of {self.path_imgrec!r} has "
                             f"{label.size} label value(s), label_width is "
                             f"{self.label_width}")
        return label, x

    def next(self):
        n = len(self._order)
        if self._done or self._cur >= n:
            raise StopIteration
        b = self.batch_size
        data = np.zeros((b,) + self.data_shape, np.float32)
        label = np.zeros((b, self.label_width), np.float32)
        take = min(b, n - self._cur)
        picks = list(self._order[self._cur:self._cur + take])
        self._cur += take
        pad = b - take
        if pad and self.round_batch:
            while len(picks) < b:        # the next pass's first records
                if self._cur >= n:
                    self._new_pass()
                more = min(b - len(picks), n - self._cur)
                picks += list(self._order[self._cur:self._cur + more])
                self._cur += more
            self._continue = self._done = True
        for k, i in enumerate(picks):
            label[k], data[k] = self._sample(int(i))
        if self._continue and self._cur >= n:     # the wrap used up a whole pass
            self._continue = False
        out_label = label[:, 0] if self.label_width == 1 else label
        return DataBatch([nd.array(data)], [nd.array(out_label)], pad=pad,
                         provide_data=self.provide_data, provide_label=self.provide_label)
