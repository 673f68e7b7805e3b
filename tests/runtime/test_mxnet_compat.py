"""MXNet 1.x's module layout under ``runtime`` and the opt-in ``mxnet`` import hook
(runtime.mxnet_compat)."""

import importlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import runtime
from runtime import mxnet_compat
from tests.runtime.conftest import in_thread

# Every public MXNet 1.x module path a Gluon/NDArray program imports, with a name each
# must hold (what programs reach for first).
PATHS = {
    "": "nd", "nd": "NDArray", "ndarray": "NDArray", "nd.sparse": "CSRNDArray",
    "ndarray.sparse": "RowSparseNDArray", "ndarray.ndarray": "NDArray", "nd.random": "normal", "nd.linalg": "gemm2",
    "nd.contrib": "foreach", "autograd": "record", "context": "Context", "random": "seed",
    "gluon": "Trainer", "gluon.nn": "Dense", "gluon.rnn": "LSTM", "gluon.loss": "L2Loss",
    "gluon.data": "ArrayDataset", "gluon.utils": "clip_global_norm",
    "optimizer": "Optimizer", "lr_scheduler": "FactorScheduler", "initializer": "Xavier",
    "init": "Xavier", "io": "NDArrayIter", "test_utils": "assert_almost_equal",
    "base": "MXNetError", "symbol": "Variable", "sym": "Group", "executor": "Executor",
    "name": "Prefix", "attribute": "AttrScope", "operator": "CustomOp", "module": "Module",
    "mod": "Module", "model": "load_checkpoint", "callback": "Speedometer",
    "gluon.data.vision": "MNIST",
    "gluon.data.vision.transforms": "ToTensor", "gluon.model_zoo.vision": "get_model",
    "gluon.contrib.data": "IntervalSampler", "gluon.contrib.data.text": "WikiText2",
    "gluon.contrib.nn": "HybridConcurrent", "gluon.contrib.estimator": "Estimator",
    "gluon.contrib.estimator.event_handler": "CheckpointHandler",
    "recordio": "MXIndexedRecordIO",
    "image": "imdecode", "profiler": "set_config", "rnd": "uniform", "util": "is_np_array",
    "engine": "bulk", "contrib": "nd", "contrib.ndarray": "box_nms",
    "contrib.symbol": "box_nms", "rnn": "LSTMCell", "rnn.rnn_cell": "FusedRNNCell",
    "rnn.io": "BucketSentenceIter", "rnn.rnn": "load_rnn_checkpoint",
    "module.python_module": "PythonLossModule",
}


@pytest.mark.parametrize("path", sorted(PATHS))
def test_module_paths_under_runtime(path):
    module = importlib.import_module("runtime" + (f".{path}" if path else ""))
    assert hasattr(module, PATHS[path])


def test_second_names_are_the_same_modules():
    import runtime.init
    import runtime.ndarray.sparse
    assert runtime.ndarray is runtime.nd and runtime.init is runtime.initializer
    assert runtime.ndarray.sparse is runtime.nd.sparse
    assert runtime.gluon.nn.Sequential is runtime.gluon.nn.basic_layers.Sequential
    assert runtime.gluon.Trainer.__module__ == "runtime.gluon.trainer"


def test_ndarray_ndarray_holds_the_class_and_mxnets_storage_codes():
    from runtime.ndarray.ndarray import NDArray, _STORAGE_TYPE_STR_TO_ID
    assert NDArray is runtime.NDArray
    # MXNet's NDArrayStorageType values, as its files and __storage_type__ write them
    assert _STORAGE_TYPE_STR_TO_ID == {"undefined": -1, "default": 0, "row_sparse": 1,
                                       "csr": 2}
    var = runtime.sym.Variable("w", stype="csr")
    assert var.attr("__storage_type__") == str(_STORAGE_TYPE_STR_TO_ID["csr"])


def test_top_level_names():
    mx = runtime
    for name in ("cpu", "gpu", "cpu_pinned", "Context", "current_context", "num_gpus",
                 "MXNetError"):
        assert hasattr(mx, name), name
    assert mx.cpu() == mx.context.cpu()


