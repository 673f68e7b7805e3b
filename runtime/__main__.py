"""The ``ndrt`` command (also ``python -m runtime``).

    ndrt [options]            the default job: ndrt train sparse [options]
    ndrt train [sparse|mlp]   train a model (sparse when no model is named)
    ndrt info                 versions, build, threads, fast path, pools, CUDA and CuPy
    ndrt demo                 a tour: dense and sparse operators, autograd, pool statistics

    mpiexec -n 2 ndrt train sparse --kvstore dist_sync
                              data parallel on 2 ranks (the dist extra: mpi4py, mpich)

``ndrt train --help`` lists the options.  Bad arguments exit with argparse's message and
status 2 (output paths for ``--save``/``--plot``, and sizes the memory cannot hold, are
checked before training); under mpiexec with more than one rank, ``--kvstore dist_sync``
(or ``dist_device_sync``) is required: without it the ranks would train alone on the same
data, so the command stops with status 2 and says so.  A request the machine cannot serve
(``--ctx gpu`` without a usable GPU, ``--plot`` without matplotlib) or a bad
``NDRT_STORAGE_FALLBACK`` exits with status 1 before training starts.  Ctrl-C during
training prints where it stopped and exits with status 130; a reader that leaves early
(``ndrt train | head -1``) ends the command quietly with status 0.
"""

import argparse
import math
import os
import resource
import sys

import numpy as np

import allocator
from runtime import _dist, _imperative, autograd, nd
from runtime import random as rt_random
from runtime.context import cpu, gpu
from runtime.jobs import MLP_DEFAULTS, SPARSE_DEFAULTS, info_lines, train_mlp, train_sparse
from runtime.jobs.info import cuda_state
from runtime.jobs.train import Interrupted

try:                        # the demo extra; --plot says so when it is missing
    from matplotlib.figure import Figure
except ImportError:
    Figure = None

MODELS = {"sparse": (train_sparse, SPARSE_DEFAULTS), "mlp": (train_mlp, MLP_DEFAULTS)}


def _number(convert, ok, rule):
    """An argparse type: ``convert(text)``, accepted when ``ok(value)``; otherwise
    argparse's error 'argument --x: must be <rule> (got '...')'."""
    def parse(text):
        try:
            value = convert(text)
        except ValueError:
            value = None
        if value is None or not ok(value):
            raise argparse.ArgumentTypeError(f"must be {rule} (got {text!r})")
        return value
    return parse


_positive_int = _number(int, lambda v: v >= 1, "a positive integer")
_non_negative_int = _number(int, lambda v: v >= 0, "a non-negative integer")
_positive_float = _number(float, lambda v: v > 0 and math.isfinite(v),
                          "a positive finite number")


def build_parser():
    parser = argparse.ArgumentParser(
        prog="ndrt", description="ndrt: an eager NDArray runtime in the line of MXNet's. "
        "With no command, runs the default job (ndrt train sparse).")
    sub = parser.add_subparsers(dest="command", metavar="{train,info,demo}")
    t = sub.add_parser(
        "train", help="train a model (sparse: click-through model on CSR input; mlp: digits)",
        description="Train one of the two jobs and print per-epoch loss and metric, then a "
        "report: throughput, pool statistics, the last backward's statistics, storage "
        "fallbacks.")
    t.add_argument("model", nargs="?", choices=sorted(MODELS), default="sparse",
                   help="which job (default: sparse)")
    for flag, key, kind, what in (("--epochs", "epochs", _positive_int,
                                   "passes over the training set"),
                                  ("--batch-size", "batch_size", _positive_int, "rows per step"),
                                  ("--lr", "lr", _positive_float, "Adam's learning rate")):
        t.add_argument(flag, type=kind, help=f"{what} (default: sparse "
                       f"{SPARSE_DEFAULTS[key]}, mlp {MLP_DEFAULTS[key]})")
    t.add_argument("--seed", type=_non_negative_int, default=0,
                   help="seed of the data set, the initial weights and the shuffling "
                   "(default: 0)")
    t.add_argument("--rows", type=_positive_int,
                   help=f"sparse: rows of the synthetic set, train + test (default "
                   f"{SPARSE_DEFAULTS['rows']:,}); mlp: keep only this many training rows")
    t.add_argument("--features", type=_positive_int,
                   help=f"sparse only: hashed feature columns (default "
                   f"{SPARSE_DEFAULTS['features']:,})")
    t.add_argument("--quiet", action="store_true",
                   help="no progress bar and no per-epoch lines; only the final report")
    t.add_argument("--save", metavar="FILE", help="save the trained parameters to FILE "
                   "(nd.save format; load with the block's load_parameters)")
    t.add_argument("--plot", metavar="FILE.png", help="write the loss curve and the pool's "
                   "allocated/reserved bytes over the steps (needs matplotlib: "
                   "pip install 'ndrt[demo]')")
    t.add_argument("--ctx", choices=("cpu", "gpu"), default="cpu",
                   help="device to train on (default: cpu)")
    t.add_argument("--kvstore", choices=("local", "device", "dist_sync", "dist_device_sync"),
                   help="the Trainer's kvstore; dist_sync: data parallel over the ranks of "
                   "`mpiexec -n N ndrt train ...` (pip install 'ndrt[dist]'); default: none")
    t.set_defaults(subparser=t)
    sub.add_parser("info", help="versions, build flags, threads, fast path, pools, CUDA/CuPy",
                   description="Print what this installation is made of and can use.")
    sub.add_parser("demo", help="a short tour of arrays, sparse operators and autograd",
                   description="Dense and sparse operators, an autograd gradient checked "
                   "against finite differences, the CPU pool's statistics.")
    return parser


