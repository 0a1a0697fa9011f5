"""`python -m tools.smoke <stack>`."""

import sys

from tools.smoke import main

sys.exit(main())
