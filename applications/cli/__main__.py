"""``python -m applications.cli`` = the ``zeroopt`` console script."""

from .main import main

raise SystemExit(main())
