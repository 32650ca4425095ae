"""A wrong ``--ray-address`` is a clear error within seconds (exit 2), never a hang.

Nothing is started: the address is probed with a TCP connect (refused at
127.0.0.1:1) or refused as not an address before ``ray.init`` is tried.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.cluster,
    pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                       reason="Ray is not installed (pip install -e '.[ray]')"),
]

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("address", "message"), [
    ("127.0.0.1:1", "error: no Ray cluster at '127.0.0.1:1'"),
    ("not an address", "error: --ray-address 'not an address' is not a Ray address"),
])
def test_a_wrong_ray_address_fails_fast_with_a_clear_message(tmp_path: Path, address: str,
                                                             message: str) -> None:
    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "pairbench_async", "run", "--dataset",
         str(ROOT / "fixtures" / "stdio.jsonl"), "--limit", "1", "-q", "--no-progress",
         "--sandbox", "ray", "--ray-address", address, "--out", str(tmp_path / "out")],
        capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert time.monotonic() - t0 < 30
