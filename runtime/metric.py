"""Evaluation metrics (MXNet 1.x's ``mx.metric``).

A metric accumulates ``update(labels, preds)`` calls (each an NDArray or a list of them,
paired in order) and reports ``get()`` -> ``(name, value)``.  Every metric keeps two
tallies, as MXNet's: the local one that :meth:`EvalMetric.reset_local` clears (per
epoch or per logging interval) and the global one that only :meth:`EvalMetric.reset`
clears, read by :meth:`EvalMetric.get_global`.  Values are computed on the host in
float64 from ``asnumpy()`` copies, as MXNet does.

``create(name_or_callable_or_list, *args, **kwargs)`` makes a metric from its registered
name (the class name lowercased, or an alias such as ``'acc'``, ``'ce'``,
``'top_k_accuracy'``), a function ``feval(label, pred)`` (a :class:`CustomMetric`) or a
list (a :class:`CompositeEvalMetric`); :func:`register` adds a class to the names.
"""

import json
import math
from collections import OrderedDict

import numpy

from runtime import nd

_REGISTRY = {}


def register(klass, *aliases):
    """Register the :class:`EvalMetric` subclass ``klass`` under its lowercased class
    name and ``aliases`` for :func:`create`; returns ``klass`` (usable as a decorator)."""
    if not (isinstance(klass, type) and issubclass(klass, EvalMetric)):
        raise TypeError(f"metric.register: klass must be an EvalMetric subclass (got "
                        f"{klass!r})")
    for name in (klass.__name__,) + aliases:
        _REGISTRY[name.lower()] = klass
    return klass


def alias(*aliases):
    """Decorator registering a metric class under extra names (MXNet's ``alias``)."""
    def wrap(klass):
        return register(klass, *aliases)
    return wrap


def _as_list(x):
    return [x] if isinstance(x, (nd.NDArray, numpy.ndarray)) else list(x)


def _host(x):
    return x.asnumpy() if isinstance(x, nd.NDArray) else numpy.asarray(x)


def check_label_shapes(labels, preds, wrap=False, shape=False):
    """Raise ValueError unless ``labels`` and ``preds`` have as many entries (or, with
    ``shape``, the same shape); with ``wrap``, a single NDArray becomes a list of one.
    Returns ``(labels, preds)``."""
    if wrap:
        labels, preds = _as_list(labels), _as_list(preds)
    a, b = (labels.shape, preds.shape) if shape else (len(labels), len(preds))
    if a != b:
        raise ValueError(f"Shape of labels {a} does not match shape of predictions {b}")
    return labels, preds


class EvalMetric:
    """Base of the metrics: ``name``, the local and global tallies ``sum_metric`` /
    ``num_inst`` and ``global_sum_metric`` / ``global_num_inst`` whose ratio ``get``
    reports (NaN before any instance).  ``output_names``/``label_names`` select the
    entries of the dicts given to :meth:`update_dict`."""

    def __init__(self, name, output_names=None, label_names=None, **kwargs):
        self.name = str(name)
        self.output_names = output_names
        self.label_names = label_names
        self._kwargs = kwargs
        self.reset()

    def __str__(self):
        return f"EvalMetric: {dict(self.get_name_value())}"

    def get_config(self):
        """The arguments that :func:`create` takes to make this metric again."""
        config = dict(self._kwargs)
        config.update(metric=type(self).__name__, name=self.name,
                      output_names=self.output_names, label_names=self.label_names)
        return config

    def update_dict(self, label, pred):
        """:meth:`update` with the values of dicts ``{name: NDArray}`` (those named by
        ``label_names``/``output_names`` when given, else all in order)."""
        pred = [pred[n] for n in self.output_names] if self.output_names is not None \
            else list(pred.values())
        label = [label[n] for n in self.label_names] if self.label_names is not None \
            else list(label.values())
        self.update(label, pred)

    def update(self, labels, preds):
        raise NotImplementedError(f"{type(self).__name__}: define update()")

    def _add(self, value, count):
        self.sum_metric += value
        self.global_sum_metric += value
        self.num_inst += count
        self.global_num_inst += count

    def reset(self):
        """Clear the local and the global tallies."""
        self.num_inst = 0
        self.sum_metric = 0.0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0

    def reset_local(self):
        """Clear the local tally only."""
        self.num_inst = 0
        self.sum_metric = 0.0

    def get(self):
        """``(name, value)`` of the local tally."""
        if self.num_inst == 0:
            return self.name, float("nan")
        return self.name, self.sum_metric / self.num_inst

    def get_global(self):
        """``(name, value)`` of the global tally (everything since :meth:`reset`).  A
        metric whose ``update`` adds to the local tally only (``self.sum_metric += ...``,
        as the metrics of MXNet's examples do) keeps no global one: it reports its local
        tally, as MXNet's does for a metric without ``has_global_stats``."""
        if self.global_num_inst == 0:
            if self.num_inst:
                return self.get()
            return self.name, float("nan")
        return self.name, self.global_sum_metric / self.global_num_inst

    def get_name_value(self):
        """``[(name, value), ...]`` of the local tally."""
        return _pairs(*self.get())

    def get_global_name_value(self):
        """``[(name, value), ...]`` of the global tally."""
        return _pairs(*self.get_global())


