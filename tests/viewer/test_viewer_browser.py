"""The HTML report in a real browser (headless Chromium): tables, sorting, drill-down,
filters, paging, charts, keyboard, no console errors, injected markup inert."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from viewer_reports import PWNED, SCRIPT_INPUT, big_report, full_report, rescored, v1_report

from pytest_kedi.viewer import html as viewer_html
from pytest_kedi.viewer import render_html, run_view


def _write(tmp_path: Path, *documents: dict[str, Any], name: str = "report.html") -> Path:
    runs = [run_view(d, label=f"run{i}.json") for i, d in enumerate(documents)]
    path = tmp_path / name
    path.write_text(render_html(runs), encoding="utf-8")
    return path


def _clean(opened: Any) -> None:
    page = opened.page
    assert opened.errors == []
    assert opened.dialogs == []
    assert page.evaluate(f"typeof window.{PWNED}") == "undefined"
    assert all(url.startswith("file:") for url in opened.requests), opened.requests


def _suite_order(page: Any) -> list[str]:
    return page.locator("#suites-table tbody tr td:first-child a").all_inner_texts()


def _open_suite(page: Any, index: int) -> Any:
    page.click(f"a.suite-link[data-suite='{index}']")
    details = page.locator(f"#suite-{index} details")
    assert details.evaluate("d => d.open") is True
    return details


def test_suites_table_renders_and_sorts(tmp_path: Path, open_page: Any) -> None:
    opened = open_page(_write(tmp_path, full_report()))
    page = opened.page
    assert _suite_order(page) == ["classify::exact", "normalize::exact", "load::exact"]
    assert page.locator("#run-verdict").inner_text() == "FAILED"
    score = page.locator("#suites-table thead button.sort[data-col='1']")
    score.click()
    assert _suite_order(page) == ["load::exact", "classify::exact", "normalize::exact"]
    assert score.evaluate("b => b.parentNode.getAttribute('aria-sort')") == "ascending"
    score.click()
    assert _suite_order(page) == ["normalize::exact", "classify::exact", "load::exact"]
    # keyboard: focus a heading button and press Enter
    name = page.locator("#suites-table thead button.sort[data-col='0']")
    name.focus()
    page.keyboard.press("Enter")
    assert _suite_order(page) == ["classify::exact", "load::exact", "normalize::exact"]
    _clean(opened)


def test_drill_down_filters_search_and_expand(tmp_path: Path, open_page: Any) -> None:
    opened = open_page(_write(tmp_path, full_report()))
    page = opened.page
    details = _open_suite(page, 0)
    rows = details.locator("table.rows tbody tr:not(.calls-row)")
    assert rows.count() == 5
    assert details.locator(".status").inner_text() == "Showing rows 1 to 5 of 5."
    details.locator("[data-filter='errored']").check()
    assert rows.count() == 1 and rows.first.locator("td").first.inner_text() == "3"
    details.locator("[data-filter='errored']").uncheck()
    details.locator("[data-filter='flaky']").check()
    assert [rows.nth(i).locator("td").first.inner_text() for i in range(rows.count())] == ["2"]
    details.locator("[data-filter='flaky']").uncheck()
    details.locator("[data-filter='regressed']").check()
    assert rows.count() == 1 and rows.first.locator("td").first.inner_text() == "1"
    details.locator("[data-filter='regressed']").uncheck()
    details.locator("[data-filter='below']").check()
    assert rows.count() == 3
    details.locator("[data-filter='below']").uncheck()
    details.locator("[data-search]").fill("LONG INPUT")
    assert rows.count() == 1
    cell = rows.first.locator("td").nth(1)
    assert cell.inner_text().endswith("…\nmore") or cell.inner_text().endswith("… more")
    cell.locator("button.expand").click()
    assert cell.locator("button.expand").get_attribute("aria-expanded") == "true"
    assert cell.inner_text().count("long input") == 40
    details.locator("[data-search]").fill("no such text")
    assert rows.count() == 0 and "No row matches" in details.locator(".status").inner_text()
    _clean(opened)


def test_model_calls_expand(tmp_path: Path, open_page: Any) -> None:
    opened = open_page(_write(tmp_path, full_report()))
    details = _open_suite(opened.page, 0)
    details.locator("button.expand", has_text="1 call").click()
    calls = details.locator("tr.calls-row:not([hidden])")
    assert calls.count() == 1
    text = calls.inner_text()
    assert "openai:gpt-4o-mini" in text and "Classify: refund please" in text
    assert "tokens: input 12, output 3" in text
    index = details.locator("table.rows tbody tr:not(.calls-row)").first.locator("td").first
    assert index.inner_text() == "0\n2 retries · tokens: 15"
    _clean(opened)


def test_traced_rows_of_a_version_3_report(tmp_path: Path, open_page: Any) -> None:
    """What ``--kedi-trace`` records: each call's tokens shown with the call; the row's
    usage note keeps the index column narrow."""
    report = v1_report()
    report["version"] = 3
    call = {
        "model": "openai-chat:gpt-4o-mini", "prompt": "What is 2 + 2?", "instructions": None,
        "answer": "4", "input_tokens": 52, "output_tokens": 9, "duration_s": 0.38,
    }  # fmt: skip
    for r in report["suites"][0]["rows"]:
        r.update(calls=[call], usage={"requests": 1, "input_tokens": 118, "output_tokens": 9})
    opened = open_page(_write(tmp_path, report))
    details = _open_suite(opened.page, 0)
    details.locator("button.expand", has_text="1 call").first.click()
    calls = details.locator("tr.calls-row:not([hidden])")
    assert "tokens: input 52, output 9" in calls.inner_text()
    cells = details.locator("table.rows tbody tr:not(.calls-row)").first.locator("td")
    assert cells.first.inner_text().startswith("0\ntokens: requests 1, input 118, output 9")
    index, given = cells.nth(0).bounding_box(), cells.nth(1).bounding_box()
    assert index is not None and given is not None
    assert index["width"] < given["width"]
    _clean(opened)


def test_injected_markup_stays_text(tmp_path: Path, open_page: Any) -> None:
    opened = open_page(_write(tmp_path, full_report()))
    page = opened.page
    details = _open_suite(page, 0)
    row = details.locator("table.rows tbody tr:not(.calls-row)").nth(1)
    assert SCRIPT_INPUT in row.inner_text()
    assert row.locator("script, img").count() == 0
    assert page.locator("script").count() == 2
    _clean(opened)


def test_charts_draw(tmp_path: Path, open_page: Any) -> None:
    old = v1_report()
    middle = rescored(old, {1: 1.0})
    opened = open_page(_write(tmp_path, old, middle, rescored(middle, {0: 0.0})))
    page = opened.page
    line = page.locator("#history svg.chart.line")
    assert line.count() == 1
    box = line.bounding_box()
    assert box is not None and box["width"] > 100 and box["height"] > 40
    assert line.locator("circle.point").count() == 3
    assert len(line.locator("polyline.series").get_attribute("points").split()) == 3
    details = _open_suite(page, 0)
    bars = details.locator("svg.histogram rect.hist-bar")
    heights = [float(bars.nth(i).get_attribute("height")) for i in range(bars.count())]
    assert len(heights) == 10 and heights[0] > 0 and heights[-1] > 0
    assert page.locator("#history").inner_text().count("Changed rows (1, worst first)") == 1
    _clean(opened)


@pytest.mark.parametrize("long_values", [False, True])
def test_ten_thousand_rows_page(tmp_path: Path, open_page: Any, long_values: bool) -> None:
    path = _write(tmp_path, big_report(10_000, long_values=long_values))
    assert path.stat().st_size < 5_000_000
    opened = open_page(path)
    page = opened.page
    details = _open_suite(page, 0)
    rows = details.locator("table.rows tbody tr")
    status = details.locator(".status")
    assert rows.count() == 100
    assert status.inner_text() == "Showing rows 1 to 100 of 10,000."
    details.locator("[data-page='next']").click()
    assert status.inner_text() == "Showing rows 101 to 200 of 10,000."
    assert rows.first.locator("td").first.inner_text() == "100"
    details.locator("[data-filter='errored']").check()
    assert status.inner_text() == "Showing rows 1 to 100 of 104 matching (10,000 in total)."
    details.locator("[data-page='next']").click()
    assert rows.count() == 4
    assert details.locator("[data-page='next']").is_disabled()
    details.locator("[data-search]").fill("ticket number 9991:")
    assert rows.count() == 1
    _clean(opened)


def test_compressed_rows_data_shows_the_same_rows(
    tmp_path: Path, open_page: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large report's rows travel gzip-compressed: the page shows them exactly as the
    plain JSON of a small one (injected markup still inert)."""
    plain = _write(tmp_path, full_report(), name="plain.html")
    monkeypatch.setattr(viewer_html, "COMPRESS_ABOVE", 0)
    packed = _write(tmp_path, full_report(), name="packed.html")
    assert 'id="kedi-data" data-encoding="gzip"' in packed.read_text(encoding="utf-8")
    assert 'id="kedi-data" data-encoding="gzip"' not in plain.read_text(encoding="utf-8")
    shown = []
    for path in (plain, packed):
        opened = open_page(path)
        texts = []
        for index in range(2):  # the third suite failed before scoring: no rows
            details = _open_suite(opened.page, index)
            texts.append(details.locator("table.rows tbody").inner_text())
        assert "No row matches" not in "".join(texts)
        shown.append(texts)
        _clean(opened)
    assert shown[0] == shown[1]
    assert SCRIPT_INPUT in shown[0][0]


