"""Fixtures for integration tests: the misbehaving chat-completions server.

The server runs in the test's own event loop (function scope), so its handlers and
the client under test share one loop and one clock, and it is gone with the test.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.integration.fault_server import FaultServer


@pytest.fixture
async def fault_server() -> AsyncIterator[FaultServer]:
    server = FaultServer()
    await server.start()
    try:
        yield server
    finally:
        await server.stop()
