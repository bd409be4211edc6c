# SPDX-License-Identifier: MIT OR Apache-2.0
# examples/ci/: the workflow files parse, and every w8a16check command they run, with each of its
# flags, is one the built CLI has (its --help), so a recipe copied into a project does not fail on a
# renamed or removed option.
import pathlib
import re
import subprocess

import pytest
import yaml

from conftest import REPO

RECIPES = sorted((REPO / "examples" / "ci").glob("*.yml"))


def _scripts(node):
    """Every `run:` script in a workflow, at any depth."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "run" and isinstance(value, str):
                yield value
            else:
                yield from _scripts(value)
    elif isinstance(node, list):
        for item in node:
            yield from _scripts(item)


def _commands(script: str):
    """(subcommand, [flags]) of each w8a16check call: continued lines joined, env references
    (--entry in $ENTRIES) expanded from the workflow's env."""
    joined = re.sub(r"\\\n\s*", " ", script)
    for line in joined.splitlines():
        m = re.search(r"(?:^|[\s/])w8a16check\s+(-{0,2}[a-z][a-z-]*)(.*)$", line)
        if m:
            yield m.group(1), re.findall(r"(?<!\S)(--[a-z][a-z-]*)", m.group(2))


def _load(path: pathlib.Path) -> dict:
    doc = yaml.safe_load(path.read_text())
    assert isinstance(doc, dict), f"{path}: not a mapping"
    return doc


def test_there_are_recipes():
    assert RECIPES, "examples/ci/ holds no workflow"


@pytest.mark.parametrize("path", RECIPES, ids=lambda p: p.name)
def test_a_recipe_parses_as_a_workflow(path):
    doc = _load(path)
    # PyYAML reads the key `on` as True (YAML 1.1); GitHub reads it as the trigger list.
    assert "jobs" in doc and (("on" in doc) or (True in doc)), f"{path.name}: no jobs or no trigger"
    for name, job in doc["jobs"].items():
        assert "runs-on" in job and "steps" in job, f"{path.name}: job {name} lacks runs-on or steps"


@pytest.mark.parametrize("path", RECIPES, ids=lambda p: p.name)
def test_every_command_and_flag_exists(path, cli):
    doc = _load(path)
    env = " ".join(str(v) for v in (doc.get("env") or {}).values())
    seen = []
    for script in _scripts(doc):
        # $VARS of the workflow's env hold flags too (ENTRIES: --entry ...).
        for var, value in (doc.get("env") or {}).items():
            script = script.replace(f"${var}", str(value)).replace(f"${{{var}}}", str(value))
        for sub, flags in _commands(script):
            seen.append(sub)
            if sub == "--version":
                continue
            helptext = subprocess.run([cli, sub, "--help"], capture_output=True, text=True)
            assert helptext.returncode == 0, f"{path.name}: `w8a16check {sub}` is no subcommand: {helptext.stderr}"
            for flag in flags:
                assert re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", helptext.stdout), \
                    f"{path.name}: `w8a16check {sub}` has no option {flag}"
    assert "verify" in seen, f"{path.name}: runs no w8a16check verify"
    assert env  # the recipe's env is where ENTRIES and SHARDS live


@pytest.mark.parametrize("path", RECIPES, ids=lambda p: p.name)
def test_the_shard_matrix_covers_every_shard(path):
    doc = _load(path)
    shards = int(doc["env"]["SHARDS"])
    for name, job in doc["jobs"].items():
        text = yaml.safe_dump(job)
        if "--shard" not in text:
            continue
        matrix = job["strategy"]["matrix"]["shard"]
        assert sorted(matrix) == list(range(shards)), f"{path.name}: job {name}'s matrix {matrix} is not 0..{shards - 1}"
        assert "${{ matrix.shard }}/$SHARDS" in text, f"{path.name}: job {name} does not pass --shard i/n from its matrix"
