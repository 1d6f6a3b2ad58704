"""Red team round D (2026-11-28), attacker D1.

1. Write-then-import: a cell wrote a rot13-encoded module into the working folder and imported it; the source
   check never saw the module (which read the probe's line through the stack). The confined kernel now refuses
   to open or import code from a folder the notebook can write (:data:`import_guard.GUARD`, in every kernel's
   boot), and the source check flags ``sys.path`` changes, the modules that run files and code-file names.
2. Many cells: 120,000 one-character cells kept intake busy ~5 min; a notebook over :func:`intake_caps.cell_cap`
   cells is refused before nbformat reads it.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")

from tests.course.test_grading import _python_in_sandbox, need_sandbox  # noqa: E402
from txcourse.course.grading import sandbox  # noqa: E402
from txcourse.course.grading.forbidden import _aliases, forbidden_findings  # noqa: E402
from txcourse.course.grading.import_guard import GUARD, REFUSED, import_findings  # noqa: E402
from txcourse.course.grading.intake_caps import MIN_CELL_CAP, cell_cap, why_too_many_cells  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
COURSE_NOTEBOOKS = sorted(ROOT.glob("labs/source/*/*.ipynb"))

# Each route to run code from a file the notebook wrote; every one must end in an error naming the rule.
ROUTES = {
    "write .py": "open('m1.py', 'w').write('X = 1')",
    "rename then import": (
        "open('m2.txt', 'w').write('X = 2'); os.rename('m2.txt', 'm2.py'); sys.path.insert(0, '.'); import m2"
    ),
    "under /tmp": "open('/tmp/m3.txt', 'w').write('X = 3'); os.rename('/tmp/m3.txt', '/tmp/m3.py'); "
    "sys.path.insert(0, '/tmp'); import m3",
    "spec_from_file_location": "open('m4.txt', 'w').write('X = 4'); os.rename('m4.txt', 'm4.py'); "
    "import importlib.util as u; s = u.spec_from_file_location('m4', 'm4.py'); s.loader.exec_module(u.module_from_spec(s))",
    "SourceFileLoader": "open('m5.txt', 'w').write('X = 5'); os.rename('m5.txt', 'm5.py'); "
    "import importlib.machinery as m; m.SourceFileLoader('m5', 'm5.py').load_module()",
    "runpy": "open('m6.txt', 'w').write('X = 6'); os.rename('m6.txt', 'm6.py'); import runpy; runpy.run_path('m6.py')",
    "zip without suffix": "import zipfile\nwith zipfile.ZipFile('zz', 'w') as z:\n    z.writestr('m7.py', 'X = 7')\n"
    "sys.path.insert(0, 'zz'); import m7",
    "namespace package": "os.mkdir('ns8'); sys.path.insert(0, '.'); import ns8",
    "pth": "open('x.pth', 'w').write('import os')",
    "pycache": "os.makedirs('__pycache__', exist_ok=True); open('__pycache__/m9.cpython-311.pyc', 'wb').write(b'')",
    "extension": "open('m10.txt', 'wb').write(b'\\x7fELF'); os.rename('m10.txt', 'm10.cpython-311-x86_64-linux-gnu.so');"
    " sys.path.insert(0, '.'); import m10",
}
PROBE = """\
import os, sys
import numpy, txcourse
print("honest imports ok")
for name, route in ROUTES.items():
    try:
        exec(route)
        print("not refused:", name)
    except Exception as error:
        print("refused" if REFUSED in str(error) else "OTHER " + repr(error)[:200], name)
"""


def _probe() -> str:
    return GUARD + PROBE.replace("ROUTES", repr(ROUTES)).replace("REFUSED", repr(REFUSED))


def _check(stdout: str) -> None:
    lines = stdout.strip().splitlines()
    assert lines[0] == "honest imports ok", stdout
    assert lines[1:] == [f"refused {name}" for name in ROUTES], stdout


def test_the_guard_refuses_every_route_and_keeps_honest_imports(tmp_path):
    """Unconfined (a writable HOME and working folder): each route fails with the rule's message."""
    env = {**os.environ, "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", _probe()], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    _check(done.stdout)
    assert not (tmp_path / "m1.py").exists() and not (tmp_path / "x.pth").exists()


def test_the_guard_refuses_every_route_in_the_kernel_sandbox(tmp_path):
    """Confined as a kernel is (read-only venv, a tmpfs working folder and /tmp): the same."""
    need_sandbox()
    work, run = tmp_path / "work", tmp_path / "run"
    work.mkdir(), run.mkdir()
    box = sandbox.Sandbox(bwrap=sandbox.find_bwrap())
    argv = box.kernel_argv(work, run, dict(os.environ))
    done = _python_in_sandbox(box, argv, _probe())
    assert done.returncode == 0, done.stderr[-2000:]
    _check(done.stdout)


