"""The rule catalogue of the ACP v2 prompt lifecycle, the monitors that check it, and the
transcript checker that runs them."""
