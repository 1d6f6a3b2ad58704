"""The power of the probes, measured: every stub mutant (labs/mutants/stubs.py) must keep none of its exercise's points.

A test cell keeps nbgrader's points only when its probe matches the reference and no forbidden use was found
in the exercise's source (txcourse/course/grading/forbidden.py). This runs what decides that, without
nbgrader: for one lab and framework, ONE kernel (unconfined: the stubs are the course's own code) whose
``txcourse`` is the lab's allow-listed copy (txcourse/course/grading/allowlist.py) runs the probe notebook
of the solution (the reference), then for each stub its solution cell, the probes of its exercise, and the
solution cells again (so the next stub starts from the solution). The points a stub keeps are those of the
test cells of its exercise whose probe matched and whose source has no finding: each must be 0.

    python labs/mutants/probe_power.py                         # every lab, both frameworks (make mutants)
    python labs/mutants/probe_power.py --lab week4_encoder --framework torch
    python labs/mutants/probe_power.py --subset                # the labs of `make test`

Exit status 1 when a stub keeps a point or the reference run fails.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell

HERE = Path(__file__).resolve().parent
LABS_DIR = HERE.parent
sys.path.insert(0, str(HERE))

import run  # noqa: E402
import stubs  # noqa: E402
from catalogue import EXERCISES  # noqa: E402

from txcourse.course.grading.allowlist import package_for_lab  # noqa: E402
from txcourse.course.grading.forbidden import forbidden_findings  # noqa: E402
from txcourse.course.grading.probes import compare, load_probes, probe_notebook, read_probe_outputs  # noqa: E402

SEED = 20261127
SUBSET = ("week3_attention", "week4_encoder")  # `make test`: two labs, both frameworks (a few minutes)


def _points(master) -> dict[str, float]:
    out = {}
    for cell in master.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade") and meta.get("grade_id"):
            out[meta["grade_id"]] = float(meta.get("points", 0))
    return out


def measure(lab: str, fw: str, mutants: list, work: Path, timeout: int = 300) -> list[dict]:
    """One row per stub of ``lab`` in ``fw``: the points it keeps on its exercise (must be 0)."""
    import txcourse
    from txcourse.course.grading.verdict import execute_notebook, unconfined_kernel

    name = f"{lab}_{fw}"
    probes = load_probes(LABS_DIR, lab)
    master = nbformat.read(LABS_DIR / "source" / lab / f"{name}.ipynb", as_version=4)
    points = _points(master)
    copy = package_for_lab(Path(txcourse.__file__).resolve().parent, LABS_DIR, lab, work / "pkg")
    forbid = (lab, fw)  # the prelude, as the grader's probe run has it
    nb, positions = probe_notebook(master, master, probes.for_notebook(name), SEED, probes.skipped(name), forbid)
    solutions = [c.source for c in master.cells if c.get("metadata", {}).get("nbgrader", {}).get("solution")]
    restore = new_code_cell("\n\n".join(solutions))
    stub_positions = []
    for mutant in mutants:
        cell = next(c.source for c in run.mutant_notebook(mutant, fw).cells if c.get("id") == mutant.cell)
        nb.cells += [restore, new_code_cell(cell)]
        here = {}
        for test in mutant.tests:
            here[test] = len(nb.cells)
            nb.cells.append(new_code_cell(f"PROBE_SEED = {SEED}\n{probes.for_notebook(name)[test]}"))
        stub_positions.append(here)
    km = unconfined_kernel(work / "jupyter", "txpower", copy, work / "rt")
    execute_notebook(nb, km, timeout, work)
    reference = read_probe_outputs(nb, positions)
    failed = {g: why for g, why in reference.items() if isinstance(why, str)}
    if failed:
        errors = [
            o.get("evalue", "") for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"
        ]
        raise RuntimeError(
            f"the reference probes of {name} failed with the allow-listed txcourse: {failed}; {errors[:3]}"
        )
    rows = []
    for mutant, here in zip(mutants, stub_positions):
        verdicts = compare(read_probe_outputs(nb, here), {g: reference[g] for g in here})
        flagged = forbidden_findings(run.mutant_notebook(mutant, fw), lab, fw, master)
        kept = sum(points[g] for g, why in verdicts.items() if not why and g not in flagged)
        rows.append(
            {
                "lab": lab,
                "framework": fw,
                "exercise": mutant.exercise,
                "stub": mutant.name.removeprefix("stub_"),
                "kind": mutant.kind,
                "points": sum(points[g] for g in mutant.tests),
                "kept": kept,
                "probes_passed": [g for g, why in verdicts.items() if not why],
                "flagged": sorted(set(flagged.values()))[:1],
            }
        )
    return rows


def controls(lab: str) -> list:
    """Per exercise, the unchanged solution run the same way (kind "correct"): it must keep every point,
    or the measurement itself is wrong."""
    from catalogue import Mutant

    return [Mutant(lab, exercise, "solution", {"both": [("", "")]}, "correct") for exercise in EXERCISES[lab]]


def table(rows: list[dict]) -> str:
    head = ("lab", "fw", "exercise", "stub", "points", "kept", "probes passed", "forbidden finding")
    lines = [head]
    for r in rows:
        lines.append(
            (
                r["lab"],
                r["framework"],
                r["exercise"],
                r["stub"],
                f"{r['points']:g}",
                f"{r['kept']:g}",
                ",".join(r["probes_passed"]) or "-",
                (r["flagged"][0][:70] if r["flagged"] else "-"),
            )
        )
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(head))]
    return "\n".join("  ".join(str(c).ljust(w) for c, w in zip(line, widths)).rstrip() for line in lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lab", action="append", choices=sorted(EXERCISES))
    parser.add_argument("--framework", action="append", choices=("torch", "tf"))
    parser.add_argument("--kind", action="append", choices=stubs.KINDS, help="only stubs of this kind")
    parser.add_argument("--subset", action="store_true", help=f"only {', '.join(SUBSET)}")
    args = parser.parse_args(argv)
    labs = args.lab or (list(SUBSET) if args.subset else sorted(EXERCISES))
    every = stubs.stub_mutants(stubs.solution_sources(LABS_DIR))
    rows, start = [], time.perf_counter()
    for lab in labs:
        for fw in args.framework or ("torch", "tf"):
            chosen = [m for m in every if m.lab == lab and fw in m.frameworks()]
            chosen = [m for m in chosen if not args.kind or m.name.removeprefix("stub_") in args.kind]
            chosen += controls(lab)
            work = Path(tempfile.mkdtemp(prefix="txpow-", dir="/tmp"))  # short: Unix socket paths
            try:
                lab_rows = measure(lab, fw, chosen, work)
            finally:
                shutil.rmtree(work, ignore_errors=True)
            print(table(lab_rows), "\n", flush=True)
            rows += lab_rows
    bad = [r for r in rows if r["kept"] > 0 and r["kind"] == "stub"]
    lost = [r for r in rows if r["kept"] < r["points"] and r["kind"] == "correct"]
    print(
        f"{sum(r['kind'] == 'stub' for r in rows) - len(bad)} of {sum(r['kind'] == 'stub' for r in rows)} stubs "
        f"keep no point of their exercise; {len(lost)} solutions lost points ({time.perf_counter() - start:.0f} s)"
    )
    return 1 if bad or lost else 0


if __name__ == "__main__":
    sys.exit(main())
