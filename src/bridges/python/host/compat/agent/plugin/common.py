"""Same module as plugin.common (newer RAGFlow import path)."""
from plugin.common import *  # noqa: F401,F403
from plugin.common import PLUGIN_TYPE_LLM_TOOLS  # noqa: F401
