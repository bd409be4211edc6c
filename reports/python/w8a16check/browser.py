# SPDX-License-Identifier: MIT OR Apache-2.0
# Renders a report page in headless Chromium and checks what a reader would see; keeps a screenshot.
"""python -m w8a16check.browser REPORT.html [--screenshot PNG] [--json RESULT.json]

Opens the page in headless Chromium (Debian's ``chromium``, which tools/setup installs; or
$W8A16_CHROMIUM) through the DevTools protocol over ``--remote-debugging-pipe`` (standard library
only: NUL-separated JSON on file descriptors 3 and 4), waits for the load and for every image to
decode, and fails the page on:

- a console error, an uncaught exception or an error the browser logs (a failed load included);
- any request other than the page itself and data: URLs (the page must carry everything it shows;
  name resolution is switched off, so a remote URL also fails to load);
- an image that did not load, has no pixels, is not a data: URI or is not laid out (zero size);
- a <section> with nothing but its heading, a table without a row, or a page without sections;
- a page, or a table in it, wider than the window (a reader would scroll sideways to see it).

It then captures the whole page as one PNG (``--screenshot``). Exit status 0 when the page passes,
1 when it does not (each problem on stderr), 2 when no browser can be started.
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import pathlib
import select
import shutil
import subprocess
import sys
import tempfile
import time

WIDTH = 1360  # CSS pixels: the page's max-width plus margins


class BrowserMissing(RuntimeError):
    pass


def find_chromium() -> str:
    """$W8A16_CHROMIUM, else Debian's binary, else a chromium on PATH."""
    env = os.environ.get("W8A16_CHROMIUM")
    if env:
        if not os.access(env, os.X_OK):
            raise BrowserMissing(f"W8A16_CHROMIUM={env} is not an executable")
        return env
    # Debian's /usr/bin/chromium is a shell wrapper around this binary; the binary itself is
    # started so that the wrapper's own messages do not mix with the browser's.
    for path in ("/usr/lib/chromium/chromium",):
        if os.access(path, os.X_OK):
            return path
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    raise BrowserMissing("no Chromium found: tools/setup installs Debian's `chromium` (or set W8A16_CHROMIUM)")


class _Pipe:
    """The DevTools protocol over --remote-debugging-pipe: the browser reads fd 3 and writes fd 4."""

    def __init__(self, binary: str, profile: str):
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def child_fds():
            a, b = os.dup(to_browser_r), os.dup(from_browser_w)
            os.dup2(a, 3)
            os.dup2(b, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        args = [binary, "--headless", "--remote-debugging-pipe", f"--user-data-dir={profile}",
                # The page is this project's own file, read from disk with the network cut off; the
                # sandbox needs user namespaces that containers (and root) usually lack.
                "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
                "--disable-extensions", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--hide-scrollbars", "--mute-audio", "--host-resolver-rules=MAP * ~NOTFOUND",
                f"--window-size={WIDTH},1000", "about:blank"]
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(args, preexec_fn=child_fds, close_fds=False, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=self.stderr)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buf = b""
        self._id = 0
        self.events: list[dict] = []

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> int:
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_browser, json.dumps(msg).encode() + b"\0")
        return self._id

    def recv(self, deadline: float) -> dict:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the browser did not answer in time")
            ready, _, _ = select.select([self._from_browser], [], [], left)
            if ready:
                chunk = os.read(self._from_browser, 1 << 20)
                if not chunk:
                    raise RuntimeError("the browser closed its DevTools pipe (it exited)" + self._stderr_tail())
                self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method: str, params: dict | None = None, session: str | None = None, timeout: float = 60.0) -> dict:
        ident = self.send(method, params, session)
        deadline = time.monotonic() + timeout
        while True:
            msg = self.recv(deadline)
            if msg.get("id") == ident:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error'].get('message')}")
                return msg.get("result", {})
            self.events.append(msg)

    def wait_event(self, method: str, timeout: float) -> dict:
        for i, msg in enumerate(self.events):
            if msg.get("method") == method:
                return self.events.pop(i)
        deadline = time.monotonic() + timeout
        while True:
            msg = self.recv(deadline)
            if msg.get("method") == method:
                return msg
            self.events.append(msg)

    def _stderr_tail(self) -> str:
        self.stderr.seek(0)
        tail = self.stderr.read()[-800:].decode(errors="replace").strip()
        return f"; its stderr ends: {tail}" if tail else ""

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except OSError:
            pass
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        self.stderr.close()


# Runs in the page: every image and every section as the reader gets them.
_INSPECT = r"""
(async () => {
  await Promise.all([...document.images].map(i => i.decode().catch(() => null)));
  const images = [...document.images].map(i => {
    const r = i.getBoundingClientRect();
    return {src: i.src.slice(0, 40), data: i.src.startsWith('data:image/'), complete: i.complete,
            natural: [i.naturalWidth, i.naturalHeight], shown: [r.width, r.height], alt: i.alt};
  });
  const sections = [...document.querySelectorAll('section')].map(s => {
    const h = s.querySelector('h2');
    const heading = h ? h.innerText.trim() : '';
    const text = s.innerText.replace(heading, '').trim();
    const tables = [...s.querySelectorAll('table')].map(t => t.querySelectorAll('tbody tr').length);
    return {id: s.id, heading, text_chars: text.length, images: s.querySelectorAll('img').length,
            tables, height: s.getBoundingClientRect().height};
  });
  const clipped = [...document.querySelectorAll('.tablebox')].filter(b => b.scrollWidth > b.clientWidth + 1)
    .map(b => { const s = b.closest('section'); return s ? s.id : ''; });
  return {title: document.title, images, sections, clipped,
          height: Math.ceil(document.documentElement.scrollHeight), width: document.documentElement.scrollWidth};
})()
"""


