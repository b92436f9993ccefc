#!/usr/bin/env bash
# The project's test command (README): Rust unit tests of the core, then the Python suite.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test -p toksmith-core --release --quiet
python3 -m pytest tests -p no:cacheprovider