def test_mxnet_errors_derive_from_mxneterror():
    from runtime.base import MXNetError
    assert issubclass(MXNetError, RuntimeError)
    assert issubclass(runtime.StorageFallbackError, MXNetError)
    assert issubclass(runtime.StorageFallbackError, NotImplementedError)
    assert issubclass(runtime.gluon.DeferredInitializationError, MXNetError)
    p = runtime.gluon.Parameter("w", shape=(0, 3), allow_deferred_init=True)
    p.initialize()
    with pytest.raises(MXNetError):
        p.data()


def test_operator_refusals_are_mxneterror_and_keep_their_builtin_class(tmp_path):
    # MXNet raises MXNetError for every check of an operator; Python code catching the
    # built-in class keeps working.  The message keeps the op's name first.
    from runtime.base import MXNetError
    nd, sym = runtime.nd, runtime.sym
    with pytest.raises(MXNetError, match=r"^add: shapes \(2, 3\), \(3, 2\)") as info:
        nd.ones((2, 3)) + nd.ones((3, 2))
    assert isinstance(info.value, ValueError)
    with pytest.raises(MXNetError, match=r"^dot: ") as info:
        nd.dot(nd.ones((2, 3)), nd.ones((2, 3)))
    assert isinstance(info.value, ValueError)
    with pytest.raises(MXNetError, match=r"^sum: axis 5 ") as info:
        nd.sum(nd.ones((2, 3)), axis=5)
    assert isinstance(info.value, ValueError)
    with pytest.raises(MXNetError, match=r"^relu: input data must be an NDArray") as info:
        nd.relu(3)
    assert isinstance(info.value, TypeError)
    with pytest.raises(MXNetError, match=r"^FullyConnected: takes ") as info:
        nd.FullyConnected(nd.ones((2, 3)), nd.ones((4, 3)), nd.ones(4), 4, False, True, 1)
    assert isinstance(info.value, TypeError)
    with pytest.raises(MXNetError, match=r"^infer_shape: node '_plus\d+'") as info:
        (sym.Variable("a") + sym.Variable("b")).infer_shape(a=(2, 3), b=(3, 2))
    assert isinstance(info.value, ValueError)
    with pytest.raises(MXNetError, match=r"^reshape: cannot reshape") as info:
        nd.ones((2, 3)).reshape((5,))
    assert isinstance(info.value, ValueError)
    # MXNet's test_buffer_load: a truncated file is refused as MXNetError
    path = tmp_path / "a.params"
    for fmt in ("ndrt", "mxnet"):
        nd.save(str(path), [nd.ones((3, 4))], format=fmt)
        with pytest.raises(MXNetError, match=r"^load: '<buffer>'") as info:
            nd.load_frombuffer(path.read_bytes()[:-10])
        assert isinstance(info.value, ValueError)
    # an input left as it was by the refused call
    x = nd.ones((2, 3))
    with pytest.raises(MXNetError):
        nd.add(x, nd.ones((3, 2)), out=x)
    assert (x.asnumpy() == 1).all()


def test_numpy_array_semantics_are_off_and_refused_on():
    util = runtime.util
    assert util.is_np_array() is False
    with util.np_array(False):
        util.set_np(shape=False, array=False)
        util.reset_np()
    for call in (util.set_np, lambda: util.np_array().__enter__(),
                 lambda: util.use_np(object), lambda: util.use_np_array(len)):
        with pytest.raises(NotImplementedError, match="legacy nd/sym API"):
            call()
    assert util.is_np_shape() is False
    assert util.get_gpu_count() == runtime.num_gpus()


def test_numpy_shape_semantics_are_a_per_thread_switch_with_scopes():
    util = runtime.util
    assert runtime.np_shape is util.np_shape and runtime.is_np_shape is util.is_np_shape
    assert util.set_np_shape(True) is False
    try:
        assert util.is_np_shape() is True
        assert in_thread(util.is_np_shape) is False          # a new thread starts off
        with util.np_shape(False):
            assert util.is_np_shape() is False
        assert util.is_np_shape() is True
    finally:
        assert util.set_np_shape(False) is True
    traced = util.use_np_shape(util.is_np_shape)
    assert traced() is True and util.is_np_shape() is False
    with pytest.raises(TypeError, match="use_np_shape: func must be a function"):
        util.use_np_shape(dict)