@pytest.mark.parametrize("width", [1280, 480])
def test_no_console_errors_for_a_version_1_report(
    tmp_path: Path, open_page: Any, width: int
) -> None:
    opened = open_page(_write(tmp_path, v1_report()), width=width)
    summary = opened.page.locator("#suite-0 summary")
    summary.focus()
    opened.page.keyboard.press("Enter")  # a summary is a real control: Enter opens it
    assert opened.page.locator("#suite-0 details").evaluate("d => d.open") is True
    assert opened.page.locator("#suite-0 table.rows tbody tr").count() == 3
    _clean(opened)


#: every visible piece of text: its WCAG contrast ratio against the background it sits on
CONTRASTS = """() => {
  function rgba(text) {
    const m = text.match(/rgba?\\(([^)]+)\\)/);
    if (!m) return null;
    const p = m[1].split(",").map(Number);
    return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 };
  }
  function lum(c) {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b);
  }
  function background(node) {
    for (let n = node; n && n.nodeType === 1; n = n.parentElement) {
      const c = rgba(getComputedStyle(n).backgroundColor);
      if (c && c.a > 0) return c;
    }
    return { r: 255, g: 255, b: 255, a: 1 };
  }
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let t = walker.nextNode(); t; t = walker.nextNode()) {
    const node = t.parentElement;
    if (!t.textContent.trim() || !node) continue;
    if (node.closest("[hidden], .skip, button:disabled")) continue;
    const box = node.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) continue;
    const style = getComputedStyle(node);
    const fg = rgba(node instanceof SVGElement ? style.fill : style.color);
    if (!fg) continue;
    const [hi, lo] = [lum(fg), lum(background(node))].sort((a, b) => b - a);
    out.push([t.textContent.trim().slice(0, 40), (hi + 0.05) / (lo + 0.05)]);
  }
  return out;
}"""