def _pairs(name, value):
    names = name if isinstance(name, list) else [name]
    values = value if isinstance(value, list) else [value]
    return list(zip(names, values))


def create(metric, *args, **kwargs):
    """A metric from a registered name (case-insensitive; a JSON string or a dict of
    :meth:`EvalMetric.get_config` also works), an :class:`EvalMetric` (returned as is),
    a callable ``feval(label, pred)`` (a :class:`CustomMetric`) or a list of any of
    these (a :class:`CompositeEvalMetric`)."""
    if isinstance(metric, EvalMetric):
        if args or kwargs:
            raise ValueError(f"metric.create: {metric!r} is already a metric; extra "
                             f"arguments are invalid (got {args!r}, {kwargs!r})")
        return metric
    if callable(metric) and not isinstance(metric, type):
        return CustomMetric(metric, *args, **kwargs)
    if isinstance(metric, list):
        composite = CompositeEvalMetric()
        for child in metric:
            composite.add(create(child, *args, **kwargs))
        return composite
    if isinstance(metric, dict):
        config = dict(metric, **kwargs)
        return create(config.pop("metric"), *args, **config)
    if not isinstance(metric, str):
        raise TypeError(f"metric.create: metric must be a name, a callable, a list or an "
                        f"EvalMetric (got {metric!r})")
    if metric.startswith("["):
        name, config = json.loads(metric)
        return create(name, **config)
    if metric.startswith("{"):
        return create(json.loads(metric))
    klass = _REGISTRY.get(metric.lower())
    if klass is None:
        raise ValueError(f"metric.create: metric must be one of {sorted(_REGISTRY)} (got "
                         f"{metric!r})")
    return klass(*args, **kwargs)


@alias("composite")
class CompositeEvalMetric(EvalMetric):
    """Several metrics updated together; ``get`` returns ``([names], [values])``."""

    def __init__(self, metrics=None, name="composite", output_names=None, label_names=None):
        self.metrics = [create(m) for m in (metrics or [])]
        super().__init__(name, output_names=output_names, label_names=label_names)

    def add(self, metric):
        """Add a metric (anything :func:`create` takes)."""
        self.metrics.append(create(metric))

    def get_metric(self, index):
        """The child metric at ``index``."""
        if not -len(self.metrics) <= index < len(self.metrics):
            raise IndexError(f"CompositeEvalMetric: index must be in [0, "
                             f"{len(self.metrics)}) (got {index})")
        return self.metrics[index]

    def update_dict(self, labels, preds):
        if self.label_names is not None:
            labels = OrderedDict(i for i in labels.items() if i[0] in self.label_names)
        if self.output_names is not None:
            preds = OrderedDict(i for i in preds.items() if i[0] in self.output_names)
        for metric in self.metrics:
            metric.update_dict(labels, preds)

    def update(self, labels, preds):
        for metric in self.metrics:
            metric.update(labels, preds)

    def reset(self):
        for metric in getattr(self, "metrics", ()):
            metric.reset()

    def reset_local(self):
        for metric in self.metrics:
            metric.reset_local()

    def _collect(self, method):
        names, values = [], []
        for metric in self.metrics:
            name, value = getattr(metric, method)()
            names.extend(name if isinstance(name, list) else [name])
            values.extend(value if isinstance(value, list) else [value])
        return names, values

    def get(self):
        return self._collect("get")

    def get_global(self):
        return self._collect("get_global")

    def get_config(self):
        config = super().get_config()
        config["metrics"] = [m.get_config() for m in self.metrics]
        return config


