"""The rule catalogue of the ACP v2 prompt lifecycle and the monitors that check it."""

from pathlib import Path

from properties import native

# Before any module imports properties.transcript: use its compiled form only when current.
native.setup_package(__name__, Path(__file__).resolve().parent)
