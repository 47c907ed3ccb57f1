"""An agent script written for crewai-tools' own file tools: the tests run this file as it is and
again with its one import line switched to ``safefs.integrations.crewai``.

``run(workdir, base_url)`` builds a crewAI ``Agent`` on an OpenAI-compatible model served at
``base_url`` with ``FileWriterTool`` and ``FileReadTool`` confined to ``workdir`` and a
``DirectoryReadTool`` (confined to the current directory), and runs one ``Task`` with a ``Crew``.
"""

from __future__ import annotations

from crewai import LLM, Agent, Crew, Task
from crewai_tools import DirectoryReadTool, FileReadTool, FileWriterTool


def run(workdir: str, base_url: str) -> str:
    llm = LLM(model="openai/gpt-4o", base_url=base_url, api_key="fake-key")
    agent = Agent(
        role="Note keeper",
        goal="Keep the user's notes in files",
        backstory="You keep notes tidy.",
        llm=llm,
        tools=[FileWriterTool(base_dir=workdir), FileReadTool(base_dir=workdir), DirectoryReadTool()],
        max_iter=12,
        verbose=False,
    )
    task = Task(description="Take a note: buy milk.", expected_output="A short confirmation.", agent=agent)
    return str(Crew(agents=[agent], tasks=[task], verbose=False).kickoff())
