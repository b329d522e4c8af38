"""``python -m arcadebench`` is the ``arcadebench`` command."""

import sys

from arcadebench.cli import main

sys.exit(main())
