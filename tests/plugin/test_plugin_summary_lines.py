"""The ``kedi`` terminal section writes the text it wrote one line a call, in fewer calls."""

from __future__ import annotations

from pytest_kedi.plugin.reporting import _Printable
from pytest_kedi.text import printable


class _Recorder:
    """A terminal reporter that records what each `write_line` call wrote."""

    no_summary = False

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, bool]]] = []

    def write_line(self, line: str, **markup: bool) -> None:
        self.calls.append((line, markup))

    def write_sep(self, sep: str, title: str) -> None:
        self.calls.append((f"{sep} {title} {sep}", {}))

    def text(self) -> str:
        return "".join(f"{line}\n" for line, _markup in self.calls)


def test_the_kedi_section_writes_what_it_wrote_line_by_line() -> None:
    """Lines are written together (ASCII, no markup) or alone, in order, each shown with
    its control characters escaped: the same text as one `write_line` a line."""
    lines = ["Tests:", "- a::b [passed]", "caf\u00e9 [failed]", "esc \x1b[31m", "x\ny", "z"]
    one_by_one = _Recorder()
    for line in lines:
        one_by_one.write_line(printable(line))
    one_by_one.write_line("kedi: error", red=True)
    one_by_one.write_line("last")
    recorder = _Recorder()
    held = _Printable(recorder)
    for line in lines:
        held.write_line(line)
    held.write_line("kedi: error", red=True)
    held.write_line("last")
    assert recorder.calls[-1] == ("kedi: error", {"red": True})  # "last" not written yet
    held.flush()
    assert recorder.text() == one_by_one.text()
    assert ("caf\u00e9 [failed]", {}) in recorder.calls  # not ASCII: alone
    assert recorder.calls[0] == ("Tests:\n- a::b [passed]", {})
    held.write_line("a")
    held.write_sep("=", "kedi")  # any other use of the reporter writes the held lines first
    assert recorder.calls[-2:] == [("a", {}), ("= kedi =", {})]
