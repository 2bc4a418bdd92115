"""HomeClaw's `core` package as the Python host provides it: only coreInterface.CoreInterface."""
