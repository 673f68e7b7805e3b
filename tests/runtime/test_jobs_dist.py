"""``mpiexec -n 2 ndrt train ... --kvstore dist_sync``: data parallel jobs on 2 ranks keep
bit-identical replicas, match the one-process run with the same seed and global batch,
and a launch under MPI without a dist store stops with status 2."""

import re

import pytest

from runtime.jobs import train_sparse
from tests.runtime import mpi_launch

SPARSE = dict(rows=20000, features=50000, batch_size=256, seed=3)


def _cli(*args):
    return ["-m", "runtime", "train", *args, "--quiet"]


def test_sparse_job_on_two_ranks_matches_one_process():
    code, out, err, _ = mpi_launch.run(_cli(
        "sparse", "--kvstore", "dist_sync", "--rows", str(SPARSE["rows"]), "--features",
        str(SPARSE["features"]), "--batch-size", str(SPARSE["batch_size"]), "--seed",
        str(SPARSE["seed"])), timeout=90)
    assert code == 0, err[-3000:]
    assert out.count("test AUC:") == 1                  # only rank 0 reports
    assert "2 ranks (dist_sync)" in out and "replicas bit-identical" in out, out
    steps = 16000 // 256
    assert steps >= 20
    dist_auc = float(re.search(r"test AUC: ([0-9.]+)", out).group(1))
    one = train_sparse(quiet=True, **SPARSE)
    assert abs(dist_auc - one.metric) < 0.005, (dist_auc, one.metric)


def test_mlp_job_on_two_ranks_keeps_replicas_identical():
    code, out, err, _ = mpi_launch.run(_cli("mlp", "--kvstore", "dist_sync", "--epochs", "2",
                                            "--batch-size", "64"), timeout=90)
    assert code == 0, err[-3000:]
    assert out.count("test accuracy:") == 1
    assert "replicas bit-identical" in out, out
    assert int(re.search(r"\(([0-9,]+) samples in", out).group(1).replace(",", "")) >= 20 * 64


def test_launch_under_mpi_without_a_dist_store_stops_with_status_2():
    code, out, err, _ = mpi_launch.run(_cli("sparse", "--rows", "2000"), timeout=60)
    assert code == 2
    assert "--kvstore is not dist_sync or dist_device_sync" in err
    assert "test AUC" not in out


def test_info_names_the_mpi_library_without_initialising_mpi():
    mpi4py = pytest.importorskip("mpi4py", reason="the dist extra (pip install 'ndrt[dist]')")
    from runtime.jobs.info import mpi_state
    line = mpi_state()
    assert f"mpi4py {mpi4py.__version__}" in line and "(MPI " in line, line
