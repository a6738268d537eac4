"""``python -m skillguard`` runs the command-line tool."""

from __future__ import annotations

import sys

from skillguard._cli.main import main

sys.exit(main())