def test_mx_random_samples_as_nd_random():
    # MXNet's mx.random re-exports mx.nd.random's samplers; mx.rnd is the same module.
    assert runtime.rnd is runtime.random
    runtime.random.seed(11)
    a = runtime.random.normal(2, 3, shape=(4, 5)).asnumpy()
    runtime.random.seed(11)
    b = runtime.nd.random.normal(2, 3, shape=(4, 5)).asnumpy()
    np.testing.assert_array_equal(a, b)
    assert set(runtime.nd.random.__all__) < set(runtime.random.__all__)


def test_engine_bulk_size_is_remembered_and_restored():
    engine = runtime.engine
    before = engine.set_bulk_size(7)
    try:
        assert engine.set_bulk_size(3) == 7
        with engine.bulk(10):
            assert engine.set_bulk_size(10) == 10
            x = runtime.nd.zeros((1,))
            for _ in range(5):
                x += 1
        assert engine.set_bulk_size(3) == 3
        assert x.asnumpy().tolist() == [5.0]
        with pytest.raises(ValueError, match=r"size must be >= 0 \(got -1\)"):
            engine.set_bulk_size(-1)
        with pytest.raises(TypeError, match="size must be an int"):
            engine.set_bulk_size(2.5)
        assert engine.set_bulk_size(3) == 3
    finally:
        engine.set_bulk_size(before)


@pytest.fixture
def hook():
    mxnet_compat.install()
    try:
        yield
    finally:
        mxnet_compat.uninstall()


@pytest.mark.parametrize("path", sorted(PATHS))
def test_module_paths_through_the_hook(hook, path):
    ours = importlib.import_module("runtime" + (f".{path}" if path else ""))
    theirs = importlib.import_module("mxnet" + (f".{path}" if path else ""))
    assert theirs is ours


def test_hook_classes_are_ours(hook):
    import mxnet as mx
    from mxnet.gluon import nn
    assert nn.Dense is runtime.gluon.nn.Dense
    assert isinstance(mx.nd.ones((2,)), runtime.NDArray)


FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "mxnet"


def test_arrays_pickled_by_mxnet_load(hook):
    # MXNet 1.9.1 pickled them (tests/fixtures/mxnet/make_fixtures.py: pickles): each is
    # NDArray(None) given {'handle': its bytes in MXNet's format} by __setstate__
    import pickle
    from mxnet.ndarray import sparse
    with open(FIXTURES / "ndarray_pickles.pkl", "rb") as f:
        arrays = pickle.load(f)
    want = np.load(FIXTURES / "ndarray_pickles.npz")
    kinds = [(runtime.NDArray, "float32"), (runtime.NDArray, "int64"),
             (runtime.NDArray, "float16"), (sparse.CSRNDArray, "float32"),
             (sparse.RowSparseNDArray, "float64")]
    assert len(arrays) == len(kinds)
    for i, (a, (cls, dtype)) in enumerate(zip(arrays, kinds)):
        assert type(a) is cls and a.dtype == np.dtype(dtype), i
        np.testing.assert_array_equal(a.asnumpy(), want[f"a{i}"])
    assert arrays[1].asnumpy()[2] == 2 ** 40
    # usable as any array, and ndrt's own pickle of them round-trips
    np.testing.assert_array_equal((arrays[0] * 2).asnumpy(), want["a0"] * 2)
    back = pickle.loads(pickle.dumps(arrays[3]))
    np.testing.assert_array_equal(back.asnumpy(), want["a3"])


