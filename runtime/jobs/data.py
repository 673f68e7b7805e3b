"""Data sets of the training jobs, made on the spot and deterministic by seed.

``synthetic_ctr`` is a click-through-rate style set: each row has ``active`` categorical
fields; field ``j`` takes a value with power-law (Zipf) frequencies from its own vocabulary
(vocabularies from 10 to 50,000 values by default), and the pair (field, value) is hashed
into ``features`` columns (the hashing trick: different pairs may share a column, as in
production CTR models).  A hidden logistic model (one weight per pair, smaller for rarer
values, and a bias) gives each row its click probability, and the label is drawn from it.
Everything is vectorised NumPy; the default (200,000 rows, 1,000,000 features, 20 fields)
takes about a second.

``digits`` is scikit-learn's bundled 8x8 digits when scikit-learn imports, else a seeded
synthetic set of the same shape (64 features in [0, 16], 10 classes).
"""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

# Knuth's multiplicative constant (odd, 64-bit): the hash of a (field, value) pair.
_HASH_MUL = np.uint64(0x9E3779B97F4A7C15)


@dataclass(frozen=True)
class CTRData:
    """A synthetic click-through set: float32 CSR inputs, float32 0/1 labels, and the
    hidden model's logit of every row (the labels were drawn from their sigmoid)."""

    X_train: sp.csr_matrix
    y_train: np.ndarray
    X_test: sp.csr_matrix
    y_test: np.ndarray
    hidden_train: np.ndarray
    hidden_test: np.ndarray


def _positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer (got {name}={value!r})")
    return int(value)


def zipf_ranks(u, vocab, exponent):
    """Ranks 0..vocab-1 with P(rank r) proportional to (r + 1) ** -exponent (a Zipf law
    truncated to the vocabulary), by inverse CDF of the uniform draws ``u``."""
    cdf = np.cumsum(np.arange(1, vocab + 1, dtype=np.float64) ** -exponent)
    cdf /= cdf[-1]
    return np.minimum(np.searchsorted(cdf, u, side="right"), vocab - 1)