@alias("acc")
class Accuracy(EvalMetric):
    """The fraction of predictions equal to the label.  A prediction of another shape
    than its label holds scores: its argmax along ``axis`` is the predicted class;
    otherwise it holds classes (cast to int32, as the label)."""

    def __init__(self, axis=1, name="accuracy", output_names=None, label_names=None):
        super().__init__(name, axis=axis, output_names=output_names,
                         label_names=label_names)
        self.axis = axis

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            pred = _host(pred)
            if pred.shape != tuple(label.shape):
                pred = pred.argmax(axis=self.axis)
            pred = pred.astype("int32").ravel()
            label = _host(label).astype("int32").ravel()
            check_label_shapes(label, pred)
            self._add(int((pred == label).sum()), len(pred))


@alias("top_k_accuracy", "top_k_acc")
class TopKAccuracy(EvalMetric):
    """The fraction of samples whose label is among the ``top_k`` highest scores of
    the (batch, classes) prediction; the name gets ``_<top_k>``."""

    def __init__(self, top_k=1, name="top_k_accuracy", output_names=None, label_names=None):
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k <= 1:
            raise ValueError(f"TopKAccuracy: top_k must be an int > 1 (use Accuracy for 1) "
                             f"(got {top_k!r})")
        super().__init__(name, top_k=top_k, output_names=output_names,
                         label_names=label_names)
        self.top_k = top_k
        self.name += f"_{top_k}"

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            pred = _host(pred).astype("float32")
            if pred.ndim != 2:
                raise ValueError(f"TopKAccuracy: predictions must have shape (batch, "
                                 f"classes) (got shape {pred.shape!r})")
            label = _host(label).astype("int32").ravel()
            check_label_shapes(label, pred)
            k = min(pred.shape[1], self.top_k)
            top = numpy.argpartition(pred, -k, axis=1)[:, -k:]
            self._add(int((top == label[:, None]).any(axis=1).sum()), pred.shape[0])


class _BinaryCounts:
    """The confusion counts of a binary classifier, local and global."""

    def __init__(self):
        self.local = numpy.zeros(4, numpy.int64)        # tp, fp, fn, tn
        self.total = numpy.zeros(4, numpy.int64)

    def update(self, who, label, pred):
        pred, label = _host(pred), _host(label).astype("int32")
        check_label_shapes(label, pred)
        if len(numpy.unique(label)) > 2:
            raise ValueError(f"{who} currently only supports binary classification (got "
                             f"labels {numpy.unique(label).tolist()!r})")
        p = pred.argmax(axis=1) == 1
        t = label.ravel() == 1
        counts = numpy.array([(p & t).sum(), (p & ~t).sum(), (~p & t).sum(),
                              (~p & ~t).sum()])
        self.local += counts
        self.total += counts

    @staticmethod
    def fscore(c):
        tp, fp, fn, _ = (float(v) for v in c)
        precision = tp / (tp + fp) if tp + fp > 0 else 0.0
        recall = tp / (tp + fn) if tp + fn > 0 else 0.0
        if precision + recall == 0:
            return 0.0
        return 2 * precision * recall / (precision + recall)

    @staticmethod
    def mcc(c):
        if not c.sum():
            return 0.0
        tp, fp, fn, tn = (float(v) for v in c)
        denom = 1.0
        for term in (tp + fp, tp + fn, tn + fp, tn + fn):
            if term != 0:            # MXNet: a zero marginal leaves the product alone
                denom *= term
        return (tp * tn - fp * fn) / math.sqrt(denom)


class _Binary(EvalMetric):
    """F1 and MCC: ``average='macro'`` averages the score of each update, ``'micro'``
    scores the counts of all updates together."""

    _score = None

    def __init__(self, name, output_names, label_names, average):
        if average not in ("macro", "micro"):
            raise ValueError(f"{type(self).__name__}: average must be 'macro' or 'micro' "
                             f"(got {average!r})")
        self.average = average
        self._counts = _BinaryCounts()
        super().__init__(name, output_names=output_names, label_names=label_names,
                         average=average)

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            self._counts.update(type(self).__name__, label, pred)
        c = self._counts
        score = type(self)._score
        if self.average == "macro":
            self._add(score(c.local), 1)
            c.local[:] = 0
            c.total[:] = 0
        else:
            self.sum_metric = score(c.local) * int(c.local.sum())
            self.num_inst = int(c.local.sum())
            self.global_sum_metric = score(c.total) * int(c.total.sum())
            self.global_num_inst = int(c.total.sum())

    def reset(self):
        super().reset()
        self._counts = _BinaryCounts()

    def reset_local(self):
        super().reset_local()
        self._counts.local[:] = 0


