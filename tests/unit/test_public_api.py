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


def test_the_http_client_is_imported_only_when_used() -> None:
    import subprocess
    import sys

    code = ("import sys, pairbench_async as p\n"
            "assert 'aiohttp' not in sys.modules, 'imported at package import'\n"
            "assert p.parse_model_spec('openai:m@http://127.0.0.1:1/v1')[0] == 'openai'\n"
            "assert 'aiohttp' not in sys.modules, 'imported by spec parsing'\n"
            "client = p.OpenAIClient\n"
            "assert 'aiohttp' in sys.modules and client.__name__ == 'OpenAIClient'\n")
    subprocess.run([sys.executable, "-c", code], check=True)
