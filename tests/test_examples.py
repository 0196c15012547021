"""The examples are plain PyTorch scripts: run as they are on gradwalk, and with ``--torch`` on
PyTorch, from the same seed they print the same lines."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch  # noqa: F401  (the --torch runs need it: fail, not skip, without it)

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run(script, *args):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}  # small matrices, busy cores
    done = subprocess.run([sys.executable, str(EXAMPLES / script), *args], capture_output=True, text=True,
                          timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("script", ["train_xor.py", "train_moons.py"])
def test_example_prints_what_pytorch_prints(script):
    ours = run(script)
    assert ours.strip()
    assert ours == run(script, "--torch")
