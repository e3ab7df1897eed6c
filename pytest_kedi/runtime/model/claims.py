"""Model-judged claims (`> if: TEXT`, `> loop: TEXT`; docs/language.md#branches reading)."""

from __future__ import annotations

__all__ = ["CLAIM_FIELD", "CLAIM_SCHEMA", "claim_prompt"]

CLAIM_FIELD = "holds"
#: The one structured output of a claim check.
CLAIM_SCHEMA: dict[str, tuple[type, str | None]] = {
    CLAIM_FIELD: (bool, "true only if the claim holds; false when it cannot be established")
}


def claim_prompt(claim_text: str) -> str:
    """The prompt for one claim check, quoting the rendered claim verbatim."""
    return (
        "Decide whether the following claim holds.\n"
        "\n"
        "Claim:\n"
        f'"""\n{claim_text}\n"""\n'
        "\n"
        f"Answer with [{CLAIM_FIELD}]: true if the claim holds, false if it does not. "
        "When the claim cannot be established from the information given, answer false."
    )
