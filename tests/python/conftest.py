"""Shared by the Python tests: the command-line tool, to hold the package to the tool's output.
ctest sets OVERLAP_CLI to the tool it built (tests/python/CMakeLists.txt); against a pip-installed
package without the tool, the tests that compare with it are skipped."""
import json
import os
import subprocess

import pytest


class Cli:
    def __init__(self, path):
        self.path = path

    def run(self, *args):
        return subprocess.run([self.path, *args], capture_output=True, text=True)

    def json(self, *args):
        r = self.run(*args, "--json")
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    def error(self, *args):
        """The message of a refused command: `overlap: error: MESSAGE` on stderr, exit code 2."""
        r = self.run(*args)
        assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
        prefix = "overlap: error: "
        assert r.stderr.startswith(prefix), r.stderr
        return r.stderr[len(prefix):].rstrip("\n")


@pytest.fixture(scope="session")
def cli():
    """The tool; a test that only compares with it is skipped without it."""
    path = os.environ.get("OVERLAP_CLI")
    if not path:
        pytest.skip("OVERLAP_CLI is not set (ctest sets it to the built `overlap` tool)")
    return Cli(path)


@pytest.fixture(scope="session")
def cli_if_built():
    """The tool, or None: a test that checks the package on its own and compares with the tool
    where it exists."""
    path = os.environ.get("OVERLAP_CLI")
    return Cli(path) if path else None


def pytest_configure(config):
    # tests/python/test_ops_gpu.py: skipped without a CUDA device; `-m gpu` selects them.
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU and overlap's CUDA kernels")
