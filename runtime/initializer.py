"""Initialisers (MXNet's ``mx.init``): ``Uniform``, ``Normal``, ``Xavier``, ``MSRAPrelu``,
``Orthogonal``, ``Bilinear``, ``Zero``, ``One``, ``Constant``, ``LSTMBias``, ``FusedRNN``,
``Mixed`` (by name pattern), ``Load`` (from saved arrays), :func:`register` and
:func:`create` (an initialiser from a name or an instance).

An initialiser is called with a parameter's name and its array, ``init(name, arr)``, and
writes the array in place.  As in MXNet, a global initialiser (the one passed to
``Block.initialize``) fills only weights by its own rule: a name ending in ``bias``,
``beta``, ``running_mean`` or ``moving_mean`` gets zeros, ``gamma``, ``running_var`` or
``moving_var`` ones.  A parameter's own initialiser (``Dense(weight_initializer=...)``)
always applies its rule.

Random initialisers draw from ``runtime.random``'s generator on the host, in float64,
then round once into the array's dtype: ``runtime.random.seed(s)`` (MXNet's
``mx.random.seed``) makes initialisation reproducible.  They draw in chunks of
``_CHUNK`` values, which gives the same values as one draw of the whole array (the
generator's stream does not depend on how it is split) without a float64 copy of the whole
array (a VGG classifier weight, 4096 x 25088, would need 800 MB more).
"""

import json
import logging
import math
import re

import numpy as np

from runtime import _rng as _random
from runtime import nd
from runtime._ndarray import zeros
from runtime.ops.rnn import param_slices

_ZERO_SUFFIXES = ("bias", "beta", "running_mean", "moving_mean")
_ONE_SUFFIXES = ("gamma", "running_var", "moving_var")


_CHUNK = 1 << 20


def _write(arr, values):
    """Write NumPy ``values`` (any float dtype) into NDArray ``arr``, rounded once."""
    arr[:] = np.asarray(values).astype(np.dtype(arr.dtype), copy=False)


def _draw(arr, sample):
    """Fill NDArray ``arr`` with ``sample(n)`` (n float64 draws in the generator's
    order), each value rounded once into the array's dtype, ``_CHUNK`` at a time into
    its own memory (a flat view)."""
    flat = arr.reshape(-1)
    size = flat.shape[0]
    for lo in range(0, size, _CHUNK):
        flat[lo:lo + _CHUNK] = sample(min(_CHUNK, size - lo))


class InitDesc(str):
    """A parameter's name with its symbol attributes (MXNet's ``mx.init.InitDesc``).

    An ``__init__`` attribute (``mx.sym.Variable(init=...)``, or an operator's own choice
    such as prelu's gamma) names the initialiser that fills this parameter, whatever
    initialiser the caller passed.
    """

    def __new__(cls, name, attrs=None, global_init=None):
        desc = super().__new__(cls, name)
        desc.attrs = dict(attrs or {})
        desc.global_init = global_init
        return desc


class Initializer:
    """Base class.  As MXNet's, a subclass defines ``_init_weight(self, name, arr)``,
    which fills the NDArray ``arr`` in place (``arr[:] = values``)."""

    def __call__(self, name, arr, own=False):
        """Fill NDArray ``arr`` in place.  ``own``: this is the parameter's own
        initialiser, so the name-based rule for biases and scales does not apply.
        ``name`` may be an :class:`InitDesc`; its ``__init__`` attribute, when present,
        names the initialiser used instead.  A row_sparse ``arr`` gets every row, the
        values a dense array of its shape would (MXNet's random and fill operators write
        row_sparse outputs whole)."""
        if arr.stype == "row_sparse":
            dense = zeros(arr.shape, ctx=arr.context, dtype=arr.dtype)
            self(name, dense, own)
            arr[:] = dense.tostype("row_sparse")
            return
        if arr.stype != "default":
            raise TypeError(f"{type(self).__name__}: cannot initialise {str(name)!r}: "
                            f"arr must be a dense or row_sparse NDArray (got {arr.stype})")
        spec = getattr(name, "attrs", {}).get("__init__")
        if spec:
            create(spec, f"the __init__ attribute of {str(name)!r}")._init_weight(name, arr)
        elif not own and name.endswith(_ZERO_SUFFIXES):
            _write(arr, 0.0)
        elif not own and name.endswith(_ONE_SUFFIXES):
            _write(arr, 1.0)
        else:
            self._init_weight(name, arr)

    def _init_weight(self, name, arr):
        raise NotImplementedError(f"{type(self).__name__}: no rule to initialise {name!r}")

    def dumps(self):
        """The JSON ``[name, kwargs]`` of this initialiser (MXNet's ``dumps``), the form a
        variable's ``__init__`` attribute keeps and :func:`create` reads back."""
        return json.dumps([type(self).__name__.lower(), self._kwargs()])

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self._kwargs().items())
        return f"{type(self).__name__}({args})"

    def _kwargs(self):
        return {}

    def __eq__(self, other):
        return type(self) is type(other) and self._kwargs() == other._kwargs()

    def __hash__(self):
        return hash((type(self), tuple(self._kwargs().items())))


