"""Reports people would rather look at: figures and one self-contained HTML page.

``arcadebench report <results.json | logs>... --out report/`` (or :func:`report`) reads results
or scores logs, adds published references (``--references``), draws the figures and writes
``report.html``. Modules, in the order data flows:

- :mod:`.sources`: read results JSONs, score logs and score files, collect learning curves,
  and set results of other protocols apart;
- :mod:`.references`: the published references (spec constants, the Atari-5 data set, the
  specs' ``published`` tables);
- :mod:`.report_data`: :class:`Entry` and :class:`ReportData`, what every table and figure
  reads, and :class:`OtherProtocol`, results of another protocol, reported apart;
- :mod:`.style`, :mod:`.figures`, :mod:`.curves`: the matplotlib figures (optional extra);
- :mod:`.episodes`: each result's best and worst episode of every game, replayed from the logs'
  recordings into GIFs (``--episodes``);
- :mod:`.markup`, :mod:`.page`: the HTML, escaped by construction;
- :mod:`.build`: writes it all;
- :mod:`.paper`: a paper's figure set (``--paper DIR``): rliable's four figures and the per-game
  table as PDF and PNG, and the LaTeX and Markdown tables.
"""

from arcadebench.benchmarks.report.build import FIGURES, HTML_FILE, report, write_report
from arcadebench.benchmarks.report.paper import PAPER_FIGURES, write_paper
from arcadebench.benchmarks.report.references import Reference, list_references, resolve_reference
from arcadebench.benchmarks.report.report_data import (
    Entry,
    OtherProtocol,
    ReportData,
    default_metric,
)
from arcadebench.benchmarks.report.sources import load_report_data
from arcadebench.errors import MissingDependency, UnknownReference

__all__ = [
    "FIGURES",
    "HTML_FILE",
    "Entry",
    "MissingDependency",
    "OtherProtocol",
    "PAPER_FIGURES",
    "Reference",
    "ReportData",
    "UnknownReference",
    "default_metric",
    "list_references",
    "load_report_data",
    "report",
    "resolve_reference",
    "write_paper",
    "write_report",
]
