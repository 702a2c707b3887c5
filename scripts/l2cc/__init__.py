# SPDX-License-Identifier: BSD-2-Clause
"""l2cc testbed tooling: topology files, lab lifecycle, experiments.

Modules:
  topo        parse and validate a topology YAML file; render daemon configs
  lab         build (up), tear down (down) and inspect (status) a lab
  cli         the `l2cc-lab` command line
  export      one topology over several machines (`l2cc-lab export`)
  experiment  experiment runner and plots (`l2cc-lab run`, `l2cc-lab plot`)

Only Debian's python3 and python3-yaml are needed: no pip.
"""

import os

#: The repository root (scripts/l2cc/ is two levels below it).
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

#: Where the daemons are found unless L2CC_BIN or --bin says otherwise.
DEFAULT_BINDIR = os.path.join(REPO, "build", "bin")

#: Parent of every lab's default run directory (<RUNROOT>/<lab name>).
RUNROOT = "/run/l2cc"