def synthetic_ctr(rows=200_000, features=1_000_000, active=20, seed=0, test_fraction=0.2,
                  exponent=1.1, vocab=None, decay=0.7, weight_scale=1.5, click_rate=0.25):
    """A deterministic CTR set (see the module docstring) as a ``CTRData``.

    rows: train + test rows; the last ``round(rows * test_fraction)`` (at least one) are
    the test set.  features: columns of the hashed space.  active: fields per row (a row
    has ``active`` stored values, fewer where two of its pairs hash to one column; values
    are 1.0, duplicates summed).  exponent: of the Zipf law of each field's values.
    vocab: values of the largest field (default ``features // active``; the fields' sizes
    are log-spaced from 10 to it).  decay: the hidden weight of a value of rank r is
    N(0, 1) * (r + 1) ** -decay before scaling.  weight_scale: standard deviation of the
    hidden model's margin over the rows.  click_rate: the bias is set so that a row with a
    zero margin clicks with this probability.  seed: everything is drawn from
    ``numpy.random.default_rng(seed)``, so equal arguments give equal sets.
    """
    rows = _positive_int("rows", rows)
    features = _positive_int("features", features)
    active = _positive_int("active", active)
    if rows < 2:
        raise ValueError(f"rows must be at least 2 (one train and one test row) (got rows={rows})")
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must lie in (0, 1) (got test_fraction={test_fraction!r})")
    if not decay >= 0:
        raise ValueError(f"decay must be non-negative (got decay={decay!r})")
    if not weight_scale > 0:
        raise ValueError(f"weight_scale must be positive (got weight_scale={weight_scale!r})")
    if not exponent > 0:
        raise ValueError(f"exponent must be positive (got exponent={exponent!r})")
    vocab = _positive_int("vocab", vocab if vocab is not None else max(1, features // active))
    if not 0.0 < click_rate < 1.0:
        raise ValueError(f"click_rate must lie in (0, 1) (got click_rate={click_rate!r})")
    rng = np.random.default_rng(seed)

    # Field j has sizes[j] values, log-spaced from 10 to `vocab` (small fields such as a
    # device type beside huge ones such as an ad id); each row draws one value per field
    # with Zipf frequencies (rank 0 the most frequent).
    sizes = np.resize(np.unique(np.geomspace(min(10, vocab), vocab, active).astype(np.int64)),
                      active)
    u = rng.random((rows, active))
    ranks = np.empty((rows, active), np.int64)
    for j, n in enumerate(sizes):
        ranks[:, j] = zipf_ranks(u[:, j], int(n), exponent)

    # The hidden model: a weight per (field, value), N(0, 1) scaled by (rank + 1) ** -decay
    # (a rare value moves the click rate less than a popular one), then scaled so that a
    # row's margin has standard deviation weight_scale; the bias gives click_rate.
    offsets = np.r_[0, np.cumsum(sizes)]
    pair = ranks + offsets[:-1]                        # (field, value) -> 0 .. sum(sizes)-1
    rank_of_pair = np.arange(offsets[-1]) - np.repeat(offsets[:-1], sizes)
    w_pair = rng.standard_normal(offsets[-1]) * (rank_of_pair + 1.0) ** -decay
    margin = w_pair[pair].sum(axis=1)
    w_pair *= weight_scale / margin.std()
    margin *= weight_scale / margin.std()
    b = float(np.log(click_rate / (1.0 - click_rate)))
    margin += b
    y = (rng.random(rows) < 1.0 / (1.0 + np.exp(-margin))).astype(np.float32)

    # The inputs: each (field, value) pair hashed into `features` columns (the hashing
    # trick: pairs may share a column), value 1.0, duplicates within a row summed.
    with np.errstate(over="ignore"):                    # the hash wraps modulo 2**64
        h = (pair.ravel().astype(np.uint64) + np.uint64(1)) * _HASH_MUL
    cols = ((h >> np.uint64(17)) % np.uint64(features)).astype(np.int64)
    indptr = np.arange(0, rows * active + 1, active, dtype=np.int64)
    X = sp.csr_matrix((np.ones(rows * active, np.float32), cols, indptr),
                      shape=(rows, features))
    X.sum_duplicates()                                  # sorts each row's columns too

    n_test = max(1, int(round(rows * test_fraction)))
    n_train = rows - n_test
    if n_train < 1:
        raise ValueError(f"test_fraction leaves no training rows (got rows={rows}, "
                         f"test_fraction={test_fraction!r})")
    return CTRData(X[:n_train], y[:n_train], X[n_train:], y[n_train:],
                   margin[:n_train].astype(np.float32), margin[n_train:].astype(np.float32))


def digits(seed=0, test_fraction=0.25):
    """(X_train, y_train, X_test, y_test, source): 8x8 digits as float32 rows of 64 values
    scaled to [0, 1] and int64 labels 0-9, split after a seeded shuffle.  ``source`` is
    'scikit-learn digits' or 'synthetic digits' (scikit-learn missing): ten seeded class
    templates of 64 values in [0, 16] with noise, 1797 rows as the real set has."""
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        load_digits = None
    rng = np.random.default_rng(seed)
    if load_digits is not None:
        d = load_digits()
        X, y, source = d.data.astype(np.float32), d.target.astype(np.int64), "scikit-learn digits"
    else:
        gen = np.random.default_rng(12345)        # the templates do not depend on the seed
        templates = gen.random((10, 64)) * 16.0
        y = np.arange(1797, dtype=np.int64) % 10
        X = templates[y] + gen.standard_normal((1797, 64)) * 8.0
        X = np.clip(X, 0.0, 16.0).astype(np.float32)
        source = "synthetic digits"
    X = X / np.float32(16.0)
    order = rng.permutation(len(y))
    X, y = X[order], y[order]
    n_test = int(round(len(y) * test_fraction))
    return X[n_test:], y[n_test:], X[:n_test], y[:n_test], source