def _number(cls, name, value, positive=False):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not math.isfinite(value) or (positive and value < 0):
        rule = "a finite number >= 0" if positive else "a finite number"
        raise ValueError(f"{cls}: {name} must be {rule} (got {value!r})")
    return float(value)


class Uniform(Initializer):
    """Values drawn uniformly from [-scale, scale] (MXNet's default, scale=0.07)."""

    def __init__(self, scale=0.07):
        self.scale = _number("Uniform", "scale", scale, positive=True)

    def _init_weight(self, name, arr):
        rng = _random.generator()
        _draw(arr, lambda n: rng.uniform(-self.scale, self.scale, n))

    def _kwargs(self):
        return {"scale": self.scale}


class Normal(Initializer):
    """Values drawn from a normal distribution with mean 0 and deviation ``sigma``."""

    def __init__(self, sigma=0.01):
        self.sigma = _number("Normal", "sigma", sigma, positive=True)

    def _init_weight(self, name, arr):
        rng = _random.generator()
        _draw(arr, lambda n: rng.normal(0.0, self.sigma, n))

    def _kwargs(self):
        return {"sigma": self.sigma}


class Xavier(Initializer):
    """Glorot's rule (MXNet's ``Xavier``): with ``fan_in = shape[1] * prod(shape[2:])``
    and ``fan_out = shape[0] * prod(shape[2:])``, the factor is ``fan_in``, ``fan_out``
    or their mean (``factor_type`` 'in', 'out', 'avg') and the scale
    ``sqrt(magnitude / factor)``; values are uniform in [-scale, scale]
    (``rnd_type='uniform'``) or normal with deviation scale (``'gaussian'``).  The array
    must have at least 2 dimensions."""

    def __init__(self, rnd_type="uniform", factor_type="avg", magnitude=3):
        if rnd_type not in ("uniform", "gaussian"):
            raise ValueError(f"Xavier: rnd_type must be 'uniform' or 'gaussian' (got "
                             f"{rnd_type!r})")
        if factor_type not in ("avg", "in", "out"):
            raise ValueError(f"Xavier: factor_type must be 'avg', 'in' or 'out' (got "
                             f"{factor_type!r})")
        self.rnd_type = rnd_type
        self.factor_type = factor_type
        self.magnitude = _number("Xavier", "magnitude", magnitude, positive=True)

    def _init_weight(self, name, arr):
        shape = tuple(arr.shape)
        if len(shape) < 2:
            raise ValueError(f"Xavier: the array must have at least 2 dimensions to "
                             f"initialise {name!r} (got shape {shape!r})")
        hw = math.prod(shape[2:])
        fan_in, fan_out = shape[1] * hw, shape[0] * hw
        factor = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}[
            self.factor_type]
        if factor == 0:            # an empty array: nothing to draw
            return
        scale = math.sqrt(self.magnitude / factor)
        rng = _random.generator()
        if self.rnd_type == "uniform":
            _draw(arr, lambda n: rng.uniform(-scale, scale, n))
        else:
            _draw(arr, lambda n: rng.normal(0.0, scale, n))

    def _kwargs(self):
        return {"rnd_type": self.rnd_type, "factor_type": self.factor_type,
                "magnitude": self.magnitude}


class Constant(Initializer):
    """Every value ``value``."""

    def __init__(self, value):
        self.value = _number("Constant", "value", value)

    def _init_weight(self, name, arr):
        _write(arr, self.value)

    def _kwargs(self):
        return {"value": self.value}


class Zero(Constant):
    """Zeros."""

    def __init__(self):
        super().__init__(0.0)

    def _kwargs(self):
        return {}


class One(Constant):
    """Ones."""

    def __init__(self):
        super().__init__(1.0)

    def _kwargs(self):
        return {}


