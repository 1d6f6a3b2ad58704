"""``python -m txcourse`` runs the command line."""

import sys

from txcourse.cli import main

sys.exit(main())
