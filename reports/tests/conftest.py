# SPDX-License-Identifier: MIT OR Apache-2.0
# Shared fixtures: where the C++ CLI and the recorded H200 vectors are.
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
    """shared/vectors beside the checkout (as the C++ tests find it), or $W8A16_SHARED_DIR/vectors."""
    shared = pathlib.Path(os.environ.get("W8A16_SHARED_DIR", REPO.parent / "shared"))
    path = shared / "vectors"
    if not path.is_dir():
        pytest.skip(f"recorded vectors not found at {path} (set W8A16_SHARED_DIR)")
    return path
