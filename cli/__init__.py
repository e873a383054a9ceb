"""The ``acp-model`` command line: one module per subcommand (``cli/cmd_<name>.py``)."""
