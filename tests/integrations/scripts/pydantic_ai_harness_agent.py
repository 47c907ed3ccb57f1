"""An agent script written for pydantic-ai-harness's ``FileSystem`` over pydantic-ai's
``LocalWorkspace``: the tests run it as it is and with its ``LocalWorkspace`` import switched to
``safefs.integrations.pydantic_ai``.

``run(workdir)`` has a ``FunctionModel`` call the harness's file tools in turn (mkdir, write, read, list,
then a read through ``link/``, a symlink the tests point outside) and returns what each returned.
"""

from __future__ import annotations

from typing import Any

from pydantic_ai import Agent
from pydantic_ai.capabilities import LocalWorkspace
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai_harness.filesystem import FileSystem

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("create_directory", {"path": "src"}),
    ("write_file", {"path": "src/app.py", "content": "print('hello')\n"}),
    ("read_file", {"path": "src/app.py"}),
    ("list_directory", {"path": "src"}),
    ("read_file", {"path": "link/secret.txt"}),
]


def _model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    made = sum(isinstance(p, ToolReturnPart | RetryPromptPart) for m in messages for p in m.parts)
    if made < len(CALLS):
        name, args = CALLS[made]
        return ModelResponse(parts=[ToolCallPart(name, args, tool_call_id=f"call-{made}")])
    return ModelResponse(parts=[TextPart("all done")])


def run(workdir: str) -> tuple[str, list[Any]]:
    agent = Agent(FunctionModel(_model), capabilities=[LocalWorkspace(workdir), FileSystem()])
    result = agent.run_sync("edit the app")
    returns = [
        p.content if isinstance(p, ToolReturnPart) else f"retry: {p.model_response()}"
        for m in result.all_messages()
        for p in m.parts
        if isinstance(p, ToolReturnPart | RetryPromptPart)
    ]
    return result.output, returns