def test_ndarray_constructor_takes_no_handle():
    # NDArray(None) (what MXNet's pickles call first) is an empty array, never a shell
    # that crashes when used; a handle is refused
    from runtime.ndarray.sparse import CSRNDArray
    x = runtime.NDArray(None)
    assert x.shape == (0,) and x.asnumpy().shape == (0,) and repr(x)
    assert CSRNDArray(None).shape == (0, 0)
    with pytest.raises(TypeError, match=r"^NDArray: handle must be None: .*\(got int\)"):
        runtime.NDArray(5)
    with pytest.raises(TypeError, match=r"state must be an MXNet pickle's"):
        runtime.NDArray(None).__setstate__({"data": b""})
    with pytest.raises(ValueError, match=r"has no data \(handle None\)"):
        runtime.NDArray(None).__setstate__({"handle": None})
    with pytest.raises(ValueError, match=r"an MXNet file"):
        runtime.NDArray(None).__setstate__({"handle": b"\x01\x02"})
    y = runtime.nd.ones((2,))
    with pytest.raises(TypeError, match=r"a CSRNDArray cannot hold a default array"):
        CSRNDArray(None).__setstate__({"handle": _mxnet_bytes(y)})
    np.testing.assert_array_equal(y.asnumpy(), [1, 1])      # a failed call changes nothing


def _mxnet_bytes(x):
    """``x`` in MXNet's binary format, one array (what MXNet's __getstate__ holds)."""
    import io
    buf = io.BytesIO()
    runtime.nd._io._mxnet_format.write(buf, [(None, x)])
    raw = buf.getvalue()
    return raw[24:-8]          # without the list header (magic, reserved, count) and names


def test_hook_names_a_missing_module(hook):
    with pytest.raises(ModuleNotFoundError, match=r"mxnet\.contrib.*runtime\.contrib"):
        importlib.import_module("mxnet.contrib.onnx")


def test_hook_is_opt_in():
    assert not mxnet_compat.installed()
    if "mxnet" not in sys.modules:
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module("mxnet")
    mxnet_compat.install()
    mxnet_compat.install()
    assert sys.meta_path.count(mxnet_compat._FINDER) == 1
    mxnet_compat.uninstall()
    assert not mxnet_compat.installed() and "mxnet" not in sys.modules


# For programs of many small GEMMs (128 x 100 x 100, an RNN step's, an MLP's on a batch
# of 100) or convolutions: with the BLAS's and the kernels' thread teams on a busy machine
# each call waits milliseconds for its threads (a program of small GEMMs took 11 s here
# and 1.7 s with one thread; the ResNet program, 3 s quiet, took 16-55 s beside two test
# suites and once ran past the 120 s limit).
ONE_BLAS_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


