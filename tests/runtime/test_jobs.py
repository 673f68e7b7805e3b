"""runtime.jobs and the ``ndrt`` command: data sets, AUC, both training jobs on tiny
configurations, parameters saved and loaded, the CLI's errors, ``ndrt info``."""

import itertools
import os
import re
import signal
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import allocator
import runtime as rt
from runtime import _imperative, _sparse_common, nd
from runtime.__main__ import Figure, main
from runtime.jobs import (SparseCTR, auc, accuracy, digits, digits_mlp, info_lines,
                          synthetic_ctr, train_mlp, train_sparse)
from runtime.jobs.data import zipf_ranks
from runtime.jobs.info import cuda_state
from tests.runtime.conftest import _ROOT, child_env, free_failing_tests, run_limited

TINY_SPARSE = dict(rows=3000, features=20000, active=10, epochs=3, batch_size=100,
                   lr=0.01, quiet=True)
TINY_MLP = dict(rows=400, epochs=4, batch_size=50, quiet=True)


# -- AUC -------------------------------------------------------------------------------

def brute_auc(y, s):
    """Every (positive, negative) pair: 1 when the positive scores higher, 1/2 on a tie."""
    pos, neg = s[y == 1], s[y == 0]
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p, n in itertools.product(pos, neg))
    return wins / (len(pos) * len(neg))


@pytest.mark.parametrize("seed", range(6))
def test_auc_matches_a_pair_count(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 80))
    y = rng.integers(0, 2, n)
    y[:2] = [0, 1]                              # both classes
    # few distinct values: many ties, across and within classes
    s = rng.integers(0, 6, n).astype(np.float32) if seed % 2 else rng.standard_normal(n)
    assert auc(y, s) == pytest.approx(brute_auc(y, s), abs=1e-12)


def test_auc_extremes_and_errors():
    assert auc([0, 0, 1, 1], [0.1, 0.2, 0.3, 0.4]) == 1.0
    assert auc([1, 1, 0, 0], [0.1, 0.2, 0.3, 0.4]) == 0.0
    assert auc([0, 1, 0, 1], [5, 5, 5, 5]) == 0.5
    assert auc(np.array([False, True]), [0.0, 1.0]) == 1.0
    with pytest.raises(ValueError, match="needs both classes"):
        auc([1, 1], [0.1, 0.2])
    with pytest.raises(ValueError, match="same length"):
        auc([0, 1], [0.1])
    with pytest.raises(ValueError, match="must be 0 or 1"):
        auc([0, 2], [0.1, 0.2])
    with pytest.raises(ValueError, match="NaN"):
        auc([0, 1], [0.1, np.nan])


def test_accuracy():
    assert accuracy([1, 2, 3, 4], [1, 2, 0, 4]) == 0.75
    with pytest.raises(ValueError, match="same non-zero length"):
        accuracy([1, 2], [1])


# -- data sets -------------------------------------------------------------------------

def test_zipf_ranks_follow_the_law():
    u = np.random.default_rng(0).random(200_000)
    r = zipf_ranks(u, 50, 1.2)
    p = np.arange(1, 51, dtype=np.float64) ** -1.2
    p /= p.sum()
    freq = np.bincount(r, minlength=50) / r.size
    np.testing.assert_allclose(freq, p, atol=4 * np.sqrt(p.max() / r.size))


