import sys

from tools.args import main

sys.exit(main(sys.argv))
