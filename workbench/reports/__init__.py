"""Reports: notebooks run by papermill on this environment's kernel, rendered to HTML (outside
``workbench.core``, since running kernels is not a catalog concern)."""

from workbench.reports.arguments import parse_parameters
from workbench.reports.notebooks import resolve_template
from workbench.reports.report import ReportResult, report

__all__ = ["ReportResult", "parse_parameters", "report", "resolve_template"]
