"""Losses (Gluon's ``gluon.loss``): ``SoftmaxCrossEntropyLoss`` (alias
``SoftmaxCELoss``), ``L2Loss``, ``L1Loss``, ``SigmoidBinaryCrossEntropyLoss`` (alias
``SigmoidBCELoss``), ``CTCLoss``, ``KLDivLoss``, ``HuberLoss``, ``HingeLoss``,
``SquaredHingeLoss``, ``LogisticLoss``, ``TripletLoss``, ``PoissonNLLLoss``,
``CosineEmbeddingLoss``, ``SDMLLoss``.

Each is a block called as ``loss(pred, label, sample_weight=None)`` that returns one
loss per sample: the elementwise loss times ``weight`` and ``sample_weight``
(broadcast), averaged over every axis but ``batch_axis`` (0), as Gluon.  They are made of
registry operators, so autograd differentiates them: the common cases of softmax and
sigmoid cross-entropy are fused operators of ``runtime.ops.loss`` (one kernel forward,
one backward), the rest compositions (``log_softmax``, ``pick``, ``softrelu`` ...).  The
formulas are the numerically stable ones (no overflow for logits of any size).

Each is a ``HybridBlock`` whose ``hybrid_forward(F, pred, label, ...)`` calls those
operators through ``F``, so a hybridized loss is a cached graph.  A graph knows no shapes
or values, so hybridized: the checks of shapes and label values that name a bad input
are left to the operators; ``SoftmaxCrossEntropyLoss`` takes the ``log_softmax`` and
``pick`` road (whose ``pick`` clips a class index out of range, as MXNet's) and
``SigmoidBinaryCrossEntropyLoss`` wants the label in pred's dtype; the optional inputs
given must come first (an absent one only followed by absent ones), and
``PoissonNLLLoss`` takes its default ``epsilon``.
"""

import inspect

import numpy as np

from runtime import nd
from runtime.gluon.block import HybridBlock
from runtime.symbol import Symbol


def _label_like(F, loss, label, pred):
    """``label`` in ``pred``'s shape (as many values); a traced call reshapes it like
    pred.  ``loss`` names the caller in the error."""
    if F is not nd:
        return F.reshape_like(label, pred)
    if label.shape == pred.shape:
        return label
    if label.size != pred.size:
        raise ValueError(f"{loss}: label must have the shape of pred {pred.shape!r} (or as "
                         f"many values) (got shape {label.shape!r})")
    return label.reshape(pred.shape)


# Gluon 1.x's private helpers, kept under their names and signatures because custom
# losses written for Gluon call them (gluon.loss._apply_weighting(F, loss, ...)).
def _apply_weighting(F, loss, weight=None, sample_weight=None):
    """``loss`` times ``sample_weight`` (broadcast) and the number ``weight``."""
    if sample_weight is not None:
        loss = F.broadcast_mul(loss, sample_weight)
    if weight is not None:
        if isinstance(weight, bool) or not isinstance(weight, (int, float, np.integer,
                                                               np.floating)):
            raise TypeError(f"_apply_weighting: weight must be a number (got {weight!r})")
        loss = loss * weight
    return loss


def _reshape_like(F, x, y):
    """``x`` reshaped to ``y``'s shape (Gluon's helper; same number of values)."""
    return _label_like(F, "_reshape_like", x, y)


