"""Pages of a two-column paper from published runs: the tables and figures as they print.

    python examples/paper_page.py                               # writes results/paper_page/
    python examples/paper_page.py --to docs/paper-page.png      # the README's image

Agarwal et al. (2021) published 100 runs per game of DrQ(eps), SPR and CURL on Atari 100k; the
IRIS authors' repository keeps them (arcadebench ships them as ``data/atari100k_runs.csv``,
with SimPLe's and IRIS's 5). This scores them as a paper's author would score their own runs,
writes ``report --paper``'s tables and figures at a column's width, sets them in a two-column
``article`` with pdflatex (TeX Live), and renders its first two pages side by side to a PNG
(pypdfium2): the figures, then the tables LaTeX floats to the next page (``table*``), so the
image in the README is what a reader of the paper sees. The tables and figures are the same as

    arcadebench report atari100k_runs.csv --spec atari100k --paper results/paper_page \\
        --references none
"""

from __future__ import annotations

import argparse
import importlib.resources
import shutil
import subprocess
from pathlib import Path

from arcadebench.cli import main as arcadebench

DOCUMENT = r"""\documentclass[twocolumn]{article}
\setlength{\textwidth}{6.75in}
\setlength{\columnsep}{0.25in}
\setlength{\oddsidemargin}{-0.125in}
\setlength{\topmargin}{-0.5in}
\setlength{\textheight}{9.5in}
\usepackage{graphicx}
\usepackage{booktabs}
\begin{document}
\section{Results}
Atari 100k: the aggregates of five published agents over their published runs (Agarwal et al.
2021), with 95\% stratified-bootstrap intervals, in Table~\ref{tab:arcadebench-atari100k-aggregates}
and Figure~\ref{fig:aggregates}.
\input{tables.tex}
\begin{figure}[t]\centering
\includegraphics[width=\columnwidth]{aggregates.pdf}
\caption{Aggregates with their intervals, drawn by \texttt{report --paper}.}\label{fig:aggregates}
\end{figure}
\begin{figure}[t]\centering
\includegraphics[width=\columnwidth]{profile.pdf}
\caption{Performance profiles.}\label{fig:profile}
\end{figure}
\end{document}
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results/paper_page", help="the paper's directory")
    parser.add_argument("--to", help="copy the pages' PNG here (e.g. docs/paper-page.png)")
    parser.add_argument("--dpi", type=int, default=100, help="the PNG's resolution")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    runs = out / "atari100k_runs.csv"
    shipped = importlib.resources.files("arcadebench") / "data" / "atari100k_runs.csv"
    text = shipped.read_text(encoding="utf-8")  # named as a paper names its columns:
    runs.write_text(text.replace(" (Agarwal et al. 2021, 100 runs)", ""), encoding="utf-8")
    command = ["report", str(runs), "--spec", "atari100k", "--paper", str(out)]
    if arcadebench([*command, "--references", "none", "--reps", "2000"]) != 0:
        raise SystemExit(1)
    (out / "paper.tex").write_text(DOCUMENT, encoding="utf-8")
    if shutil.which("pdflatex") is None:
        raise SystemExit("pdflatex is not installed: apt-get install texlive-latex-recommended")
    for _ in range(2):  # twice: the references to tables and figures
        done = subprocess.run(
            ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "paper.tex"],
            cwd=out,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise SystemExit(f"pdflatex failed:\n{done.stdout[-2000:]}")
    import pypdfium2  # type: ignore[import-untyped]  # it ships no py.typed
    from PIL import Image

    document = pypdfium2.PdfDocument(out / "paper.pdf")
    pages = [document[i].render(scale=args.dpi / 72).to_pil() for i in range(2)]
    gap = args.dpi // 8
    sheet = Image.new("RGB", (sum(p.width for p in pages) + gap, pages[0].height), "#b0b0b0")
    sheet.paste(pages[0], (0, 0))
    sheet.paste(pages[1], (pages[0].width + gap, 0))
    png = out / "paper-pages.png"
    sheet.save(png, optimize=True)
    print(f"paper: {out / 'paper.pdf'}")
    print(f"pages 1-2: {png}")
    if args.to:
        Path(args.to).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(png, args.to)
        print(f"copied to {args.to}")


if __name__ == "__main__":
    main()
