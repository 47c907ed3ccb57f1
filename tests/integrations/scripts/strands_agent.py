"""An agent script written for strands-agents-tools' own file tools: the tests run this file as
it is and again with its one import line switched to ``safefs.integrations.strands``.

``run(workdir, base_url)`` builds a strands ``Agent`` on an OpenAI-compatible model served at
``base_url`` (not streamed) with ``file_read``, ``file_write`` and ``editor``, in ``workdir`` (the
directory the tools resolve relative paths against), and runs it once.
"""

from __future__ import annotations

import contextlib

from strands import Agent
from strands.models.openai import OpenAIModel
from strands_tools import editor, file_read, file_write


def run(workdir: str, base_url: str) -> str:
    model = OpenAIModel(
        client_args={"api_key": "fake-key", "base_url": base_url, "max_retries": 0},
        model_id="gpt-4o",
        params={"stream": False},
    )
    agent = Agent(model=model, tools=[file_read, file_write, editor], callback_handler=None)
    with contextlib.chdir(workdir):
        result = agent("Take a note: buy milk.")
    return str(result).strip()
