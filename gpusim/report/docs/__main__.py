"""python3 -m gpusim.report.docs: see gpusim.report.docs."""
import sys

from gpusim.report.docs import main

sys.exit(main())