def _run(*args, cwd=None, env=None):
    env = dict(os.environ, **(env or {}), PYTHONPATH=os.pathsep.join(
        [str(Path(runtime.__file__).parents[1]), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "runtime.mxnet_compat", *args], env=env,
                          capture_output=True, text=True, timeout=120, cwd=cwd)


def _program(name, *args):
    """The numbers a program of tests/programs prints, run through mxnet_compat (the
    words of its output that are numbers, in order); it must exit with status 0."""
    r = _run(str(Path(__file__).parents[1] / "programs" / name), *args,
             env=ONE_BLAS_THREAD)
    assert r.returncode == 0, r.stderr
    numbers = []
    for word in r.stdout.split():
        try:
            numbers.append(float(word))
        except ValueError:
            pass               # the words between the numbers ("loss", "->", ...)
    return numbers


def test_an_mxnet_program_runs_unmodified():
    before, after, acc = _program("mlp_mxnet.py")
    assert after < before / 2 and acc > 0.9


def _write_mnist(folder, prefix, n, rng, compressed=True):
    """``n`` synthetic digits in MNIST's IDX files (gzipped, or plain as MNISTIter reads
    them): class k is a bright 6x6 square at one of ten places, on noise."""
    import gzip
    import struct
    labels = rng.integers(0, 10, n).astype(np.uint8)
    images = rng.integers(0, 60, (n, 28, 28)).astype(np.uint8)
    for i, k in enumerate(labels):
        r, c = 3 + 11 * (k // 5), 1 + 5 * (k % 5)
        images[i, r:r + 6, c:c + 6] = 255
    opener, suffix = (gzip.open, ".gz") if compressed else (open, "")
    with opener(folder / f"{prefix}-labels-idx1-ubyte{suffix}", "wb") as f:
        f.write(struct.pack(">II", 2049, n) + labels.tobytes())
    with opener(folder / f"{prefix}-images-idx3-ubyte{suffix}", "wb") as f:
        f.write(struct.pack(">IIII", 2051, n, 28, 28) + images.tobytes())


def test_lenet_on_mnist_files_runs_unmodified(tmp_path):
    rng = np.random.default_rng(0)
    _write_mnist(tmp_path, "train", 640, rng)
    _write_mnist(tmp_path, "t10k", 200, rng)
    first, last, acc = _program("lenet_mnist.py", str(tmp_path))
    assert last < first / 2 and acc > 0.9


def test_model_zoo_resnet_trains_unmodified():
    # MXNet 1.9.1 runs the same program to "loss 2.4670 -> 0.0009 accuracy 1.000"
    first, last, acc = _program("resnet_step.py")
    assert 2.0 < first < 3.5 and last < 0.05 and acc == 1.0


def test_lstm_language_model_trains_unmodified():
    # MXNet 1.9.1 runs the same program to "ppl 13.72 -> 5.27" (its own random draws)
    first, last = _program("lstm_lm.py")
    assert 10 < first < 16 and last < 7.5


def _write_libsvm(folder):
    """Two LibSVM files of 10 active features out of 1,000 per row, labelled by the sign
    of a hidden linear model (the files MXNet 1.9.1 was run on for the values below)."""
    rng = np.random.RandomState(0)
    hidden = rng.randn(1000)
    for name, n in (("train.libsvm", 2000), ("test.libsvm", 500)):
        with open(folder / name, "w") as f:
            for _ in range(n):
                cols = np.sort(rng.choice(1000, 10, replace=False))
                f.write(f"{int(hidden[cols].sum() > 0)} "
                        + " ".join(f"{c}:1" for c in cols) + "\n")


# What MXNet 1.9.1 prints for tests/programs/sparse_linear.py on those files.
SPARSE_LINEAR_MXNET = {
    "ftrl": [(0.709149, 0.751862), (0.744311, 0.791081), (0.765707, 0.812896)],
    "sgd": [(0.717186, 0.778432), (0.767114, 0.823373), (0.787811, 0.838994)],
    "adam": [(0.749248, 0.644943), (0.201492, 0.547705), (0.114306, 0.498973)],
}


@pytest.mark.parametrize("optimizer", sorted(SPARSE_LINEAR_MXNET))
def test_sparse_linear_classification_matches_mxnet(tmp_path, optimizer):
    _write_libsvm(tmp_path)
    got = np.reshape(_program("sparse_linear.py", str(tmp_path), optimizer), (3, 3))
    np.testing.assert_array_equal(got[:, 0], [0, 1, 2])              # the epochs
    np.testing.assert_allclose(got[:, 1:], SPARSE_LINEAR_MXNET[optimizer], atol=2e-6)
    assert sorted(p.name for p in tmp_path.glob("checkpoint*")) == sorted(
        [f"checkpoint-{e:04d}.{k}" for e in range(3) for k in ("params", "states")]
        + ["checkpoint-symbol.json"])


def test_estimator_tutorial_runs_unmodified(tmp_path):
    program = Path(__file__).parents[1] / "programs" / "estimator_mxnet.py"
    r = _run(str(program), str(tmp_path / "ck"))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[:2] == ["Training begin: using optimizer Adam with current learning rate "
                         "0.0100 ", "Train for 8 epochs."]
    words = lines[-1].split()
    assert words[0] == "RESULT" and float(words[1]) > 0.9
    # MXNet 1.9.1 leaves the same files (two kept, the best, the graph)
    assert words[2:] == ["model-best.params", "model-best.states",
                         "model-epoch6batch70.params", "model-epoch6batch70.states",
                         "model-epoch7batch80.params", "model-epoch7batch80.states",
                         "model-symbol.json"]


@pytest.fixture
def plain_mnist(tmp_path):
    """A folder of uncompressed synthetic MNIST files: 1,000 training and 500 test
    digits."""
    rng = np.random.default_rng(0)
    _write_mnist(tmp_path, "train", 1000, rng, compressed=False)
    _write_mnist(tmp_path, "t10k", 500, rng, compressed=False)
    return str(tmp_path)


def test_module_api_on_mnist_iter_runs_unmodified(plain_mnist):
    # MXNet 1.9.1 prints "acc 0.915 fit 1.0 predict 1.0 score 1.0" on these files
    first, fit, predicted, score = _program("module_mnist.py", plain_mnist)
    assert first > 0.5 and fit >= 0.95 and predicted == score == fit


def test_sequential_module_runs_unmodified(plain_mnist):
    r = _run(str(Path(__file__).parents[1] / "programs" / "sequential_module.py"),
             plain_mnist)
    assert r.returncode == 0, r.stderr
    words = r.stdout.split()
    # MXNet 1.9.1: "acc 1.0 fc1_bias fc1_weight fc2_bias fc2_weight"
    assert float(words[1]) >= 0.95
    assert words[2:] == ["fc1_bias", "fc1_weight", "fc2_bias", "fc2_weight"]


def test_custom_softmax_under_feedforward_runs_unmodified(plain_mnist):
    # MXNet 1.9.1 prints "acc 0.166 -> 1.0" (its own initial draws)
    before, after = _program("custom_softmax.py", plain_mnist)
    assert before < 0.3 and after >= 0.95


def test_weighted_logistic_custom_op_runs_unmodified():
    # MXNet 1.9.1 prints the same four lines to the six digits printed
    wlr_out, wlr_grad, lr_out, lr_grad = np.reshape(_program("weighted_logistic.py"), (4, 12))
    x = np.linspace(-2, 2, 12)
    y = (np.arange(12) % 3 == 0).astype(np.float64)
    p = 1 / (1 + np.exp(-x))
    np.testing.assert_allclose(wlr_out, p, atol=1e-6)
    np.testing.assert_allclose(lr_out, p, atol=1e-6)
    np.testing.assert_allclose(wlr_grad, ((p - 1) * y + 0.1 * p * (1 - y)) / 3, atol=1e-6)
    np.testing.assert_allclose(lr_grad, (p - y) / 3, atol=1e-6)   # regression outputs / 3


def test_learning_rate_manipulation_runs_unmodified():
    # MXNet 1.9.1: "lr 0.1 0.05 0.025 0.0125", "params 1.9997643 -3.400775 4.199919"
    numbers = _program("lr_manipulation.py")
    assert numbers[:4] == [0.1, 0.05, 0.025, 0.0125]
    np.testing.assert_allclose(numbers[4:], [2, -3.4, 4.2], atol=0.01)


def test_bilstm_crf_tagger_runs_unmodified():
    # MXNet 1.9.1 prints "nll 14.35 -> 1.02 match 1 1" (its own random draws)
    first, last, *matches = _program("bilstm_crf.py")
    assert first > 5 and last < 2.5 and matches == [1, 1]


def test_sparse_matrix_factorization_runs_unmodified():
    # MXNet 1.9.1 prints "mse 11.24 2.16 1.98 2.10 2.00 2.07 1.91" (its own draws)
    before, *after = _program("sparse_matrix_factorization.py")
    assert before > 8 and len(after) == 6 and max(after) < 2.6


def test_dilated_conv_forecast_runs_unmodified(tmp_path):
    # MXNet 1.9.1 prints "loss 0.2153 -> 0.0270 rmse 0.01279 naive 0.011244372257755863"
    first, last, rmse, naive = _program("dilated_conv_forecast.py", str(tmp_path))
    assert last < first / 5 and rmse < 0.05
    assert naive == pytest.approx(0.011244372257755863, rel=1e-6)
    assert (tmp_path / "best.params").is_file()


def test_script_arguments_and_module_mode(tmp_path):
    script = tmp_path / "args.py"
    script.write_text("import sys, mxnet\nprint(mxnet.__name__, sys.argv[1:])\n")
    r = _run(str(script), "a", "--b")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "runtime ['a', '--b']"
    (tmp_path / "modmain.py").write_text("import mxnet.gluon\nprint('ok', __name__)\n")
    env_path = str(tmp_path)
    r = subprocess.run([sys.executable, "-m", "runtime.mxnet_compat", "-m", "modmain"],
                       cwd=env_path, capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                           [env_path, str(Path(runtime.__file__).parents[1])])))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok __main__"


def test_usage_without_a_script():
    r = _run()
    assert r.returncode == 2 and "usage" in r.stderr
