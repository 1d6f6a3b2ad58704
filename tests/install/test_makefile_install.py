"""The Makefile's "install it when missing" branches, run with the tool hidden (issue 12).

`make test` once stopped on a fresh machine with `CHROMIUM: unbound variable`: the branch that
installs Chromium ran only where Chromium was missing, and no test ever ran it. Here every such
branch runs in a sandbox: a copy of the Makefile and mk/*.mk, and a PATH that is one temporary
folder holding symlinks to the few real tools the recipes need plus fakes:

* ``apt-get`` records its arguments, DEBIAN_FRONTEND and whether sudo ran it, and "installs" a
  package by dropping a fake command into the folder (``chromium``; ``fc-list`` listing a Nanum font);
* ``sudo`` runs its command with an emptied environment, as sudo's env_reset does;
* ``id`` says root or not, as the test asks;
* ``python3`` creates fake virtual environments (and fails as on Debian without python3.X-venv);
* ``npm`` fakes ``npm ci``.

Nothing is installed, nothing reaches the network, every make run takes a fraction of a second.
To cover a new branch of the same kind, add a row to APT_CASES.
"""

from __future__ import annotations

import hashlib
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
REPO_FILES = ("Makefile", "pyproject.toml", "constraints.txt", "package.json", "package-lock.json")
# Real tools the recipes (and make's parse-time $(shell ...)) call; nothing else is on the PATH.
REAL_TOOLS = (
    "bash",
    "sh",
    "make",
    "cat",
    "sha256sum",
    "cut",
    "find",
    "rm",
    "mkdir",
    "touch",
    "cp",
    "tee",
    "env",
    "grep",
    "sort",
    "head",
    "tr",
    "dirname",
    "ls",
    "true",
    "false",
)
VENV_PKG = "python{}.{}-venv".format(*sys.version_info[:2])  # what the venv branch installs for this python


@dataclass(frozen=True)
class AptCase:
    """A target that apt-get installs ``package`` when ``tool`` is missing from the PATH."""

    target: str
    tool: str  # the command whose absence triggers the install (hidden from the PATH)
    package: str  # the Debian package apt-get must install
    flags: tuple[str, ...]  # apt-get install flags besides the package
    without_apt: str  # where apt-get may not run (not root, not CI): "error" (exit 1) or "note" (exit 0)
    message: str  # what the recipe says then
    tool_output: str = ""  # what the fake tool prints once "installed"


APT_CASES = [
    AptCase("browser-deps", "chromium", "chromium", ("-y",), "error", "the browser tests need Chromium"),
    # fontconfig (fc-list) listing a Nanum font is what fonts-nanum brings; the fake venv python's
    # cjk_font() finds a Hangul font when it does.
    AptCase(
        "book-fonts",
        "fc-list",
        "fonts-nanum",
        ("-y", "-qq"),
        "note",
        "no Hangul font found",
        tool_output="/usr/share/fonts/truetype/nanum/NanumGothic.ttf: NanumGothic",
    ),
    # bubblewrap for the sandbox the graded notebooks run in (mk/labs.mk)
    AptCase("sandbox-deps", "bwrap", "bubblewrap", ("-y", "-qq"), "note", "bwrap (bubblewrap) is missing"),
]


