"""``python -m txcourse.cli`` runs the command line, as ``python -m txcourse`` does."""

import sys

from txcourse.cli import main

sys.exit(main())
