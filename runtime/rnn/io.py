"""Data for MXNet 1.x's symbolic RNN examples: :func:`encode_sentences` (words to
integer ids) and :class:`BucketSentenceIter` (sentences padded to the next bucket
length, one bucket per batch, for ``mx.mod.BucketingModule``)."""

import bisect
import random

import numpy as np

from runtime import nd
from runtime.io import DataBatch, DataDesc, DataIter


def encode_sentences(sentences, vocab=None, invalid_label=-1, invalid_key="\n",
                     start_label=0, unknown_token=None):
    """``(encoded sentences, vocab)``: every word of ``sentences`` (iterables of str)
    replaced by its id in ``vocab`` (a dict, extended in place).

    Without ``vocab``, a new one maps ``invalid_key`` to ``invalid_label`` and gives new
    words the next ids from ``start_label`` (skipping ``invalid_label``).  With one, a
    word it lacks is added as ``unknown_token`` when that is given, and is refused
    otherwise (KeyError naming it)."""
    new_vocab = vocab is None
    if new_vocab:
        vocab = {invalid_key: invalid_label}
    next_id = start_label
    encoded = []
    for sentence in sentences:
        ids = []
        for word in sentence:
            if word not in vocab:
                if not (new_vocab or unknown_token):
                    raise KeyError(f"encode_sentences: unknown token {word!r} (the vocab "
                                   "given lacks it and no unknown_token is set)")
                if next_id == invalid_label:
                    next_id += 1
                if unknown_token:
                    word = unknown_token
                vocab[word] = next_id
                next_id += 1
            ids.append(vocab[word])
        encoded.append(ids)
    return encoded, vocab


class BucketSentenceIter(DataIter):
    """Batches of encoded sentences for a language model: each sentence is padded with
    ``invalid_label`` to the smallest bucket length that holds it (longer ones are
    dropped, with a printed warning), and a batch holds ``batch_size`` sentences of one
    bucket; the label of each position is the next token (``invalid_label`` after the
    last).  Each batch's ``bucket_key`` is its length.

    Parameters
    ----------
    sentences : list of list of int
    batch_size : int
    buckets : list of int, optional
        The lengths; by default every length that at least ``batch_size`` sentences
        have.
    invalid_label : int, default -1
    data_name, label_name : str
    dtype : str, default 'float32'
    layout : {'NT', 'TN'}
        Batch-major (batch_size, length) or time-major (length, batch_size).

    ``reset()`` shuffles the order of the batches (Python's ``random``) and the
    sentences in each bucket (NumPy's global generator), as MXNet's does.
    """

    def __init__(self, sentences, batch_size, buckets=None, invalid_label=-1,
                 data_name="data", label_name="softmax_label", dtype="float32",
                 layout="NT"):
        super().__init__(batch_size)
        if layout not in ("NT", "TN"):
            raise ValueError(f"BucketSentenceIter: layout must be 'NT' or 'TN' (got "
                             f"{layout!r})")
        if not buckets:
            counts = np.bincount([len(s) for s in sentences])
            buckets = [length for length, n in enumerate(counts) if n >= batch_size]
        buckets = sorted(buckets)
        rows = [[] for _ in buckets]
        discarded = 0
        for sentence in sentences:
            k = bisect.bisect_left(buckets, len(sentence))
            if k == len(buckets):
                discarded += 1
                continue
            row = np.full((buckets[k],), invalid_label, dtype=dtype)
            row[:len(sentence)] = sentence
            rows[k].append(row)
        print(f"WARNING: discarded {discarded} sentences longer than the largest bucket.")
        self.buckets = [b for b, r in zip(buckets, rows) if r]
        self.data = [np.asarray(r, dtype=dtype) for r in rows if r]
        if not self.data:
            raise ValueError("BucketSentenceIter: no sentence fits a bucket (got buckets "
                             f"{buckets!r})")
        self.data_name = data_name
        self.label_name = label_name
        self.dtype = dtype
        self.invalid_label = invalid_label
        self.layout = layout
        self.major_axis = layout.find("N")
        self.default_bucket_key = max(self.buckets)
        shape = self._shape(batch_size, self.default_bucket_key)
        self.provide_data = [DataDesc(data_name, shape, layout=layout)]
        self.provide_label = [DataDesc(label_name, shape, layout=layout)]
        self.idx = [(k, start) for k, bucket in enumerate(self.data)
                    for start in range(0, len(bucket) - batch_size + 1, batch_size)]
        self.curr_idx = 0
        self.nddata = []
        self.ndlabel = []
        self.reset()

    def _shape(self, batch, length):
        return (batch, length) if self.major_axis == 0 else (length, batch)

    def reset(self):
        """Shuffle, and start the next epoch."""
        self.curr_idx = 0
        random.shuffle(self.idx)
        for bucket in self.data:
            np.random.shuffle(bucket)
        self.nddata, self.ndlabel = [], []
        for bucket in self.data:
            label = np.empty_like(bucket)
            label[:, :-1] = bucket[:, 1:]
            label[:, -1] = self.invalid_label
            self.nddata.append(nd.array(bucket, dtype=self.dtype))
            self.ndlabel.append(nd.array(label, dtype=self.dtype))

    def next(self):
        """The next batch (StopIteration at the end of the epoch)."""
        if self.curr_idx == len(self.idx):
            raise StopIteration
        k, start = self.idx[self.curr_idx]
        self.curr_idx += 1
        data = self.nddata[k][start:start + self.batch_size]
        label = self.ndlabel[k][start:start + self.batch_size]
        if self.major_axis == 1:
            data, label = data.T, label.T
        return DataBatch([data], [label], pad=0, bucket_key=self.buckets[k],
                         provide_data=[DataDesc(self.data_name, data.shape,
                                                layout=self.layout)],
                         provide_label=[DataDesc(self.label_name, label.shape,
                                                 layout=self.layout)])


__all__ = ["encode_sentences", "BucketSentenceIter"]
