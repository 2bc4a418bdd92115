"""The HomeClaw Python plugin host: runs one plugin source for the Core, speaking JSON lines on stdio."""
