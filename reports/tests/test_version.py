# SPDX-License-Identifier: MIT OR Apache-2.0
# One version everywhere: CMakeLists.txt's project(VERSION) is w8a16check.__version__ and what the
# CLI prints; and, where CI asks for it, the package under test is the installed one.
import os
import re
import subprocess
import sys
from pathlib import Path

import w8a16check
from w8a16check import _paths

from conftest import REPO


def project_version() -> str:
    text = (REPO / "CMakeLists.txt").read_text()
    m = re.search(r"^project\(w8a16check VERSION ([0-9]+\.[0-9]+\.[0-9]+)", text, re.M)
    assert m, "CMakeLists.txt has no project(w8a16check VERSION x.y.z)"
    return m.group(1)


def test_version_is_the_cmake_project_version():
    assert w8a16check.__version__ == project_version()
    assert re.fullmatch(r"[0-9a-f]{12}|unknown", w8a16check._core.__commit__)


def test_cli_prints_the_same_version(cli):
    out = subprocess.run([cli, "--version"], capture_output=True, text=True, timeout=30).stdout
    assert out.startswith(f"w8a16check {w8a16check.__version__} "), out


def test_the_package_under_test_is_the_installed_one_when_ci_says_so():
    if os.environ.get("W8A16_EXPECT_INSTALLED") != "1":
        assert not _paths.installed(), "the checkout's package found a _core beside itself"
        return
    assert _paths.installed(), f"{w8a16check.__file__} has no _core beside it: not the installed package"
    assert _paths.HERE != REPO / "reports" / "python" / "w8a16check", "the checkout's package was imported"
    assert Path(sys.prefix).resolve() in _paths.HERE.parents, f"{w8a16check.__file__} is not in this venv ({sys.prefix})"
