"""The rule catalogue of the ACP v2 prompt lifecycle and the monitors that check it."""