class F1(_Binary):
    """The F1 score of a binary classifier (class 1 positive; the prediction's
    argmax along axis 1 is the predicted class)."""

    _score = staticmethod(_BinaryCounts.fscore)

    def __init__(self, name="f1", output_names=None, label_names=None, average="macro"):
        super().__init__(name, output_names, label_names, average)


class MCC(_Binary):
    """The Matthews correlation coefficient of a binary classifier."""

    _score = staticmethod(_BinaryCounts.mcc)

    def __init__(self, name="mcc", output_names=None, label_names=None, average="macro"):
        super().__init__(name, output_names, label_names, average)


class Perplexity(EvalMetric):
    """``exp`` of the mean negative log of the probability given to the label
    (``pred`` holds probabilities along ``axis``); labels equal to ``ignore_label``
    count neither in the sum nor in the number of instances."""

    def __init__(self, ignore_label, axis=-1, name="perplexity", output_names=None,
                 label_names=None):
        super().__init__(name, ignore_label=ignore_label, output_names=output_names,
                         label_names=label_names)
        self.ignore_label = ignore_label
        self.axis = axis

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        loss, num = 0.0, 0
        for label, pred in zip(labels, preds):
            pred = _host(pred).astype(numpy.float64)
            label = _host(label)
            if label.size * pred.shape[self.axis] != pred.size:
                raise ValueError(f"Perplexity: label of shape {label.shape!r} does not fit "
                                 f"pred of shape {pred.shape!r}")
            moved = numpy.moveaxis(pred, self.axis, -1).reshape(-1, pred.shape[self.axis])
            label = label.reshape(-1).astype(numpy.int64)
            prob = moved[numpy.arange(label.size), numpy.clip(label, 0, moved.shape[1] - 1)]
            if self.ignore_label is not None:
                keep = label != self.ignore_label
                prob = numpy.where(keep, prob, 1.0)
                num -= int((~keep).sum())
            loss -= numpy.log(numpy.maximum(1e-10, prob)).sum()
            num += prob.size
        self._add(loss, num)

    def get(self):
        name, value = super().get()
        return name, math.exp(value) if self.num_inst else value

    def get_global(self):
        name, value = super().get_global()
        return name, math.exp(value) if self.global_num_inst else value


def _regression_pairs(labels, preds):
    labels, preds = check_label_shapes(labels, preds, True)
    for label, pred in zip(labels, preds):
        label, pred = _host(label), _host(pred)
        label = label.reshape(label.shape[0], 1) if label.ndim == 1 else label
        pred = pred.reshape(pred.shape[0], 1) if pred.ndim == 1 else pred
        yield label, pred


class MAE(EvalMetric):
    """The mean absolute error, averaged per update (each batch counts once)."""

    def __init__(self, name="mae", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)

    def update(self, labels, preds):
        for label, pred in _regression_pairs(labels, preds):
            self._add(float(numpy.abs(label - pred).mean()), 1)


class MSE(EvalMetric):
    """The mean squared error, averaged per update."""

    def __init__(self, name="mse", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)

    def update(self, labels, preds):
        for label, pred in _regression_pairs(labels, preds):
            self._add(float(((label - pred) ** 2.0).mean()), 1)


class RMSE(EvalMetric):
    """The root mean squared error of each update, averaged over updates."""

    def __init__(self, name="rmse", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)

    def update(self, labels, preds):
        for label, pred in _regression_pairs(labels, preds):
            self._add(float(numpy.sqrt(((label - pred) ** 2.0).mean())), 1)


