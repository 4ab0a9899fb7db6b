"""Fill ${NAME} placeholders of a config template from the environment (nginx's own $vars stay).

Usage: render_template.py [--defaults FILE] TEMPLATE > OUTPUT. FILE holds NAME=VALUE lines
(blank lines and # comments skipped, no quoting: the env_file format of docker compose) used
for names the environment does not set. A placeholder with neither is an error.
"""

import argparse
import os
import re
import sys


def read_defaults(path: str) -> dict[str, str]:
    defaults = {}
    with open(path) as lines:
        for line in lines:
            line = line.strip()
            if line and not line.startswith("#"):
                name, sep, value = line.partition("=")
                if not sep:
                    sys.exit(f"{path}: not NAME=VALUE: {line}")
                defaults[name.strip()] = value.strip()
    return defaults


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--defaults", help="NAME=VALUE file for names the environment does not set")
    parser.add_argument("template")
    args = parser.parse_args()
    values = (read_defaults(args.defaults) if args.defaults else {}) | dict(os.environ)
    with open(args.template) as template:
        text = template.read()

    def fill(match: re.Match) -> str:
        name = match.group(1)
        if name not in values:
            sys.exit(f"{args.template}: set {name}")
        return values[name]

    sys.stdout.write(re.sub(r"\$\{([A-Z_]+)\}", fill, text))


if __name__ == "__main__":
    main()
