"""Word-level language-model datasets (Gluon's ``gluon.contrib.data.text``): WikiText-2
and WikiText-103 read from their local token files.  ndrt downloads nothing: a missing
file raises FileNotFoundError naming the path and the file to put there.

A dataset reads one segment's ``wiki.<train|valid|test>.tokens``, counts its tokens
(split on spaces and newlines), builds a :class:`Vocabulary` from the counts (unless one
is given) with ``<eos>`` reserved, appends ``<eos>`` to every non-empty line, and cuts
the token indices into samples of ``seq_len``: sample ``i`` is ``(data[i], label[i])``,
two int32 NDArrays, the label being the data shifted by one token (the tail that does
not fill a sample is dropped), as Gluon's.
"""

import collections
import os
import re

import numpy as np

from runtime import nd
from runtime.gluon.data.dataset import Dataset

__all__ = ["WikiText2", "WikiText103", "Vocabulary"]

EOS_TOKEN = "<eos>"
_SEGMENTS = {"train": "wiki.train.tokens", "validation": "wiki.valid.tokens",
             "test": "wiki.test.tokens"}


def count_tokens_from_str(source_str, token_delim=" ", seq_delim="\n", to_lower=False):
    """A Counter of the tokens of ``source_str`` split on ``token_delim`` and
    ``seq_delim`` (empty tokens dropped), MXNet's ``text.utils.count_tokens_from_str``."""
    tokens = [t for t in re.split(re.escape(token_delim) + "|" + re.escape(seq_delim),
                                  source_str) if t]
    if to_lower:
        tokens = [t.lower() for t in tokens]
    return collections.Counter(tokens)


class Vocabulary:
    """Tokens and their indices (MXNet's ``contrib.text.vocab.Vocabulary``): index 0 is
    ``unknown_token``, then the ``reserved_tokens``, then the counted tokens by
    decreasing count (ties in alphabetical order), those counted fewer than ``min_freq``
    times left out, at most ``most_freq_count`` of them."""

    def __init__(self, counter=None, most_freq_count=None, min_freq=1, unknown_token="<unk>",
                 reserved_tokens=None):
        if min_freq < 1:
            raise ValueError(f"Vocabulary: min_freq must be >= 1 (got {min_freq!r})")
        reserved = list(reserved_tokens or [])
        if unknown_token in reserved or len(set(reserved)) != len(reserved):
            raise ValueError(f"Vocabulary: reserved_tokens must be distinct and must not hold "
                             f"the unknown token (got {reserved!r})")
        self.unknown_token = unknown_token
        self.reserved_tokens = reserved or None
        self.idx_to_token = [unknown_token] + reserved
        self.token_to_idx = {t: i for i, t in enumerate(self.idx_to_token)}
        if counter:
            freqs = sorted(counter.items(), key=lambda kv: kv[0])
            freqs.sort(key=lambda kv: kv[1], reverse=True)
            limit = len(self.idx_to_token) + (most_freq_count if most_freq_count is not None
                                              else len(freqs))
            for token, freq in freqs:
                if freq < min_freq or len(self.idx_to_token) == limit:
                    break
                if token not in self.token_to_idx:
                    self.token_to_idx[token] = len(self.idx_to_token)
                    self.idx_to_token.append(token)

    def __len__(self):
        return len(self.idx_to_token)

    def to_indices(self, tokens):
        """The index of a token, or the list of indices of a list of tokens (unknown
        tokens map to 0)."""
        if isinstance(tokens, str):
            return self.token_to_idx.get(tokens, 0)
        return [self.token_to_idx.get(t, 0) for t in tokens]

    def to_tokens(self, indices):
        """The token of an index, or the tokens of a list of indices."""
        single = isinstance(indices, (int, np.integer))
        out = []
        for i in [indices] if single else indices:
            if not 0 <= i < len(self.idx_to_token):
                raise ValueError(f"Vocabulary: token index must be in [0, "
                                 f"{len(self.idx_to_token)}) (got {i})")
            out.append(self.idx_to_token[i])
        return out[0] if single else out


class _WikiText(Dataset):
    _name = None

    def __init__(self, root, segment, vocab, seq_len):
        if segment not in _SEGMENTS:
            raise ValueError(f"{type(self).__name__}: segment must be one of "
                             f"{sorted(_SEGMENTS)} (got {segment!r})")
        if isinstance(seq_len, bool) or not isinstance(seq_len, (int, np.integer)) \
                or seq_len < 1:
            raise ValueError(f"{type(self).__name__}: seq_len must be a positive integer "
                             f"(got {seq_len!r})")
        self._root = os.path.expanduser(os.fspath(root))
        self._segment = segment
        self._seq_len = int(seq_len)
        self._vocab = vocab
        self._counter = None
        path = os.path.join(self._root, _SEGMENTS[segment])
        if not os.path.isfile(path):
            raise FileNotFoundError(
                f"{type(self).__name__}: no file at {path!r}; ndrt does not download data "
                f"sets: put {_SEGMENTS[segment]} there (from the {self._name} archive, "
                "wikitext-*-v1.zip)")
        data, label = self._read(path)
        n = len(data) // self._seq_len * self._seq_len
        self._data = nd.array(data[:n].reshape(-1, self._seq_len), dtype=np.int32)
        self._label = nd.array(label[:n].reshape(-1, self._seq_len), dtype=np.int32)

    @property
    def vocabulary(self):
        """The :class:`Vocabulary` that indexes the tokens."""
        return self._vocab

    @property
    def frequencies(self):
        """The Counter of the segment's tokens."""
        return self._counter

    def _read(self, path):
        with open(path, encoding="utf8") as f:
            content = f.read()
        self._counter = count_tokens_from_str(content)
        if self._vocab is None:
            self._vocab = Vocabulary(counter=self._counter, reserved_tokens=[EOS_TOKEN])
        tokens = []
        for line in content.splitlines():
            words = line.split()
            if words:
                tokens.extend(words)
                tokens.append(EOS_TOKEN)
        ids = np.asarray(self._vocab.to_indices(tokens), dtype=np.int32)
        return ids[:-1], ids[1:]

    def __getitem__(self, idx):
        return self._data[idx], self._label[idx]

    def __len__(self):
        return self._data.shape[0]


class WikiText2(_WikiText):
    """WikiText-2 (Merity et al.), word level.

    Parameters
    ----------
    root : str
        Folder holding ``wiki.train.tokens``, ``wiki.valid.tokens``, ``wiki.test.tokens``
        (the files of ``wikitext-2-v1.zip``).
    segment : {'train', 'validation', 'test'}
    vocab : Vocabulary, optional
        Index the tokens with this vocabulary (e.g. the training segment's) instead of
        one built from this segment.
    seq_len : int
    """
    _name = "WikiText-2"

    def __init__(self, root=os.path.join("~", ".mxnet", "datasets", "wikitext-2"),
                 segment="train", vocab=None, seq_len=35):
        super().__init__(root, segment, vocab, seq_len)


class WikiText103(_WikiText):
    """WikiText-103 (Merity et al.), word level: as :class:`WikiText2`, under its own
    ``root`` (the files of ``wikitext-103-v1.zip``)."""
    _name = "WikiText-103"

    def __init__(self, root=os.path.join("~", ".mxnet", "datasets", "wikitext-103"),
                 segment="train", vocab=None, seq_len=35):
        super().__init__(root, segment, vocab, seq_len)