@alias("ce")
class CrossEntropy(EvalMetric):
    """The mean of ``-log(p[label] + eps)`` over samples (``pred``: probabilities)."""

    def __init__(self, eps=1e-12, name="cross-entropy", output_names=None, label_names=None):
        super().__init__(name, eps=eps, output_names=output_names, label_names=label_names)
        self.eps = eps

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label, pred = _host(label).ravel(), _host(pred)
            if label.shape[0] != pred.shape[0]:
                raise ValueError(f"{type(self).__name__}: label must have one entry per row "
                                 f"of pred (got {label.shape[0]} labels, pred of shape "
                                 f"{pred.shape!r})")
            prob = pred[numpy.arange(label.shape[0]), label.astype(numpy.int64)]
            self._add(float((-numpy.log(prob + self.eps)).sum()), label.shape[0])


@alias("nll_loss")
class NegativeLogLikelihood(CrossEntropy):
    """The mean negative log-likelihood ``-log(p[label] + eps)`` over samples (the same
    computation as :class:`CrossEntropy`, under MXNet's other name)."""

    def __init__(self, eps=1e-12, name="nll-loss", output_names=None, label_names=None):
        super().__init__(eps, name, output_names, label_names)


@alias("pearsonr")
class PearsonCorrelation(EvalMetric):
    """Pearson's correlation of predictions and labels: ``average='macro'`` averages
    the coefficient of each update, ``'micro'`` computes one over all values seen
    (running means and sums of squares, as MXNet's)."""

    def __init__(self, name="pearsonr", output_names=None, label_names=None,
                 average="macro"):
        if average not in ("macro", "micro"):
            raise ValueError(f"PearsonCorrelation: average must be 'macro' or 'micro' "
                             f"(got {average!r})")
        self.average = average
        super().__init__(name, output_names=output_names, label_names=label_names,
                         average=average)

    def reset(self):
        super().reset()
        self._n = 0
        self._mean_l = self._mean_p = 0.0
        self._m2_l = self._m2_p = self._cov = 0.0

    @staticmethod
    def _welford(values, n, mean, m2):
        n += len(values)
        delta = values - mean
        mean += numpy.sum(delta / n)
        m2 += numpy.sum(delta * (values - mean))
        return n, mean, m2

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            check_label_shapes(label, pred, shape=True)
            label = _host(label).ravel().astype(numpy.float64)
            pred = _host(pred).ravel().astype(numpy.float64)
            if self.average == "macro":
                self._add(float(numpy.corrcoef(pred, label)[0, 1]), 1)
                continue
            self._add(0.0, 1)
            n, self._mean_l, self._m2_l = self._welford(label, self._n, self._mean_l,
                                                        self._m2_l)
            # MXNet's order: the covariance term uses the new label mean, the old pred mean
            self._cov += numpy.sum((label - self._mean_l) * (pred - self._mean_p))
            _, self._mean_p, self._m2_p = self._welford(pred, self._n, self._mean_p,
                                                        self._m2_p)
            self._n = n

    def get(self):
        if self.num_inst == 0 or self.average == "macro":
            return super().get()
        n = self._n
        return self.name, float(self._cov / ((n - 1) * numpy.sqrt(self._m2_p / (n - 1)) *
                                             numpy.sqrt(self._m2_l / (n - 1))))

    def get_global(self):
        return self.get() if self.average == "micro" else super().get_global()


