from vswbench.cli import main

raise SystemExit(main())
