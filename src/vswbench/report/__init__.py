"""`vswbench report`: one self-contained HTML page and its plots (PNG and SVG) from a results store.

    from vswbench.report.build import build_report
    files = build_report("results/quick", "results/quick")
    files.html        # results/quick/report.html (plots embedded, CSS inline, no network)
    files.plots_dir   # results/quick/plots/ (every plot as NAME.png and NAME.svg)

The page is a loop over one list of sections (sections/: one module each, a Section with its id,
title, intro, "no data" note, figures and body); what several sections need is computed once in
model.py. Modules:

- the files: build.py (build_report: the page, the plots and the error-bar files written;
  check_outputs: every output path checked before a run);
- the model: model.py (all of it together, once per store), data.py (the ranking and other
  report rows, built on results/points.py's records), backends.py (what each backend is and how
  it ran), verdict.py (ranks, ties, baselines and the tester's ceiling per frame size and stack),
  summary.py (the machine and preset sentences), stalls.py (the sentence on host stalls),
  notes.py (warnings, fingerprints), spread.py and product_bars.py (parameter error bars, also
  written as JSON and CSV);
- the sections' pieces: first_screen.py (the summary HTML), ranking_html.py (the ranking tables,
  fitted to 1280 px: eight columns, every other one behind a disclosure), marks.py (loss beside the
  numbers it touches), chain.py, delay.py, diagnostics.py, profiles.py (also the folded stacks),
  remote.py, studies.py (flow count, cloning) and functions.py (table size, rule update);
- the page: sections/ (the sections in page order), figure.py (style, legends, colours, the
  rendered Plot), plots.py (every section's figures rendered), html.py (the page);
- beside it: screen.py (the first screen at a terminal's width: `vswbench run`'s end, `vswbench
  show`), text.py (every column of the ranking as plain text or Markdown), demo_page.py (the
  demo's page),
  paper_claims.py, paper_page.py and paper_plots.py (a paper spec's verdicts and pages).

The output is deterministic: the same store gives the same bytes.
"""
# Nothing is imported here: `import vswbench.report.<module>` loads only what that module needs
# (the page's modules load matplotlib and scipy, 1.2 s that `vswbench --help` need not pay).
