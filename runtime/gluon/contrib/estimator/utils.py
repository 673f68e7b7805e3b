"""Argument checks shared by the estimator and its event handlers."""

import warnings

import numpy as np

from runtime.gluon.loss import SoftmaxCrossEntropyLoss
from runtime.metric import Accuracy, CompositeEvalMetric, EvalMetric


class _KindError(TypeError, ValueError):
    """An argument of the wrong kind.  A TypeError, what it is, and a ValueError, what
    MXNet 1.9.1's estimator raises for it (programs and MXNet's tests catch that)."""


def _check_metrics(metrics, what="metrics"):
    """``metrics`` (None, an EvalMetric, or a list of them) as a list; a
    CompositeEvalMetric given alone stands for its members, as in MXNet."""
    if isinstance(metrics, CompositeEvalMetric):
        return [m for member in metrics.metrics for m in _check_metrics(member, what)]
    if isinstance(metrics, EvalMetric):
        return [metrics]
    if metrics is None:
        return []
    if not isinstance(metrics, (list, tuple)) or not all(
            isinstance(m, EvalMetric) for m in metrics):
        raise _KindError(f"{what} must be an EvalMetric or a list of EvalMetrics (got "
                         f"{metrics!r})")
    return list(metrics)


def _metric_refs(handler):
    """The metrics that ``handler`` holds in its attributes whose names say ``metric``
    or ``monitor`` (MXNet's rule for what a handler refers to)."""
    for name, value in getattr(handler, "__dict__", {}).items():
        if "metric" not in name and "monitor" not in name:
            continue
        values = value if isinstance(value, (list, tuple)) else [value]
        for v in values:
            if isinstance(v, EvalMetric):
                yield v


def _check_handler_metric_ref(handler, known_metrics):
    """Refuse a handler that refers to a metric the estimator does not update."""
    known = {id(m) for m in known_metrics}
    for metric in _metric_refs(handler):
        if id(metric) not in known:
            raise ValueError(
                f"{type(handler).__name__}: its metrics must be objects of the estimator's "
                f"train_metrics or val_metrics, which the estimator updates (got "
                f"{metric.name!r}, a metric outside them)")


def _suggest_metric_for_loss(loss):
    """The metric the estimator adds by default for ``loss`` (Accuracy for softmax
    cross-entropy, as MXNet), or None."""
    if isinstance(loss, SoftmaxCrossEntropyLoss):
        return Accuracy()
    return None


def _monitor_op(monitor, mode, who):
    """``(compare, best_start)`` for a handler that watches ``monitor``: ``mode`` 'min'
    improves downward, 'max' upward, 'auto' upward for a name holding 'acc' or 'f1' and
    downward otherwise (MXNet 1.9.1 means this but its test is always true, so it
    always goes upward; see docs/differences.md)."""
    name = monitor.get()[0]
    if mode not in ("auto", "min", "max"):
        warnings.warn(f"{who}: mode must be 'auto', 'min' or 'max' (got {mode!r}); "
                      f"using 'auto'", RuntimeWarning)
        mode = "auto"
    if mode == "auto":
        lowered = str(name).lower()
        mode = "max" if ("acc" in lowered or "f1" in lowered) else "min"
        warnings.warn(f"{who}: mode 'auto' takes {mode!r} for {name!r}: a "
                      f"{'greater' if mode == 'max' else 'smaller'} value is an improvement. "
                      f"Give mode='min' or mode='max' to choose and silence this warning.")
    if mode == "max":
        return np.greater, -np.inf
    return np.less, np.inf
