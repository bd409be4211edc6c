# SPDX-License-Identifier: MIT OR Apache-2.0
# Fixtures: where the C++ CLI and the recorded H200 vectors are.
import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def cli() -> str:
    """The w8a16check CLI: $W8A16_CLI, else the one of the build tree _core came from."""
    from w8a16check import _paths

    path = os.environ.get("W8A16_CLI", str(_paths.core_dir().parents[1] / "bin" / "w8a16check"))
    if not os.access(path, os.X_OK):
        pytest.fail(f"the CLI {path} is missing: run tools/build (or set W8A16_CLI)")
    return path


@pytest.fixture(scope="session")
def vectors_dir() -> pathlib.Path:
    """The recorded H200 vectors committed with the repository (golden/mma/README.md)."""
    path = REPO / "golden" / "mma" / "h200-vectors"
    if not any(path.glob("*.mmav")):
        pytest.fail(f"the recorded vectors are missing from {path}: they are committed there")
    return path


def pytest_report_header(config):
    import w8a16check

    return f"w8a16check {w8a16check.__version__} from {w8a16check.__file__}"
