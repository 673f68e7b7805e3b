"""gluon.contrib.data.text: WikiText over small token files written here, against the
rules of Gluon's text datasets (vocabulary order, <eos>, seq_len cuts)."""

import collections

import numpy as np
import pytest

from runtime.gluon import contrib
from runtime.gluon.contrib.data import text
from tests.runtime.conftest import free_failing_tests

CORPUS = " = Title = \n\n the cat sat on the mat \n the dog <unk> \n"


def test_vocabulary_orders_by_count_then_token():
    v = text.Vocabulary(collections.Counter({"b": 2, "a": 2, "c": 5, "d": 1}), min_freq=2,
                        reserved_tokens=["<eos>"])
    assert v.idx_to_token == ["<unk>", "<eos>", "c", "a", "b"]
    assert v.to_indices(["a", "zzz", "c"]) == [3, 0, 2] and v.to_indices("b") == 4
    assert v.to_tokens([2, 1]) == ["c", "<eos>"]
    assert len(text.Vocabulary(collections.Counter("aabbbc"), most_freq_count=2)) == 3
    with pytest.raises(ValueError, match="must not hold the unknown token"):
        text.Vocabulary(reserved_tokens=["<unk>"])


def test_wikitext2_samples(tmp_path):
    (tmp_path / "wiki.valid.tokens").write_text(CORPUS, encoding="utf8")
    ds = contrib.data.text.WikiText2(root=str(tmp_path), segment="validation", seq_len=4)
    words = []
    for line in CORPUS.splitlines():
        if line.split():
            words += line.split() + ["<eos>"]
    counts = collections.Counter(t for t in CORPUS.replace("\n", " ").split(" ") if t)
    assert ds.frequencies == counts
    vocab = ds.vocabulary
    assert vocab.idx_to_token[:3] == ["<unk>", "<eos>", "the"]
    ids = np.array(vocab.to_indices(words), np.int32)
    n = (len(ids) - 1) // 4 * 4
    assert len(ds) == n // 4
    x, y = ds[1]
    assert x.dtype == np.int32 and x.shape == (4,)
    np.testing.assert_array_equal(x.asnumpy(), ids[4:8])
    np.testing.assert_array_equal(y.asnumpy(), ids[5:9])
    # a vocabulary passed in indexes another segment
    (tmp_path / "wiki.test.tokens").write_text(" the bird sat \n", encoding="utf8")
    test = text.WikiText2(root=str(tmp_path), segment="test", vocab=vocab, seq_len=2)
    np.testing.assert_array_equal(test[0][0].asnumpy(), [vocab.to_indices("the"), 0])


def test_wikitext_missing_file_names_what_to_put_there(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"wiki.train.tokens'; ndrt does not download "
                                                r"data sets: put wiki.train.tokens there"):
        text.WikiText103(root=str(tmp_path))
    with pytest.raises(ValueError, match=r"segment must be one of .* \(got 'dev'\)"):
        text.WikiText2(root=str(tmp_path), segment="dev")


free_failing_tests(globals())
