"""`python -m app.cli`: the relevo command (`relevo serve` starts its workers this way)."""

import sys

from app.cli import main

sys.exit(main())