class LSTMBias(Initializer):
    """The bias of an LSTM cell (MXNet's ``mx.init.LSTMBias``): zeros but the forget
    gate's values (the second quarter, Gluon's gate order input, forget, cell, output),
    ``forget_bias``, so that the cell keeps its state early in training."""

    def __init__(self, forget_bias=1.0):
        self.forget_bias = _number("LSTMBias", "forget_bias", forget_bias)

    def _init_weight(self, name, arr):
        if arr.ndim != 1 or arr.shape[0] % 4:
            raise ValueError(f"LSTMBias: {str(name)!r} must be 1-D with a multiple of 4 "
                             f"values, one quarter per gate (got shape {arr.shape!r})")
        h = arr.shape[0] // 4
        values = np.zeros(arr.shape)
        values[h:2 * h] = self.forget_bias
        _write(arr, values)

    def _kwargs(self):
        return {"forget_bias": self.forget_bias}


class MSRAPrelu(Xavier):
    """He et al.'s rule for rectifier networks (MXNet's ``MSRAPrelu``): :class:`Xavier`
    with normal values and ``magnitude = 2 / (1 + slope**2)``, ``slope`` being the
    negative slope of the PReLU (leaky) units that follow."""

    def __init__(self, factor_type="avg", slope=0.25):
        self.slope = _number("MSRAPrelu", "slope", slope)
        super().__init__("gaussian", factor_type, 2.0 / (1.0 + self.slope ** 2))

    def _kwargs(self):
        return {"factor_type": self.factor_type, "slope": self.slope}


class Orthogonal(Initializer):
    """An orthogonal matrix times ``scale`` (MXNet's ``Orthogonal``, Saxe et al.): the
    array, seen as ``shape[0]`` rows of ``prod(shape[1:])`` values, is the orthonormal
    factor of the SVD of a matrix of that shape drawn uniformly in [-1, 1]
    (``rand_type='uniform'``) or from N(0, 1) (``'normal'``): its rows are orthonormal
    when there are no more rows than columns, else its columns are."""

    def __init__(self, scale=1.414, rand_type="uniform"):
        if rand_type not in ("uniform", "normal"):
            raise ValueError(f"Orthogonal: rand_type must be 'uniform' or 'normal' (got "
                             f"{rand_type!r})")
        self.scale = _number("Orthogonal", "scale", scale)
        self.rand_type = rand_type

    def _init_weight(self, name, arr):
        if arr.ndim < 2:
            raise ValueError(f"Orthogonal: the array must have at least 2 dimensions to "
                             f"initialise {str(name)!r} (got shape {arr.shape!r})")
        nout, nin = arr.shape[0], math.prod(arr.shape[1:])
        if nout * nin == 0:
            return
        rng = _random.generator()
        tmp = (rng.uniform(-1.0, 1.0, (nout, nin)) if self.rand_type == "uniform"
               else rng.normal(0.0, 1.0, (nout, nin)))
        u, _, v = np.linalg.svd(tmp, full_matrices=False)
        res = u if u.shape == tmp.shape else v
        _write(arr, self.scale * res.reshape(arr.shape))

    def _kwargs(self):
        return {"scale": self.scale, "rand_type": self.rand_type}


class Bilinear(Initializer):
    """The kernel of bilinear upsampling (MXNet's ``Bilinear``), for a Deconvolution
    weight of shape (C_out, C_in, kh, kw): with ``f = ceil(kw / 2)`` and
    ``c = (2f - 1 - f % 2) / (2f)``, the value at row ``y`` and column ``x`` of every
    kernel is ``(1 - |x / f - c|) * (1 - |y / f - c|)``."""

    def _init_weight(self, name, arr):
        if arr.ndim != 4:
            raise ValueError(f"Bilinear: the array must be 4-D (C_out, C_in, kh, kw) to "
                             f"initialise {str(name)!r} (got shape {arr.shape!r})")
        kh, kw = arr.shape[2], arr.shape[3]
        if kw == 0:
            return
        f = math.ceil(kw / 2.0)
        c = (2 * f - 1 - f % 2) / (2.0 * f)
        x = 1 - np.abs(np.arange(kw) / f - c)
        y = 1 - np.abs(np.arange(kh) / f - c)
        _write(arr, np.broadcast_to(np.outer(y, x).astype(np.float32), arr.shape))


