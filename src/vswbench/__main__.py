"""`python -m vswbench`: the command line."""

from vswbench.cli.app import main

raise SystemExit(main())
