"""HomeClaw's `base` package as the HomeClaw Python host provides it: BasePlugin and the request types.

Only what a built-in plugin needs to load and run is here; HomeClaw's helpers (base.util, LLM access,
memory) are not, so a plugin that imports them fails to load with an ImportError naming the module.
"""