class Loss(HybridBlock):
    """Base of the losses: ``weight`` (a number or None) scales the loss,
    ``batch_axis`` is the axis kept in the result.  Called as Gluon's
    ``loss(pred, label, sample_weight=None)``, the optional inputs by position or by
    name."""

    def __init__(self, weight, batch_axis, **kwargs):
        super().__init__(**kwargs)
        name = type(self).__name__
        if weight is not None and (isinstance(weight, bool) or not isinstance(
                weight, (int, float, np.integer, np.floating))):
            raise TypeError(f"{name}: weight must be a number or None (got {weight!r})")
        if isinstance(batch_axis, bool) or not isinstance(batch_axis, (int, np.integer)):
            raise TypeError(f"{name}: batch_axis must be an int (got {batch_axis!r})")
        self._weight = None if weight is None else float(weight)
        self._batch_axis = int(batch_axis)
        self._signature = inspect.signature(self.hybrid_forward)
        params = list(self._signature.parameters.values())[1:]
        self._positional = [p.name for p in params
                            if p.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD]
        # the array inputs (required, or None by default) and the other options
        self._inputs = [p.name for p in params if p.default is None
                        or p.default is inspect.Parameter.empty]
        self._options = {p.name: p.default for p in params if p.name not in self._inputs}

    def forward(self, *args, **kwargs):
        if args and isinstance(args[0], Symbol):            # traced
            return super().forward(*args)
        name = type(self).__name__
        if not kwargs and len(args) <= len(self._positional):
            # the common call, positional arrays: what bind() would give, without its cost
            values = dict(zip(self._positional, args))
        else:
            try:
                bound = self._signature.bind(None, *args, **kwargs)
            except TypeError as e:
                raise TypeError(f"{name}: {e}") from None
            values = dict(bound.arguments)
            del values[next(iter(values))]                  # F
        if not self._active:
            return self.hybrid_forward(nd, **values)
        for key, default in self._options.items():
            if key in values and values[key] != default:
                raise ValueError(f"{name}: a hybridized loss takes {key}={default!r} (got "
                                 f"{values[key]!r}); call it without hybridize()")
        arrays = [values.get(k) for k in self._inputs]
        while arrays and arrays[-1] is None:
            arrays.pop()
        absent = [k for k, a in zip(self._inputs, arrays) if a is None]
        if absent:
            missing = absent[0]
            given = self._inputs[len(arrays) - 1]
            raise ValueError(f"{name}: a hybridized loss takes its optional inputs in "
                             f"order: {given} is given, so {missing} must be too")
        return super().forward(*arrays)

    def _finish(self, F, loss, weight, sample_weight, reduce="mean"):
        """Gluon's ``_apply_weighting`` then the mean (or with ``reduce='sum'`` the
        sum) over the non-batch axes."""
        loss = _apply_weighting(F, loss, weight, sample_weight)
        if F is not nd:
            return getattr(F, reduce)(loss, axis=self._batch_axis, exclude=True)
        if loss.ndim == 0 or not -loss.ndim <= self._batch_axis < loss.ndim:
            raise ValueError(f"{type(self).__name__}: batch_axis must be an axis of the "
                             f"loss of shape {loss.shape!r} (got {self._batch_axis})")
        if loss.ndim == 1:          # nothing to average over
            return loss
        axis = self._batch_axis % loss.ndim
        if loss.size == loss.shape[axis]:      # (n, 1): the mean is a reshape
            return loss.reshape((loss.shape[axis],))
        return getattr(nd, reduce)(loss, axis=self._batch_axis, exclude=True)

    def __repr__(self):
        return f"{type(self).__name__}(batch_axis={self._batch_axis}, w={self._weight})"