def test_text_has_readable_contrast(tmp_path: Path, open_page: Any) -> None:
    """WCAG AA: every visible text (suites, an opened drill-down, charts, the runs
    comparison) has a contrast ratio of at least 4.5:1 with its background."""
    old = full_report()
    opened = open_page(_write(tmp_path, old, rescored(old, {0: 0.0})))
    for index in range(3):
        _open_suite(opened.page, index)
    contrasts = opened.page.evaluate(CONTRASTS)
    assert len(contrasts) > 100
    low = [(text, round(ratio, 2)) for text, ratio in contrasts if ratio < 4.5]
    assert low == []
    _clean(opened)


def test_a_phone_wide_page_does_not_scroll_sideways(tmp_path: Path, open_page: Any) -> None:
    """At 390 px the suites table (unwrappable node ids) made the page 742 px wide, and a
    `tokens: requests 0, ...` note on every row of a run without model calls took 200 px
    of the rows table."""
    document = v1_report()
    for entry in document["suites"]:
        entry["nodeid"] = "evals/text_normalization_long_file_name.kedi::eval:" + entry["nodeid"]
        entry["usage"] = {"requests": 0, "input_tokens": 0, "output_tokens": 0}
        for each in entry["rows"]:
            each["usage"] = {"requests": 0, "input_tokens": 0, "output_tokens": 0}
    opened = open_page(_write(tmp_path, document), width=390)
    page = opened.page
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    _open_suite(page, 0)
    assert "tokens:" not in page.locator("#suite-0").inner_text()
    _clean(opened)


