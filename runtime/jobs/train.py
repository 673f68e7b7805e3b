"""The two training jobs of ``ndrt train`` and what they measure while they run.

``train_sparse``: a click-through model on ``data.synthetic_ctr``: a CSR batch times an
embedding weight with a row_sparse gradient (``dot(csr, W)``, MXNet's sparse linear
layer), a small MLP on top, sigmoid binary cross-entropy, Adam with lazy updates (only
the rows in the batch change).  Its metric is the test AUC, printed beside the hidden
model's own AUC on the same rows (the best any model can expect).

``train_mlp``: an MLP on 8x8 digits (``data.digits``) with softmax cross-entropy and
Adam; its metric is the test accuracy.

Both return a ``JobResult``: per-step losses and pool bytes, per-epoch losses and
metrics, throughput, the CPU (or GPU) pool's statistics over training, the last
``autograd.last_backward_stats()``, storage fallbacks counted by the invoker, and the
trained block (``save_parameters``).

Data parallel (``kvstore='dist_sync'`` under ``mpiexec -n N``): every rank makes the same
seeded data set and walks the same shuffled global batches of ``batch_size`` rows, each
rank training on its slice of ``batch_size / N`` rows of every batch, so the number of
steps is the same on every rank by construction and the global batch is the one of a
one-process run.  The Trainer sums the gradients through the store (update_on_kvstore
False: each rank applies the same update to its replica) and rescales by the global
batch.  Every rank evaluates (the replicas are identical, so are the metrics) and, at the
end, compares a digest of its parameters with the other ranks'.  Only rank 0 logs.
"""

import contextlib
import hashlib
import signal
import threading
import time
from dataclasses import dataclass, field

import numpy as np

import allocator
from runtime import _imperative, autograd, gluon, nd
from runtime import kvstore as kvs
from runtime import initializer as init
from runtime.gluon import nn
from runtime import random as rt_random
from runtime.context import Context, cpu
from runtime.io import NDArrayIter
from runtime.jobs.data import digits, synthetic_ctr
from runtime.jobs.metrics import accuracy, auc

try:
    from tqdm.auto import tqdm
except ImportError:      # tqdm is a dependency; a broken install still trains, quietly
    tqdm = None

# Defaults of `ndrt train sparse` (one pass over the data, the CTR norm: a second epoch
# memorises the rare columns and the test AUC falls) and of `ndrt train mlp`.
SPARSE_DEFAULTS = dict(epochs=1, batch_size=1024, lr=0.002, seed=0, rows=200_000,
                       features=1_000_000, active=20, embed=8, hidden=32)
MLP_DEFAULTS = dict(epochs=20, batch_size=64, lr=0.003, seed=0, hidden=64)
EVAL_BATCH = 8192


