"""The public door: ``__all__`` lists exactly the public names, and each resolves."""

from __future__ import annotations

import types

import pairbench_async


def test_all_matches_public_names() -> None:
    public = {n for n in dir(pairbench_async) if not n.startswith("_")
              and not isinstance(getattr(pairbench_async, n), types.ModuleType)}  # subpackages
    assert {n for n in pairbench_async.__all__ if not n.startswith("_")} == public
    for name in pairbench_async.__all__:
        assert getattr(pairbench_async, name) is not None
