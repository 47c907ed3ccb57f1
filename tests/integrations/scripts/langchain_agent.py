"""An agent script written for langchain-community's ``FileManagementToolkit``: the tests run it
as it is and with its toolkit import switched to ``safefs.integrations.langchain``.

``run(root_dir)`` drives LangChain's own agent runner (``AgentExecutor`` over a tool-calling
agent) with a fake chat model that calls the toolkit's tools in turn (write, read, copy, list,
search, then a read of ``../secret.txt``) and returns the final answer and each tool's result.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_community.agent_toolkits import FileManagementToolkit
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage
from langchain_core.prompts import ChatPromptTemplate

try:
    from langchain_classic.agents import AgentExecutor, create_tool_calling_agent
except ImportError:  # langchain-community 0.3 ships the runner in langchain itself
    from langchain.agents import AgentExecutor, create_tool_calling_agent  # type: ignore[no-redef]

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("write_file", {"file_path": "notes/today.txt", "text": "buy milk\n"}),
    ("read_file", {"file_path": "notes/today.txt"}),
    ("copy_file", {"source_path": "notes/today.txt", "destination_path": "notes/copy.txt"}),
    ("list_directory", {"dir_path": "notes"}),
    ("file_search", {"pattern": "*.txt"}),
    ("read_file", {"file_path": "../secret.txt"}),
]


class ToolCallingFakeModel(FakeMessagesListChatModel):
    """A fake chat model that accepts tools (and answers from its script regardless)."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ToolCallingFakeModel:
        return self


def run(root_dir: str) -> tuple[str, list[str]]:
    tools = FileManagementToolkit(root_dir=root_dir).get_tools()
    replies = [
        AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call-{i}"}])
        for i, (name, args) in enumerate(CALLS)
    ]
    model = ToolCallingFakeModel(responses=[*replies, AIMessage(content="all done")])
    prompt = ChatPromptTemplate.from_messages(
        [("system", "You manage files."), ("human", "{input}"), ("placeholder", "{agent_scratchpad}")]
    )
    agent = create_tool_calling_agent(model, tools, prompt)
    executor = AgentExecutor(agent=agent, tools=tools, return_intermediate_steps=True)
    result = executor.invoke({"input": "take a note"})
    return result["output"], [str(observation) for _, observation in result["intermediate_steps"]]
