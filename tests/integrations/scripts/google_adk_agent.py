"""An agent script written for Google ADK's own ``LocalEnvironment``: the tests run this file as
it is and again with its one import line switched to ``safefs.integrations.google_adk``.

``run(workdir, base_url)`` builds an ``LlmAgent`` on a Gemini model served at ``base_url`` with
ADK's ``EnvironmentToolset`` (``Execute``, ``ReadFile``, ``EditFile``, ``WriteFile``) over a
``LocalEnvironment`` in ``workdir``, drives it with ADK's ``InMemoryRunner`` and returns the
agent's final text and every tool result, in order.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.environment import LocalEnvironment
from google.adk.models import Gemini
from google.adk.runners import InMemoryRunner
from google.adk.tools.environment import EnvironmentToolset
from google.genai import types

APP = "notes"
USER = "user"


def build(workdir: str, base_url: str) -> LlmAgent:
    environment = LocalEnvironment(working_dir=Path(workdir))
    return LlmAgent(
        name="notes_agent",
        model=Gemini(model="gemini-2.5-flash", base_url=base_url),
        instruction="Keep the user's notes in the environment.",
        tools=[EnvironmentToolset(environment=environment)],
    )


async def run_async(workdir: str, base_url: str) -> tuple[str, list[Any]]:
    runner = InMemoryRunner(agent=build(workdir, base_url), app_name=APP)
    session = await runner.session_service.create_session(app_name=APP, user_id=USER)
    message = types.Content(role="user", parts=[types.Part(text="take a note")])
    final, returns = "", list[Any]()
    try:
        async for event in runner.run_async(user_id=USER, session_id=session.id, new_message=message):
            returns.extend(call.response for call in event.get_function_responses())
            if event.is_final_response() and event.content and event.content.parts:
                final = "".join(part.text or "" for part in event.content.parts)
    finally:
        await runner.close()
    return final, returns


def run(workdir: str, base_url: str) -> tuple[str, list[Any]]:
    return asyncio.run(run_async(workdir, base_url))
