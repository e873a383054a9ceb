"""Run the command line as a module of this folder (the same as the `acp-model` script)."""

from cli.main import main

raise SystemExit(main())