class SoftmaxCrossEntropyLoss(Loss):
    """``-log softmax(pred, axis)[label]`` per sample (``sparse_label=True``: ``label``
    holds class indices, shape ``pred.shape`` without ``axis``), or ``-sum(label *
    log softmax(pred), axis)`` with ``sparse_label=False`` (``label`` has pred's shape).
    ``from_logits=True``: ``pred`` already holds log-probabilities.

    2-D ``pred`` with class indices along axis 1 (the common case) runs the fused
    ``_softmax_ce_loss`` (``logsumexp - picked logit``, max subtracted first); other
    cases ``log_softmax`` then ``pick``: no overflow for large logits either way.  A
    class index outside [0, classes) raises ValueError naming it (Gluon's ``pick`` would
    clip it silently).
    """

    def __init__(self, axis=-1, sparse_label=True, from_logits=False, weight=None,
                 batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
            raise TypeError(f"SoftmaxCrossEntropyLoss: axis must be an int (got {axis!r})")
        self._axis = int(axis)
        self._sparse_label = bool(sparse_label)
        self._from_logits = bool(from_logits)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        if F is not nd:
            return self._traced(F, pred, label, sample_weight)
        if not -pred.ndim <= self._axis < pred.ndim:
            raise ValueError(f"SoftmaxCrossEntropyLoss: axis must be in [{-pred.ndim}, "
                             f"{pred.ndim}) for pred of shape {pred.shape!r} (got "
                             f"{self._axis})")
        axis = self._axis % pred.ndim
        want = pred.shape[:axis] + pred.shape[axis + 1:]
        if self._sparse_label and label.shape != want and \
                label.shape != want[:axis] + (1,) + want[axis:]:
            raise ValueError(f"SoftmaxCrossEntropyLoss: label must have shape {want!r} "
                             f"for pred of shape {pred.shape!r} and axis {self._axis} "
                             f"(got {label.shape!r})")
        if self._sparse_label and not self._from_logits and pred.ndim == 2 and axis == 1:
            # the common case in one fused op each way (runtime/ops/loss.py); it checks
            # the labels
            loss = nd._softmax_ce_loss(pred, label.reshape(want))
            if sample_weight is not None:
                loss = loss.reshape((pred.shape[0], 1))     # as Gluon's (n, 1) loss
            return self._finish(nd, loss, self._weight, sample_weight)
        if not self._from_logits:
            pred = nd.log_softmax(pred, axis=self._axis)
        if self._sparse_label:
            values = label.asnumpy()
            k = pred.shape[axis]
            bad = ~((values >= 0) & (values < k) & (np.trunc(values) == values))
            if bad.any():
                pos = tuple(int(i) for i in np.argwhere(bad)[0])
                raise ValueError(f"SoftmaxCrossEntropyLoss: label must hold class indices "
                                 f"in [0, {k}) (got {values[pos].item()!r} at {pos!r})")
            kept = pred.shape[:axis] + (1,) + pred.shape[axis + 1:]
            loss = -nd.pick(pred, label.reshape(kept), axis=self._axis, keepdims=True)
        else:
            label = _label_like(nd, "SoftmaxCrossEntropyLoss", label, pred)
            loss = -nd.sum(pred * label, axis=self._axis, keepdims=True)
        return self._finish(nd, loss, self._weight, sample_weight)

    def _traced(self, F, pred, label, sample_weight):
        # Gluon's graph: no shapes, so no fused 2-D road and no label check
        if not self._from_logits:
            pred = F.log_softmax(pred, axis=self._axis)
        if self._sparse_label:
            loss = -F.pick(pred, label, axis=self._axis, keepdims=True)
        else:
            label = F.reshape_like(label, pred)
            loss = -F.sum(pred * label, axis=self._axis, keepdims=True)
        return self._finish(F, loss, self._weight, sample_weight)


SoftmaxCELoss = SoftmaxCrossEntropyLoss


class L2Loss(Loss):
    """``weight / 2 * (label - pred) ** 2``, averaged over the non-batch axes."""

    def __init__(self, weight=1.0, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _label_like(F, "L2Loss", label, pred)
        loss = F.square(label - pred)
        return self._finish(F, loss, None if self._weight is None else self._weight / 2.0,
                            sample_weight)


class L1Loss(Loss):
    """``weight * |label - pred|``, averaged over the non-batch axes."""

    def __init__(self, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _label_like(F, "L1Loss", label, pred)
        return self._finish(F, F.abs(label - pred), self._weight, sample_weight)


class SigmoidBinaryCrossEntropyLoss(Loss):
    """Binary cross-entropy of ``sigmoid(pred)`` against ``label`` in [0, 1].

    ``from_sigmoid=False`` (default): ``pred`` holds logits and the loss is
    ``max(x, 0) - x * z + log(1 + exp(-|x|))``, by the fused ``_sigmoid_bce_loss``
    (``np.logaddexp(0, x) - x * z``, which evaluates exactly that stable form; its
    gradient ``sigmoid(x) - z`` is right at x = 0 too, where an ``|x|``-based
    composition would lose the 0.5).  With ``pos_weight``
    (broadcast to pred) the positive term is weighted: ``(1 - z) * x + (1 + (pw - 1) *
    z) * softrelu(-x)``.  ``from_sigmoid=True``: ``pred`` holds probabilities and the
    loss is ``-(z * log(p + 1e-12) + (1 - z) * log(1 - p + 1e-12))`` (Gluon).
    """

    def __init__(self, from_sigmoid=False, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_sigmoid = bool(from_sigmoid)

    def hybrid_forward(self, F, pred, label, sample_weight=None, pos_weight=None):
        z = _label_like(F, "SigmoidBinaryCrossEntropyLoss", label, pred)
        if F is nd and z.dtype != pred.dtype:
            z = z.astype(pred.dtype)
        if not self._from_sigmoid:
            if pos_weight is None:        # one fused op each way (runtime/ops/loss.py)
                loss = F._sigmoid_bce_loss(pred, z)
            else:
                log_weight = F.broadcast_mul(pos_weight - 1.0, z) + 1.0
                loss = pred - pred * z + log_weight * F.softrelu(-pred)
        else:
            eps = 1e-12
            pos = F.log(pred + eps) * z
            if pos_weight is not None:
                pos = F.broadcast_mul(pos, pos_weight)
            loss = -(pos + F.log(1.0 - pred + eps) * (1.0 - z))
        return self._finish(F, loss, self._weight, sample_weight)


SigmoidBCELoss = SigmoidBinaryCrossEntropyLoss


class CTCLoss(Loss):
    """Connectionist temporal classification loss (Gluon's ``CTCLoss``), one value per
    sequence: the ``CTCLoss`` operator with ``blank_label='last'``, as Gluon calls it
    (the blank is the last class, labels hold 0 .. classes-2 and -1 pads them).

    ``layout`` ('NTC' or 'TNC') is pred's, ``label_layout`` ('NT' or 'TN') label's; called
    ``loss(pred, label, pred_lengths=None, label_lengths=None, sample_weight=None)``, the
    lengths (N,) optional.  The result (N,) is scaled by ``weight`` and ``sample_weight``
    (no mean: the loss is already one value per sequence).
    """

    def __init__(self, layout="NTC", label_layout="NT", weight=None, **kwargs):
        if layout not in ("NTC", "TNC"):
            raise ValueError(f"CTCLoss: layout must be 'NTC' or 'TNC' (got {layout!r})")
        if label_layout not in ("NT", "TN"):
            raise ValueError(f"CTCLoss: label_layout must be 'NT' or 'TN' (got "
                             f"{label_layout!r})")
        super().__init__(weight, label_layout.find("N"), **kwargs)
        self._layout = layout
        self._label_layout = label_layout

    def hybrid_forward(self, F, pred, label, pred_lengths=None, label_lengths=None,
                       sample_weight=None):
        if F is nd and (pred.ndim != 3 or label.ndim != 2):
            raise ValueError(f"CTCLoss: pred must be 3-D ({self._layout}) and label 2-D "
                             f"({self._label_layout}) (got shapes {pred.shape!r} and "
                             f"{label.shape!r})")
        if self._layout == "NTC":
            pred = F.swapaxes(pred, 0, 1)
        if self._batch_axis == 1:
            label = F.swapaxes(label, 0, 1)
        lengths = [a for a in (pred_lengths, label_lengths) if a is not None]
        loss = F.CTCLoss(pred, label, *lengths, use_data_lengths=pred_lengths is not None,
                         use_label_lengths=label_lengths is not None, blank_label="last")
        if sample_weight is not None:
            loss = F.broadcast_mul(loss, sample_weight)
        if self._weight is not None:
            loss = loss * self._weight
        return loss

    def __repr__(self):
        return (f"CTCLoss(layout={self._layout!r}, label_layout={self._label_layout!r}, "
                f"w={self._weight})")


def _number(loss, name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer,
                                                         np.floating)):
        raise TypeError(f"{loss}: {name} must be a number (got {value!r})")
    return float(value)


class KLDivLoss(Loss):
    """Kullback-Leibler divergence ``label * (log(label + 1e-12) - pred)`` summed over
    the non-batch axes (Gluon 1.x sums here, where the other losses average).  ``pred``
    holds log-probabilities (``from_logits=True``, the default) or scores turned into
    them by ``log_softmax`` along ``axis``."""

    def __init__(self, from_logits=True, axis=-1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = bool(from_logits)
        self._axis = axis

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        if not self._from_logits:
            pred = F.log_softmax(pred, axis=self._axis)
        loss = label * (F.log(label + 1e-12) - pred)
        return self._finish(F, loss, self._weight, sample_weight, reduce="sum")


class HuberLoss(Loss):
    """Smoothed L1: ``0.5 / rho * d ** 2`` where ``|d| <= rho``, ``|d| - 0.5 * rho``
    beyond (``d = label - pred``), averaged over the non-batch axes."""

    def __init__(self, rho=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._rho = _number("HuberLoss", "rho", rho)
        if not self._rho > 0:
            raise ValueError(f"HuberLoss: rho must be > 0 (got {rho!r})")

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        d = F.abs(_label_like(F, "HuberLoss", label, pred) - pred)
        loss = F.where(d > self._rho, d - 0.5 * self._rho, F.square(d) * (0.5 / self._rho))
        return self._finish(F, loss, self._weight, sample_weight)


class HingeLoss(Loss):
    """``max(0, margin - pred * label)`` with labels -1 and 1, averaged over the
    non-batch axes."""

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = _number(type(self).__name__, "margin", margin)

    def _hinge(self, F, pred, label):
        return F.relu(self._margin - pred * _label_like(F, type(self).__name__, label,
                                                          pred))

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        return self._finish(F, self._hinge(F, pred, label), self._weight, sample_weight)


class SquaredHingeLoss(HingeLoss):
    """``max(0, margin - pred * label) ** 2`` with labels -1 and 1, averaged over the
    non-batch axes."""

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        return self._finish(F, F.square(self._hinge(F, pred, label)), self._weight,
                            sample_weight)


class LogisticLoss(Loss):
    """``log(1 + exp(-pred * label))`` for labels -1/1 (``label_format='signed'``) or,
    equivalently, the logistic loss of labels 0/1 (``'binary'``), in the stable form
    ``relu(pred) - pred * z + softrelu(-|pred|)``; averaged over the non-batch axes."""

    def __init__(self, weight=None, batch_axis=0, label_format="signed", **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        if label_format not in ("signed", "binary"):
            raise ValueError(f"LogisticLoss: label_format must be 'signed' or 'binary' "
                             f"(got {label_format!r})")
        self._label_format = label_format

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        z = _label_like(F, "LogisticLoss", label, pred)
        if self._label_format == "signed":
            z = (z + 1.0) / 2.0
        loss = F.relu(pred) - pred * z + F.softrelu(-F.abs(pred))
        return self._finish(F, loss, self._weight, sample_weight)


class TripletLoss(Loss):
    """``max(0, |pred - positive|^2 - |pred - negative|^2 + margin)``, the squared
    distances summed over the non-batch axes; called ``loss(pred, positive,
    negative)``."""

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = _number("TripletLoss", "margin", margin)

    def hybrid_forward(self, F, pred, positive, negative):
        positive = _label_like(F, "TripletLoss", positive, pred)
        negative = _label_like(F, "TripletLoss", negative, pred)
        loss = F.sum(F.square(positive - pred) - F.square(negative - pred),
                     axis=self._batch_axis, exclude=True)
        loss = F.relu(loss + self._margin)
        return loss if self._weight is None else loss * self._weight


class PoissonNLLLoss(Loss):
    """Negative log-likelihood of ``target`` under a Poisson distribution: ``exp(pred)
    - target * pred`` with ``from_logits=True`` (pred is the log of the rate), else
    ``pred - target * log(pred + epsilon)``; ``compute_full`` adds Stirling's
    approximation of ``log(target!)`` where target > 1.  The mean over every value,
    shape (1,) (Gluon 1.x).

    Difference from MXNet 1.9.1: there a target of 0 with ``compute_full`` gives NaN
    (``0 * log 0`` before masking); here the Stirling term is 0 for targets <= 1.
    """

    def __init__(self, weight=None, from_logits=True, batch_axis=0, compute_full=False,
                 **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = bool(from_logits)
        self._compute_full = bool(compute_full)

    def hybrid_forward(self, F, pred, target, sample_weight=None, epsilon=1e-08):
        target = _label_like(F, "PoissonNLLLoss", target, pred)
        if self._from_logits:
            loss = F.exp(pred) - target * pred
        else:
            loss = pred - target * F.log(pred + epsilon)
        if self._compute_full:
            big = target > 1
            t = F.where(big, target, F.ones_like(target))       # log(1) = 0: no NaN
            stirling = t * F.log(t) - t + 0.5 * F.log(2 * np.pi * t)
            loss = loss + stirling * big
        if sample_weight is not None:
            loss = F.broadcast_mul(loss, sample_weight)
        if self._weight is not None:
            loss = loss * self._weight
        return F.mean(loss)


class CosineEmbeddingLoss(Loss):
    """``1 - cos(input1, input2)`` for label 1 and ``max(0, cos - margin)`` for label
    -1, the cosine along the last axis; shape (batch, 1), as Gluon 1.x; called
    ``loss(input1, input2, label, sample_weight=None)``."""

    def __init__(self, weight=None, batch_axis=0, margin=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = _number("CosineEmbeddingLoss", "margin", margin)

    def hybrid_forward(self, F, input1, input2, label, sample_weight=None):
        input1 = _label_like(F, "CosineEmbeddingLoss", input1, input2)
        label = F.reshape(label, shape=(-1, 1))
        norms = F.norm(input1, axis=-1) * F.norm(input2, axis=-1)
        cos = F.reshape(F.sum(input1 * input2, axis=-1), shape=(-1, 1)) / \
            F.reshape(F.maximum(norms, 1e-12), shape=(-1, 1))
        loss = (1 - cos) * (label == 1) + F.relu((cos - self._margin) * (label == -1))
        if sample_weight is not None:
            loss = F.broadcast_mul(loss, sample_weight)
        return loss if self._weight is None else loss * self._weight


class SDMLLoss(Loss):
    """Smoothed deep metric learning loss (Gluon's ``SDMLLoss``): for a batch of pairs
    ``(x1[i], x2[i])``, the KL divergence between the softmax over ``j`` of ``-|x1[i] -
    x2[j]|^2`` and the target that puts ``1 - smoothing_parameter`` on ``j = i`` and the
    rest evenly on the others; shape (batch,); called ``loss(x1, x2)``, both
    (batch, dim)."""

    def __init__(self, smoothing_parameter=0.3, weight=1., batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self.smoothing_parameter = _number("SDMLLoss", "smoothing_parameter",
                                           smoothing_parameter)
        with self.name_scope():
            self.kl_loss = KLDivLoss(from_logits=True)

    def hybrid_forward(self, F, x1, x2):
        if F is nd and (x1.ndim != 2 or x1.shape != x2.shape or x1.shape[0] < 2):
            raise ValueError(f"SDMLLoss: x1 and x2 must have one shape (batch >= 2, dim) "
                             f"(got {x1.shape!r} and {x2.shape!r})")
        distances = F.sum(F.square(F.broadcast_sub(F.expand_dims(x1, 1),
                                                   F.expand_dims(x2, 0))), axis=2)
        # the identity of the batch size from the positions (a graph knows no shapes)
        rows = F.contrib.arange_like(distances, axis=0)
        gold = F.broadcast_equal(F.reshape(rows, shape=(-1, 1)), F.reshape(rows, shape=(1, -1)))
        others = 1 - gold
        smooth = self.smoothing_parameter
        labels = gold * (1 - smooth) + F.broadcast_div(others * smooth,
                                                       F.sum(others, axis=1, keepdims=True))
        return self.kl_loss(F.log_softmax(-distances, axis=1), labels)


__all__ = ["Loss", "SoftmaxCrossEntropyLoss", "SoftmaxCELoss", "L2Loss", "L1Loss",
           "SigmoidBinaryCrossEntropyLoss", "SigmoidBCELoss", "CTCLoss", "KLDivLoss",
           "HuberLoss", "HingeLoss", "SquaredHingeLoss", "LogisticLoss", "TripletLoss",
           "PoissonNLLLoss", "CosineEmbeddingLoss", "SDMLLoss"]