class Mixed:
    """The first initialiser whose pattern matches a parameter's name fills it (MXNet's
    ``Mixed``): ``patterns`` are regular expressions matched at the start of the name
    (``re.match``), ``initializers`` the initialisers, one per pattern.  A name that no
    pattern matches is a ValueError (end with ``'.*'`` for a default)."""

    def __init__(self, patterns, initializers):
        patterns, initializers = list(patterns), list(initializers)
        if len(patterns) != len(initializers):
            raise ValueError(f"Mixed: patterns and initializers must have one length (got "
                             f"{len(patterns)} and {len(initializers)})")
        self.map = [(re.compile(p), create(i, f"Mixed: the initializer of {p!r}"))
                    for p, i in zip(patterns, initializers)]

    def __call__(self, name, arr, own=False):
        for prog, init in self.map:
            if prog.match(str(name)):
                init(name, arr, own)
                return
        raise ValueError(f"Mixed: parameter {str(name)!r} must match one of the patterns "
                         f"{[p.pattern for p, _ in self.map]} (add '.*' with a default "
                         "initializer)")

    def __repr__(self):
        return f"Mixed({[p.pattern for p, _ in self.map]!r}, {[i for _, i in self.map]!r})"


class Load:
    """Parameters filled from saved arrays (MXNet's ``Load``): ``param`` is a dict of
    name -> NDArray or the name of a file that ``nd.load`` reads (MXNet's ``arg:`` and
    ``aux:`` prefixes are dropped).  A parameter missing from it is filled by
    ``default_init``; without one that is a ValueError, as is a saved array of another
    shape."""

    def __init__(self, param, default_init=None, verbose=False):
        if isinstance(param, str):
            param = nd.load(param)
        if not isinstance(param, dict):
            raise TypeError(f"Load: param must be a dict of arrays or a file holding one "
                            f"(got {type(param).__name__})")
        self.param = {}
        for name, arr in param.items():
            if name.startswith(("arg:", "aux:")):
                name = name[4:]
            self.param[name] = arr
        self.default_init = None if default_init is None else create(
            default_init, "Load: default_init")
        self.verbose = verbose

    def __call__(self, name, arr, own=False):
        key = str(name)
        if key in self.param:
            saved = self.param[key]
            if tuple(saved.shape) != tuple(arr.shape):
                raise ValueError(f"Load: the saved {key!r} must have the parameter's shape "
                                 f"{tuple(arr.shape)!r} (got {tuple(saved.shape)!r})")
            arr[:] = saved
            if self.verbose:
                logging.info("Initialized %s by loading", key)
        elif self.default_init is None:
            raise ValueError(f"Load: cannot initialise {key!r}: it is not among the loaded "
                             "parameters and no default_init is given")
        else:
            self.default_init(name, arr, own)
            if self.verbose:
                logging.info("Initialized %s by default", key)

    def __repr__(self):
        return f"Load({sorted(self.param)!r}, default_init={self.default_init!r})"


_GATE_NAMES = {"rnn_relu": ("",), "rnn_tanh": ("",), "lstm": ("_i", "_f", "_c", "_o"),
               "gru": ("_r", "_z", "_o")}


def fused_rnn_slices(mode, size, num_hidden, num_layers, bidirectional, prefix=""):
    """``{name: (start, shape)}`` of each gate's weight and bias in the flat parameter
    vector of ``size`` values of MXNet's fused RNN (``FusedRNNCell``'s unpacked names:
    ``<prefix>l0_i2h_i_weight``, ``r`` for the backward direction); ValueError when no
    input width gives ``size``."""
    if mode not in _GATE_NAMES:
        raise ValueError(f"FusedRNN: mode must be one of {', '.join(_GATE_NAMES)} (got "
                         f"{mode!r})")
    g, h, d = len(_GATE_NAMES[mode]), num_hidden, 2 if bidirectional else 1
    # size = d*g*h*(I + h + 2) + (num_layers - 1)*d*g*h*(d*h + h + 2), solved for I
    width, rest = divmod(size, d * g * h)
    width -= h + 2 + (num_layers - 1) * (d * h + h + 2)
    if rest or width < 1:
        raise ValueError(f"FusedRNN: {size} parameters fit no input width for mode="
                         f"{mode!r}, num_hidden={num_hidden}, num_layers={num_layers}, "
                         f"bidirectional={bidirectional}")
    gates = _GATE_NAMES[mode]
    return {f"{prefix}{'lr'[direction]}{layer}_{group}{gates[gate]}_{kind}": (start, shape)
            for layer, direction, group, gate, kind, start, shape in
            param_slices(mode, width, h, num_layers, bidirectional)}


