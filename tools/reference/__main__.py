import sys

from tools.reference import main

sys.exit(main())
