"""An agent script written for pydantic-ai's own ``LocalWorkspace``: the tests run this file as
it is and again with its one import line switched to ``safefs.integrations.pydantic_ai``.

``run(workdir)`` drives a pydantic-ai ``Agent`` with a ``FunctionModel`` that calls the script's
tools in turn (write, read, list, then a read of ``../secret.txt``, outside the workdir) and
returns what each tool call returned, in order.
"""

from __future__ import annotations

from typing import Any

from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import LocalWorkspace
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("write_note", {"path": "notes/today.txt", "text": "buy milk\n"}),
    ("read_note", {"path": "notes/today.txt"}),
    ("list_notes", {"path": "notes"}),
    ("run", {"command": "cat notes/today.txt; echo done"}),
    ("read_note", {"path": "../secret.txt"}),
]


def _model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    made = sum(isinstance(p, ToolReturnPart) for m in messages for p in m.parts)
    if made < len(CALLS):
        name, args = CALLS[made]
        return ModelResponse(parts=[ToolCallPart(name, args, tool_call_id=f"call-{made}")])
    return ModelResponse(parts=[TextPart("all done")])


def build(workdir: str) -> Agent[None, str]:
    agent: Agent[None, str] = Agent(FunctionModel(_model), capabilities=[LocalWorkspace(workdir)])

    @agent.tool
    async def write_note(ctx: RunContext[None], path: str, text: str) -> str:
        await ctx.workspace.write_text(path, text)
        return f"wrote {path}"

    @agent.tool
    async def read_note(ctx: RunContext[None], path: str) -> str:
        try:
            return await ctx.workspace.read_text(path)
        except OSError as exc:
            return f"error: {type(exc).__name__}"

    @agent.tool
    async def list_notes(ctx: RunContext[None], path: str) -> list[str]:
        return [entry.name for entry in await ctx.workspace.list_dir(path)]

    @agent.tool
    async def run(ctx: RunContext[None], command: str) -> str:
        result = await ctx.workspace.run(command, shell=True)
        return f"{result.exit_code}: {result.stdout}"

    return agent


def run(workdir: str) -> tuple[str, list[Any]]:
    result = build(workdir).run_sync("take a note")
    returns = [p.content for m in result.all_messages() for p in m.parts if isinstance(p, ToolReturnPart)]
    return result.output, returns
