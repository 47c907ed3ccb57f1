"""An agent script written for deepagents' ``FilesystemBackend``: the tests run it as it is and
with its backend import switched to ``safefs.integrations.deepagents``.

``run(root_dir, base_url)`` builds a deep agent with deepagents' own ``create_deep_agent`` on a
``FilesystemBackend(root_dir=..., virtual_mode=True)``, with an Anthropic chat model served at
``base_url``, and invokes it; the model there calls the file tools in turn. It returns the final
answer, or the error a tool raised (deepagents lets a backend's ``ValueError`` for a path leading
out of ``root_dir`` end the run).
"""

from __future__ import annotations

from deepagents import create_deep_agent
from deepagents.backends.filesystem import FilesystemBackend
from langchain_anthropic import ChatAnthropic
from pydantic import SecretStr

CALLS = [
    ("write_file", {"file_path": "/notes/today.txt", "content": "buy milk\n"}),
    ("read_file", {"file_path": "/notes/today.txt"}),
    ("edit_file", {"file_path": "/notes/today.txt", "old_string": "milk", "new_string": "bread"}),
    ("ls", {"path": "/notes"}),
    ("glob", {"pattern": "**/*.txt"}),
    ("grep", {"pattern": "bread"}),
    ("read_file", {"file_path": "/escape/secret.txt"}),
]


def run(root_dir: str, base_url: str) -> str:
    model = ChatAnthropic(  # type: ignore[call-arg]
        model_name="claude-fake", base_url=base_url, api_key=SecretStr("fake-key"), max_retries=0
    )
    backend = FilesystemBackend(root_dir=root_dir, virtual_mode=True)
    agent = create_deep_agent(model=model, backend=backend, system_prompt="You keep notes.")
    try:
        result = agent.invoke({"messages": [{"role": "user", "content": "take a note"}]})
    except ValueError as exc:
        return f"refused: {exc}"
    return str(result["messages"][-1].content)