def test_case_outcomes_and_messages_read_as_in_the_terminal(tmp_path: Path, open_page: Any) -> None:
    """An `xfailed` case's badge had no style; an assertion diff's lines ran together."""
    document = v1_report()
    document["tests"] = [
        {"nodeid": "t.kedi::test:t::x", "procedure": "t", "case": "x", "outcome": "xfailed",
         "message": "AssertionError: assert 1 == 2"},
        {"nodeid": "t.kedi::test:t::d", "procedure": "t", "case": "d", "outcome": "failed",
         "message": "AssertionError: assert 'a' == 'b'\n  \n  - b\n  + a"},
    ]  # fmt: skip
    opened = open_page(_write(tmp_path, document))
    page = opened.page
    badge = page.locator("#tests .badge").first
    assert badge.evaluate("b => getComputedStyle(b).backgroundColor") != "rgba(0, 0, 0, 0)"
    message = page.locator("#tests td.msg").nth(1).inner_text()
    assert message.splitlines()[-2:] == ["  - b", "  + a"]
    _clean(opened)


def test_one_rows_right_to_left_override_does_not_reverse_the_next(
    tmp_path: Path, open_page: Any
) -> None:
    """A suite's Feedback note joins its rows' feedback: a U+202E in one reversed the rest."""
    document = v1_report()
    entry = document["suites"][0]
    texts = ["evil \u202eoverride", "next row reads"]
    for each, text in zip(entry["rows"], texts, strict=False):
        each["feedback"] = text
    for each in entry["rows"][len(texts) :]:
        each["feedback"] = None
    entry["feedback"] = "; ".join(texts)
    opened = open_page(_write(tmp_path, document))
    page = opened.page
    _open_suite(page, 0)
    order = page.evaluate(
        """() => {
        const note = document.querySelector('#suite-0 .note p');
        const walker = document.createTreeWalker(note, NodeFilter.SHOW_TEXT);
        let node; while ((node = walker.nextNode()) && !node.data.includes('next row')) {}
        const at = node.data.indexOf('next row');
        const x = (i) => { const r = document.createRange(); r.setStart(node, i);
          r.setEnd(node, i + 1); return r.getBoundingClientRect().left; };
        return [x(at), x(at + 1), x(at + 2)];
    }"""
    )
    assert order[0] < order[1] < order[2], order  # left to right
    _clean(opened)


