"""Allow ``python -m cli``."""

from cli.main import main

raise SystemExit(main())