def _fail(message):
    print(f"ndrt: error: {message}", file=sys.stderr)
    return 1


def _output_path(parser, flag, path, suffixes=None):
    """Refuse, before any training, an output path that cannot be written: a directory
    (or a name ending in a slash), a missing or read-only folder, or (``--plot``) a
    format matplotlib does not write."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        parser.error(f"argument {flag}: {path!r} is a directory; give a file name")
    if path.endswith(os.sep):
        parser.error(f"argument {flag}: {path!r} names a folder; give a file name")
    if not os.path.isdir(folder):
        parser.error(f"argument {flag}: the folder {folder!r} does not exist")
    if not os.access(folder, os.W_OK):
        parser.error(f"argument {flag}: the folder {folder!r} is not writable")
    if suffixes is not None:
        ext = os.path.splitext(path)[1].lstrip(".").lower()
        if ext not in suffixes:
            parser.error(f"argument {flag}: {path!r} must end in one of "
                         f"{', '.join('.' + x for x in sorted(suffixes))} (matplotlib's "
                         "formats)")


def _memory():
    """The bytes this process may use at most: the machine's physical memory, or the
    address-space limit (RLIMIT_AS) when one is set lower."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    return total if limit == resource.RLIM_INFINITY else min(total, limit)


def _size(n):
    """``n`` bytes in binary units: '23.4 GiB'."""
    if n >= 1 << 1000:                 # past what a float holds
        return f"{n >> 50:,} PiB"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:,.1f} {unit}" if unit != "B" else f"{n} B"
        n /= 1024


def _check_sizes(parser, args):
    """Refuse, before anything is made, a sparse job that cannot fit in memory: its data
    set holds at least 40 bytes per row and field while it is made (five 8-byte arrays
    of rows x fields), its embedding weight and Adam's two states 12 bytes per feature
    and embedding column."""
    rows = SPARSE_DEFAULTS["rows"] if args.rows is None else args.rows
    features = SPARSE_DEFAULTS["features"] if args.features is None else args.features
    fields, embed = SPARSE_DEFAULTS["active"], SPARSE_DEFAULTS["embed"]
    need = {"--rows": (40 * rows * fields, f"{rows:,} rows need at least {{}} for the data "
                       f"set (40 bytes per row and field, {fields} fields)"),
            "--features": (12 * features * embed, f"{features:,} features need at least {{}} "
                           f"for the embedding weight and Adam's states (12 bytes per "
                           f"feature and embedding column, {embed} columns)")}
    have = _memory()
    if sum(n for n, _ in need.values()) <= have:
        return
    flag = max((f for f in need if getattr(args, f[2:]) is not None),
               key=lambda f: need[f][0], default="--rows")
    n, what = need[flag]
    parser.error(f"argument {flag}: {what.format(_size(n))}, more than the {_size(have)} "
                 "of memory this process can have")