def test_collection_errors_are_shown_above_the_suites(tmp_path: Path, open_page: Any) -> None:
    """A file the run could not collect (the report's ``errors``) was nowhere on the page:
    only the FAILED verdict, with no suite failed."""
    document = full_report()
    document["errors"] = [
        {"nodeid": "evals/broken.kedi", "path": "evals/broken.kedi", "line": 2, "column": 9,
         "message": f"evals/broken.kedi:2:9: bad <b>{SCRIPT_INPUT}</b>",
         "text": f"Kedi parse error:\n  {SCRIPT_INPUT}\n          ^"},
        {"nodeid": "test_x.py", "path": "test_x.py", "line": None, "column": None,
         "message": "ModuleNotFoundError: No module named 'nope'", "text": "E   nope"},
    ]  # fmt: skip
    opened = open_page(_write(tmp_path, document))
    page = opened.page
    section = page.locator("#collection-errors")
    assert section.is_visible()
    assert page.locator("#errors-h").inner_text() == "Collection errors (2)"
    cells = section.locator("tbody tr td:first-child").all_inner_texts()
    assert [text.splitlines()[0] for text in cells] == ["evals/broken.kedi:2:9", "test_x.py"]
    first = section.locator("tbody tr").first.locator("details")
    assert not first.locator("pre").is_visible()
    first.locator("summary").click()
    assert first.locator("pre").inner_text().startswith("Kedi parse error:")
    assert "COLLECTION ERRORS\n2" in page.locator("header.top").inner_text()
    _clean(opened)


def test_a_report_without_errors_has_no_errors_section(tmp_path: Path, open_page: Any) -> None:
    opened = open_page(_write(tmp_path, v1_report()))
    assert opened.page.locator("#collection-errors").count() == 0
    _clean(opened)


def test_skip_reasons_read_as_pytest_printed_them(tmp_path: Path, open_page: Any) -> None:
    """A skipped suite or case said ``skipped`` with no reason (pytest's ``-rs`` gave it):
    the suite's reason is under its verdict, the case's in its message cell."""
    document = v1_report()
    document["suites"][0].update(
        outcome="skipped", rows=[], rows_total=0, skip_reason=f"slow {SCRIPT_INPUT}"
    )
    document["tests"] = [
        {"nodeid": "t.kedi::test:t::s", "procedure": "t", "case": "s", "outcome": "skipped",
         "message": None, "skip_reason": "not on this OS"},
    ]  # fmt: skip
    opened = open_page(_write(tmp_path, document))
    page = opened.page
    verdict = page.locator("#suites-table tbody tr").first.locator("td").nth(4)
    assert verdict.inner_text().splitlines() == ["skipped", f"slow {SCRIPT_INPUT}"]
    assert verdict.locator(".sub.err").count() == 0  # a reason, not an error
    assert page.locator("#tests td.msg").first.inner_text() == "not on this OS"
    _clean(opened)


def test_a_run_x_stopped_says_so_above_the_suites(tmp_path: Path, open_page: Any) -> None:
    """A run ``-x`` stopped read as any failed run: nothing said suites had not run."""
    document = {**full_report(), "exitstatus": 1, "stopped": f"stopping {SCRIPT_INPUT}"}
    opened = open_page(_write(tmp_path, document))
    note = opened.page.locator("#stopped")
    assert note.is_visible()
    assert note.inner_text() == (
        f"The run stopped early (stopping {SCRIPT_INPUT}): not every item ran."
    )
    _clean(opened)


def test_xfail_reasons_read_as_pytest_printed_them(tmp_path: Path, open_page: Any) -> None:
    """An expected failure said ``xfail`` with no word on what was expected (``-rx``)."""
    document = v1_report()
    document["suites"][0].update(outcome="failed", xfail_reason="known weak")
    document["xfailed"] = [document["suites"][0]["nodeid"]]
    document["tests"] = [
        {"nodeid": "t.kedi::test:t::x", "procedure": "t", "case": "x", "outcome": "xfailed",
         "message": None, "xfail_reason": "not built yet"},
    ]  # fmt: skip
    opened = open_page(_write(tmp_path, document))
    page = opened.page
    verdict = page.locator("#suites-table tbody tr").first.locator("td").nth(4)
    assert verdict.inner_text().splitlines() == ["xfail", "known weak"]
    assert page.locator("#tests td.msg").first.inner_text() == "not built yet"
    _clean(opened)
