"""Launch ``mpiexec -n N`` in a child process group with a deadline, never leaving a
process behind (the group is killed in a ``finally``), for the multi-process tests."""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def mpiexec():
    """The mpiexec to use; skips the calling test where the dist extra is missing."""
    pytest.importorskip("mpi4py", reason="the dist extra (pip install 'ndrt[dist]')")
    exe = shutil.which("mpiexec")
    if exe is None:
        pytest.skip("no mpiexec on PATH (pip install 'ndrt[dist]' brings MPICH's)")
    return exe


def run(args, n=2, timeout=60, env=None, marker=None):
    """Run ``mpiexec -n n <python> args...`` from the source root (``env`` adds to the
    environment, where a value None removes the variable); returns (returncode,
    stdout, stderr, seconds from the first line holding ``marker`` (or from the start)
    to the end of the job)."""
    cmd = [mpiexec(), "-n", str(n), sys.executable, *args]
    full_env = dict(os.environ, PYTHONUNBUFFERED="1", OMP_NUM_THREADS="1")
    full_env.update(env or {})
    for name in [k for k, v in full_env.items() if v is None]:
        del full_env[name]           # env={"NAME": None}: the ranks run without it
    full_env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=full_env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    seen = None
    out_lines = []
    try:
        if marker is not None:
            for line in proc.stdout:          # read until the marker, then the rest
                out_lines.append(line)
                if marker in line:
                    seen = time.monotonic()
                    break
        out, err = proc.communicate(timeout=max(1.0, timeout - (time.monotonic() - start)))
        end = time.monotonic()
    finally:
        # mpiexec may have ended with ranks left behind: kill the group whatever happened
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass      # the group has already ended
        proc.wait()
    return proc.returncode, "".join(out_lines) + out, err, end - (seen or start)
