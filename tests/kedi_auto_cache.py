"""A program with an `> auto:` procedure and the `prog.cache.kedi` that defines it with its
generated tests (language.md §4.5): one passing, one failing, and a stale suite named after
no `> auto:` procedure of the program, which never runs."""

AUTO_PROGRAM = """\
@double(x: int) -> int:
  > auto:
    Double the number.

@test: own:
  > case: uses:
    `assert double(2) == 4`
"""

AUTO_CACHE = """\
# generated: double
@double(x: int) -> int:
  = `x * 2`

@test: double:
  > case: gen:
    `assert double(3) == 6`
  > case: genfail:
    ```
    y = double(1)
    assert y == 3
    ```

@test: stale:
  > case: never:
    `assert False`
"""