def _script(path: Path, body: str) -> None:
    path.write_text("#!/bin/bash\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


class Sandbox:
    """A copy of the Makefile and mk/ with a PATH of symlinks and fakes; run make in it."""

    def __init__(self, root: Path):
        self.repo, self.bin, self.state = root / "repo", root / "bin", root / "state"
        for folder in (self.repo, self.bin, self.state / "installed", self.state / "provides"):
            folder.mkdir(parents=True)
        for name in REPO_FILES:
            shutil.copy2(REPO / name, self.repo / name)
        shutil.copytree(REPO / "mk", self.repo / "mk")
        for tool in REAL_TOOLS:
            real = shutil.which(tool)
            assert real, f"{tool} is needed to run the Makefile tests"
            (self.bin / tool).symlink_to(real)
        s, b = self.state, self.bin
        _script(b / "id", 'if [ "${1:-}" = -u ]; then echo "${FAKE_UID:-0}"; else echo "uid=${FAKE_UID:-0}"; fi\n')
        # sudo -n true succeeds; anything else runs with env_reset's empty environment (PATH kept)
        _script(b / "sudo", '[ "${1:-}" = -n ] && shift\nexec env -i PATH="$PATH" SUDO_USER=tester "$@"\n')
        _script(
            b / "apt-get",
            f'echo "$*|${{DEBIAN_FRONTEND:-}}|${{SUDO_USER:-}}" >> {s}/apt.log\n'
            'if [ "${1:-}" = install ]; then\n'
            '  for pkg in "$@"; do\n'
            '    case "$pkg" in install|-*) continue;; esac\n'
            f'    touch "{s}/installed/$pkg"\n'
            f'    if [ -f "{s}/provides/$pkg" ]; then cp "{s}/provides/$pkg" "{b}/$(head -n1 '
            f'"{s}/provides/$pkg.name")"; fi\n'
            "  done\n"
            "fi\n",
        )
        # the python of a fresh venv: records its calls; cjk_font() finds a font when fc-list lists Nanum
        _script(
            s / "venv-python",
            f'echo "$*" >> {s}/venv.log\n'
            'case "$*" in *cjk_font*) '
            f'[ -x "{b}/fc-list" ] && "{b}/fc-list" | grep -qi nanum; exit $?;; esac\n',
        )
        # what `python3 -m venv` leaves where ensurepip is missing: a python without pip
        _script(
            s / "venv-python-nopip",
            '[ "${1:-} ${2:-}" = "-m pip" ] && { echo "No module named pip" >&2; exit 1; }\nexit 0\n',
        )
        _script(
            b / "python3",
            f'echo "$*" >> {s}/python3.log\n'
            f'if [ "${{1:-}}" = -c ]; then exec {sys.executable} "$@"; fi\n'
            'if [ "${1:-} ${2:-}" = "-m venv" ]; then\n'
            '  mkdir -p "$3/bin"\n'
            f"  if [ -f {s}/no-ensurepip ] && [ ! -f {s}/installed/{VENV_PKG} ]; then\n"
            f'    cp {s}/venv-python-nopip "$3/bin/python"\n'
            '    echo "The virtual environment was not created successfully because ensurepip is'
            f' not available. apt install {VENV_PKG}" >&2; exit 1\n'
            "  fi\n"
            f'  cp {s}/venv-python "$3/bin/python"; exit 0\n'
            "fi\n"
            "exit 0\n",
        )

    # ---- set-up helpers ----
    def provide(self, case: AptCase) -> None:
        """Let `apt-get install <case.package>` drop the fake tool into the PATH."""
        _script(self.state / "provides" / case.package, f"echo '{case.tool_output or case.tool}'\n")
        (self.state / "provides" / f"{case.package}.name").write_text(case.tool + "\n")

    def add_tool(self, case: AptCase) -> None:
        """The tool is there already."""
        _script(self.bin / case.tool, f"echo '{case.tool_output or case.tool}'\n")

    def add_venv(self) -> None:
        """A ready .venv (fake python, up-to-date stamp), so targets that need it skip installation."""
        deps = (self.repo / "pyproject.toml").read_bytes() + (self.repo / "constraints.txt").read_bytes()
        (self.repo / ".venv" / "bin").mkdir(parents=True)
        shutil.copy(self.state / "venv-python", self.repo / ".venv" / "bin" / "python")
        (self.repo / ".venv" / f".stamp-{hashlib.sha256(deps).hexdigest()[:16]}").touch()

    def add_npm(self) -> None:
        _script(
            self.bin / "npm",
            f'echo "$*" >> {self.state}/npm.log\n'
            '[ "${1:-}" = ci ] && mkdir -p node_modules/mathjax/es5 && '
            "touch node_modules/mathjax/es5/tex-chtml.js\n",
        )

    # ---- running and reading back ----
    def make(self, target: str, uid: int = 0, **env: str) -> subprocess.CompletedProcess:
        # BOOK_FONT_DIR: the folder whose presence means fonts-nanum is installed; the real one on a
        # machine that has the font would hide the install branch (CI failed on that once)
        environ = {
            "PATH": str(self.bin),
            "HOME": str(self.state),
            "LC_ALL": "C",
            "FAKE_UID": str(uid),
            "BOOK_FONT_DIR": str(self.state / "fonts-nanum"),
            **env,
        }
        result = subprocess.run(
            ["make", "--no-print-directory", target],
            cwd=self.repo,
            env=environ,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert "unbound variable" not in result.stderr, result.stderr
        assert "command not found" not in result.stderr, result.stderr
        return result

    def log(self, name: str) -> list[str]:
        path = self.state / name
        return path.read_text().splitlines() if path.exists() else []

    def apt_calls(self) -> list[tuple[list[str], str, bool]]:
        """(arguments, DEBIAN_FRONTEND, through sudo) of each apt-get call."""
        calls = []
        for line in self.log("apt.log"):
            args, frontend, sudo_user = line.split("|")
            calls.append((args.split(), frontend, bool(sudo_user)))
        return calls


@pytest.fixture
def sandbox(tmp_path):
    return Sandbox(tmp_path)


def _outcome(result: subprocess.CompletedProcess) -> str:
    return f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"


# ---- apt-get branches: chromium, fonts-nanum (one row each in APT_CASES) ----


@pytest.mark.parametrize("how", ["root", "CI with sudo"])
@pytest.mark.parametrize("case", APT_CASES, ids=[c.target for c in APT_CASES])
def test_installs_what_is_missing(case, how, sandbox):
    sandbox.add_venv()
    sandbox.provide(case)
    env = {"CI": "true"} if how == "CI with sudo" else {}
    result = sandbox.make(case.target, uid=0 if how == "root" else 1000, **env)
    assert result.returncode == 0, _outcome(result)
    calls = sandbox.apt_calls()
    assert [args[0] for args, _, _ in calls] == ["update", "install"], calls
    args, frontend, via_sudo = calls[1]
    assert args == ["install", *case.flags, case.package]
    assert frontend == "noninteractive", "DEBIAN_FRONTEND did not reach apt-get (set it after sudo: sudo env ...)"
    assert [sudo for _, _, sudo in calls] == [how != "root"] * 2
    # now that it is there, a second run installs nothing
    again = sandbox.make(case.target, uid=0)
    assert again.returncode == 0 and len(sandbox.apt_calls()) == 2, _outcome(again)


@pytest.mark.parametrize("case", APT_CASES, ids=[c.target for c in APT_CASES])
def test_nothing_installed_when_present(case, sandbox):
    sandbox.add_venv()
    sandbox.add_tool(case)
    result = sandbox.make(case.target)
    assert result.returncode == 0, _outcome(result)
    assert sandbox.apt_calls() == []


@pytest.mark.parametrize("case", APT_CASES, ids=[c.target for c in APT_CASES])
def test_without_apt_rights_says_what_to_install(case, sandbox):
    """Not root and not on CI: never apt-get (or sudo) on someone's own machine; say what is missing."""
    sandbox.add_venv()
    result = sandbox.make(case.target, uid=1000)
    assert sandbox.apt_calls() == []
    if case.without_apt == "error":
        assert result.returncode != 0 and case.message in result.stderr, _outcome(result)
    else:
        assert result.returncode == 0 and case.message in result.stdout + result.stderr, _outcome(result)
    assert case.package in result.stdout + result.stderr


def test_font_folder_counts_as_installed_without_fc_list(sandbox):
    """fonts-nanum's folder present, fontconfig absent: nothing to install, the font cache is rebuilt."""
    sandbox.add_venv()
    (sandbox.state / "fonts-nanum").mkdir()
    result = sandbox.make("book-fonts", uid=0)
    assert result.returncode == 0, _outcome(result)
    assert sandbox.apt_calls() == [] and "no Hangul font found" not in result.stdout + result.stderr
    assert any("_load_fontmanager" in call for call in sandbox.log("venv.log"))


def test_chromium_named_by_CHROMIUM_is_not_installed(sandbox):
    result = sandbox.make("browser-deps", CHROMIUM="/opt/chrome/chrome")
    assert result.returncode == 0, _outcome(result)
    assert sandbox.apt_calls() == []


# ---- the virtual environment ----


def test_venv_created_on_a_fresh_clone(sandbox):
    result = sandbox.make("venv")
    assert result.returncode == 0, _outcome(result)
    assert sandbox.log("python3.log").count("-m venv .venv") == 1
    pip = sandbox.log("venv.log")
    assert "-m pip install -c constraints.txt -e .[tf,book,labs,test,deploy]" in pip, pip
    assert list((sandbox.repo / ".venv").glob(".stamp-*")) and sandbox.apt_calls() == []
    again = sandbox.make("venv")  # up to date: nothing runs
    assert again.returncode == 0 and sandbox.log("venv.log") == pip, _outcome(again)


def test_venv_without_ensurepip_installs_python3_venv(sandbox):
    (sandbox.state / "no-ensurepip").touch()
    result = sandbox.make("venv")
    assert result.returncode == 0, _outcome(result)
    calls = sandbox.apt_calls()
    assert [args for args, _, _ in calls] == [["update", "-qq"], ["install", "-y", "-qq", VENV_PKG]], calls
    assert calls[1][1] == "noninteractive"
    assert sandbox.log("python3.log").count("-m venv .venv") == 2  # failed, then worked
    assert list((sandbox.repo / ".venv").glob(".stamp-*"))


def test_venv_without_ensurepip_and_without_apt_rights(sandbox):
    (sandbox.state / "no-ensurepip").touch()
    result = sandbox.make("venv", uid=1000)
    assert result.returncode != 0, _outcome(result)
    assert f"install {VENV_PKG} (Debian/Ubuntu: sudo apt-get install {VENV_PKG})" in result.stderr, _outcome(result)
    assert sandbox.apt_calls() == [] and not (sandbox.repo / ".venv").exists()  # no half venv left behind


def test_half_made_venv_is_made_again(sandbox):
    """What an earlier failed `python3 -m venv` leaves (a python without pip) must not count as a venv."""
    (sandbox.repo / ".venv" / "bin").mkdir(parents=True)
    shutil.copy(sandbox.state / "venv-python-nopip", sandbox.repo / ".venv" / "bin" / "python")
    result = sandbox.make("venv")
    assert result.returncode == 0, _outcome(result)
    assert sandbox.log("python3.log").count("-m venv .venv") == 1
    assert "-m pip install --upgrade pip" in sandbox.log("venv.log")


# ---- npm ci and the vendored MathJax ----


def test_mathjax_runs_npm_ci_once(sandbox):
    sandbox.add_npm()
    result = sandbox.make("mathjax")
    assert result.returncode == 0, _outcome(result)
    assert (sandbox.repo / "_vendor" / "mathjax" / "tex-chtml.js").is_file()
    assert sandbox.make("mathjax").returncode == 0
    assert sandbox.log("npm.log") == ["ci --no-audit --no-fund"]


def test_mathjax_without_npm_says_what_to_install(sandbox):
    result = sandbox.make("mathjax")
    assert result.returncode != 0, _outcome(result)
    assert "ERROR: npm is missing: install Node.js with npm" in result.stderr, _outcome(result)
