"""The lab notebooks, one module per lab, each a list of cells (see ``_cells``); built by ``labs/make_sources.py``."""
