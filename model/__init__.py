"""The executable model: one declarative state machine per entity of the ACP v2 prompt lifecycle."""
