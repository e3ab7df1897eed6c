"""Located parse diagnostics, rendered the way Kedi renders them."""

from __future__ import annotations

from dataclasses import dataclass

from pytest_kedi.errors import KediError

__all__ = ["Diagnostic", "KediParseError"]


@dataclass(frozen=True, slots=True)
class Diagnostic:
    path: str
    line: int  # 1-based
    column: int  # 1-based
    message: str
    source_line: str = ""

    def render(self) -> str:
        name = self.path
        text = self.source_line.rstrip("\r\n") if self.source_line else ""
        # Keep the source line verbatim; the caret's padding copies its tabs, so the
        # caret sits under the column whatever width a terminal gives a tab.
        prefix = text[: max(self.column, 1) - 1]
        caret_pad = "".join("\t" if ch == "\t" else " " for ch in prefix)
        caret_pad += " " * (max(self.column, 1) - 1 - len(prefix))
        out = [f'  File "{name}", line {self.line}, column {self.column}']
        out.append(f"  {text}")
        out.append(f"  {caret_pad}^")
        out.append("")
        out.append("Kedi error: ParseError")
        out.append(f"  {self.message}")
        return "\n".join(out)


class KediParseError(KediError):
    """Raised for malformed Kedi source; carries one or more diagnostics."""

    def __init__(self, diagnostics: list[Diagnostic] | tuple[Diagnostic, ...]) -> None:
        self.diagnostics: tuple[Diagnostic, ...] = tuple(diagnostics)
        super().__init__(self.render())

    @property
    def path(self) -> str:
        return self.diagnostics[0].path

    @property
    def line(self) -> int:
        return self.diagnostics[0].line

    @property
    def column(self) -> int:
        return self.diagnostics[0].column

    @property
    def message(self) -> str:
        return self.diagnostics[0].message

    def render(self) -> str:
        blocks = ["Kedi parse error:\n\n" + d.render() for d in self.diagnostics]
        return "\n\n".join(blocks)

    def __str__(self) -> str:
        return self.render()
