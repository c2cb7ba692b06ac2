import pytest


@pytest.fixture(autouse=True)
def wide_page(monkeypatch):
    """The text reports on a 160-column page, as when piped, whatever $COLUMNS or a terminal says: the
    tests read ncu's metric names from the tables (test_render_fit.py sets its own widths)."""
    from rich.console import Console
    from gpusim.report import render
    monkeypatch.setattr(render, "console", Console(width=160))
