"""Metrics of the training jobs, vectorised NumPy."""

import numpy as np


def auc(labels, scores):
    """Area under the ROC curve of ``scores`` for binary ``labels`` (0/1 or bool): the
    probability that a random positive scores above a random negative, ties counting one
    half (the Mann-Whitney U statistic over the rank sum, tied scores given their average
    rank).  O(n log n).  Raises ValueError when the labels are not 0/1, the lengths differ
    or one class is absent."""
    y = np.asarray(labels).ravel()
    s = np.asarray(scores, dtype=np.float64).ravel()
    if y.shape != s.shape:
        raise ValueError(f"auc: labels and scores must have the same length "
                         f"(got {y.size} and {s.size})")
    if not np.isin(y, (0, 1)).all():
        raise ValueError("auc: labels must be 0 or 1 (got values "
                         f"{np.unique(y)[:5].tolist()})")
    if np.isnan(s).any():
        raise ValueError("auc: scores must not be NaN")
    pos = y.astype(bool)
    n_pos = int(pos.sum())
    n_neg = y.size - n_pos
    if n_pos == 0 or n_neg == 0:
        raise ValueError(f"auc: needs both classes (got {n_pos} positives and "
                         f"{n_neg} negatives)")
    order = np.argsort(s, kind="stable")
    ss = s[order]
    # tie groups: [start, end) of each run of equal scores; average 1-based rank
    starts = np.flatnonzero(np.r_[True, ss[1:] != ss[:-1]])
    ends = np.r_[starts[1:], ss.size]
    group_rank = (starts + ends + 1) / 2.0
    ranks = np.empty(ss.size)
    ranks[order] = np.repeat(group_rank, ends - starts)
    u = ranks[pos].sum() - n_pos * (n_pos + 1) / 2.0
    return float(u / (n_pos * n_neg))


def accuracy(labels, predicted):
    """Share of ``predicted`` class labels equal to ``labels``."""
    y = np.asarray(labels).ravel()
    p = np.asarray(predicted).ravel()
    if y.shape != p.shape or y.size == 0:
        raise ValueError(f"accuracy: labels and predictions must have the same non-zero "
                         f"length (got {y.size} and {p.size})")
    return float((y == p).mean())