def test_no_folder_python_starts_with_is_writable_in_the_kernel_sandbox(tmp_path):
    """The guard trusts the folders on sys.path at boot (the venv, txcourse) even under /tmp or HOME: in the
    sandbox none of them may be writable, or a notebook could plant a module there."""
    need_sandbox()
    work, run = tmp_path / "work", tmp_path / "run"
    work.mkdir(), run.mkdir()
    box = sandbox.Sandbox(bwrap=sandbox.find_bwrap())
    argv = box.kernel_argv(work, run, dict(os.environ))
    code = (
        "import os, sys\ncwd = os.path.realpath(os.getcwd())\n"
        "roots = [p for p in [*sys.path, sys.prefix] if p not in ('', '.') and os.path.isdir(p)]\n"
        "print('roots', len(roots))\n"
        "print('writable', [p for p in roots if os.path.realpath(p) != cwd and os.access(p, os.W_OK)])\n"
    )
    done = _python_in_sandbox(box, argv, code)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.strip().splitlines()
    assert lines[-2] != "roots 0" and lines[-1] == "writable []", done.stdout


def test_every_kernel_boot_installs_the_guard(tmp_path):
    box = sandbox.Sandbox(bwrap="/usr/bin/bwrap")
    argv = box.kernel_argv(tmp_path / "work", tmp_path / "run", dict(os.environ))
    boot = argv[argv.index("-c", argv.index("--")) + 1]
    assert GUARD in boot and "# GUARD" not in boot
    assert boot.index(GUARD) < boot.index("launch_new_instance()"), "the guard must run before the kernel starts"


