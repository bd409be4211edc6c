# SPDX-License-Identifier: MIT OR Apache-2.0
# Shared fixtures: where the C++ CLI and the recorded H200 vectors are, and one audit run.
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


# The audit on the model shapes (their true K values), a few columns each: the figures, the page
# and the browser check read this one run. Seconds on 2 cores (the default audit takes minutes).
AUDIT_SHAPES = ((12288, 2048), (2048, 4096), (8192, 2048), (10240, 5120), (51200, 5120), (5120, 25600))
AUDIT_ROWS = (1, 16)
AUDIT_COLUMNS = 16


@pytest.fixture(scope="session")
def audit_run(tmp_path_factory):
    """(folder, summary) of one audit run: shapes AUDIT_SHAPES, M in AUDIT_ROWS, every distribution."""
    from w8a16check import audit, data

    out = tmp_path_factory.mktemp("audit")
    summary = audit.run(str(out), shapes=list(AUDIT_SHAPES), rows=list(AUDIT_ROWS), dists=list(data.DISTRIBUTIONS),
                        seed=8, columns=AUDIT_COLUMNS, log=lambda _: None)
    return out, summary


def results_dir() -> pathlib.Path:
    """<build tree>/test-results (beside ctest's JUnit XML): where tests keep artifacts for a reader;
    for an installed package (no build tree), $W8A16_TEST_RESULTS or the temporary folder."""
    import tempfile

    from w8a16check import _paths

    if _paths.installed():
        path = pathlib.Path(os.environ.get("W8A16_TEST_RESULTS", tempfile.gettempdir())) / "w8a16check-test-results"
    else:
        path = _paths.core_dir().parents[1] / "test-results"
    path.mkdir(parents=True, exist_ok=True)
    return path