def check_page(page, screenshot=None, timeout: float = 120.0) -> dict:
    """Render `page` (a path) and return {"ok", "problems", "console", "images", "sections", ...}."""
    page = pathlib.Path(page).resolve()
    if not page.is_file():
        raise FileNotFoundError(f"{page}: no such file")
    url = page.as_uri()
    binary = find_chromium()
    problems, console = [], []
    with tempfile.TemporaryDirectory(prefix="w8a16-chromium-") as profile:
        pipe = _Pipe(binary, profile)
        try:
            target = pipe.call("Target.createTarget", {"url": "about:blank"}, timeout=timeout)["targetId"]
            session = pipe.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            for domain in ("Page", "Runtime", "Log", "Network"):
                pipe.call(f"{domain}.enable", session=session)
            pipe.call("Emulation.setDeviceMetricsOverride",
                      {"width": WIDTH, "height": 1000, "deviceScaleFactor": 1, "mobile": False}, session=session)
            pipe.call("Page.navigate", {"url": url}, session=session)
            pipe.wait_event("Page.loadEventFired", timeout)
            info = pipe.call("Runtime.evaluate", {"expression": _INSPECT, "awaitPromise": True, "returnByValue": True},
                             session=session, timeout=timeout)
            if "exceptionDetails" in info:
                raise RuntimeError(f"the page inspection failed: {info['exceptionDetails'].get('text')}")
            facts = info["result"]["value"]
            shot = None
            if screenshot:
                height = min(int(facts["height"]), 60000)
                pipe.call("Emulation.setDeviceMetricsOverride",
                          {"width": WIDTH, "height": height, "deviceScaleFactor": 1, "mobile": False}, session=session)
                data = pipe.call("Page.captureScreenshot",
                                 {"format": "png", "captureBeyondViewport": True,
                                  "clip": {"x": 0, "y": 0, "width": WIDTH, "height": height, "scale": 1}},
                                 session=session, timeout=timeout)["data"]
                shot = pathlib.Path(screenshot)
                shot.parent.mkdir(parents=True, exist_ok=True)
                shot.write_bytes(base64.b64decode(data))
            # Let late console messages and network events arrive before judging.
            try:
                pipe.call("Runtime.evaluate", {"expression": "1", "returnByValue": True}, session=session)
            except RuntimeError:
                pass
        finally:
            pipe.close()
    for ev in pipe.events:
        method, params = ev.get("method"), ev.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
            console.append(f"console.{params['type']}: {text}")
        elif method == "Runtime.exceptionThrown":
            d = params.get("exceptionDetails", {})
            console.append(f"uncaught exception: {d.get('exception', {}).get('description') or d.get('text')}")
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            entry = params["entry"]
            console.append(f"browser log error ({entry.get('source')}): {entry.get('text')} {entry.get('url', '')}".strip())
        elif method == "Network.requestWillBeSent":
            req = params.get("request", {}).get("url", "")
            if req != url and not req.startswith("data:"):
                problems.append(f"the page requests {req[:120]}: it must carry everything it shows")
        elif method == "Network.loadingFailed":
            problems.append(f"a load failed: {params.get('errorText')}")
    problems += console
    if facts["width"] > WIDTH:
        problems.append(f"the page is {facts['width']} px wide in a {WIDTH} px window: it scrolls sideways")
    for ident in facts["clipped"]:
        problems.append(f"a table in section {ident!r} is wider than the page: a reader would scroll it sideways")
    if not facts["title"].strip():
        problems.append("the page has no title")
    for img in facts["images"]:
        name = img["alt"] or img["src"]
        if not img["data"]:
            problems.append(f"image {name!r} is not embedded (src {img['src']!r}...)")
        if not img["complete"] or min(img["natural"]) <= 0:
            problems.append(f"image {name!r} is missing: it did not load or has no pixels")
        elif min(img["shown"]) <= 0:
            problems.append(f"image {name!r} is not shown (laid out at {img['shown']})")
    if not facts["sections"]:
        problems.append("the page has no <section>")
    for sec in facts["sections"]:
        label = sec["id"] or sec["heading"] or "unnamed"
        if not sec["heading"]:
            problems.append(f"section {label!r} has no heading")
        if sec["text_chars"] == 0 and sec["images"] == 0:
            problems.append(f"section {label!r} is empty")
        if any(rows == 0 for rows in sec["tables"]):
            problems.append(f"section {label!r} has a table without rows")
        if sec["height"] <= 0:
            problems.append(f"section {label!r} is not laid out")
    return {"ok": not problems, "problems": problems, "console": console, "page": str(page), "browser": binary,
            "images": facts["images"], "sections": facts["sections"], "page_height": facts["height"],
            "page_width": facts["width"], "screenshot": str(shot) if shot else None}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m w8a16check.browser", description=__doc__.splitlines()[0])
    p.add_argument("page")
    p.add_argument("--screenshot", help="write the whole page as this PNG")
    p.add_argument("--json", help="write the result (images, sections, problems) here")
    args = p.parse_args(argv)
    try:
        res = check_page(args.page, args.screenshot)
    except BrowserMissing as exc:
        print(f"browser: {exc}", file=sys.stderr)
        return 2
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(res, indent=1))
    for problem in res["problems"]:
        print(f"browser: FAIL: {problem}", file=sys.stderr)
    print(f"browser: {res['page']}: {len(res['images'])} images, {len(res['sections'])} sections, "
          f"{res['page_height']} px tall: {'PASS' if res['ok'] else 'FAIL'}"
          + (f"; screenshot {res['screenshot']}" if res["screenshot"] else ""))
    return 0 if res["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
