"""Print the text of every page of a PDF (an example resource; not run by skillguard)."""

import subprocess
import sys

subprocess.run(["pdftotext", "-layout", sys.argv[1], "-"], check=True)  # noqa: S603, S607
