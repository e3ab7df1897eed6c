"""The CLI's runs of one program (docs/language.md#program-runs): the program itself, its
``@test:`` cases (``--test``) or its ``@eval:`` suites (``--eval``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pytest_kedi.cliargs import Invocation
from pytest_kedi.cliout import FAILED, OK, Console, render_error
from pytest_kedi.text import message_text

if TYPE_CHECKING:  # pragma: no cover
    from pytest_kedi.lang import nodes
    from pytest_kedi.runtime import Program
    from pytest_kedi.runtime.errors import KediExecutionError


def _load(invocation: Invocation, mode: Literal["run", "validate"]) -> Program:
    from pytest_kedi.runtime import load

    # `args` before the prelude runs: it reads them too (docs/language.md#program-runs)
    return load(invocation.file, mode=mode, default_model=invocation.model, args=invocation.args)


def original_error(exc: BaseException) -> BaseException:
    """What user code raised, when ``exc`` wraps it."""
    from pytest_kedi.runtime.errors import KediExecutionError

    while isinstance(exc, KediExecutionError) and exc.original is not None:
        exc = exc.original
    return exc


def _user_exit(exc: BaseException) -> SystemExit | None:
    """The `SystemExit` user code raised, when that is what ``exc`` wraps."""
    exc = original_error(exc)
    return exc if isinstance(exc, SystemExit) else None


def _exit_status(stop: SystemExit, console: Console) -> int:
    """The status a Python script ends with on ``stop``: its int code, 0 for ``None``,
    else 1 after printing the code to stderr (nothing when its ``__str__`` fails, as
    Python prints nothing then)."""
    code = stop.code
    if code is None:
        return OK
    if isinstance(code, int):
        return code
    try:
        text = str(code)
    except Exception:
        return FAILED
    console.error(text, raw=True)
    return FAILED


def _run_program(invocation: Invocation, console: Console) -> int:
    from pytest_kedi.runtime.errors import KediExecutionError

    try:
        program = _load(invocation, "run")
        result = program.run()
    except KediExecutionError as exc:
        # A plain run ends like a Python script: sys.exit(n) in user code exits with n.
        stop = _user_exit(exc)
        if stop is None:
            raise
        return _exit_status(stop, console)
    if program.returned:
        from pytest_kedi.runtime.pyerrors import python_error
        from pytest_kedi.runtime.usererrors import user_error

        try:
            text = str(result)
        except BaseException as exc:  # the value's own __str__ failed: at the return, in its code
            if isinstance(exc, SystemExit):  # as `print(result)` in a script would end
                return _exit_status(exc, console)
            if not user_error(exc):
                raise
            error = python_error(exc)
            if program.returned_at is not None:  # an int past Python's digit limit runs no code
                error.with_outer_frame(program.returned_at)
            console.error(render_error(error))
            return FAILED
        console.result(text)
    return OK


def _failure_text(exc: KediExecutionError) -> str:
    """``<ExcType>: <msg>`` for a failed case (``<ExcType>: `` when there is no message),
    the message as written, as a row error's (docs/language.md#scoring)."""
    from pytest_kedi.runtime.errors import KediExecutionError

    original = exc.original
    if original is not None and not isinstance(original, KediExecutionError):
        text = message_text(original)
    else:
        text = exc.message
    return f"{exc.kind_name}: {text}"


def _case_line(suite: nodes.TestSuite, case: nodes.Case, program: Program) -> tuple[str, bool]:
    from pytest_kedi.runtime.errors import KediExecutionError

    label = f"- {suite.name}::{case.name}"
    try:
        program.run_case(suite, case)
    except KediExecutionError as exc:
        return f"{label}: FAIL | {_failure_text(exc)}", False
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # a pytest outcome (pytest.skip, ...) fails the case here
        reraise_interrupt(exc)
        return f"{label}: FAIL | {render_error(exc)}", False
    return f"{label}: OK", True


def reraise_interrupt(exc: BaseException) -> None:
    """Raise the `KeyboardInterrupt` ``exc`` carries (an exception group's member): it
    interrupts the run as the interrupt itself does (docs/language.md#pytest-mapping)."""
    from pytest_kedi.runtime.usererrors import carried_interrupt

    interrupt = carried_interrupt(exc)
    if interrupt is not None:
        raise interrupt from None


def _run_tests(invocation: Invocation, console: Console) -> int:
    program = _load(invocation, "validate")
    console.print("Tests:")
    status = OK
    from pytest_kedi.lang import KediParseError

    try:  # the file's own suites, then those its `> auto:` cache generated (§4.5)
        generated = program.generated_test_suites()
    except KediParseError as exc:
        console.error(render_error(exc))
        generated, status = (), FAILED
    for suite in (*program.module.test_suites, *generated):
        for case in suite.cases:
            line, passed = _case_line(suite, case, program)
            console.print(line)
            if not passed:
                status = FAILED
    return status


def _run_evals(invocation: Invocation, console: Console) -> int:
    from pytest_kedi.evals import EvalOptions, format_suite_line, run_suite
    from pytest_kedi.runtime.errors import KediExecutionError

    program = _load(invocation, "validate")
    console.print("Evals:")
    status = OK
    # no row limit: pytest's --kedi-max-rows is pytest's; no pytest item for a dataset's
    # pytest.skip() to skip: it is the dataset's loading failure (docs/language.md#datasets)
    options = EvalOptions(max_rows=None, outcomes=True)
    for suite in program.module.eval_suites:
        try:
            result = run_suite(program, suite, options)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # a pytest outcome (pytest.skip in a dataset, ...)
            reraise_interrupt(exc)
            status = FAILED
            console.error(f"Kedi eval error: {suite.name}: {render_error(exc)}")
            continue
        if result.error is None:
            console.print(format_suite_line(result))
            continue
        status = FAILED
        where = f"{result.suite}::{result.metric}" if result.metric else result.suite
        console.error(f"Kedi eval error: {where}: {result.error}")
        if isinstance(result.exception, KediExecutionError):  # its stack trace, as pytest's
            console.error(result.exception.render())
    return status


def run(invocation: Invocation, console: Console) -> int:
    # docs/language.md#test-suites: given with --eval, --test runs and returns first (evals do not
    # run).
    if invocation.test:
        return _run_tests(invocation, console)
    if invocation.eval:
        return _run_evals(invocation, console)
    return _run_program(invocation, console)
