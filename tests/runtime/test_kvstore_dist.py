"""dist_sync KVStores on 2 ranks (``mpiexec -n 2``, tests/runtime/kvstore_worker.py):
the contract against NumPy, bit-identical replicas, and a failing rank ending the job."""

import re

import pytest

from tests.runtime import mpi_launch

WORKER = "tests/runtime/kvstore_worker.py"


def test_dist_sync_contract_and_identical_replicas():
    code, out, err, _ = mpi_launch.run([WORKER, "collectives"], timeout=60)
    assert code == 0, err[-3000:]
    # the ranks share mpiexec's stdout, where their lines may run together: find each
    oks = sorted(re.findall(r"OK ([01]) ([0-9a-f]{64})", out))
    assert [o[0] for o in oks] == ["0", "1"], out
    assert oks[0][1] == oks[1][1]       # every array each rank ended with: same bits


def test_trainer_on_two_ranks_matches_one_process():
    code, out, err, _ = mpi_launch.run([WORKER, "trainer"], timeout=90)
    assert code == 0, err[-3000:]
    oks = sorted(re.findall(r"OK ([01]) ([0-9a-f]{64})", out))
    assert [o[0] for o in oks] == ["0", "1"], out
    assert oks[0][1] == oks[1][1]       # weights and states: same bits


def test_each_rank_takes_its_share_of_the_cpus():
    code, out, err, _ = mpi_launch.run([WORKER, "threads"], timeout=60,
                                       env={"OMP_NUM_THREADS": None})
    assert code == 0, err[-3000:]
    assert sorted(re.findall(r"OK ([01]) ", out)) == ["0", "1"], out


@pytest.mark.parametrize("scenario, says", [
    ("raise", "rank 1 of 2: RuntimeError: rank 1 gives up"),
    ("kill", "signal 9"),
    ("hang", "rank 0 of 2: Allreduce did not complete within 3 s (NDRT_KVSTORE_TIMEOUT)"),
])
def test_a_failing_rank_ends_the_job_quickly(scenario, says):
    code, out, err, after = mpi_launch.run([WORKER, scenario], timeout=30, marker="FAILING",
                                           env={"NDRT_KVSTORE_TIMEOUT": "3"})
    assert code != 0
    assert "OK " not in out           # no rank finished as if nothing happened
    assert says in err + out, err[-3000:]
    assert after < 5.0, f"the job took {after:.1f} s to end after rank 1 failed"
