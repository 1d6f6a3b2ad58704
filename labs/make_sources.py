"""Build the source notebooks of the labs from one description per lab (labs/specs/<lab>.py).

Each lab is written once and becomes two notebooks with the same cells, the
same nbgrader ids and the same points: ``labs/source/<lab>/<lab>_torch.ipynb``
and ``<lab>_tf.ipynb``. The notebooks are written without outputs.

    python labs/make_sources.py            # (re)write the 12 source notebooks
    python labs/make_sources.py --check    # exit 1 if the committed ones differ

``make labs`` runs this, then nbgrader to make the student versions in labs/release/.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import re
import sys
import textwrap
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from i18n import LANGS, Translator  # noqa: E402 - the translated editions' catalogues (labs/i18n.py)
from specs._cells import Cell  # noqa: E402

from txcourse.course.labs import LABS  # noqa: E402 - the lab names, one list for the course
from txcourse.registry import FRAMEWORK_NAMES  # noqa: E402

FRAMEWORKS = FRAMEWORK_NAMES  # subpackage -> name in prose
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
HIDDEN_MARKERS = ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS")  # none in any lab: hidden checks are the probes'
MARKERS = ("BEGIN SOLUTION", "END SOLUTION", *HIDDEN_MARKERS)


def render(source, fw: str, lab: str, translate=None) -> str:
    """The cell text for framework ``fw``: pick, dedent, strip, translate (``translate(text)``, a Markdown
    cell of a translated edition: before the placeholders, which the catalogues keep), fill in the placeholders."""
    if isinstance(source, (list, tuple)):  # parts, each dedented on its own
        return "\n\n".join(render(part, fw, lab, translate) for part in source)
    if isinstance(source, dict):
        if set(source) != set(FRAMEWORKS):
            raise ValueError(f"{lab}: a per-framework source needs exactly the keys {list(FRAMEWORKS)}")
        return render(source[fw], fw, lab, translate)
    other = "tf" if fw == "torch" else "torch"
    text = textwrap.dedent(source).strip("\n")
    if translate is not None:
        text = translate(text)
    for key, value in (
        ("[[FW]]", FRAMEWORKS[fw]),
        ("[[fw]]", fw),
        ("[[OTHER]]", FRAMEWORKS[other]),
        ("[[OTHER_fw]]", other),
        ("[[LAB]]", lab),
    ):
        text = text.replace(key, value)
    leftover = re.search(r"\[\[[A-Za-z_]+\]\]", text)
    if leftover:
        raise ValueError(f"{lab}: unknown placeholder {leftover.group(0)} in {text[:80]!r}")
    return text


def nbgrader_metadata(cell: Cell) -> dict:
    meta = {
        "grade": cell.kind == "tests",
        "solution": cell.kind == "solution",
        "locked": cell.kind in ("readonly", "parameters", "tests"),
        "grade_id": cell.grade_id,
        "schema_version": 3,
    }
    if cell.kind == "tests":
        meta["points"] = cell.points
    return meta


def check_cells(lab: str, cells: list[Cell]) -> None:
    """The rules nbgrader (and the autograder's restore of deleted test cells) rely on."""
    ids = [c.grade_id for c in cells if c.grade_id]
    if len(ids) != len(set(ids)):
        raise ValueError(f"{lab}: duplicate grade ids {sorted(i for i in ids if ids.count(i) > 1)}")
    previous = None
    for cell in cells:
        if cell.kind == "tests":
            if cell.points <= 0:
                raise ValueError(f"{lab}/{cell.grade_id}: a test cell needs points > 0")
            # nbgrader re-inserts a deleted test cell after the previous solution or test cell;
            # a read-only cell there would make it fail (KeyError in OverwriteCells).
            if previous is None or previous.kind not in ("solution", "tests"):
                raise ValueError(f"{lab}/{cell.grade_id}: a test cell must follow a solution or test cell")
        if cell.kind in ("tests", "solution"):
            for fw in FRAMEWORKS:
                if any(m in render(cell.source, fw, lab) for m in HIDDEN_MARKERS):
                    raise ValueError(
                        f"{lab}/{cell.grade_id} ({fw}): hidden tests would run in the student's kernel, which can "
                        f"read and print them; put the check in the cell's probe (the grader compares its values)"
                    )
        if cell.kind == "solution":
            for fw in FRAMEWORKS:
                if "### BEGIN SOLUTION" not in render(cell.source, fw, lab):
                    raise ValueError(f"{lab}/{cell.grade_id} ({fw}): a solution cell needs ### BEGIN SOLUTION")
        if cell.kind in ("md", "code", "readonly", "parameters"):
            for fw in FRAMEWORKS:
                if any(m in render(cell.source, fw, lab) for m in MARKERS):
                    raise ValueError(f"{lab}: nbgrader markers in a {cell.kind} cell: {cell.source!r:.80}")
        if cell.grade_id:
            previous = cell


def build(lab: str, fw: str, cells: list[Cell], translator: Translator | None = None) -> nbformat.NotebookNode:
    """The notebook of ``lab`` in framework ``fw``; with ``translator``, its Markdown cells translated (every
    other cell, the metadata and the cell ids are the English notebook's)."""
    nb_cells = []
    for index, cell in enumerate(cells):
        cell_id = cell.grade_id or f"cell-{index:02d}"
        translate = None
        if translator is not None and cell.kind == "md":
            translate = functools.partial(translator, lab=lab, where=f"{lab} {cell_id}")
        text = render(cell.source, fw, lab, translate)
        if cell.kind == "md":
            nb_cell = new_markdown_cell(text, id=cell_id)
        else:
            nb_cell = new_code_cell(text, id=cell_id)
        if cell.kind not in ("md", "code"):
            nb_cell.metadata["nbgrader"] = nbgrader_metadata(cell)
        if cell.tags:
            nb_cell.metadata["tags"] = list(cell.tags)
        nb_cells.append(nb_cell)
    nb = new_notebook(cells=nb_cells, metadata={"kernelspec": dict(KERNELSPEC), "language_info": {"name": "python"}})
    nbformat.validate(nb)
    return nb


def probes(lab: str, spec) -> dict | None:
    """The content of ``labs/probes/<lab>.json`` (the probe run's allow-list and each test cell's
    probe per framework), or None when no test cell of the lab has a probe."""
    cells = [c for c in spec.CELLS if c.kind == "tests"]
    if not any(c.probe is not None for c in cells):
        return None
    missing = [c.grade_id for c in cells if c.probe is None]
    if missing:
        raise ValueError(f"{lab}: test cells without a probe: {missing} (all or none of a lab's tests have one)")
    allow = getattr(spec, "ALLOW", None)
    if not isinstance(allow, dict) or set(allow) != set(FRAMEWORKS):
        raise ValueError(f"{lab}: a lab with probes needs ALLOW = {{'torch': [...], 'tf': [...]}}")
    skipped = [c for c in spec.CELLS if not c.in_probe_run]
    return {
        "lab": lab,
        "allow": {fw: list(allow[fw]) for fw in FRAMEWORKS},
        "probes": {fw: {c.grade_id: render(c.probe, fw, lab) for c in cells} for fw in FRAMEWORKS},
        "skip": {fw: [render(c.source, fw, lab) for c in skipped] for fw in FRAMEWORKS},
    }


# What a translated edition's course folder labs/<lang>/ holds besides its notebooks: copies of the English
# course's files, so that every grading command takes it as its --labs-dir unchanged.
EDITION_COPIES = ("nbgrader_config.py", "nbval_sanitize.cfg")


def notebooks(labs=LABS, langs=LANGS, missing: list[str] | None = None) -> dict[Path, str]:
    """Relative path -> text of the source notebooks of ``labs`` and of their probes (``probes/<lab>.json``,
    kept out of ``source/``: nbgrader would release whatever is there), and of each translated edition
    ``<lang>/`` of ``langs``: ``<lang>/source/<lab>/<lab>_<fw>.ipynb`` (the same notebook names), the same
    probes in ``<lang>/probes/`` and copies of :data:`EDITION_COPIES`. A Markdown block the ``lang``
    catalogue does not translate stays English and is appended to ``missing``."""
    from txcourse.course.grading.probes import probes_text

    out = {}
    translators = {lang: Translator(lang) for lang in langs}
    for lab in labs:
        spec = importlib.import_module(f"specs.{lab}")
        cells = spec.CELLS
        check_cells(lab, cells)
        data = probes(lab, spec)
        for prefix, translator in ((Path(), None), *((Path(lang), tr) for lang, tr in translators.items())):
            for fw in FRAMEWORKS:
                nb = build(lab, fw, cells, translator)
                out[prefix / "source" / lab / f"{lab}_{fw}.ipynb"] = nbformat.writes(nb) + "\n"
            if data is not None:
                out[prefix / "probes" / f"{lab}.json"] = probes_text(data)
    for lang, translator in translators.items():
        for name in EDITION_COPIES:
            out[Path(lang) / name] = (HERE / name).read_text(encoding="utf-8")
        if missing is not None:
            missing.extend(sorted(set(translator.missing)))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed notebooks, write nothing")
    parser.add_argument("--lab", action="append", choices=LABS, help="only this lab (repeatable; default: all)")
    args = parser.parse_args(argv)
    stale, missing = [], []
    for rel, text in notebooks(tuple(args.lab or LABS), missing=missing).items():
        path = HERE / rel
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(str(rel))
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            print(f"wrote labs/{rel}")
    if stale:
        print(
            "labs/make_sources.py: these source notebooks differ from labs/specs (run `make labs`):\n  "
            + "\n  ".join(stale),
            file=sys.stderr,
        )
    if missing:
        print(
            f"labs/make_sources.py: {len(missing)} Markdown blocks of labs/specs have no translation (they stay "
            "English; run `make translations`, then translate locales/<lang>/LC_MESSAGES/labs/*.po):\n  "
            + "\n  ".join(missing),
            file=sys.stderr,
        )
    return 1 if stale or missing else 0


if __name__ == "__main__":
    sys.exit(main())
