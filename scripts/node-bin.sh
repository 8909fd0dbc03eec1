#!/usr/bin/env bash
# Prints the folder holding a `node` of the given major version, for PATH:
#
#   PATH="$(scripts/node-bin.sh 24):$PATH" npm test
#
# This machine's node when it is that major; otherwise Node from the npm registry, whose
# node-<os>-<arch> packages ship the official binary, installed once into .node<major>/
# (git-ignored; the bench's Node 24 is the same folder, see bench/node-binaries.ts).
set -euo pipefail
major="${1:?usage: scripts/node-bin.sh <major version, e.g. 24>}"
cd "$(dirname "$0")/.."

if command -v node >/dev/null 2>&1 && [ "$(node -p 'process.versions.node.split(".")[0]')" = "$major" ]; then
  dirname "$(command -v node)"
  exit 0
fi

case "$(uname -s)" in Linux) os=linux ;; Darwin) os=darwin ;; *) echo "node-bin: no Node package for $(uname -s)" >&2; exit 1 ;; esac
case "$(uname -m)" in x86_64 | amd64) arch=x64 ;; aarch64 | arm64) arch=arm64 ;; *) echo "node-bin: no Node package for $(uname -m)" >&2; exit 1 ;; esac
package="node-$os-$arch"
folder=".node$major"
bin="$PWD/$folder/node_modules/$package/bin"

if [ ! -x "$bin/node" ] || [ "$("$bin/node" -p 'process.versions.node.split(".")[0]')" != "$major" ]; then
  echo "node-bin: installing $package@$major into $folder/" >&2
  mkdir -p "$folder"
  printf '{ "name": "node%s", "private": true }\n' "$major" > "$folder/package.json"
  (cd "$folder" && npm install --no-audit --no-fund "$package@$major" >&2)
fi
echo "$bin"