def test_tensorflow_autograph_still_loads_its_own_files(tmp_path):
    """AutoGraph writes converted functions to /tmp and loads them: allowed when TensorFlow calls its loader,
    refused when the notebook calls it."""
    need_sandbox()
    pytest.importorskip("tensorflow")
    work, run = tmp_path / "work", tmp_path / "run"
    work.mkdir(), run.mkdir()
    box = sandbox.Sandbox(bwrap=sandbox.find_bwrap())
    argv = box.kernel_argv(work, run, {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    cell = "import tensorflow as tf\n@tf.function\ndef f(x):\n    if tf.reduce_sum(x) > 0:\n        x = x * 2\n    return x\n"
    probe = GUARD + (  # the cell's source in linecache, as IPython keeps it (AutoGraph reads it)
        f"import linecache\ncell = {cell!r}\n"
        "linecache.cache['<cell>'] = (len(cell), None, cell.splitlines(True), '<cell>')\n"
        "exec(compile(cell, '<cell>', 'exec'))\n"
        "print('autograph', float(f(tf.ones(3))[0]))\n"
        "from tensorflow.python.autograph.pyct import loader\n"
        "try:\n    loader.load_source('X = 1', True)\n    print('NOT REFUSED')\n"
        "except PermissionError as error:\n    print('refused' if 'not imported' in str(error) else error)\n"
    )
    done = _python_in_sandbox(box, argv, probe)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-3:] == ["autograph", "2.0", "refused"], done.stdout


@pytest.mark.parametrize(
    "source, reason",
    [
        ("import sys\nsys.path.insert(0, '.')", "sys.path"),
        ("import sys as s\ns.meta_path.insert(0, object())", "sys.meta_path"),
        ("from sys import path_hooks as h\nh.append(len)", "sys.path_hooks"),
        ("import sys\nsys.path_importer_cache.clear()", "sys.path_importer_cache"),
        ("import runpy", "runpy"),
        ("from zipimport import zipimporter", "zipimport"),
        ("import site", "site"),
        ("with open('pe_helpers.py', 'w') as fh:\n    fh.write(src)", "pe_helpers.py"),
        ("open(name + '.pth', 'w')", ".pth"),
        ("open('helpers.cpython-311-x86_64-linux-gnu.so', 'wb')", ".so"),
    ],
)
def test_each_way_to_import_written_code_is_a_finding(source, reason):
    tree = ast.parse(source)
    found = import_findings(tree, _aliases([tree]))
    assert found and reason in found[0][1], found


def test_the_round_d_reproducer_is_refused_in_the_source():
    path = Path("/tmp/redD1/repro/w2_modleak_torch.ipynb")
    if not path.exists():
        pytest.skip("the red team's reproducer is not on this machine")
    master = nbformat.read(ROOT / "labs/source/week2_positional/week2_positional_torch.ipynb", as_version=4)
    found = forbidden_findings(nbformat.read(path, as_version=4), "week2_positional", "torch", master)
    assert found and any("pe_helpers.py" in reason or "sys.path" in reason for reason in found.values()), found


@pytest.mark.parametrize("path", COURSE_NOTEBOOKS, ids=lambda p: p.stem)
def test_course_notebooks_have_no_import_finding(path):
    nb = nbformat.read(path, as_version=4)
    trees = [ast.parse(c.source) for c in nb.cells if c.cell_type == "code"]
    aliases = _aliases(trees)
    assert [f for tree in trees for f in import_findings(tree, aliases)] == []


def _notebook_bytes(cells: int, outputs: int = 0) -> bytes:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x") for _ in range(cells)])
    if outputs:
        nb.cells[0].outputs = [nbformat.v4.new_output("stream", text="a") for _ in range(outputs)]
    return nbformat.writes(nb).encode()


def test_cell_cap_comes_from_the_course_notebook():
    assert cell_cap(12) == MIN_CELL_CAP and cell_cap(28) == MIN_CELL_CAP and cell_cap(50) == 500
    for path in COURSE_NOTEBOOKS:
        cells = len(json.loads(path.read_bytes())["cells"])
        assert cells * 10 <= cell_cap(cells), path


def test_too_many_cells_or_outputs_are_refused_before_parsing():
    assert why_too_many_cells(_notebook_bytes(300), 22) is None
    assert why_too_many_cells(_notebook_bytes(301), 22).startswith("301 cells, over the cap of 300")
    assert why_too_many_cells(_notebook_bytes(120_000), 22).startswith("120000 cells, over the cap of 300")
    assert why_too_many_cells(_notebook_bytes(3, outputs=3000), 22) is None
    assert why_too_many_cells(_notebook_bytes(3, outputs=3001), 22) == "3001 outputs, over the cap of 3000"
    assert why_too_many_cells(b"not json", 22) is None  # nbformat says why


@pytest.mark.timeout(600)
def test_a_notebook_of_many_cells_is_refused_at_intake(tmp_path):
    pytest.importorskip("nbgrader")
    from tests.course.test_grading import toy_course
    from txcourse.course import grading

    labs, source = toy_course(tmp_path)
    many = nbformat.from_dict(source)
    many.cells.extend(nbformat.v4.new_code_cell("1") for _ in range(cell_cap(len(source.cells)) + 1 - len(many.cells)))
    subs = tmp_path / "submissions"
    for student, nb in {"honest": source, "many": many}.items():
        (subs / student).mkdir(parents=True)
        nbformat.write(nb, subs / student / "toy_torch.ipynb")
    rows = grading.grade_submissions(
        subs, "toy", tmp_path / "toy.csv", timeout=20, labs_dir=labs, verbose=False, jobs=1, sandbox=False
    )
    rows = {r["student"]: r for r in rows}
    assert (rows["honest"]["status"], rows["honest"]["score"]) == ("graded", 5.0)
    assert rows["many"]["status"] == f"refused: {len(many.cells)} cells, over the cap of {MIN_CELL_CAP} " + (
        f"(10 times the course's notebook, at least {MIN_CELL_CAP})"
    )
    assert rows["many"]["score"] == 0


def test_feedback_renders_a_long_markdown_cell_as_plain_text():
    """3. Markdown cells over MARKDOWN_RENDER_CAP ('*_' * N took 7-11 s per 128 KiB cell in mistune) are shown as
    escaped text; the course's own cells (at most ~3.5 KB) are rendered as before."""
    pytest.importorskip("nbgrader")
    import runpy

    from traitlets.config import Config

    from txcourse.course.grading.intake_caps import MARKDOWN_RENDER_CAP

    config = runpy.run_path(str(ROOT / "labs" / "nbgrader_config.py"), init_globals={"get_config": Config})
    inert = config["InertMarkdown"]()
    long = "*_" * (MARKDOWN_RENDER_CAP // 2) + "<b>x</b>"
    cell, _ = inert.preprocess_cell({"cell_type": "markdown", "source": long, "metadata": {}}, {}, 0)
    assert cell["source"].startswith("<pre>*_*_") and "&lt;b&gt;x&lt;/b&gt;" in cell["source"], cell["source"][:80]
    short = "*_" * (MARKDOWN_RENDER_CAP // 2 - 8) + "**x**"
    cell, _ = inert.preprocess_cell({"cell_type": "markdown", "source": short, "metadata": {}}, {}, 0)
    assert cell["source"].startswith('<div class="jp-RenderedMarkdown">') and "<strong>x</strong>" in cell["source"]
    for path in COURSE_NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        assert max(len(c.source.encode()) for c in nb.cells if c.cell_type == "markdown") * 4 < MARKDOWN_RENDER_CAP
