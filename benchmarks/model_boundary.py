"""Per-call CPU overhead of a ``>>`` model call (issue 9, item 2).

Method: one model answers every call instantly, an async pydantic-ai ``FunctionModel``
calling the output tool with ``{"response": "yes"}`` (so the model's own work is the same,
and negligible, on every side). Each side makes N calls, one after another, and its cost is
the process CPU time (``time.process_time``: every thread, so our hop to the model loop
thread counts) divided by N; best of R interleaved rounds, to damp a shared machine's noise.

* ours: a Kedi procedure whose body is one ``>>`` template with one ``str`` output field,
  called from Python (interpreter, model boundary, model loop hop and output validation);
* ``Agent.run``: a pydantic-ai ``Agent`` with the same output model, awaited in a loop;
* ``pydantic_ai.direct.model_request``: one direct request offering the same output tool,
  then validating the tool call's arguments with the same output model.

Goal: ours <= 0.3 ms per call. Run: ``python benchmarks/model_boundary.py`` (``--quick``
for a smoke run, ``--json PATH`` to also write the results).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _results import Result, add_json_argument, emit

from pytest_kedi.runtime import load
from pytest_kedi.runtime.model.direct import OutputPlan
from pytest_kedi.runtime.model.loop import ModelLoop
from pytest_kedi.runtime.model.schema import build_output_model, normalize_schema

GOAL_MS = 0.3
SOURCE = """\
@answer(question: str) -> str:
  >> Answer <question> with one word: [response: str]
  = `response`
"""
PROMPT = "Answer question with one word: [response: str]"


async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    tool = info.output_tools[0]
    return ModelResponse(parts=[ToolCallPart(tool.name, {"response": "yes"})])


def cpu_ms(run: Callable[[int], object], calls: int) -> float:
    start = time.process_time()
    run(calls)
    return (time.process_time() - start) / calls * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls (smoke run)")
    add_json_argument(parser)
    args = parser.parse_args(argv)
    calls, agent_calls, rounds = (200, 50, 1) if args.quick else (3000, 400, 5)

    from pydantic_ai import Agent
    from pydantic_ai.direct import model_request

    model = FunctionModel(respond)
    output = build_output_model(normalize_schema({"response": str}))
    agent: Agent[None, Any] = Agent(model, output_type=output)
    params = OutputPlan.build(output).params

    with ModelLoop() as loop:
        program = load("model_boundary.kedi", source=SOURCE, mode="validate", model=model,
                       model_loop=loop)  # fmt: skip
        answer = program.procedures["answer"]

        def ours(n: int) -> None:
            for _ in range(n):
                if answer("question") != "yes":
                    raise SystemExit("the Kedi procedure did not answer 'yes': not measured")

        async def agent_runs(n: int) -> None:
            for _ in range(n):
                if (await agent.run(PROMPT)).output.kedi_field_0 != "yes":
                    raise SystemExit("Agent.run did not answer 'yes': not measured")

        async def direct_requests(n: int) -> None:
            for _ in range(n):
                response = await model_request(
                    model, [ModelRequest.user_text_prompt(PROMPT)], model_request_parameters=params
                )
                call = next(p for p in response.parts if isinstance(p, ToolCallPart))
                if output.model_validate(call.args_as_dict()).kedi_field_0 != "yes":
                    raise SystemExit("model_request did not answer 'yes': not measured")

        ours(20)  # warm-up: imports, caches, the model loop thread
        asyncio.run(agent_runs(20))
        asyncio.run(direct_requests(20))
        best = {"ours": float("inf"), "agent": float("inf"), "direct": float("inf")}
        for _ in range(rounds):
            best["ours"] = min(best["ours"], cpu_ms(ours, calls))
            best["agent"] = min(
                best["agent"], cpu_ms(lambda n: asyncio.run(agent_runs(n)), agent_calls)
            )
            best["direct"] = min(
                best["direct"], cpu_ms(lambda n: asyncio.run(direct_requests(n)), calls)
            )

    met = best["ours"] <= GOAL_MS
    note = (
        f"process CPU per call, best of {rounds} rounds of {calls} calls ({agent_calls} for "
        "Agent.run); instant async FunctionModel; machine shared with other jobs"
    )
    emit(
        [
            Result(
                "model call CPU overhead vs Agent.run",
                f"{best['ours']:.3f} ms/call",
                f"{best['agent']:.3f} ms/call (Agent.run)",
                best["ours"] / best["agent"],
                f"<= {GOAL_MS} ms/call",
                met,
                note,
            ),
            Result(
                "model call CPU overhead vs pydantic_ai.direct.model_request",
                f"{best['ours']:.3f} ms/call",
                f"{best['direct']:.3f} ms/call (model_request + validation)",
                best["ours"] / best["direct"],
                f"<= {GOAL_MS} ms/call",
                met,
                note,
            ),
        ],
        args.json,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
