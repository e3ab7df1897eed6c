"""The eval report viewer: JSON report documents -> a self-contained HTML page or a
GitHub-flavoured Markdown summary. Pure functions; no pytest imports."""

from pytest_kedi.viewer.html import render_html
from pytest_kedi.viewer.markdown import render_markdown
from pytest_kedi.viewer.model import ReportError, RunView, read_report, run_view

__all__ = ["ReportError", "RunView", "read_report", "render_html", "render_markdown", "run_view"]
