# SPDX-License-Identifier: MIT OR Apache-2.0
# The audit's page in a real browser (headless Chromium): every image loads, no console error, no
# empty section, nothing outside the file; the screenshot is kept under the build tree. And the
# check itself fails each kind of broken page.
import json
import os
import shutil
import struct

import pytest

from conftest import results_dir
from w8a16check import browser


@pytest.fixture(scope="module")
def chromium():
    if os.environ.get("W8A16_TEST_BROWSER") == "0":
        pytest.skip("SKIPPED: W8A16_TEST_BROWSER=0 turns the browser check off")
    try:
        return browser.find_chromium()
    except browser.BrowserMissing as exc:
        pytest.fail(f"{exc}: the browser check is part of CI (tools/setup installs chromium)")


def _png_size(path):
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", path
    return struct.unpack(">II", head[16:24])


def test_the_audit_page_renders_in_chromium_and_keeps_a_screenshot(chromium, audit_run):
    out, summary = audit_run
    keep = results_dir() / "audit-report"
    if keep.exists():
        shutil.rmtree(keep)
    keep.mkdir(parents=True)
    for name in ("report.html", "summary.json"):
        shutil.copy(out / name, keep / name)
    res = browser.check_page(keep / "report.html", screenshot=keep / "screenshot.png")
    (keep / "browser.json").write_text(json.dumps(res, indent=1))
    assert res["ok"], "\n".join(res["problems"])
    assert res["problems"] == [] and res["console"] == []
    html = (keep / "report.html").read_text()
    assert len(res["images"]) == html.count("<img ") >= 10
    for img in res["images"]:
        assert img["data"] and img["complete"] and min(img["natural"]) > 0 and min(img["shown"]) > 0, img
        assert img["shown"][0] <= browser.WIDTH
    ids = [s["id"] for s in res["sections"]]
    assert ids == ["headline", "tiers", "distributions", "identical", "histograms", "ulp-vs-k", "bounds", "configs",
                   "worst", "order", "device-recordings"]
    for sec in res["sections"]:
        assert sec["heading"] and (sec["text_chars"] > 100 or sec["images"]) and sec["height"] > 100, sec
    figures_per_section = {s["id"]: s["images"] for s in res["sections"]}
    assert figures_per_section["bounds"] == 2 and figures_per_section["identical"] == 1
    assert res["page_width"] <= browser.WIDTH
    width, height = _png_size(keep / "screenshot.png")
    assert width == browser.WIDTH and height == res["page_height"] > 5000


# ---- the check fails every kind of broken page ---------------------------------------------------
PNG_1x1 = ("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYPj/HwADAQH/"
           "Nq2bSgAAAABJRU5ErkJggg==")


def _page(tmp_path, body: str, title: str = "t"):
    path = tmp_path / "page.html"
    path.write_text(f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{title}</title></head><body>"
                    f"<section id='a'><h2>A</h2><p>text</p><img src='{PNG_1x1}' alt='ok' width='20'></section>"
                    f"{body}</body></html>")
    return path


@pytest.mark.parametrize("body, needle", [
    ("", None),
    ("<section id='b'><h2>B</h2><img src='data:image/png;base64,AAAA' alt='broken'></section>", "missing"),
    ("<section id='b'><h2>B</h2><img src='missing.png' alt='file'></section>", "not embedded"),
    ("<section id='b'><h2>B</h2><p>x</p><script>console.error('boom')</script></section>", "console.error: boom"),
    ("<section id='b'><h2>B</h2><p>x</p><script>undefinedFunction()</script></section>", "uncaught exception"),
    ("<section id='b'><h2>B</h2>  </section>", "section 'b' is empty"),
    ("<section id='b'><h2>B</h2><p>x</p><table><thead><tr><th>h</th></tr></thead><tbody></tbody></table></section>",
     "table without rows"),
    ("<section id='b'><h2>B</h2><p>x</p><img src='http://example.invalid/x.png' alt='remote'></section>", "requests"),
    ("<section id='b'><h2>B</h2><div style='width:3000px'>wide</div></section>", "scrolls sideways"),
    ("<section id='b'><h2>B</h2><div class='tablebox' style='overflow-x:auto'><table><tbody><tr>"
     "<td style='min-width:3000px'>x</td></tr></tbody></table></div></section>", "wider than the page"),
])
def test_the_check_fails_each_kind_of_broken_page(chromium, tmp_path, body, needle):
    res = browser.check_page(_page(tmp_path, body))
    if needle is None:
        assert res["ok"] and res["problems"] == [], res["problems"]
    else:
        assert not res["ok"]
        assert any(needle in p for p in res["problems"]), res["problems"]


def test_the_command_line_exits_1_on_a_broken_page_and_writes_the_screenshot(chromium, tmp_path):
    good = _page(tmp_path, "")
    assert browser.main([str(good), "--screenshot", str(tmp_path / "s.png"), "--json", str(tmp_path / "r.json")]) == 0
    assert _png_size(tmp_path / "s.png")[0] == browser.WIDTH
    assert json.loads((tmp_path / "r.json").read_text())["ok"]
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><html><head><title>t</title></head><body><p>no sections</p></body></html>")
    assert browser.main([str(bad)]) == 1
