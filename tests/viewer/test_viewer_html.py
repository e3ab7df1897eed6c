"""The HTML page without a browser: self-contained, escaped, optional fields shown, size."""

from __future__ import annotations

import base64
import gzip
import json
import re
from html.parser import HTMLParser

import pytest
from viewer_reports import BREAKOUT, IMG, SCRIPT_INPUT, big_report, full_report, rescored, v1_report

from pytest_kedi.viewer import html as viewer_html
from pytest_kedi.viewer import render_html, run_view
from pytest_kedi.viewer.html import data_script, script_json
from pytest_kedi.viewer.svg import bin_counts


class _Scan(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[dict[str, str | None]] = []
        self.urls: list[str] = []
        self.data_block = ""
        self._in_data = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "script":
            self.scripts.append(found)
            self._in_data = found.get("id") == "kedi-data"
        for name in ("src", "href"):
            if found.get(name):
                self.urls.append(str(found[name]))

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_data = False

    def handle_data(self, data: str) -> None:
        if self._in_data:
            self.data_block += data


def _scan(page: str) -> _Scan:
    scan = _Scan()
    scan.feed(page)
    return scan


def test_page_is_self_contained() -> None:
    page = render_html([run_view(full_report(), label="r.json")])
    scan = _scan(page)
    # exactly two script elements: the JSON data block and the inline viewer script
    assert [s.get("type") for s in scan.scripts] == ["application/json", None]
    assert all(not s.get("src") for s in scan.scripts)
    assert all(url.startswith("#") for url in scan.urls)  # only in-page links
    assert not re.search(r"https?://(?!www\.w3\.org)", page)
    assert "default-src 'none'" in page  # the CSP forbids every fetch


def test_user_strings_are_escaped_everywhere() -> None:
    page = render_html([run_view(full_report(), label="r.json")])
    for raw in (SCRIPT_INPUT, BREAKOUT, IMG):
        assert raw not in page
    scan = _scan(page)
    assert len(scan.scripts) == 2  # the breakout string did not open a third script
    data = json.loads(scan.data_block)
    rows = data["suites"][0]["rows"]
    assert rows[1][1] == repr(SCRIPT_INPUT) and rows[1][5] == BREAKOUT and rows[1][3] == repr(IMG)
    assert "<" not in scan.data_block and ">" not in scan.data_block
    assert "&lt;" in page or "\\u003c" in page


def test_script_json_escapes_markup_and_line_separators() -> None:
    text = script_json({"a": "</script>&\u2028"})
    assert text == '{"a":"\\u003c/script\\u003e\\u0026\\u2028"}'
    assert json.loads(text) == {"a": "</script>&\u2028"}


def test_optional_fields_appear_when_present() -> None:
    page = render_html([run_view(full_report(), label="r.json")])
    assert "Δ baseline" in page and "-0.2500" in page
    assert "95% CI 0.310 to 0.690" in page and "SE 0.094" in page and "2 repeats" in page
    assert "openai:gpt-4o-mini (42 calls)" in page
    assert "<dd>input 1200, output 300</dd>" in page and "<dd>input 120, output 30</dd>" in page
    assert 'class="bar-ci"' in page and 'class="bar-threshold"' in page
    assert '<th scope="col">Output</th>' in page and "Model calls" in page
    data = json.loads(_scan(page).data_block)
    first = data["suites"][0]
    assert first["output"] and first["calls"] and first["delta"]
    assert first["rows"][0][10][0][0] == "openai:gpt-4o-mini"


def test_optional_columns_absent_for_version_1() -> None:
    page = render_html([run_view(v1_report(), label="r.json")])
    assert "Δ baseline" not in page and "Δ previous run" not in page
    assert "Model calls" not in page and '<th scope="col">Output</th>' not in page
    assert "not recorded in this report" in page and 'class="bar-ci"' not in page


def test_several_reports_chart_and_changed_rows() -> None:
    old = v1_report()
    new = rescored(old, {1: 1.0, 2: 0.5})
    page = render_html([run_view(old, label="old.json"), run_view(new, label="new.json")])
    assert "Across runs" in page and page.count('class="chart line"') == 1
    assert "Δ previous run" in page
    assert "Changed rows (2, worst first)" in page
    changed = page[page.index("Changed rows") :]
    assert changed.index("-0.5000") < changed.index("+1.0000")
    data = json.loads(_scan(page).data_block)
    flags = [r[8] for r in data["suites"][0]["rows"]]
    assert flags[2] & 8 and not flags[1] & 8  # row 2 regressed, row 1 improved


def test_histogram_bins() -> None:
    assert bin_counts([0.0, 0.05, 0.1, 0.95, 1.0, 1.5, -1]) == [3, 1, 0, 0, 0, 0, 0, 0, 0, 3]


def test_histogram_tells_scores_outside_0_and_1() -> None:
    """Scores are not clamped: the histogram's title says how many its end bins hold from
    outside [0, 1]."""
    page = render_html([run_view(rescored(v1_report(), {0: -2.0, 1: 1.5}), label="r.json")])
    assert re.search(r"rows in 10 bins \(1 below 0, 1 above 1\)</title>", page), page
    plain = render_html([run_view(v1_report(), label="r.json")])
    assert re.search(r"rows in 10 bins</title>", plain)


def test_a_one_row_suite_reads_1_row() -> None:
    """A suite of one row read "1 rows" in its details line and its histogram's title."""
    one = v1_report()
    one["suites"][0]["rows"] = one["suites"][0]["rows"][:1]
    one["suites"][0]["rows_total"] = 1
    page = render_html([run_view(one, label="r.json")])
    assert "1 rows" not in page
    assert "· 1 row · " in page and re.search(r": 1 row in 10 bins</title>", page)


@pytest.mark.parametrize("long_values", [False, True])
def test_ten_thousand_rows_stay_under_5_mb(long_values: bool) -> None:
    page = render_html([run_view(big_report(10_000, long_values=long_values), label="big.json")])
    size = len(page.encode("utf-8"))
    assert size < 5_000_000, size
    assert page.count("<tr") < 50  # rows are not in the markup: the script pages them


def test_large_rows_data_is_embedded_compressed(monkeypatch: pytest.MonkeyPatch) -> None:
    value = {"suites": [{"rows": [[0, SCRIPT_INPUT, BREAKOUT]]}]}
    assert data_script(value).startswith('<script type="application/json" id="kedi-data">')
    monkeypatch.setattr(viewer_html, "COMPRESS_ABOVE", 0)
    block = data_script(value)
    head = '<script type="application/octet-stream" id="kedi-data" data-encoding="gzip">'
    assert block.startswith(head) and block.endswith("</script>")
    packed = block[len(head) : -len("</script>")]
    assert re.fullmatch(r"[A-Za-z0-9+/=]+", packed)  # no markup can break out
    assert json.loads(gzip.decompress(base64.b64decode(packed))) == value


def test_interrupted_run_is_flagged() -> None:
    page = render_html([run_view({**full_report(), "interrupted": True}, label="r.json")])
    assert 'id="run-verdict">INTERRUPTED<' in page
    assert "The run was interrupted: results are partial." in page


def _suites_table(page: str) -> str:
    start = page.index('id="suites-table"')
    return page[start : page.index("</table>", start)]


def test_several_reports_compare_with_the_previous_report_not_a_baseline() -> None:
    """The latest report's own baseline (a run not given) was used for the Δ column and the
    rows' regressed flags, while the changed rows compared with the previous report."""
    old = v1_report()
    new = rescored(old, {1: 1.0, 2: 0.5})
    for entry in new["suites"]:  # run against another baseline: its deltas are +0.9
        entry["delta"], entry["baseline_score"] = 0.9, 0.0
        for each in entry["rows"]:
            each["delta"], each["regressed"] = 0.9, False
    page = render_html([run_view(old, label="old.json"), run_view(new, label="new.json")])
    table = _suites_table(page)
    assert "Δ previous run" in table and "Δ baseline" not in table and "+0.9000" not in table
    data = json.loads(_scan(page).data_block)
    rows = data["suites"][0]["rows"]
    assert [r[9] for r in rows][1:3] == [pytest.approx(1.0), pytest.approx(-0.5)]
    assert rows[2][8] & 8  # regressed against the previous report


def test_a_suite_not_scored_in_a_run_is_not_compared_or_charted_as_zero() -> None:
    """A skipped suite's (or a suite error's) placeholder 0.0 was shown and compared as a
    score: a full-size Δ, a 0.0000 in the history and a chart point at 0."""
    old = v1_report()
    skipped = old["suites"][0]
    skipped.update(outcome="skipped", score=0.0, rows=[], rows_total=0)
    new = v1_report()
    page = render_html([run_view(old, label="old.json"), run_view(new, label="new.json")])
    table = _suites_table(page)
    label = new["suites"][0]["procedure"]
    row_html = table[table.index(label) :].split("</tr>", 1)[0]
    assert 'class="n delta" data-v="">—</td>' in row_html
    history = page[page.index('id="history"') :]
    history_row = history[history.index(label) :].split("</tr>", 1)[0]
    assert "—" in history_row and "0.0000" not in history_row
    single = render_html([run_view(old, label="old.json")])
    assert "not scored" in single


def test_the_page_shows_a_threshold_as_given() -> None:
    """The suites table rounded a min score to 2 decimals (0.98765 read "min 0.99")."""
    document = full_report()
    document["suites"][0]["threshold"] = 0.98765
    page = render_html([run_view(document, label="r.json")])
    assert "min 0.98765" in page
    assert "min 0.99" not in page
    assert "min 0.90" in render_html([run_view(full_report(), label="r.json")])


def test_the_page_tells_a_score_apart_from_its_threshold_as_given() -> None:
    """A suite's facts rounded its min score to 4 decimals (0.33334 read 0.3333) and showed
    a score of 0.33333 failing it as 0.3333, where the terminal shows 0.33333 vs 0.33334."""
    document = full_report()
    document["suites"][0].update(score=1 / 3, threshold=0.33334, outcome="failed", ci=None)
    page = render_html([run_view(document, label="r.json")])
    assert "<dt>Score</dt><dd>0.33333</dd>" in page
    assert "<dt>Min score</dt><dd>0.33334</dd>" in page
    assert '<span class="num">0.33333</span>' in page