def test_ctr_set_is_deterministic_by_seed():
    a = synthetic_ctr(rows=2000, features=5000, active=8, seed=3)
    b = synthetic_ctr(rows=2000, features=5000, active=8, seed=3)
    c = synthetic_ctr(rows=2000, features=5000, active=8, seed=4)
    for name in ("X_train", "X_test"):
        x, y = getattr(a, name), getattr(b, name)
        assert (x != y).nnz == 0 and x.shape == y.shape
    for name in ("y_train", "y_test", "hidden_train", "hidden_test"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert (a.X_train != c.X_train).nnz > 0
    assert not np.array_equal(a.hidden_test, c.hidden_test)


def test_ctr_set_shape_and_format():
    d = synthetic_ctr(rows=5000, features=100_000, active=20, seed=0, test_fraction=0.2)
    assert d.X_train.shape == (4000, 100_000) and d.X_test.shape == (1000, 100_000)
    assert d.y_train.shape == (4000,) and d.y_test.shape == (1000,)
    for X in (d.X_train, d.X_test):
        assert isinstance(X, sp.csr_matrix) and X.dtype == np.float32
        assert X.has_canonical_format                 # sorted, no duplicates
        per_row = np.diff(X.indptr)
        assert per_row.max() == 20 and per_row.min() >= 18   # a rare hash collision
        assert X.sum() == X.shape[0] * 20                     # duplicates were summed
    assert set(np.unique(d.y_train)) == {0.0, 1.0}
    # labels follow the hidden model: its AUC is far above chance, and the mean label is
    # the mean click probability
    assert auc(d.y_test, d.hidden_test) > 0.7
    p = 1 / (1 + np.exp(-d.hidden_train))
    assert abs(d.y_train.mean() - p.mean()) < 4 * np.sqrt(p.mean() / len(p))


def test_ctr_frequencies_are_power_law():
    d = synthetic_ctr(rows=20000, features=1_000_000, active=20, seed=1)
    counts = np.sort(np.bincount(d.X_train.indices))[::-1]
    counts = counts[counts > 0]
    # a heavy head and a long tail: the top 1% of columns holds a large share, and most
    # columns are rare
    top = counts[: max(1, len(counts) // 100)].sum() / counts.sum()
    assert top > 0.3, top
    assert np.median(counts) <= 2


@pytest.mark.parametrize("kwargs, match", [
    (dict(rows=0), r"rows must be a positive integer \(got rows=0\)"),
    (dict(rows=1), r"rows must be at least 2"),
    (dict(features=-5), r"features must be a positive integer \(got features=-5\)"),
    (dict(active=2.5), r"active must be a positive integer"),
    (dict(test_fraction=1.0), r"test_fraction must lie in \(0, 1\)"),
    (dict(exponent=0), r"exponent must be positive"),
    (dict(decay=-1), r"decay must be non-negative"),
    (dict(click_rate=0), r"click_rate must lie in \(0, 1\)"),
])
def test_ctr_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        synthetic_ctr(**{"rows": 100, "features": 100, "active": 5, **kwargs})


def test_digits_split_and_determinism():
    a, b = digits(seed=1), digits(seed=1)
    X_train, y_train, X_test, y_test, source = a
    assert source in ("scikit-learn digits", "synthetic digits")
    assert X_train.shape[1] == 64 and X_train.dtype == np.float32
    assert len(y_train) + len(y_test) == 1797 and len(y_test) == 449
    assert 0.0 <= X_train.min() and X_train.max() <= 1.0
    assert set(np.unique(y_train)) == set(range(10))
    for u, v in zip(a[:4], b[:4]):
        np.testing.assert_array_equal(u, v)
    assert not np.array_equal(digits(seed=2)[1], y_train)


# -- the jobs --------------------------------------------------------------------------

def _falls(losses, k=5):
    return np.mean(losses[-k:]) < np.mean(losses[:k]) - 0.02


def test_sparse_job_learns_with_row_sparse_gradients_and_no_fallback():
    # the pool's growth below is the job's own: blocks cached by earlier tests (asv's
    # benchmarks train the same job) would serve its first steps
    allocator.empty_cache()
    old = rt.set_storage_fallback("error")      # any fallback would raise
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", rt.StorageFallbackWarning)
            r = train_sparse(**TINY_SPARSE)
    finally:
        rt.set_storage_fallback(old)
    assert r.fallbacks == 0
    assert r.grad_stypes == {"row_sparse"}
    steps = 3 * (2400 // 100)
    # throughput counts the steady-state steps: the first is timed apart
    assert len(r.losses) == steps and r.samples == (steps - 1) * 100
    assert r.seconds > 0 and r.first_step_seconds > 0
    assert _falls(r.losses)
    assert r.epoch_losses[-1] < r.epoch_losses[0]
    assert 0.6 < r.metric <= r.reference + 0.02     # learns, and cannot beat the truth much
    # the pool grows in the first two steps only: the first makes the optimizer state
    # and the gradients, the second a row_sparse gradient's storage beside the last one
    # (a sparse gradient is replaced, not written into, so two live while backward runs)
    steps = r.pool["upstream_steps"]
    assert steps[0] > 0 and steps[1] > 0 and sum(steps[2:]) == 0, steps
    assert 0.9 < r.pool["hit_rate"] <= 1.0
    assert r.backward["plan_cached"] and r.backward["slots"] > 0
    text = "\n".join(r.report_lines())
    for what in ("test AUC", "hidden model", "samples/s", "cache hit rate",
                 "upstream allocations", "in-place writes", "storage fallback: none",
                 "row_sparse"):
        assert what in text


def test_sparse_gradient_holds_only_the_batch_rows():
    r = train_sparse(**{**TINY_SPARSE, "epochs": 1})
    g = r.net.embed_weight.grad()
    assert g.stype == "row_sparse"
    assert 0 < g.indices.shape[0] <= 100 * 10 < r.net.embed_weight.shape[0]


def test_mlp_job_learns():
    r = train_mlp(**TINY_MLP)
    assert len(r.losses) == 4 * 8
    assert _falls(r.losses)
    assert r.metric > 0.5                    # ten classes: chance is 0.1
    assert r.fallbacks == 0 and not r.grad_stypes
    # the pool grows in the first two steps only: the backward plan's buffers are made
    # after the first step's forward, and from the second step on live beside it
    steps = r.pool["upstream_steps"]
    assert steps[0] > 0 and sum(steps[2:]) == 0, steps
    assert f"{steps[0]} in step 1, {steps[1]} in the other 31 steps" in "\n".join(
        r.report_lines())
    assert r.backward["plan_cached"] and r.backward["pool_calls"] == 0


def test_job_arguments_are_checked():
    with pytest.raises(ValueError, match=r"batch_size must be at most the 2400 training rows"):
        train_sparse(**{**TINY_SPARSE, "batch_size": 5000})
    with pytest.raises(ValueError, match=r"lr must be a positive finite number \(got lr=-1"):
        train_mlp(**{**TINY_MLP, "lr": -1.0})
    with pytest.raises(ValueError, match=r"epochs must be a positive integer \(got epochs=0"):
        train_mlp(**{**TINY_MLP, "epochs": 0})


def test_saved_parameters_load_into_a_new_model(tmp_path):
    r = train_sparse(**{**TINY_SPARSE, "epochs": 1})
    f = str(tmp_path / "ctr.params")
    r.net.save_parameters(f)
    net = SparseCTR(20000, embed=8, hidden=32)
    net.load_parameters(f)
    x = nd.sparse.csr_matrix(synthetic_ctr(rows=200, features=20000, active=10).X_test)
    np.testing.assert_array_equal(net(x).asnumpy(), r.net(x).asnumpy())
    m = digits_mlp(64)
    with pytest.raises(ValueError, match="missing in file"):
        m.load_parameters(f)


def test_jobs_give_their_memory_back():
    r = train_mlp(**{**TINY_MLP, "epochs": 1})
    assert r.pool["peak_allocated"] > 0
    del r          # the autouse pools_balance fixture checks the pool is back


# -- the command -----------------------------------------------------------------------

def ndrt(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "runtime", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=_ROOT, env=child_env())


@pytest.mark.parametrize("args, message", [
    (["train", "--epochs", "0"], "argument --epochs: must be a positive integer (got '0')"),
    (["train", "--lr", "nan"], "argument --lr: must be a positive finite number (got 'nan')"),
    (["train", "resnet"], "argument model: invalid choice: 'resnet'"),
    (["train", "--ctx", "tpu"], "argument --ctx: invalid choice: 'tpu'"),
    (["train", "mlp", "--features", "10"], "--features: only the sparse model"),
    (["train", "--rows", "50", "--batch-size", "100", "--features", "100"],
     "batch_size must be at most the 40 training rows"),
    (["fly"], "invalid choice: 'fly'"),
    (["--epochs", "0"], "argument --epochs: must be a positive integer (got '0')"),
    (["train", "--save", "/"], "argument --save: '/' is a directory; give a file name"),
    (["train", "--save", "/nonexistent-ndrt/w.params"],
     "argument --save: the folder '/nonexistent-ndrt' does not exist"),
])
def test_cli_rejects_bad_arguments(args, message, capsys):
    with pytest.raises(SystemExit) as e:
        main(args)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "usage: ndrt" in err


def test_cli_bad_argument_exits_2_from_a_process():
    p = ndrt("train", "--batch-size", "-4")
    assert p.returncode == 2
    assert "argument --batch-size: must be a positive integer (got '-4')" in p.stderr
    assert "usage: ndrt train" in p.stderr and "Traceback" not in p.stderr


def test_cli_gpu_without_a_gpu_is_a_clear_error():
    p = ndrt("train", "--ctx", "gpu", "--quiet", "--rows", "600", "--features", "2000",
             "--batch-size", "100")
    ok, _ = cuda_state()
    if ok:                                     # a machine with a GPU trains on it
        assert p.returncode == 0, p.stderr
        assert "pool (gpu(0))" in p.stdout
    else:
        assert p.returncode == 1
        assert "--ctx gpu: no usable GPU on this machine" in p.stderr
        assert "--ctx cpu" in p.stderr and "Traceback" not in p.stderr


def test_cli_info_runs_without_a_gpu():
    p = ndrt("info")
    assert p.returncode == 0, p.stderr
    for what in ("Python ", "NumPy ", "SciPy ", "Cython ", "cuda-python", "CuPy",
                 "OpenMP threads", "fast path: ", "pools: cpu round", "CUDA usable: ",
                 "CuPy usable: "):
        assert what in p.stdout, what
    assert f"Python {sys.version.split()[0]}" in p.stdout


def test_cli_info_into_a_closed_pipe_is_quiet():
    """`ndrt info | head -1`: the reader leaves early; no BrokenPipeError traceback."""
    p = subprocess.run(f"{sys.executable} -m runtime info | head -1", shell=True,
                       capture_output=True, text=True, timeout=120, cwd=_ROOT,
                       env=child_env())
    assert p.stdout.startswith("ndrt ") and "Traceback" not in p.stderr, p.stderr


def test_cli_options_alone_run_the_default_job(capsys):
    assert main(["--quiet", "--rows", "600", "--features", "2000", "--batch-size", "100"]) == 0
    assert "test AUC" in capsys.readouterr().out


def test_info_lines_name_the_build():
    text = "\n".join(info_lines())
    build = _sparse_common.build_info()
    assert build["cython"][0].isdigit() and build["debug_checks"] in ("0", "1")
    assert f"Cython {build['cython']}" in text
    assert _imperative.fast_path_note() in text


def test_cli_trains_saves_and_plots(tmp_path, capsys):
    f, png = tmp_path / "w.params", tmp_path / "loss.png"
    argv = ["train", "sparse", "--quiet", "--rows", "3000", "--features", "20000",
            "--batch-size", "200", "--epochs", "2", "--save", str(f), "--plot", str(png)]
    status = main(argv)
    out, err = capsys.readouterr()
    if Figure is None:
        assert status == 1 and "--plot needs matplotlib" in err and not f.exists()
        status = main(argv[:-2])
        out, err = capsys.readouterr()
    else:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert status == 0, err
    assert "test AUC" in out and f"parameters saved to {f}" in out
    assert "epoch 1:" not in out                  # --quiet
    net = SparseCTR(20000)
    net.load_parameters(str(f))
    assert net.embed_weight.data().shape == (20000, 8)


def test_cli_mlp_prints_epochs_and_a_progress_bar(capsys):
    assert main(["train", "mlp", "--rows", "200", "--epochs", "2", "--batch-size", "50"]) == 0
    out, err = capsys.readouterr()
    assert "epoch 1: loss" in out and "epoch 2: loss" in out and "test accuracy" in out
    assert "epoch 2/2" in err and "loss=" in err and "samples_s=" in err     # tqdm


def test_jobs_are_deterministic_by_seed():
    kw = {**TINY_SPARSE, "epochs": 1}
    a, b, c = train_sparse(seed=5, **kw), train_sparse(seed=5, **kw), train_sparse(seed=6, **kw)
    assert a.losses == b.losses and a.metric == b.metric
    assert a.losses != c.losses
    m1, m2 = train_mlp(seed=1, **TINY_MLP), train_mlp(seed=1, **TINY_MLP)
    assert m1.losses == m2.losses


def test_console_script_entry_point():
    if os.environ.get("NDRT_EXPECT_INSTALLED"):
        # the wheel legs of .ci/run: the installed `ndrt` script runs
        script = Path(sys.executable).parent / "ndrt"
        p = subprocess.run([str(script), "info"], capture_output=True, text=True, timeout=120)
        assert p.returncode == 0 and "fast path: " in p.stdout, p.stderr
    else:
        # the source tree declares it (tomllib is not in Python 3.10: read the lines)
        text = (Path(_ROOT) / "pyproject.toml").read_text()
        assert '[project.scripts]\nndrt = "runtime.__main__:main"\n' in text
        assert '"tqdm>=' in text and 'demo = ["scikit-learn", "matplotlib"]' in text


def test_storage_fallback_count_counts_every_fallback():
    c = nd.sparse.csr_matrix(np.eye(3, dtype=np.float32))
    n = _imperative.storage_fallback_count()
    nd.dot(c, nd.ones((3, 2)))                       # a sparse kernel: no fallback
    assert _imperative.storage_fallback_count() == n
    old = rt.set_storage_fallback("silent")
    try:
        nd.exp(c)
        nd.exp(c)
    finally:
        rt.set_storage_fallback(old)
    assert _imperative.storage_fallback_count() == n + 2


# -- the command's edges: output paths, sizes, the environment, pipes, Ctrl-C ----------------

NDRT_CODE = "import runpy, sys; sys.argv[0] = 'ndrt'; runpy.run_module('runtime', run_name='__main__')"
TINY_ARGS = ["--rows", "600", "--features", "2000", "--batch-size", "100"]


def test_cli_save_into_a_folder_that_does_not_exist_is_refused_before_training(tmp_path,
                                                                              capsys):
    target = str(tmp_path / "newdir") + os.sep
    with pytest.raises(SystemExit) as e:
        main(["train", "--quiet", *TINY_ARGS, "--save", target])
    assert e.value.code == 2
    out, err = capsys.readouterr()
    assert f"argument --save: {target!r} names a folder; give a file name" in err
    assert "test AUC" not in out and list(tmp_path.iterdir()) == []
    with pytest.raises(IsADirectoryError):            # nd.save itself: no file 'newdir'
        nd.save(target, [nd.ones(2)])
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args, message", [
    (["--rows", "1000000000000"], "argument --rows: 1,000,000,000,000 rows need at least "
                                  "727.6 TiB for the data set (40 bytes per row and field, "
                                  "20 fields), more than the 1.5 GiB of memory this process "
                                  "can have"),
    (["--rows", "99999999999999999999"], "argument --rows: 99,999,999,999,999,999,999 rows "
                                         "need at least "),
    (["--rows", "1" + "0" * 400], "argument --rows: 10,000,000,000,000,000,000,000"),
    (["--features", "9223372036854775807"],
     "argument --features: 9,223,372,036,854,775,807 features need at least 786,432.0 PiB "
     "for the embedding weight and Adam's states (12 bytes per feature and embedding "
     "column, 8 columns)"),
    # fits the machine, not this process's address space
    (["--rows", "2000000"], "argument --rows: 2,000,000 rows need at least 1.5 GiB for the "
                            "data set"),
], ids=["terabytes", "beyond-int64", "beyond-float", "features", "over-rlimit"])
def test_cli_sizes_beyond_memory_are_refused_up_front(args, message):
    p = run_limited(NDRT_CODE, "train", "--quiet", *args, memory=3 << 29, timeout=60)
    assert p.returncode == 2, p.stderr[-2000:]
    assert message in p.stderr and "usage: ndrt train" in p.stderr, p.stderr[-2000:]
    assert "Traceback" not in p.stderr


def test_cli_bad_storage_fallback_variable(tmp_path):
    env = {**child_env(), "NDRT_STORAGE_FALLBACK": "bogus"}
    p = subprocess.run([sys.executable, "-m", "runtime", "info"], capture_output=True,
                       text=True, timeout=120, cwd=_ROOT, env=env)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    assert ("storage fallback: not usable: NDRT_STORAGE_FALLBACK must be one of warn, "
            "silent, error (got 'bogus')\n") in p.stdout
    for command in (["train", "--quiet", *TINY_ARGS], ["demo"]):
        p = subprocess.run([sys.executable, "-m", "runtime", *command], capture_output=True,
                           text=True, timeout=120, cwd=_ROOT, env=env)
        assert p.returncode == 1 and p.stdout == "", p.stdout
        assert p.stderr == ("ndrt: error: NDRT_STORAGE_FALLBACK must be one of warn, silent, "
                            "error (got 'bogus')\n"), p.stderr


@pytest.mark.parametrize("command", ["train mlp --epochs 200 --rows 200 --batch-size 50",
                                     "demo", "info"])
def test_cli_into_a_pipe_closed_early_is_quiet(command):
    p = subprocess.run(f"{sys.executable} -m runtime {command} | head -1; "
                       "exit ${PIPESTATUS[0]}", shell=True, executable="/bin/bash",
                       capture_output=True, text=True, timeout=120, cwd=_ROOT,
                       env=child_env())
    assert p.returncode == 0 and p.stdout.count("\n") == 1, p.stderr[-2000:]
    assert "Traceback" not in p.stderr and "Error" not in p.stderr, p.stderr[-2000:]


@pytest.mark.parametrize("command", ["info", "demo"])
def test_cli_with_standard_output_closed(command):
    p = subprocess.run(f"{sys.executable} -m runtime {command} >&-", shell=True,
                       capture_output=True, text=True, timeout=120, cwd=_ROOT,
                       env=child_env())
    assert p.returncode == 0 and p.stderr == "", p.stderr


@pytest.fixture
def ctrl_c_raises():
    """Python's own Ctrl-C handler for the test: a shell starts background jobs with
    SIGINT ignored, and Python then keeps it ignored (a suite run from one would see no
    KeyboardInterrupt)."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def _sigint_default():
    """A child's SIGINT back to its default, so that Python installs its handler."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("step", ["make", "close"])
def test_progress_bar_is_made_and_closed_whole_when_ctrl_c_lands_inside(step, ctrl_c_raises):
    # Ctrl-C arriving while a bar is made or clears its line is held until that is
    # done, then raised: no half-made bar (tqdm's __del__ would print a traceback), and
    # the CLI's message never lands on the end of a bar.
    from runtime.jobs.train import _sigint_held
    done = []

    def ctrl_c_then_finish():
        # to this thread: a process-directed signal may be taken by another thread
        # (a BLAS worker), whose handler can run only after the call has returned
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)
        done.append(step)

    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        with _sigint_held():
            ctrl_c_then_finish()
    assert done == [step]
    assert signal.getsignal(signal.SIGINT) is before


@pytest.mark.parametrize("at", ["make", "update"])
def test_ctrl_c_while_a_bar_is_made_or_updated_closes_it_before_the_job_stops(monkeypatch, at,
                                                                         ctrl_c_raises):
    # a Ctrl-C held while epoch 2's bar is made is raised as that ends: the bar must be
    # closed all the same (else its __del__ clears a line after the CLI's message)
    import runtime.jobs.train as train_mod
    bars = []

    class Bar:
        def __init__(self, **kwargs):
            bars.append(self)
            self.closed, self.steps, self.postfix = 0, 0, {}
            if at == "make" and len(bars) == 2:
                signal.pthread_kill(threading.get_ident(), signal.SIGINT)

        def update(self, n=1):
            self.steps += n
            if at == "update" and len(bars) == 2:
                signal.pthread_kill(threading.get_ident(), signal.SIGINT)

        def set_postfix(self, **kwargs):
            self.postfix = kwargs

        def close(self):
            self.closed += 1

    monkeypatch.setattr(train_mod, "tqdm", Bar)
    with pytest.raises(train_mod.Interrupted) as info:
        train_mlp(**{**TINY_MLP, "quiet": False, "log": lambda *a: None})
    assert (info.value.epoch, info.value.step) == (2, 1)
    assert [b.closed for b in bars] == [1, 1]
    # epoch 1's bar saw its 8 batches (400 rows of 50) and the loss it reports
    assert bars[0].steps == 8 and set(bars[0].postfix) == {"loss", "samples_s"}


def test_cli_ctrl_c_during_training_prints_one_line_and_exits_130():
    env = {**child_env(), "PYTHONUNBUFFERED": "1"}
    p = subprocess.Popen([sys.executable, "-m", "runtime", "train", "mlp", "--epochs",
                          "100000", "--rows", "200", "--batch-size", "50"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=_ROOT,
                         env=env, start_new_session=True, preexec_fn=_sigint_default)
    try:
        for line in p.stdout:            # training runs once epoch 1 is reported
            if line.startswith("epoch 1:"):
                break
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    assert p.returncode == 130, err[-2000:]
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err[-2000:]
    last = re.split(r"[\r\n]", err.rstrip())[-1]           # (tqdm ends its lines with \r)
    found = re.fullmatch(r"ndrt: interrupted at epoch (\d+), step (\d+)", last)
    assert found, err[-2000:]
    epoch, step = (int(v) for v in found.groups())
    # after epoch 1's line: epoch 1 (its report, at its last step) or a later one
    assert (epoch, step) == (1, 4) or (epoch >= 2 and 1 <= step <= 4), last  # 4 batches


free_failing_tests(globals())
