"""Put executed notebook cells in framework tabs.

MyST-NB cannot nest a ``{code-cell}`` inside a ``{tab-item}`` directive, so
the chapters mark each framework's cell with a ``tab`` metadata key instead::

    ```{code-cell} ipython3
    :tab: PyTorch
    import txcourse.torch as txt
    ...
    ```

    ```{code-cell} ipython3
    :tab: TensorFlow
    import txcourse.tf as txf
    ...
    ```

After a page is read, every run of consecutive cells with a ``tab`` key
becomes one sphinx-design tab set (the same nodes the ``{tab-set}``
directive builds, so it looks and behaves like the hand-written ones). A
run ends at any other node or when a label repeats. The tabs are synced
across the page in the ``framework`` group: choosing TensorFlow once shows
TensorFlow everywhere, including in ``{tab-set}`` directives written with
``:sync-group: framework`` and ``:sync: tf``. The cells themselves are
unchanged, so the downloaded notebook runs top to bottom as usual.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx
from sphinx_design.shared import create_component

SYNC_GROUP = "framework"
SYNC_IDS = {"pytorch": "torch", "tensorflow": "tf"}


def _tab_label(node: nodes.Node) -> str | None:
    if isinstance(node, nodes.container) and node.get("nb_element") == "cell_code":
        label = (node.get("cell_metadata") or {}).get("tab")
        return str(label) if label else None
    return None


def _tab_set(run: list[tuple[str, nodes.Node]]) -> nodes.Node:
    items = []
    for label, cell in run:
        rubric = nodes.rubric(label, nodes.Text(label), classes=["sd-tab-label"])
        rubric["sync_group"] = SYNC_GROUP
        rubric["sync_id"] = SYNC_IDS.get(label.lower(), label.lower())
        content = create_component("tab-content", children=[cell], classes=["sd-tab-content"])
        items.append(create_component("tab-item", children=[rubric, content], classes=["sd-tab-item"]))
    return create_component("tab-set", children=items, classes=["sd-tab-set", "framework-cells"])


def _group_children(parent: nodes.Element) -> None:
    children, run = [], []

    def flush():
        if run:
            children.append(_tab_set(list(run)))
            run.clear()

    for child in parent.children:
        label = _tab_label(child)
        if label is None:
            flush()
            children.append(child)
            continue
        if any(label == seen for seen, _ in run):
            flush()
        run.append((label, child))
    flush()
    parent.children = []
    parent.extend(children)


def group_framework_cells(app: Sphinx, doctree: nodes.document) -> None:
    parents = {
        id(cell.parent): cell.parent for cell in doctree.findall(nodes.container) if _tab_label(cell) is not None
    }
    for parent in parents.values():
        _group_children(parent)


def setup(app: Sphinx) -> dict:
    app.connect("doctree-read", group_framework_cells)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