@dataclass
class JobResult:
    """What a job measured; ``report_lines()`` formats its final report."""

    job: str
    metric_name: str
    net: object
    losses: list = field(default_factory=list)          # per step (batch mean)
    allocated: list = field(default_factory=list)       # pool bytes after each step
    reserved: list = field(default_factory=list)
    epoch_losses: list = field(default_factory=list)
    epoch_metrics: list = field(default_factory=list)
    reference: float = None           # the hidden model's AUC (sparse job)
    data_note: str = ""
    samples: int = 0                  # of the steady-state steps (all steps but the first)
    seconds: float = 0.0              # steady-state training steps only
    first_step_seconds: float = 0.0   # the first step: the store made, parameters broadcast
    pool: dict = field(default_factory=dict)
    backward: dict = field(default_factory=dict)
    fallbacks: int = 0
    grad_stypes: set = field(default_factory=set)       # of the sparse weight's gradient
    kvstore: str = None               # the store's type; None: no store
    rank: int = 0
    ranks: int = 1
    comm: dict = field(default_factory=dict)            # the store's counters over training
    steps: int = 0
    replicas_identical: bool = None   # the ranks' parameters digest alike (dist only)

    @property
    def metric(self):
        return self.epoch_metrics[-1]

    @property
    def samples_per_s(self):
        return self.samples / self.seconds if self.seconds > 0 else float("nan")

    def report_lines(self):
        p, b = self.pool, self.backward
        mib = 1 << 20
        lines = [f"{self.job}: {self.data_note}"]
        if self.reference is not None:
            lines.append(f"test {self.metric_name}: {self.metric:.4f} (the hidden model's own "
                         f"{self.metric_name} on the same rows: {self.reference:.4f})")
        else:
            lines.append(f"test {self.metric_name}: {self.metric:.4f}")
        lines += [
            f"throughput: {self.samples_per_s:,.0f} samples/s ({self.samples:,} samples in "
            f"{self.seconds:.2f} s of steady-state training steps; the first step, which "
            f"sets up the optimizer's states and any store (the parameters' broadcast), "
            f"took {1e3 * self.first_step_seconds:.1f} ms)",
            f"pool ({p['device']}): peak allocated {p['peak_allocated'] / mib:.1f} MiB, "
            f"reserved {p['reserved'] / mib:.1f} MiB (peak {p['peak_reserved'] / mib:.1f} MiB), "
            f"cache hit rate {p['hit_rate']:.2%}",
            "upstream allocations: " + _upstream_note(p["upstream_steps"]),
            "last backward: " + (
                f"{b['nodes']} nodes, in-place writes {b['requests']['inplace']}, "
                f"accumulations {b['requests']['add']}, pool calls {b['pool_calls']}, "
                f"{b['slots']} slots, planned {b['plan_peak_bytes'] / 1024:.1f} KiB vs "
                f"{b['naive_peak_bytes'] / 1024:.1f} KiB without reuse"
                + (" (cached plan)" if b['plan_cached'] else "") if b else "none"),
            "storage fallback: " + ("none" if not self.fallbacks else
                                    f"{self.fallbacks} operator calls fell back to dense"),
        ]
        if self.grad_stypes:
            lines.append("embedding weight gradient storage at every step: "
                         + ", ".join(sorted(self.grad_stypes)))
        if self.ranks > 1:
            c, n = self.comm, max(self.steps, 1)
            lines.append(
                f"data parallel: {self.ranks} ranks ({self.kvstore}), global batch kept; "
                f"communication {1e3 * c['seconds'] / n:.2f} ms and "
                f"{c['bytes'] / n / 1024:,.1f} KiB a step (received), row_sparse merge "
                f"{1e3 * c['merge_seconds'] / n:.2f} ms a step; replicas "
                + ("bit-identical" if self.replicas_identical else "DIFFER"))
        return lines


def _upstream_note(steps):
    """'19 in step 1, 0 in the other 122 steps'."""
    if not steps:
        return "no step ran"
    return f"{steps[0]} in step 1, {sum(steps[1:])} in the other {len(steps) - 1} steps"