class FusedRNN(Initializer):
    """The flat parameter vector of MXNet's fused RNN (``mx.rnn.FusedRNNCell``,
    ``sym.RNN``; MXNet's ``mx.init.FusedRNN``): each gate's weight and bias, seen as its
    own array, is filled by ``init`` (else by the caller's global initialiser, whose
    name rule gives the biases zeros), and with mode 'lstm' the forget gate's biases
    get ``forget_bias``."""

    def __init__(self, init, num_hidden, num_layers, mode, bidirectional=False,
                 forget_bias=1.0):
        if isinstance(init, str):
            init = _from_json(init, "FusedRNN: init")
        if init is not None and not isinstance(init, Initializer):
            raise TypeError(f"FusedRNN: init must be an Initializer, its JSON or None (got "
                            f"{init!r})")
        self._init = init
        self._num_hidden = int(num_hidden)
        self._num_layers = int(num_layers)
        self._mode = mode
        self._bidirectional = bool(bidirectional)
        self._forget_bias = _number("FusedRNN", "forget_bias", forget_bias)

    def _init_weight(self, name, arr):
        flat = arr.reshape(-1)
        fill = self._init
        if fill is None:
            fill = getattr(name, "global_init", None)
            if fill is None:
                raise ValueError(f"FusedRNN: {str(name)!r} needs init or a global "
                                 "initialiser (call it through Module.init_params)")
        slices = fused_rnn_slices(self._mode, flat.shape[0], self._num_hidden,
                                  self._num_layers, self._bidirectional)
        for part, (start, shape) in slices.items():
            view = flat[start:start + math.prod(shape)].reshape(shape)
            if self._mode == "lstm" and part.endswith("_f_bias"):
                _write(view, self._forget_bias)
            else:
                fill(InitDesc(part, global_init=fill), view)

    def _kwargs(self):
        return {"init": None if self._init is None else self._init.dumps(),
                "num_hidden": self._num_hidden, "num_layers": self._num_layers,
                "mode": self._mode, "bidirectional": self._bidirectional,
                "forget_bias": self._forget_bias}


_NAMES = {"zeros": Zero, "zero": Zero, "ones": One, "one": One, "uniform": Uniform,
          "normal": Normal, "xavier": Xavier, "msraprelu": MSRAPrelu,
          "orthogonal": Orthogonal, "bilinear": Bilinear}


_CLASSES = {"zero": Zero, "one": One, "constant": Constant, "uniform": Uniform,
            "normal": Normal, "xavier": Xavier, "lstmbias": LSTMBias,
            "msraprelu": MSRAPrelu, "orthogonal": Orthogonal, "bilinear": Bilinear,
            "fusedrnn": FusedRNN}


def register(klass):
    """Class decorator (MXNet's ``mx.init.register``): ``create`` and the ``__init__``
    attributes of variables then know the Initializer subclass ``klass`` by its name in
    lower case.  Returns ``klass``."""
    if not (isinstance(klass, type) and issubclass(klass, Initializer)):
        raise TypeError(f"register: klass must be a subclass of Initializer (got {klass!r})")
    _NAMES[klass.__name__.lower()] = klass
    _CLASSES[klass.__name__.lower()] = klass
    return klass


def _from_json(init, what):
    """The initialiser of an MXNet ``__init__`` string, ``'["constant", {"value": 2}]'``."""
    try:
        name, kwargs = json.loads(init)
        cls = _CLASSES[name.lower()]
        return cls(**kwargs)
    except (ValueError, TypeError, KeyError, AttributeError):
        raise ValueError(f"{what} must be an initialiser's name or a JSON [name, kwargs] "
                         f"with name one of {sorted(_CLASSES)} (got {init!r})") from None


def create(init, what="init"):
    """An initialiser from ``init``: an :class:`Initializer` as it is, MXNet's name of
    one ('zeros', 'ones', 'uniform', 'normal', 'xavier', 'msraprelu', 'orthogonal',
    'bilinear' or a :func:`register`-ed class; case-insensitive), or the JSON
    ``[name, kwargs]`` string that MXNet keeps in a variable's ``__init__`` attribute."""
    if isinstance(init, (Initializer, Mixed, Load)):
        return init
    if isinstance(init, str) and init.lower() in _NAMES:
        return _NAMES[init.lower()]()
    if isinstance(init, str) and init.lstrip().startswith("["):
        return _from_json(init, what)
    raise ValueError(f"{what} must be an Initializer or one of {sorted(_NAMES)} (got "
                     f"{init!r})")


__all__ = ["Initializer", "InitDesc", "Uniform", "Normal", "Xavier", "MSRAPrelu",
           "Orthogonal", "Bilinear", "Constant", "Zero", "One", "LSTMBias", "FusedRNN",
           "Mixed", "Load", "register", "create"]
