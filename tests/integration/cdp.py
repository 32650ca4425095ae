"""Headless Chromium driven over the DevTools protocol, for pages with a script.

No WebDriver is needed (none is installed with Chromium here): Chromium is started with
``--remote-debugging-port=0``, the page's DevTools websocket is opened with aiohttp (a
dependency already), and the test types (``Input.insertText``), clicks
(``Input.dispatchMouseEvent`` at an element's centre), picks options, reads the DOM
(``Runtime.evaluate``) and takes screenshots (``Page.captureScreenshot``) as a user's
browser would. Uncaught exceptions and console errors are collected in :attr:`errors`.
A missing Chromium is a failure, never a skip (``apt-get install -y chromium``).
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import aiohttp

from tests.integration.test_html_report import _chromium


class Browser:
    """One headless Chromium with one page; ``async with Browser(tmp) as b: await b.open(url)``."""

    def __init__(self, tmp: Path, width: int = 1400, height: int = 900) -> None:
        self.tmp, self.width, self.height = tmp, width, height
        self.errors: list[str] = []
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._events: dict[str, asyncio.Event] = {}

    async def __aenter__(self) -> Browser:
        self._log = self.tmp / "chromium.log"
        with self._log.open("w") as log:  # a file, not a pipe: nothing blocks on a full buffer
            self._proc = subprocess.Popen(
                [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--remote-debugging-port=0", f"--user-data-dir={self.tmp / 'cdp-profile'}", "about:blank"],
                stdout=subprocess.DEVNULL, stderr=log)
        port = await self._port()
        self._session = aiohttp.ClientSession()
        async with self._session.get(f"http://127.0.0.1:{port}/json/list") as resp:
            pages = [t for t in await resp.json() if t["type"] == "page"]
        self._ws = await self._session.ws_connect(pages[0]["webSocketDebuggerUrl"], max_msg_size=0)
        self._reader = asyncio.create_task(self._read())
        for domain in ("Page", "Runtime", "Log"):
            await self.send(f"{domain}.enable")
        await self.send("Emulation.setDeviceMetricsOverride", width=self.width, height=self.height,
                        deviceScaleFactor=1, mobile=False)
        return self

    async def _port(self) -> int:
        for _ in range(600):
            m = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", self._log.read_text())
            if m:
                return int(m[1])
            assert self._proc.poll() is None, f"chromium exited: {self._log.read_text()[-2000:]}"
            await asyncio.sleep(0.1)
        raise AssertionError("chromium gave no DevTools port within 60 s")

    async def __aexit__(self, *exc: object) -> None:
        self._reader.cancel()
        await self._ws.close()
        await self._session.close()
        self._proc.terminate()
        await asyncio.to_thread(self._proc.wait, 30)

    async def _read(self) -> None:
        async for msg in self._ws:
            data = json.loads(msg.data)
            if "id" in data and data["id"] in self._waiting:
                self._waiting.pop(data["id"]).set_result(data)
                continue
            method, params = data.get("method", ""), data.get("params", {})
            if method == "Runtime.exceptionThrown":
                d = params["exceptionDetails"]
                self.errors.append(d.get("exception", {}).get("description") or d.get("text", ""))
            elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
                self.errors.append(" ".join(str(a.get("value", a.get("description"))) for a in params["args"]))
            elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
                self.errors.append(params["entry"]["text"])
            if method in self._events:
                self._events[method].set()

    async def send(self, method: str, **params: Any) -> dict[str, Any]:
        ident = next(self._ids)
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[ident] = fut
        await self._ws.send_str(json.dumps({"id": ident, "method": method, "params": params}))
        reply = await asyncio.wait_for(fut, 60)
        assert "error" not in reply, f"{method}: {reply['error']}"
        return reply["result"]  # type: ignore[no-any-return]

    async def open(self, url: str) -> None:
        loaded = self._events.setdefault("Page.loadEventFired", asyncio.Event())
        loaded.clear()
        await self.send("Page.navigate", url=url)
        await asyncio.wait_for(loaded.wait(), 60)

    async def js(self, expression: str) -> Any:
        """The value of ``expression`` in the page (JSON-serialisable values)."""
        result = await self.send("Runtime.evaluate", expression=expression, returnByValue=True,
                                 awaitPromise=True)
        assert "exceptionDetails" not in result, result["exceptionDetails"]
        return result["result"].get("value")

    async def click(self, selector: str) -> None:
        """A real mouse click at the centre of the first element ``selector`` matches."""
        box = await self.js(f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
                            " e.scrollIntoView({block: 'center', inline: 'nearest'}); const r = e.getBoundingClientRect();"
                            " return [r.x + r.width / 2, r.y + r.height / 2]; })()")
        for kind in ("mousePressed", "mouseReleased"):
            await self.send("Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1], button="left",
                            clickCount=1)

    async def type(self, selector: str, text: str) -> None:
        """Focus ``selector`` and type ``text`` into it (input events, as from a keyboard)."""
        await self.js(f"document.querySelector({json.dumps(selector)}).focus()")
        await self.send("Input.insertText", text=text)

    async def key(self, key: str, code: int) -> None:
        """Press and release ``key`` (``ArrowDown``, 40) in the focused element."""
        for kind in ("keyDown", "keyUp"):
            await self.send("Input.dispatchKeyEvent", type=kind, key=key, code=key,
                            windowsVirtualKeyCode=code)

    async def choose(self, selector: str, value: str) -> None:
        """Pick ``value`` in the ``<select>`` ``selector`` (as a user's choice: a change event)."""
        await self.js(f"(() => {{ const s = document.querySelector({json.dumps(selector)});"
                      f" s.value = {json.dumps(value)}; s.dispatchEvent(new Event('change')); }})()")

    async def screenshot(self, path: Path) -> Path:
        shot = await self.send("Page.captureScreenshot", format="png")
        path.write_bytes(base64.b64decode(shot["data"]))
        return path

    async def settle(self, seconds: float = 0.4) -> None:
        """Let the page's debounced handlers run."""
        await asyncio.sleep(seconds)