class PCC(EvalMetric):
    """The multiclass Matthews correlation (Pearson's correlation of the one-hot
    predictions and labels) from a confusion matrix that grows with the classes seen;
    the prediction's argmax along axis 1 when it holds scores."""

    def __init__(self, name="pcc", output_names=None, label_names=None,
                 has_global_stats=True):
        self.k = 2
        super().__init__(name, output_names=output_names, label_names=label_names)

    def _grow(self, inc):
        self.lcm = numpy.pad(self.lcm, ((0, inc), (0, inc)))
        self.gcm = numpy.pad(self.gcm, ((0, inc), (0, inc)))
        self.k += inc

    @staticmethod
    def _calc(cmat):
        n = cmat.sum()
        x, y = cmat.sum(axis=1), cmat.sum(axis=0)
        cov_xx, cov_yy = numpy.sum(x * (n - x)), numpy.sum(y * (n - y))
        if cov_xx == 0 or cov_yy == 0:
            return float("nan")
        cov_xy = numpy.sum(cmat.diagonal() * n - x * y)
        return float(cov_xy / (cov_xx * cov_yy) ** 0.5)

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label = _host(label).astype("int32")
            pred = _host(pred)
            pred = pred.argmax(axis=1) if pred.shape != label.shape else pred.astype("int32")
            label, pred = label.ravel(), pred.ravel()
            check_label_shapes(label, pred)
            if label.size and min(label.min(), pred.min()) < 0:
                raise ValueError("PCC: classes must be >= 0 (got a negative label or "
                                 "prediction)")
            n = int(max(pred.max(), label.max())) if label.size else 0
            if n >= self.k:
                self._grow(n + 1 - self.k)
            bcm = numpy.zeros((self.k, self.k))
            numpy.add.at(bcm, (pred, label), 1)
            self.lcm += bcm
            self.gcm += bcm
        self.num_inst += 1
        self.global_num_inst += 1

    def get(self):
        if self.num_inst == 0:
            return self.name, float("nan")
        return self.name, self._calc(self.lcm)

    def get_global(self):
        if self.global_num_inst == 0:
            return self.name, float("nan")
        return self.name, self._calc(self.gcm)

    def reset(self):
        self.global_num_inst = 0
        self.global_sum_metric = 0.0
        self.gcm = numpy.zeros((self.k, self.k))
        self.reset_local()

    def reset_local(self):
        self.num_inst = 0
        self.sum_metric = 0.0
        self.lcm = numpy.zeros((self.k, self.k))


class Loss(EvalMetric):
    """The mean of the values of ``preds`` (losses); labels are ignored."""

    def __init__(self, name="loss", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)

    def update(self, _, preds):
        for pred in _as_list(preds):
            self._add(float(_host(pred).astype(numpy.float64).sum()), int(pred.size))


class CustomMetric(EvalMetric):
    """A metric from ``feval(label, pred)`` on NumPy arrays, returning a value (one
    instance) or ``(sum, count)``.  The name defaults to the function's
    (``custom(<lambda>)`` for a lambda).  ``allow_extra_outputs`` lets there be more
    predictions than labels (the extra ones are ignored)."""

    def __init__(self, feval, name=None, allow_extra_outputs=False, output_names=None,
                 label_names=None):
        if not callable(feval):
            raise TypeError(f"CustomMetric: feval must be callable (got {feval!r})")
        if name is None:
            name = feval.__name__
            if "<" in name:
                name = f"custom({name})"
        super().__init__(name, feval=feval, allow_extra_outputs=allow_extra_outputs,
                         output_names=output_names, label_names=label_names)
        self._feval = feval
        self._allow_extra_outputs = allow_extra_outputs

    def update(self, labels, preds):
        if not self._allow_extra_outputs:
            labels, preds = check_label_shapes(labels, preds, True)
        else:
            labels, preds = _as_list(labels), _as_list(preds)
        for pred, label in zip(preds, labels):
            value = self._feval(_host(label), _host(pred))
            # a NumPy scalar from feval is kept as a Python number, as the built-in
            # metrics keep theirs (NumPy 2 prints np.float64(0.5) in a logged tuple)
            if isinstance(value, tuple):
                self._add(_number(value[0]), value[1])
            else:
                self._add(_number(value), 1)

    def get_config(self):
        raise NotImplementedError("CustomMetric cannot be serialized")


def _number(value):
    return value.item() if isinstance(value, numpy.generic) else value


def np(numpy_feval, name=None, allow_extra_outputs=False):
    """A :class:`CustomMetric` from a function of NumPy arrays (MXNet's
    ``metric.np``); it keeps the function's name."""
    def feval(label, pred):
        return numpy_feval(label, pred)
    feval.__name__ = numpy_feval.__name__
    return CustomMetric(feval, name, allow_extra_outputs)


for _klass in (CompositeEvalMetric, Accuracy, TopKAccuracy, F1, MCC, Perplexity, MAE, MSE,
               RMSE, CrossEntropy, NegativeLogLikelihood, PearsonCorrelation, PCC, Loss,
               CustomMetric):
    register(_klass)

__all__ = ["EvalMetric", "CompositeEvalMetric", "Accuracy", "TopKAccuracy", "F1", "MCC",
           "Perplexity", "MAE", "MSE", "RMSE", "CrossEntropy", "NegativeLogLikelihood",
           "PearsonCorrelation", "PCC", "Loss", "CustomMetric", "np",
           "create", "register", "alias", "check_label_shapes"]
