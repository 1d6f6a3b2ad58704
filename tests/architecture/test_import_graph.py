"""The package's import graph: no cycle, and no import that climbs from a lower layer to a higher one.

The graph is read from the code (tests/support/import_graph.py: module-level imports and those inside
functions, relative imports resolved, ``importlib.import_module`` with a literal name). The layers, bottom
up: framework-free (config, registry, decoding, data, training, evaluation, ...), the two halves
(``txcourse.torch``, ``txcourse.tf``), and the upper layers that choose a half by name or serve a reader
(``backends``, ``cli``, ``course``, ``notebook``, ...). A failure names the offending imports.
"""

from __future__ import annotations

import textwrap

from support.import_graph import build_graph, climbing_edges, cycles, layer

GRAPH = build_graph()


def test_the_graph_holds_the_package():
    assert len(GRAPH.modules) > 100 and len(GRAPH.pairs()) > 300
    assert ("txcourse.torch.train", "txcourse.training.loop") in GRAPH.pairs()  # a module-level import
    assert ("txcourse.backends", "txcourse.torch.backend") in GRAPH.pairs()  # an import inside a function


def test_no_import_cycle():
    found = cycles(GRAPH)
    detail = [
        f"{' '.join(c)}: " + ", ".join(f"{a} -> {b}" for a, b in GRAPH.pairs() if a in c and b in c) for c in found
    ]
    assert not found, "import cycles:\n" + "\n".join(detail)


def test_no_import_climbs_from_a_lower_layer():
    """Framework-free modules import no half and no upper layer; the halves import no upper layer."""
    climbing = climbing_edges(GRAPH)
    assert not climbing, "imports that climb:\n" + "\n".join(
        f"{a} ({layer(a)}) -> {b} ({layer(b)})" for a, b in climbing
    )


def test_one_module_outside_the_halves_imports_a_half():
    """The half the user chose is picked by name in txcourse.backends only; everything above asks it."""
    importers = sorted({a for a, b in GRAPH.pairs() if layer(a) != "half" and layer(b) == "half"})
    assert importers == ["txcourse.backends"], importers


def test_the_layers_are_those_the_package_docstring_names():
    assert [
        layer(m) for m in ("txcourse.registry", "txcourse.training.checkpoint", "txcourse.decoding", "txcourse.errors")
    ] == ["framework-free"] * 4
    assert [layer(m) for m in ("txcourse.torch.train", "txcourse.tf", "txcourse.tf.devices")] == ["half"] * 3
    assert [layer(m) for m in ("txcourse.backends", "txcourse.cli", "txcourse.course.grading")] == ["upper"] * 3


def _tree(tmp_path, files: dict[str, str]):
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return build_graph(tmp_path)


def test_the_builder_sees_every_kind_of_import(tmp_path):
    """The rules above can fail: a cycle through a function-level and a relative import, and a climb."""
    graph = _tree(
        tmp_path,
        {
            "txcourse/__init__.py": "",
            "txcourse/registry.py": "def backend():\n    from txcourse.torch import backend\n",
            "txcourse/torch/__init__.py": "from . import backend\n",
            "txcourse/torch/backend.py": "from ..registry import backend\n",
            "txcourse/training/__init__.py": "import importlib\nimportlib.import_module('txcourse.tf.train')\n",
            "txcourse/tf/__init__.py": "",
            "txcourse/tf/train.py": "from txcourse.cli import main\n",
            "txcourse/cli/__init__.py": "def main():\n    pass\n",
        },
    )
    assert ("txcourse.registry", "txcourse.torch.backend") in graph.pairs()
    assert ("txcourse.torch.backend", "txcourse.registry") in graph.pairs()  # relative, resolved
    assert cycles(graph) == [["txcourse.registry", "txcourse.torch", "txcourse.torch.backend"]]
    assert climbing_edges(graph) == [
        ("txcourse.registry", "txcourse.torch"),
        ("txcourse.registry", "txcourse.torch.backend"),
        ("txcourse.tf.train", "txcourse.cli"),
        ("txcourse.training", "txcourse.tf.train"),
    ]
