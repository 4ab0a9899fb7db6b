"""Fill ${NAME} placeholders of a config template from the environment (nginx's own $vars stay).

Usage: render_template.py TEMPLATE > OUTPUT. A placeholder without a variable is an error.
"""

import os
import re
import sys


def main(path: str) -> None:
    text = open(path).read()  # noqa: SIM115 - a short script

    def fill(match: re.Match) -> str:
        name = match.group(1)
        if name not in os.environ:
            sys.exit(f"{path}: set {name}")
        return os.environ[name]

    sys.stdout.write(re.sub(r"\$\{([A-Z_]+)\}", fill, text))


if __name__ == "__main__":
    main(sys.argv[1])