def train(args):
    parser = args.subparser
    if args.save is not None:
        _output_path(parser, "--save", args.save)
    if args.plot is not None and Figure is not None:
        _output_path(parser, "--plot", args.plot,
                     set(Figure().canvas.get_supported_filetypes()))
    fn = MODELS[args.model][0]
    if _dist.launched_by_mpi() and not (args.kvstore or "").startswith("dist"):
        parser.error("launched by mpiexec with several ranks, but --kvstore is not "
                     "dist_sync or dist_device_sync: each rank would train alone on the same "
                     "data; add --kvstore dist_sync")
    if args.features is not None and args.model != "sparse":
        parser.error("argument --features: only the sparse model has hashed features")
    if args.model == "sparse":
        _check_sizes(parser, args)
    kwargs = {k: getattr(args, k) for k in ("epochs", "batch_size", "lr", "rows")
              if getattr(args, k) is not None}
    if args.features is not None:
        kwargs["features"] = args.features
    if args.plot is not None and Figure is None:
        return _fail("--plot needs matplotlib, which is not installed: "
                     "pip install 'ndrt[demo]' (or matplotlib)")
    if args.ctx == "gpu":
        ok, note = cuda_state()
        if not ok:
            return _fail(f"--ctx gpu: no usable GPU on this machine ({note}); "
                         "train on the CPU with --ctx cpu")
        ctx = gpu(0)
    else:
        ctx = cpu()
    if args.kvstore is not None:
        kwargs["kvstore"] = args.kvstore
    try:
        result = fn(seed=args.seed, ctx=ctx, quiet=args.quiet, **kwargs)
    except ValueError as e:        # a combination the job refuses (batch larger than data)
        parser.error(str(e))
    except Interrupted as e:
        print(f"ndrt: {e}", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("ndrt: interrupted before the first step", file=sys.stderr)
        return 130
    except ImportError as e:       # a dist store without mpi4py
        return _fail(str(e))
    if result.rank != 0:           # the other ranks of a data-parallel job stay quiet
        return 0
    print("\n".join(result.report_lines()))
    if args.save is not None:
        result.net.save_parameters(args.save)
        print(f"parameters saved to {args.save}")
    if args.plot is not None:
        plot(result, args.plot)
        print(f"plot written to {args.plot}")
    return 0


def plot(result, path):
    """Loss per step (and its running mean) above the pool's allocated and reserved MiB
    per step, into ``path`` (matplotlib's object API: no pyplot, no GUI backend)."""
    steps = np.arange(1, len(result.losses) + 1)
    fig = Figure(figsize=(8, 6))
    top, bottom = fig.subplots(2, 1, sharex=True)
    top.plot(steps, result.losses, lw=0.6, alpha=0.5, label="batch loss")
    k = max(1, len(steps) // 50)
    smooth = np.convolve(result.losses, np.ones(k) / k, mode="valid")
    top.plot(steps[k - 1:], smooth, lw=1.5, label=f"mean of {k} steps")
    top.set_ylabel("loss")
    top.set_title(f"ndrt train {result.job}: test {result.metric_name} {result.metric:.4f}")
    top.legend()
    mib = 1 << 20
    bottom.plot(steps, np.asarray(result.allocated) / mib, label="allocated")
    bottom.plot(steps, np.asarray(result.reserved) / mib, label="reserved")
    bottom.set_xlabel("step")
    bottom.set_ylabel(f"pool {result.pool['device']} (MiB)")
    bottom.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def demo():
    """Dense and sparse operators, an autograd gradient checked against finite
    differences, the CPU pool's statistics before and after the arrays die."""
    print(f"fast path: {_imperative.fast_path_note()}")
    rt_random.seed(0)
    x = nd.random.normal(shape=(256, 128))
    w = nd.random.uniform(-0.1, 0.1, shape=(64, 128))
    h = nd.relu(nd.FullyConnected(x, w, nd.zeros(64), num_hidden=64))
    p = nd.softmax(h)
    print(f"dense: x {x.shape} -> FullyConnected + relu + softmax -> {p.shape}; "
          f"row sums {p.sum(axis=1).asnumpy()[:3]}")

    dense = np.where(np.random.default_rng(0).random((1000, 500)) < 0.01, 1.0, 0.0)
    c = nd.sparse.csr_matrix(dense.astype(np.float32))
    y = nd.dot(c, nd.ones((500, 8)))
    yt = nd.dot(c, nd.ones((1000, 8)), transpose_a=True)
    print(f"sparse: csr {c.shape} with {c.nnz} stored values; dot(csr, dense) -> {y.stype} "
          f"{y.shape}; dot(csr.T, dense) -> {yt.stype} {yt.shape}")

    t = nd.array([0.5, 1.0, 2.0], dtype="float64")
    t.attach_grad()
    with autograd.record():
        z = (nd.tanh(t) * t).sum()
    z.backward()
    g = t.grad
    f = lambda v: np.tanh(v) * v    # noqa: E731
    eps = 1e-6
    fd = (f(t.asnumpy() + eps) - f(t.asnumpy() - eps)) / (2 * eps)
    print(f"autograd of sum(tanh(t) * t) vs central differences: max error "
          f"{np.abs(g.asnumpy() - fd).max():.1e}; backward: {autograd.last_backward_stats()}\n")

    print(allocator.memory_summary())
    del x, w, h, p, c, y, yt, t, g, z
    s = allocator.memory_stats()
    print(f"\nafter the arrays died: allocated {s['allocated_bytes.all.current']} B, "
          f"cached for reuse {s['cached_bytes']} B")
    return 0


def main(argv=None):
    """Entry point of the ``ndrt`` console script; returns the exit status."""
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help")):
        argv = ["train"] + argv               # bare `ndrt [options]`: the default job
    args = parser.parse_args(argv)
    run = {"info": info, "demo": demo}.get(args.command, lambda: train(args))
    if args.command != "info":
        try:
            _imperative.get_storage_fallback()
        except ValueError as e:              # a bad NDRT_STORAGE_FALLBACK
            return _fail(str(e))
    try:
        status = run()
        if sys.stdout is not None:
            sys.stdout.flush()
    except BrokenPipeError:      # `ndrt ... | head`: the reader left, not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:    # outside training (train reports where it stopped)
        print("ndrt: interrupted", file=sys.stderr)
        return 130
    return status


def info():
    """``ndrt info``'s report (print() writes nothing when standard output is closed)."""
    print("\n".join(info_lines()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
