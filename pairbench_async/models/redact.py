"""Keeping API keys off screens, records and tracebacks: the one rule for every text.

Applied to everything that comes from outside before it goes into an error: a
server's error body (the client knows its key), and an episode's error message as a
run prints it (any key). Servers echo keys in many shapes (whole, quoted,
URL-encoded, masked but for a prefix, with the whitespace of a CRLF ``.env`` file), so
every token that shares 8 consecutive characters with a known key goes, not only an
exact copy; and anything shaped like a key (``sk-...``, ``Bearer ...``,
``api_key=...``) goes whether or not the key is known.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

__all__ = ["REDACTED", "redact"]

REDACTED = "[redacted]"
#: a run of key-like characters: what a server may echo of a key (whole, masked, encoded)
_TOKEN_RE = re.compile(r"[A-Za-z0-9_\-+/=.%~]{8,}")
#: a window of this many characters shared with the key marks a token as part of it
_KEY_WINDOW = 8
#: what a key looks like when its value is not known
_KEY_SHAPED_RE = re.compile(
    r"(\b(?:sk|gsk|sk-proj|sk-ant)[-_][A-Za-z0-9_-]{6,}|Bearer\s+\S+|(?i:api[_-]?key)[=:]\s*\S+)")


def redact(text: str, key: str | None = None) -> str:
    """``text`` without ``key`` in any of its shapes and without anything key-shaped."""
    key = (key or "").strip()
    if key:
        text = text.replace(key, REDACTED)
        if len(key) >= _KEY_WINDOW:
            windows = {key[i:i + _KEY_WINDOW] for i in range(len(key) - _KEY_WINDOW + 1)}
            text = _TOKEN_RE.sub(
                lambda m: REDACTED if any(w in unquote(m.group(0)) for w in windows) else m.group(0), text)
    return _KEY_SHAPED_RE.sub(REDACTED, text)