class SparseCTR(nn.Block):
    """``dot(csr, W)`` (W: features x embed, row_sparse gradient) -> Dense(hidden, relu)
    -> Dense(1): one logit per row."""

    def __init__(self, features, embed=8, hidden=32, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.embed_weight = self.params.get(
                "embed_weight", shape=(features, embed), grad_stype="row_sparse",
                init=init.Normal(0.01))
            self.mlp = nn.Sequential()
            self.mlp.add(nn.Dense(hidden, activation="relu", in_units=embed),
                         nn.Dense(1, in_units=hidden))

    def forward(self, x):
        return self.mlp(nd.dot(x, self.embed_weight.data(x.context)))


def digits_mlp(hidden=64, classes=10):
    """Dense(hidden, relu) -> Dense(hidden, relu) -> Dense(classes) on 64 inputs."""
    net = nn.Sequential()
    net.add(nn.Dense(hidden, activation="relu", in_units=64),
            nn.Dense(hidden, activation="relu", in_units=hidden),
            nn.Dense(classes, in_units=hidden))
    return net


def _check_ctx(ctx):
    ctx = cpu() if ctx is None else Context(ctx)
    return ctx


def _predict(net, X, ctx, batch=EVAL_BATCH):
    """The net's outputs on the rows of X (NumPy or SciPy CSR), as one NumPy array."""
    outs = []
    with autograd.predict_mode():
        for s in range(0, X.shape[0], batch):
            part = X[s:s + batch]
            x = (nd.sparse.csr_matrix(part, ctx=ctx) if hasattr(part, "tocsr")
                 else nd.array(part, ctx=ctx))
            outs.append(net(x).asnumpy())
    return np.concatenate(outs)


class _Meter:
    """The pool, the backward executor and the fallback counter around the training
    steps (evaluation between epochs is not counted)."""

    def __init__(self, ctx):
        self.device = str(ctx)
        self.pool = allocator.get_pool(ctx)
        self.pool.reset_peak_stats()
        self.hits = self.misses = 0
        self.upstream = []                 # upstream allocations of each step
        self.fallbacks0 = _imperative.storage_fallback_count()

    def begin(self):
        self.before = self.pool.memory_stats()

    def end(self, result):
        s, b = self.pool.memory_stats(), self.before
        self.hits += s["num_cache_hits"] - b["num_cache_hits"]
        self.misses += s["num_cache_misses"] - b["num_cache_misses"]
        self.upstream.append(s["num_device_alloc"] - b["num_device_alloc"])
        result.allocated.append(s["allocated_bytes.all.current"])
        result.reserved.append(s["reserved_bytes.all.current"])

    def finish(self, result):
        s = self.pool.memory_stats()
        total = self.hits + self.misses
        result.pool = {
            "device": self.device,
            "peak_allocated": s["allocated_bytes.all.peak"],
            "peak_reserved": s["reserved_bytes.all.peak"],
            "reserved": s["reserved_bytes.all.current"],
            "hit_rate": self.hits / total if total else float("nan"),
            "upstream_first_step": self.upstream[0] if self.upstream else 0,
            "upstream_after_first_step": sum(self.upstream[1:]),
            "upstream_steps": list(self.upstream),
        }
        result.fallbacks = _imperative.storage_fallback_count() - self.fallbacks0
        result.backward = autograd.last_backward_stats()


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during training: ``epoch`` (from 1) and ``step`` (from 1 within the epoch)
    of the step that was running, or of the epoch's last step while the epoch was being
    evaluated or reported."""

    def __init__(self, epoch, step):
        super().__init__(f"interrupted at epoch {epoch}, step {step}")
        self.epoch, self.step = epoch, step


def _store(kvstore, batch_size):
    """The kvstore of a job (None without one): its rank and size; ``batch_size`` must
    split evenly over the ranks."""
    if kvstore is None:
        return None
    kv = kvs.create(kvstore)
    if batch_size % kv.num_workers:
        raise ValueError(f"batch_size must be a multiple of the {kv.num_workers} ranks "
                         f"(got batch_size={batch_size})")
    return kv


def _digests_agree(kv, net):
    """Whether every rank's parameters hash alike (the replicas are bit-identical)."""
    h = hashlib.sha256()
    for p in net.collect_params().values():
        h.update(p.data().asnumpy().tobytes())
    every = kv._gather_bytes(h.digest())
    return all(d == every[0] for d in every)


def _fit(result, net, loss_fn, trainer, it, epochs, evaluate, ctx, quiet, log, on_step=None,
         kv=None):
    """The loop both jobs share: per epoch, batches from ``it`` (reset each epoch), a
    recorded forward, backward, ``trainer.step``; then ``evaluate()`` gives the metric.
    With a dist store each rank takes its slice of every batch (module docstring).
    A KeyboardInterrupt becomes :class:`Interrupted`, saying where training was."""
    rank, ranks = (kv.rank, kv.num_workers) if kv is not None else (0, 1)
    result.kvstore, result.rank, result.ranks = (kv.type if kv else None), rank, ranks
    if kv is not None:
        kv.barrier()      # the ranks start the clock together: start-up skew is not a step
    comm0 = kv.comm_stats() if kv is not None else None
    meter = _Meter(ctx)
    where = [1, 1]                  # epoch, step within it
    try:
        for epoch in range(1, epochs + 1):
            where[:] = [epoch, 1]
            it.reset()
            bar = None
            try:
                if tqdm is not None and not quiet:
                    # made inside the try: a Ctrl-C held while the bar is made is raised
                    # as the with ends, and the finally must close the bar then too
                    with _sigint_held():
                        bar = tqdm(total=it.num_data // it.batch_size, leave=False,
                                   desc=f"epoch {epoch}/{epochs}", unit="batch",
                                   dynamic_ncols=True)
                total, count, timed, t_epoch = _epoch(result, net, loss_fn, trainer, it,
                                                      ctx, on_step, meter, bar, where, rank,
                                                      ranks)
                metric = evaluate()
            finally:
                if bar is not None:
                    with _sigint_held():
                        bar.close()
            result.samples += timed * ranks
            result.seconds += t_epoch
            result.epoch_losses.append(total / max(count, 1))
            result.epoch_metrics.append(metric)
            if not quiet:
                log(f"epoch {epoch}: loss {result.epoch_losses[-1]:.4f}, test "
                    f"{result.metric_name} {result.epoch_metrics[-1]:.4f}, "
                    f"{timed * ranks / t_epoch if t_epoch else float('nan'):,.0f} samples/s")
    except KeyboardInterrupt:
        raise Interrupted(*where) from None
    meter.finish(result)
    if kv is not None:
        result.comm = {k: v - comm0[k] for k, v in kv.comm_stats().items()}
        if ranks > 1:
            result.replicas_identical = _digests_agree(kv, net)
    return result


@contextlib.contextmanager
def _sigint_held():
    """Hold Ctrl-C back while a progress bar is made or closed; a held SIGINT is raised
    again once the handler is back.  An interrupt inside tqdm's ``__init__`` leaves a
    half-made bar whose ``__del__`` prints a traceback; one inside ``close`` leaves the
    bar's line unterminated, the CLI's one-line message glued to its end.  (A signal mask
    would not do: another thread, tqdm's monitor or a BLAS worker, can take a
    process-directed signal; Python's handlers always run in the main thread.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = []
    old = signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)
        if held:
            signal.raise_signal(signal.SIGINT)


def _epoch(result, net, loss_fn, trainer, it, ctx, on_step, meter, bar, where, rank, ranks):
    """The steps of one epoch of :func:`_fit`: (sum of loss * rows, rows, rows of the
    steady-state steps, their seconds) of this rank's slices of the batches; the job's
    first step is timed apart (``result.first_step_seconds``: it makes the optimizer's
    states and any store, and broadcasts the parameters); ``where[1]`` follows the step
    running.  The clock covers forward, backward, ``trainer.step`` and reading the loss,
    not the making of the batch."""
    total, count, timed, t_epoch = 0.0, 0, 0, 0.0
    for k, batch in enumerate(it, 1):
        where[1] = k
        x, y = batch.data[0], batch.label[0]
        if ranks > 1:
            b = x.shape[0] // ranks
            x, y = x[rank * b:(rank + 1) * b], y[rank * b:(rank + 1) * b]
        if x.context != ctx:
            x, y = x.as_in_context(ctx), y.as_in_context(ctx)
        n = x.shape[0]
        meter.begin()
        t0 = time.perf_counter()
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(n * ranks)
        value = float(loss.mean().asscalar())
        if result.steps:
            t_epoch += time.perf_counter() - t0
            timed += n
        else:
            result.first_step_seconds = time.perf_counter() - t0
        if on_step is not None:
            on_step()
        # Drop this step's arrays before the iterator makes the next batch, so that
        # every step finds its blocks in the pool: no upstream allocation after the
        # first step.
        del batch, x, y, loss
        meter.end(result)
        result.steps += 1
        result.losses.append(value)
        total += value * n
        count += n
        if bar is not None:
            bar.update(1)
            if t_epoch:
                bar.set_postfix(loss=f"{value:.4f}", samples_s=f"{timed / t_epoch:,.0f}")
    return total, count, timed, t_epoch


def _positive(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer (got {name}={value!r})")


def _check_common(epochs, batch_size, lr, train_rows):
    _positive("epochs", epochs)
    _positive("batch_size", batch_size)
    if not (isinstance(lr, (int, float)) and not isinstance(lr, bool) and lr > 0
            and np.isfinite(lr)):
        raise ValueError(f"lr must be a positive finite number (got lr={lr!r})")
    if batch_size > train_rows:
        raise ValueError(f"batch_size must be at most the {train_rows} training rows "
                         f"(got batch_size={batch_size}); lower it or add rows")


def train_sparse(epochs=SPARSE_DEFAULTS["epochs"], batch_size=SPARSE_DEFAULTS["batch_size"],
                 lr=SPARSE_DEFAULTS["lr"], seed=SPARSE_DEFAULTS["seed"],
                 rows=SPARSE_DEFAULTS["rows"], features=SPARSE_DEFAULTS["features"],
                 active=SPARSE_DEFAULTS["active"], embed=SPARSE_DEFAULTS["embed"],
                 hidden=SPARSE_DEFAULTS["hidden"], ctx=None, quiet=False, log=print,
                 kvstore=None):
    """Train the click-through model (module docstring); returns a ``JobResult`` whose
    metric is the test AUC and whose ``reference`` is the hidden model's test AUC.
    ``kvstore``: a store type ('dist_sync' under mpiexec: data parallel), or None."""
    ctx = _check_ctx(ctx)
    _positive("embed", embed)
    _positive("hidden", hidden)
    t0 = time.perf_counter()
    data = synthetic_ctr(rows=rows, features=features, active=active, seed=seed)
    n_train = data.X_train.shape[0]
    _check_common(epochs, batch_size, lr, n_train)
    kv = _store(kvstore, batch_size)
    quiet = quiet or (kv is not None and kv.rank != 0)
    result = JobResult("sparse", "AUC", None, reference=auc(data.y_test, data.hidden_test))
    result.data_note = (f"synthetic click-through set, {n_train:,} train + "
                        f"{data.X_test.shape[0]:,} test rows, {features:,} hashed features, "
                        f"{active} fields a row, made in {time.perf_counter() - t0:.1f} s")
    if not quiet:
        log(result.data_note)

    rt_random.seed(seed)
    net = SparseCTR(features, embed=embed, hidden=hidden)
    net.initialize(init.Xavier(), ctx=ctx)
    result.net = net
    trainer = gluon.Trainer(net.collect_params(), "adam",
                            {"learning_rate": lr, "lazy_update": True}, **_trainer_kv(kv))
    it = NDArrayIter(data.X_train, data.y_train.reshape(-1, 1), batch_size=batch_size,
                     shuffle=True, seed=seed, last_batch_handle="discard")
    weight = net.embed_weight

    def evaluate():
        return auc(data.y_test, _predict(net, data.X_test, ctx).ravel())

    def on_step():
        result.grad_stypes.add(weight.grad().stype)

    return _fit(result, net, gluon.loss.SigmoidBinaryCrossEntropyLoss(), trainer, it, epochs,
                evaluate, ctx, quiet, log, on_step, kv)


def train_mlp(epochs=MLP_DEFAULTS["epochs"], batch_size=MLP_DEFAULTS["batch_size"],
              lr=MLP_DEFAULTS["lr"], seed=MLP_DEFAULTS["seed"], hidden=MLP_DEFAULTS["hidden"],
              rows=None, ctx=None, quiet=False, log=print, kvstore=None):
    """Train the digits MLP (module docstring); returns a ``JobResult`` whose metric is
    the test accuracy.  ``rows`` keeps only the first rows of the training split (tiny
    runs).  ``kvstore`` as :func:`train_sparse`'s."""
    ctx = _check_ctx(ctx)
    _positive("hidden", hidden)
    X_train, y_train, X_test, y_test, source = digits(seed=seed)
    if rows is not None:
        _positive("rows", rows)
        X_train, y_train = X_train[:rows], y_train[:rows]
    _check_common(epochs, batch_size, lr, len(y_train))
    kv = _store(kvstore, batch_size)
    quiet = quiet or (kv is not None and kv.rank != 0)
    result = JobResult("mlp", "accuracy", None)
    result.data_note = f"{source}, {len(y_train)} train + {len(y_test)} test rows of 64 pixels"
    if not quiet:
        log(result.data_note)

    rt_random.seed(seed)
    net = digits_mlp(hidden)
    net.initialize(init.Xavier(), ctx=ctx)
    result.net = net
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": lr},
                            **_trainer_kv(kv))
    it = NDArrayIter(X_train, y_train.astype(np.float32), batch_size=batch_size,
                     shuffle=True, seed=seed, last_batch_handle="discard")

    def evaluate():
        return accuracy(y_test, _predict(net, X_test, ctx).argmax(axis=1))

    return _fit(result, net, gluon.loss.SoftmaxCrossEntropyLoss(), trainer, it, epochs,
                evaluate, ctx, quiet, log, kv=kv)


def _trainer_kv(kv):
    """The Trainer's kvstore arguments: the job's store, each rank updating its replica
    (no store: gluon's default, which makes none for one context)."""
    return {} if kv is None else {"kvstore": kv, "update_on_kvstore": False}
