"""`txcourse translate` on a dates checkpoint (issue 32): every typed line is parsed as a date, in both frameworks.

PyTorch: the shipped Transformer (book/data/dates-transformer-torch.npz). TensorFlow: no dates checkpoint is
shipped, so the same weights are converted (txcourse.convert.torch_to_tf) into a TensorFlow checkpoint; both
read the same model input, so they print the same translations. A date that does not exist, a wrong weekday, a
missing year or a line that is no date is skipped with the reason on stderr and refused under --strict; a year
outside the training range [first_year, last_year] is translated with a warning, and refused under --strict.

No ``--threads``: TensorFlow's thread count can be set only before it first runs, and the fixture runs it.
"""

from pathlib import Path

import pytest
from support.checkpoints import run_translate, tf_twin

from txcourse.registry import FRAMEWORKS

SHIPPED = Path(__file__).resolve().parents[2] / "book" / "data" / "dates-transformer-torch.npz"
OUTSIDE = "year 1850 is outside the years this model was trained on (1900-2099): its translation may be wrong"
NOTHING = "txcourse: error: nothing to translate: the only line is empty, without words, too long or no date"

# issue 32's table: the line, then why it is skipped (None: translated), then its warning (None: none)
TABLE = [
    ("Monday, March 3, 2026", "'Monday, March 3, 2026': March 3, 2026 is a Tuesday, not a Monday", None),
    ("February 30, 2026", "'February 30, 2026': no 30 February in 2026 (February 2026 has 28 days)", None),
    ("February 29, 2025", "'February 29, 2025': no 29 February in 2025 (2025 is not a leap year)", None),
    ("April 31, 2026", "'April 31, 2026': no 31 April in 2026 (April 2026 has 30 days)", None),
    ("13/13/2026", "'13/13/2026': month 13 does not exist", None),
    ("March 3, 1850", None, OUTSIDE),
    ("Sunday, March 3, 1850", None, OUTSIDE),
    ("tuesday, march 3, 2026", None, None),
    ("March 3", "'March 3': no year; a date is translated with its year, e.g. 'March 3, 2026'", None),
    ("March 3rd, 2026", None, None),
    ("Wednesday, January 1, 2025", None, None),
]


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    """framework -> the dates Transformer's checkpoint: the shipped one, and its weights converted to Keras."""
    pytest.importorskip("torch")
    pytest.importorskip("tensorflow")
    path = tf_twin(SHIPPED, tmp_path_factory.mktemp("dates-tf") / "dates-transformer-tf.npz")
    return {"torch": SHIPPED, "tf": path}


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_the_issue_table_together(framework, checkpoints, capsys, monkeypatch):
    """All eleven lines at once: each skipped one named with its reason, then each warning; the others translated."""
    lines = [line for line, _, _ in TABLE]
    code, out, err = run_translate(capsys, monkeypatch, checkpoints[framework], stdin="\n".join(lines) + "\n")
    assert code == 0
    assert err == [
        f"txcourse: skipped line {n}: {why}" for n, (_, why, _) in enumerate(TABLE, 1) if why is not None
    ] + [f"txcourse: warning: line {n}: {warning}" for n, (_, _, warning) in enumerate(TABLE, 1) if warning]
    rows = [row.split("\t") for row in out]
    assert [row[0] for row in rows] == [line for line, why, _ in TABLE if why is None]
    assert all(len(row) == 2 and row[1] for row in rows), rows


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("line, why, warning", TABLE, ids=[line for line, _, _ in TABLE])
def test_each_case_alone_and_under_strict(framework, line, why, warning, checkpoints, capsys, monkeypatch):
    code, out, err = run_translate(capsys, monkeypatch, checkpoints[framework], line)
    if why is not None:
        assert (code, out, err) == (2, [], [f"txcourse: skipped line 1: {why}", NOTHING])
    else:
        assert code == 0 and len(out) == 1 and out[0].split("\t")[0] == line
        assert err == ([f"txcourse: warning: line 1: {warning}"] if warning else [])
    code, out, strict_err = run_translate(capsys, monkeypatch, checkpoints[framework], "--strict", line)
    if why is not None or warning is not None:
        assert (code, out, strict_err) == (2, [], [f"txcourse: error: --strict: line 1: {why or warning}"])
    else:
        assert code == 0 and len(out) == 1 and strict_err == []


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_every_way_of_typing_a_date_gets_the_translation_of_its_trained_phrasing(
    framework, checkpoints, capsys, monkeypatch
):
    """The model reads characters: "tuesday, march 3, 2026" used to be read as another date. Now each way of
    typing a date reaches the model as the CLDR rendering of the trained phrasing closest to it."""
    groups = [
        ["Tuesday, March 3, 2026", "tuesday, march 3, 2026", "TUESDAY,  MARCH 3RD , 2026", "Tuesday March 3rd 2026"],
        ["March 3, 2026", "march 3rd, 2026", "  March   03 2026 "],
        ["3/3/2026", "2026-03-03", "03/03/2026"],
        ["Tuesday, 3 March 2026", "tuesday 3rd march 2026"],
        ["Tue, Mar 3, 2026", "tue mar. 3rd 2026"],
    ]
    for group in groups:
        code, out, err = run_translate(capsys, monkeypatch, checkpoints[framework], *group)
        assert code == 0 and err == [] and len(out) == len(group), (group, err)
        assert len({row.split("\t")[1] for row in out}) == 1, out  # one model input, one translation


def test_both_frameworks_print_the_same_translations(checkpoints, capsys, monkeypatch):
    """The converted weights compute the shipped model's function: greedy decoding agrees line for line."""
    lines = "\n".join(line for line, why, _ in TABLE if why is None) + "\n"
    printed = {fw: run_translate(capsys, monkeypatch, checkpoints[fw], stdin=lines)[1] for fw in FRAMEWORKS}
    assert printed["torch"] == printed["tf"] and len(printed["torch"]) == 5
