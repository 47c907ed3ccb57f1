"""Model clients: the Anthropic Messages API (``agent.models.anthropic_client``, imported on
demand because the SDK is slow to import) and a scripted stand-in for tests and the demo."""

from agent.models.base import ModelClient, ModelError, RequestCancelled
from agent.models.scripted import ScriptedModelClient

__all__ = ["ModelClient", "ModelError", "RequestCancelled", "ScriptedModelClient"]
