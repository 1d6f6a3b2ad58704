"""Grade the mutants of labs/mutants/catalogue.py exactly as students are graded, and print what they lose.

For each lab, one ``txcourse grade`` run (txcourse.course.grading.grade_submissions: a workspace per notebook,
the bubblewrap sandbox where ``bwrap`` works) grades the unchanged solution and every mutant as students
of their own, ``--jobs`` at a time. A mutant is *caught* when it loses points on the tests of its own
exercise; a stub (kind "stub", labs/mutants/stubs.py: zeros, its input, random values, a constant,
txcourse's version, a forbidden built-in) must lose *every* point of it; a correct variant (kind "correct")
must keep full marks, the solution too. Every feedback file
is searched for hidden test code (txcourse.course.grading.feedback_leaks).

    python labs/mutants/run.py              # every mutant (make mutants)
    python labs/mutants/run.py --subset     # the ones marked for `make test`
    python labs/mutants/run.py --lab week5_decoder --framework torch

Exit status 1 when a wrong mutant escapes, a correct one or the solution loses a point, a notebook could
not be graded or a feedback file shows hidden tests.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
LABS_DIR = HERE.parent
sys.path.insert(0, str(HERE))

from catalogue import EXERCISES, MUTANTS, Mutant  # noqa: E402
from stubs import solution_sources, stub_mutants  # noqa: E402

from txcourse.course import grading  # noqa: E402


def apply_edits(source: str, edits: list[tuple[str, str]], where: str) -> str:
    """``source`` with each ``old`` replaced by ``new`` (every occurrence; a multi-line ``new`` takes
    the indentation of the line it replaces into; an empty ``old`` appends ``new``); ValueError if an
    ``old`` is not there."""
    for old, new in edits:
        if old == "":  # appended to the cell (a stub's wrapper)
            source += new
            continue
        if old not in source:
            raise ValueError(f"{where}: {old!r} is not in the solution cell (the catalogue is out of date)")
        lines = []
        for line in source.split("\n"):
            if old in line and "\n" in new:
                indent = line[: len(line) - len(line.lstrip())]
                line = line.replace(old, new.replace("\n", "\n" + indent))
            else:
                line = line.replace(old, new)
            lines.append(line)
        source = "\n".join(lines)
    return source


def mutant_notebook(mutant: Mutant, fw: str) -> nbformat.NotebookNode:
    """The lab's source notebook with the mutant's edits in its solution cell."""
    name = grading.notebook_name(mutant.lab, fw)
    nb = nbformat.read(LABS_DIR / "source" / mutant.lab / f"{name}.ipynb", as_version=4)
    cell = next((c for c in nb.cells if c.get("id") == mutant.cell), None)
    if cell is None:
        raise ValueError(f"{mutant.lab}/{mutant.name}: no cell {mutant.cell!r} in {name}")
    cell.source = apply_edits(cell.source, mutant.edits_for(fw), f"{mutant.lab}/{mutant.name} ({fw})")
    return nb


def student_id(mutant: Mutant) -> str:
    return f"{mutant.exercise.split()[0]}-{mutant.name}"


def grade_lab(
    lab: str,
    mutants: list[Mutant],
    frameworks: tuple[str, ...],
    out: Path,
    jobs: int,
    sandbox: bool,
    timeout: int,
    verbose: bool,
) -> list[dict]:
    """Grade the solution and ``mutants`` of ``lab``; one result row per (mutant or solution, framework)."""
    subs = out / lab / "submissions"
    if subs.exists():  # a previous run's mutants are not this run's
        shutil.rmtree(subs)
    for fw in frameworks:
        name = grading.notebook_name(lab, fw)
        (subs / "solution").mkdir(parents=True, exist_ok=True)
        nbformat.write(
            nbformat.read(LABS_DIR / "source" / lab / f"{name}.ipynb", as_version=4),
            subs / "solution" / f"{name}.ipynb",
        )
        for mutant in mutants:
            if fw in mutant.frameworks():
                folder = subs / student_id(mutant)
                folder.mkdir(parents=True, exist_ok=True)
                nbformat.write(mutant_notebook(mutant, fw), folder / f"{name}.ipynb")
    csv_path = out / lab / "grades.csv"
    rows = grading.grade_submissions(
        subs, lab, csv_path, timeout=timeout, labs_dir=LABS_DIR, verbose=verbose, jobs=jobs, sandbox=sandbox
    )
    hidden = {
        fw: grading.hidden_test_lines(LABS_DIR / "source" / lab / f"{grading.notebook_name(lab, fw)}.ipynb")
        for fw in frameworks
    }
    by_student = {student_id(m): m for m in mutants}
    results = []
    for row in rows:
        if row["status"] == grading.MISSING or row["framework"] not in frameworks:
            continue
        mutant = by_student.get(row["student"])
        tests = mutant.tests if mutant else ()
        cells = row.get("cells", {})
        lost_here = sum(top - score for cell, (score, top) in cells.items() if cell in tests)
        lost_elsewhere = sum(top - score for cell, (score, top) in cells.items() if cell not in tests)
        leaks = []
        if row.get("feedback"):
            html = (csv_path.parent / row["feedback"]).read_text(encoding="utf-8")
            leaks = grading.feedback_leaks(html, hidden[row["framework"]])
        kind = mutant.kind if mutant else "solution"
        graded = row["status"] == grading.GRADED
        if kind == "wrong":
            ok = graded and lost_here > 0
        elif kind == "stub":  # a stub must lose every point of its exercise
            ok = graded and lost_here == sum(top for cell, (_, top) in cells.items() if cell in tests) > 0
        else:
            ok = graded and row["score"] == row["max_score"]
        results.append(
            {
                "lab": lab,
                "framework": row["framework"],
                "exercise": mutant.exercise if mutant else "-",
                "mutant": mutant.name if mutant else "(solution)",
                "kind": kind,
                "lost": lost_here,
                "lost_elsewhere": lost_elsewhere,
                "score": row["score"],
                "max_score": row["max_score"],
                "status": row["status"],
                "leaks": leaks,
                "ok": ok and not leaks,
            }
        )
    return results


def format_table(results: list[dict]) -> str:
    head = ("lab", "fw", "exercise", "mutant", "kind", "lost on its exercise", "lost elsewhere", "caught / ok")
    rows = [head]
    for r in results:
        if r["kind"] == "stub":
            verdict = "all lost" if r["ok"] else "KEPT POINTS"
        elif r["kind"] == "wrong":
            verdict = "yes" if r["ok"] else "NO"
        else:
            verdict = "full marks" if r["ok"] else "LOST POINTS"
        if r["status"] != grading.GRADED:
            verdict += f" ({r['status'][:60]})"
        if r["leaks"]:
            verdict += f" FEEDBACK LEAKS {r['leaks'][:2]}"
        rows.append(
            (
                r["lab"],
                r["framework"],
                r["exercise"],
                r["mutant"],
                r["kind"],
                f"{r['lost']:g}",
                f"{r['lost_elsewhere']:g}",
                verdict,
            )
        )
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(head))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def summary(results: list[dict]) -> str:
    wrong = [r for r in results if r["kind"] in ("wrong", "stub")]
    caught = sum(r["ok"] for r in wrong)
    lines = [
        f"{caught} of {len(wrong)} wrong answers caught; "
        f"{sum(r['ok'] for r in results if r['kind'] not in ('wrong', 'stub'))} of "
        f"{sum(r['kind'] not in ('wrong', 'stub') for r in results)} correct notebooks (solutions and correct variants) "
        f"with full marks; {sum(bool(r['leaks']) for r in results)} feedback files with hidden tests"
    ]
    per = {}
    for r in wrong:
        key = (r["lab"], r["exercise"])
        per.setdefault(key, [0, 0])
        per[key][0] += r["ok"]
        per[key][1] += 1
    lines += [f"  {lab} {exercise}: {c}/{n} caught" for (lab, exercise), (c, n) in per.items()]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subset", action="store_true", help="only the mutants marked for `make test`")
    parser.add_argument("--lab", action="append", choices=sorted(EXERCISES), help="only this lab (repeatable)")
    parser.add_argument("--framework", action="append", choices=grading.FRAMEWORKS, help="only this framework")
    parser.add_argument("--mutant", action="append", help="only the mutant of this name (repeatable)")
    parser.add_argument("--no-stubs", action="store_true", help="without the stub mutants of labs/mutants/stubs.py")
    parser.add_argument("--jobs", type=int, default=2, help="notebooks graded at the same time")
    parser.add_argument("--timeout", type=int, default=120, help="seconds per cell")
    parser.add_argument(
        "--out", default=None, help="folder for the submissions, CSVs and feedback (default: a temporary one)"
    )
    parser.add_argument("--no-sandbox", action="store_true", help="grade without bubblewrap")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    frameworks = tuple(args.framework or grading.FRAMEWORKS)
    sandbox = not args.no_sandbox
    out = Path(args.out or tempfile.mkdtemp(prefix="txmutants-")).resolve()
    start = time.perf_counter()
    results = []
    every = list(MUTANTS)
    if not args.subset and not args.no_stubs:  # make mutants: every stub too (each must lose all its points)
        every += stub_mutants(solution_sources(LABS_DIR))
    for lab in args.lab or sorted(EXERCISES):
        chosen = [
            m
            for m in every
            if m.lab == lab and (not args.subset or m.subset) and (not args.mutant or m.name in args.mutant)
        ]
        fws = tuple(fw for fw in frameworks if not args.subset or any(fw in m.subset for m in chosen))
        chosen = [m for m in chosen if any(fw in (m.subset if args.subset else m.frameworks()) for fw in fws)]
        if not chosen:
            continue
        if args.subset:  # a subset mutant is graded only in the frameworks it names
            chosen = [
                Mutant(m.lab, m.exercise, m.name, {fw: m.edits_for(fw) for fw in m.subset}, m.kind, m.subset)
                for m in chosen
            ]
        lab_results = grade_lab(lab, chosen, fws, out, args.jobs, sandbox, args.timeout, not args.quiet)
        print(f"\n{format_table(lab_results)}\n", flush=True)  # as each lab is done: a long run shows progress
        results += lab_results
    print(summary(results))
    print(
        f"\n{len(results)} notebooks in {time.perf_counter() - start:.0f} s; submissions, grades and feedback in {out}"
    )
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
