"""The prelude and `args` (docs/language.md#program-runs, #python): `args` is the reserved
top-level namespace, so the prelude reads it, and rebinding or deleting it there is the
located error it is in any other block. Before, the prelude could not read it (NameError)
and ``args = 2`` there was silently ignored."""

from __future__ import annotations

import pytest

from pytest_kedi.errors import KediExecutionError


def test_the_prelude_and_its_functions_read_the_programs_args(kedi):
    src = "```\ndef who():\n    return args.name\nfirst = (args.name, args.missing)\n```\n"
    program = kedi(src + "= `(first, who())`\n", args={"name": "Ada"})
    assert program.run() == (("Ada", None), "Ada")


def test_args_set_after_load_reach_prelude_functions(kedi):
    program = kedi("```\ndef who():\n    return args.name\n```\n= `who()`\n")
    program.args = {"name": "Grace"}
    assert program.run() == "Grace"


@pytest.mark.parametrize("mode", ["run", "validate"])
@pytest.mark.parametrize(
    ("statement", "message"),
    [
        ("args = 2", "`args` is runtime-owned and cannot be assigned"),
        ("def args(): pass", "`args` is runtime-owned and cannot be assigned"),
        ("del args", "Kedi binding 'args' cannot be deleted from Python"),
    ],
)
def test_rebinding_args_in_the_prelude_is_a_located_error(kedi, mode, statement, message):
    src = f"```\nimport os\n{statement}\n```\n= `args`\n"
    with pytest.raises(KediExecutionError) as info:
        kedi(src, mode=mode)
    shown = str(info.value)
    assert f"prog.kedi:3: {message}" in shown
    assert 'prog.kedi", line 3, in <prelude>' in shown
