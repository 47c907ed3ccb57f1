"""An agent script written for agno's own ``FileTools``: the tests run this file as it is and
again with its one import line switched to ``safefs.integrations.agno``.

``run(workdir, base_url)`` builds an agno ``Agent`` on an OpenAI-compatible model served at
``base_url`` with ``FileTools`` confined to ``workdir`` (every tool enabled) and runs it once.
"""

from __future__ import annotations

from pathlib import Path

from agno.agent import Agent
from agno.models.openai import OpenAIChat
from agno.tools.file import FileTools


def run(workdir: str, base_url: str) -> str:
    model = OpenAIChat(id="gpt-4o", base_url=base_url, api_key="fake-key")
    agent = Agent(model=model, tools=[FileTools(base_dir=Path(workdir), all=True)], telemetry=False)
    result = agent.run("Take a note: buy milk.")
    return str(result.content)
