"""A real headless Chromium for the tests, driven over the DevTools protocol (no Selenium, no driver binary):
open a page, wait until it has loaded, evaluate JavaScript in it. The browser is Debian's
``chromium-headless-shell`` (or ``chromium``), which ``scripts/system-deps`` installs when missing."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def browser_path() -> str:
    """The headless Chromium, installed by scripts/system-deps when missing (an error says why if it cannot)."""
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "system-deps")], capture_output=True, text=True, check=False
    )
    if done.returncode != 0 or not done.stdout.strip():
        raise RuntimeError(f"no headless Chromium: scripts/system-deps said {done.stderr.strip()!r}")
    return done.stdout.strip().splitlines()[-1]


class Browser:
    """One headless Chromium process; ``open(url)`` gives a page whose ``evaluate`` returns JSON values."""

    def __init__(self, executable: str) -> None:
        from websockets.sync.client import connect

        self._profile = tempfile.TemporaryDirectory(prefix="hamlet-chromium-")
        self._process = subprocess.Popen(
            [executable, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
             f"--user-data-dir={self._profile.name}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            start_new_session=True,  # (its own process group: `close` ends its zygote and renderers too)
        )  # fmt: skip
        assert self._process.stderr is not None
        deadline = time.monotonic() + 60
        url = None
        while url is None and time.monotonic() < deadline:
            line = self._process.stderr.readline()
            if not line and self._process.poll() is not None:
                raise RuntimeError(f"{executable} exited with status {self._process.returncode}")
            found = re.search(r"DevTools listening on (ws://\S+)", line)
            url = found.group(1) if found else None
        if url is None:
            self.close()
            raise RuntimeError(f"{executable} did not open its DevTools port within 60 s")
        self._connection = connect(url, max_size=None, open_timeout=30)
        self._socket = self._connection.__enter__()  # (websockets ≥ 16 wants connect() used as a context)
        self._ids = itertools.count(1)

    def call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict:
        number = next(self._ids)
        message: dict[str, Any] = {"id": number, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self._socket.send(json.dumps(message))
        while True:
            reply = json.loads(self._socket.recv(timeout=60))
            if reply.get("id") == number:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def open(self, url: str, timeout: float = 30) -> Page:
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session)
        self.call("Page.navigate", {"url": url}, session)
        deadline = time.monotonic() + timeout
        while page.evaluate("document.readyState") != "complete" or page.evaluate("location.href") != url:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{url} did not load within {timeout} s")
            time.sleep(0.05)
        return page

    def close(self) -> None:
        if getattr(self, "_connection", None) is not None:
            self._connection.__exit__(None, None, None)
        # Chromium's helper processes outlive a terminated browser (each test left about ten, 100 MB apiece,
        # behind, reparented to init): the whole process group goes.
        group = self._process.pid  # (a session's leader: the id of its process group)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGTERM)
        try:
            self._process.wait(timeout=10)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, signal.SIGKILL)  # (what is left: helpers outlive the browser)
            self._process.wait()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # (until init has reaped the helpers)
            try:
                os.killpg(group, 0)
            except ProcessLookupError:
                break
            time.sleep(0.02)
        self._profile.cleanup()


class Page:
    def __init__(self, browser: Browser, session: str) -> None:
        self._browser, self._session = browser, session

    def evaluate(self, expression: str) -> Any:
        result = self._browser.call(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True}, self._session
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")
