"""Model-judged claims (`> if: TEXT`, `> loop: TEXT`; docs/language.md#branches reading)."""

from __future__ import annotations

import re

__all__ = ["CLAIM_FIELD", "CLAIM_SCHEMA", "claim_prompt"]

CLAIM_FIELD = "holds"
#: The one structured output of a claim check.
CLAIM_SCHEMA: dict[str, tuple[type, str | None]] = {
    CLAIM_FIELD: (bool, "true only if the claim holds; false when it cannot be established")
}


def claim_prompt(claim_text: str) -> str:
    """The prompt for one claim check, quoting the rendered claim verbatim between triple
    quotes, or a longer run of quotes when the claim itself holds three or more in a row (its
    own quotes never close the quoting; every other claim's prompt, and so its recorded
    cassette key, is unchanged)."""
    quote = '"""'
    if quote in claim_text:
        quote = '"' * (max(map(len, re.findall('"+', claim_text))) + 1)
    return (
        "Decide whether the following claim holds.\n"
        "\n"
        "Claim:\n"
        f"{quote}\n{claim_text}\n{quote}\n"
        "\n"
        f"Answer with [{CLAIM_FIELD}]: true if the claim holds, false if it does not. "
        "When the claim cannot be established from the information given, answer false."
    )
